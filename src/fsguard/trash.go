package fsguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TrashKind says how a version came to be in the trash.
type TrashKind string

const (
	KindDeleted     TrashKind = "deleted"     // Delete
	KindOverwritten TrashKind = "overwritten" // WriteFile over it, or Restore over it
	KindMovedOver   TrashKind = "moved_over"  // Move onto it
)

// TrashItem is one recoverable version.
type TrashItem struct {
	ID        string      `json:"id"`
	Path      string      `json:"path"` // where it was, in alias form
	Kind      TrashKind   `json:"kind"`
	Time      time.Time   `json:"time"`
	Expires   time.Time   `json:"expires"`
	Size      int64       `json:"size"` // bytes of regular-file content, summed over a directory tree
	Mode      fs.FileMode `json:"mode"`
	IsDir     bool        `json:"is_dir,omitempty"`
	IsSymlink bool        `json:"is_symlink,omitempty"`
	// RestoredTo is where Restore wrote it (alias form), which differs from Path when it was restored
	// elsewhere; set only in Restore's answer.
	RestoredTo string `json:"restored_to,omitempty"`
}

// itemMeta is the sidecar stored next to an item's data as meta.json.
type itemMeta struct {
	TrashItem
	UID   uint32 `json:"uid"`
	GID   uint32 `json:"gid"`
	Owned bool   `json:"owned"` // UID and GID are known
	// Modes holds the real modes of entries whose stored copy got owner access added, so the trash can
	// always be read and removed; keyed by path inside the item, "." for the top.
	Modes map[string]fs.FileMode `json:"modes,omitempty"`
}

const (
	trashData = "data"
	trashMeta = "meta.json"
)

type trash struct {
	dir, items, pending string
	retention           time.Duration
	maxVersions         int
	key                 func(display string) string

	mu   sync.Mutex
	byID map[string]itemMeta
}

func openTrash(dir string, retention time.Duration, maxVersions int, key func(string) string) (*trash, error) {
	t := &trash{
		dir: dir, items: filepath.Join(dir, "items"), pending: filepath.Join(dir, "pending"),
		retention: retention, maxVersions: maxVersions, key: key, byID: map[string]itemMeta{},
	}
	for _, d := range []string{t.items, t.pending} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("fsguard: trash: %w", err)
		}
	}
	entries, err := os.ReadDir(t.items)
	if err != nil {
		return nil, fmt.Errorf("fsguard: trash: %w", err)
	}
	for _, e := range entries {
		if _, err := parseTrashID(e.Name()); err != nil {
			continue // not ours
		}
		itemDir := filepath.Join(t.items, e.Name())
		data, err := os.ReadFile(filepath.Join(itemDir, trashMeta))
		if errors.Is(err, fs.ErrNotExist) {
			os.RemoveAll(itemDir) // a copy that never committed
			continue
		}
		var m itemMeta
		if err != nil || json.Unmarshal(data, &m) != nil || m.ID != e.Name() {
			continue // unreadable: left for a human rather than destroyed
		}
		os.Remove(filepath.Join(itemDir, trashMeta+".tmp"))
		t.byID[m.ID] = m
	}
	return t, nil
}

// newTrashID makes a unique, time-ordered id: 16 hex digits of Unix nanoseconds, a dash, 8 random hex.
func newTrashID(now time.Time) string {
	return fmt.Sprintf("%016x-%08x", uint64(now.UnixNano()), rand.Uint32())
}

// parseTrashID checks an id given by a user and returns the time it encodes.
func parseTrashID(id string) (time.Time, error) {
	bad := fmt.Errorf("trash id %q is malformed; ids look like 18a2b3c4d5e6f708-9a8b7c6d (see the trash listing)", id)
	if len(id) != 25 || id[16] != '-' {
		return time.Time{}, bad
	}
	for i := 0; i < len(id); i++ {
		if i != 16 && !('0' <= id[i] && id[i] <= '9' || 'a' <= id[i] && id[i] <= 'f') {
			return time.Time{}, bad
		}
	}
	ns, err := strconv.ParseUint(id[:16], 16, 64)
	if err != nil {
		return time.Time{}, bad
	}
	return time.Unix(0, int64(ns)).UTC(), nil
}

