package fsguard

import (
	"fmt"
	"slices"
	"strings"
)

// ListOptions pages a directory listing. Limit defaults to 100 and may not exceed 1000.
type ListOptions struct {
	Offset int
	Limit  int
	Hidden bool // include names starting with "."
}

// List limits.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// Entry is one directory entry; symlinks are described themselves, not their targets.
type Entry = FileInfo

// List returns one page of a directory's entries sorted by name, and how many entries there are in all
// (after leaving out hidden names unless asked).
func (f *FS) List(path string, o ListOptions) (entries []Entry, total int, err error) {
	switch {
	case o.Offset < 0:
		return nil, 0, &PathError{Op: "list", Path: path, Reason: "offset must be 0 or more"}
	case o.Limit < 0 || o.Limit > MaxListLimit:
		return nil, 0, &PathError{Op: "list", Path: path, Reason: fmt.Sprintf("limit must be between 1 and %d (e.g. 100)", MaxListLimit)}
	case o.Limit == 0:
		o.Limit = DefaultListLimit
	}
	r, res, err := f.resolve("list", path)
	if err != nil {
		return nil, 0, err
	}
	if fi, err := r.root.Stat(res.Rel); err != nil {
		return nil, 0, f.opError("list", path, err)
	} else if !fi.IsDir() {
		return nil, 0, &PathError{Op: "list", Path: path, Reason: "is not a directory; read it instead"}
	}
	dir, err := openDir(r.root, res.Rel)
	if err != nil {
		return nil, 0, f.opError("list", path, err)
	}
	defer dir.Close()
	// Names only: entries are stat'ed for the requested page alone, which matters in /media or /backup.
	all, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, 0, f.opError("list", path, err)
	}
	names := all[:0]
	for _, name := range all {
		if o.Hidden || !strings.HasPrefix(name, ".") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	total = len(names)
	if o.Offset >= total {
		return []Entry{}, total, nil
	}
	page := names[o.Offset:min(total, o.Offset+o.Limit)]
	entries = make([]Entry, 0, len(page))
	for _, name := range page {
		rel := joinRel(res.Rel, name)
		fi, err := r.root.Lstat(rel)
		if err != nil {
			continue // removed since ReadDir
		}
		e := fileInfo(joinDisplay(res.Display, name), fi)
		if e.IsSymlink {
			e.SymlinkTarget, _ = r.root.Readlink(rel)
		}
		entries = append(entries, e)
	}
	return entries, total, nil
}

func joinDisplay(dir, name string) string { return dir + "/" + name }
