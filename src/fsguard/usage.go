package fsguard

// Usage is the space on the file system holding one root. Free counts blocks reserved for root;
// Available is what an unprivileged writer can use.
type Usage struct {
	Root      string `json:"root"`
	ReadOnly  bool   `json:"read_only,omitempty"`
	Total     uint64 `json:"total"`
	Used      uint64 `json:"used"`
	Free      uint64 `json:"free"`
	Available uint64 `json:"available"`
}

// DiskUsage reports each root's file system (statfs), in root order.
func (f *FS) DiskUsage() ([]Usage, error) {
	out := make([]Usage, 0, len(f.roots))
	for _, r := range f.roots {
		d, err := openDir(r.root, ".")
		if err != nil {
			return nil, f.opError("disk usage", r.cfg.Alias, err)
		}
		total, free, avail, err := statfs(d)
		d.Close()
		if err != nil {
			return nil, f.opError("disk usage", r.cfg.Alias, err)
		}
		out = append(out, Usage{Root: r.cfg.Alias, ReadOnly: r.cfg.ReadOnly, Total: total, Used: total - free, Free: free, Available: avail})
	}
	return out, nil
}
