package fsguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// WriteOptions adjusts WriteFile.
type WriteOptions struct {
	CreateDirs bool // create missing parent directories (mode 0755)
	Exclusive  bool // fail if the file already exists
}

// WriteResult says what WriteFile did.
type WriteResult struct {
	Path              string `json:"path"`
	Created           bool   `json:"created"`
	PreviousVersionID string `json:"previous_version_id,omitempty"` // trash id of the replaced content
	Bytes             int64  `json:"bytes"`
}

// WriteFile replaces a file atomically: the old content is copied to the trash first, the new content
// goes to a temp file beside it that is fsynced and renamed over the old name, and the directory is
// fsynced. At every moment the path holds the complete old or the complete new content. An existing
// file keeps its mode and, where permitted, its owner; perm (default 0644) applies to new files only.
func (f *FS) WriteFile(path string, data []byte, perm os.FileMode, opts WriteOptions) (WriteResult, error) {
	const op = "write"
	if perm&^fs.ModePerm != 0 {
		return WriteResult{}, &PathError{Op: op, Path: path, Reason: fmt.Sprintf("perm %#o has bits beyond 0777; give e.g. 0644", perm)}
	}
	if perm == 0 {
		perm = 0o644
	}
	r, res, err := f.resolve(op, path)
	if err != nil {
		return WriteResult{}, err
	}
	if err := f.checkWritable(op, path, r, res.Rel); err != nil {
		return WriteResult{}, err
	}
	dir, _ := parentRel(res.Rel)
	if err := f.ensureDir(op, path, r, dir, opts.CreateDirs); err != nil {
		return WriteResult{}, err
	}
	old, err := r.root.Lstat(res.Rel)
	exists := err == nil
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return WriteResult{}, f.opError(op, path, err)
		}
		old = nil
	}
	out := WriteResult{Path: res.Display, Created: !exists, Bytes: int64(len(data))}
	mode := perm
	if exists {
		if err := replaceable(op, path, old, opts); err != nil {
			return WriteResult{}, err
		}
		mode = old.Mode() & keepBits
		item, err := f.trash.put(r.root, res.Rel, res.Display, KindOverwritten)
		if err != nil {
			return WriteResult{}, f.contextError(op, path, "keeping the previous version failed, nothing was written", err)
		}
		out.PreviousVersionID = item.ID
	}
	tmp, done, err := f.startTemp(r, dir)
	if err != nil {
		return WriteResult{}, f.opError(op, path, err)
	}
	defer done()
	err = writeTemp(r.root, tmp, data, mode, old)
	if err == nil {
		err = place(r.root, tmp, res.Rel, opts.Exclusive)
	}
	if err != nil {
		r.root.Remove(tmp)
		return WriteResult{}, f.opError(op, path, err)
	}
	if err := syncDir(r.root, dir); err != nil {
		return out, f.contextError(op, path, "written, but syncing the directory failed", err)
	}
	return out, nil
}

// ensureDir makes sure the directory an entry goes into exists, creating it when asked.
func (f *FS) ensureDir(op, path string, r *rootEntry, dir string, create bool) error {
	if create {
		if err := r.root.MkdirAll(dir, 0o755); err != nil {
			return f.opError(op, path, err)
		}
		return nil
	}
	fi, err := r.root.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &PathError{Op: op, Path: path, Reason: "its directory does not exist; create it first or ask for missing directories to be created", Err: err}
	case err != nil:
		return f.opError(op, path, err)
	case !fi.IsDir():
		return &PathError{Op: op, Path: path, Reason: "a parent of this path is not a directory"}
	}
	return nil
}

// replaceable refuses replacing what is not a plain single-link file.
func replaceable(op, path string, old fs.FileInfo, opts WriteOptions) error {
	m := old.Mode()
	switch {
	case opts.Exclusive:
		return &PathError{Op: op, Path: path, Reason: "already exists; leave out exclusive to replace it (the old version goes to the trash)", Err: fs.ErrExist}
	case m&fs.ModeSymlink != 0:
		return &PathError{Op: op, Path: path, Reason: "is a symlink; write to the path it points to instead (see its info)"}
	case m.IsDir():
		return &PathError{Op: op, Path: path, Reason: "is a directory; give a file path"}
	case !m.IsRegular():
		return &PathError{Op: op, Path: path, Reason: fmt.Sprintf("is a %s, which is never written", typeName(m)), Err: ErrUnsupportedType}
	}
	if err := singleLink(old); err != nil {
		return &PathError{Op: op, Path: path, Reason: err.Error(), Err: err}
	}
	return nil
}

// place puts the finished temp file at rel. Exclusive uses link(2), which fails if rel appeared since it
// was checked, where rename(2) would silently replace it; file systems without hard links fall back to
// rename.
func place(r *os.Root, tmp, rel string, exclusive bool) error {
	if !exclusive {
		return r.Rename(tmp, rel)
	}
	if err := r.Link(tmp, rel); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return r.Rename(tmp, rel)
	}
	return r.Remove(tmp)
}

// writeTemp creates the temp file with the final content, owner and mode, and fsyncs it.
func writeTemp(r *os.Root, tmp string, data []byte, mode fs.FileMode, old fs.FileInfo) error {
	tf, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = tf.Write(data)
	if old != nil {
		if s, ok := sysInfo(old); ok && err == nil {
			// Best effort: only root may give a file away, and a non-root owner keeps ours.
			_ = tf.Chown(int(s.UID), int(s.GID))
		}
	}
	if err == nil {
		err = tf.Chmod(mode) // after Chown, which clears setuid/setgid
	}
	if err == nil {
		err = tf.Sync()
	}
	if cerr := tf.Close(); err == nil {
		err = cerr
	}
	return err
}