// put copies rel from src into a new item, commits its sidecar, then enforces retention and the version
// limit. The item exists only once meta.json does, so a crash mid-copy leaves nothing a restart keeps.
func (t *trash) put(src *os.Root, rel, display string, kind TrashKind) (TrashItem, error) {
	now := time.Now().UTC()
	id := newTrashID(now)
	itemDir := filepath.Join(t.items, id)
	if err := os.Mkdir(itemDir, 0o700); err != nil {
		return TrashItem{}, fmt.Errorf("trash: %w", err)
	}
	meta, err := t.fill(src, rel, itemDir)
	if err != nil {
		os.RemoveAll(itemDir)
		return TrashItem{}, err
	}
	meta.TrashItem.ID, meta.Path, meta.Kind, meta.Time = id, display, kind, now
	err = writeFileSync(filepath.Join(itemDir, trashMeta), meta)
	if err == nil {
		err = syncPath(t.items) // the item's own entry
	}
	if err != nil {
		os.RemoveAll(itemDir)
		return TrashItem{}, fmt.Errorf("trash: %w", err)
	}
	t.mu.Lock()
	t.byID[id] = meta
	drop := t.expiredLocked(now, t.key(display))
	for _, old := range drop {
		delete(t.byID, old)
	}
	t.mu.Unlock()
	for _, old := range drop {
		os.RemoveAll(filepath.Join(t.items, old))
	}
	return t.public(meta), nil
}

func (t *trash) fill(src *os.Root, rel, itemDir string) (itemMeta, error) {
	ir, err := os.OpenRoot(itemDir)
	if err != nil {
		return itemMeta{}, err
	}
	defer ir.Close()
	meta := itemMeta{Modes: map[string]fs.FileMode{}}
	c := copier{src: src, dst: ir, mode: func(itemRel string, m fs.FileMode, isDir bool) fs.FileMode {
		stored := m | 0o600
		if isDir {
			stored = m | 0o700
		}
		if stored != m {
			meta.Modes[itemRel] = m
		}
		return stored
	}}
	fi, err := c.copy(rel, trashData, ".")
	if err != nil {
		return itemMeta{}, err
	}
	if err := ir.Chmod(".", 0o700); err != nil {
		return itemMeta{}, err
	}
	meta.Size, meta.Mode = c.size, fi.Mode()&keepBits
	meta.IsDir, meta.IsSymlink = fi.IsDir(), fi.Mode()&fs.ModeSymlink != 0
	if s, ok := sysInfo(fi); ok {
		meta.UID, meta.GID, meta.Owned = s.UID, s.GID, true
	}
	return meta, syncDir(ir, ".")
}

// expiredLocked lists items past retention, and versions of key beyond the newest maxVersions.
func (t *trash) expiredLocked(now time.Time, key string) []string {
	var drop, versions []string
	for id, m := range t.byID {
		switch {
		case now.Sub(m.Time) > t.retention:
			drop = append(drop, id)
		case key != "" && t.key(m.Path) == key:
			versions = append(versions, id)
		}
	}
	if len(versions) > t.maxVersions {
		slices.Sort(versions) // ids sort by time
		drop = append(drop, versions[:len(versions)-t.maxVersions]...)
	}
	return drop
}

// purge removes the items past retention, best effort: an item that cannot be removed now is found
// again, and removed, at the next start.
func (t *trash) purge(now time.Time) {
	t.mu.Lock()
	drop := t.expiredLocked(now, "")
	for _, id := range drop {
		delete(t.byID, id)
	}
	t.mu.Unlock()
	for _, id := range drop {
		os.RemoveAll(filepath.Join(t.items, id))
	}
}

func (t *trash) get(id string) (itemMeta, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.byID[id]
	return m, ok
}

// list returns unexpired items newest first; key "" means all.
func (t *trash) list(key string) []TrashItem {
	now := time.Now()
	t.mu.Lock()
	out := []TrashItem{}
	for _, m := range t.byID {
		if now.Sub(m.Time) <= t.retention && (key == "" || t.key(m.Path) == key) {
			out = append(out, t.public(m))
		}
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b TrashItem) int { return strings.Compare(b.ID, a.ID) })
	return out
}

func (t *trash) remove(id string) error {
	t.mu.Lock()
	delete(t.byID, id)
	t.mu.Unlock()
	return os.RemoveAll(filepath.Join(t.items, id))
}

func (t *trash) public(m itemMeta) TrashItem {
	it := m.TrashItem
	it.Expires = it.Time.Add(t.retention)
	return it
}

// writeFileSync writes v as JSON to path through a synced temp file and a rename, then syncs the directory.
func writeFileSync(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncPath(filepath.Dir(path))
}

func syncPath(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
