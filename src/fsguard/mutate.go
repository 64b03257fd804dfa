package fsguard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Delete moves a file, symlink or directory into the trash; nothing is unlinked before its copy is
// committed there. A non-empty directory needs recursive.
func (f *FS) Delete(path string, recursive bool) (TrashItem, error) {
	const op = "delete"
	r, res, err := f.resolve(op, path)
	if err != nil {
		return TrashItem{}, err
	}
	if err := f.checkWritable(op, path, r, res.Rel); err != nil {
		return TrashItem{}, err
	}
	fi, err := r.root.Lstat(res.Rel)
	if err != nil {
		return TrashItem{}, f.opError(op, path, err)
	}
	if fi.IsDir() && !recursive {
		if empty, err := isEmptyDir(r.root, res.Rel); err != nil {
			return TrashItem{}, f.opError(op, path, err)
		} else if !empty {
			return TrashItem{}, &PathError{Op: op, Path: path, Reason: "is a directory that is not empty; ask for a recursive delete to remove it and everything in it (all of it goes to the trash)"}
		}
	}
	item, err := f.trash.put(r.root, res.Rel, res.Display, KindDeleted)
	if err != nil {
		return TrashItem{}, f.contextError(op, path, "copying to the trash failed, nothing was deleted", err)
	}
	if err := r.root.RemoveAll(res.Rel); err != nil {
		return item, f.contextError(op, path, "copied to the trash as "+item.ID+", but removing it failed", err)
	}
	dir, _ := parentRel(res.Rel)
	syncDir(r.root, dir)
	return item, nil
}

// Move renames from to to; between roots that are different directories it copies, then removes the
// source. An existing target is replaced only when overwrite is set, and then goes to the trash first.
func (f *FS) Move(from, to string, overwrite bool) error {
	const op = "move"
	rs, src, err := f.resolve(op, from)
	if err != nil {
		return err
	}
	rd, dst, err := f.resolve(op, to)
	if err != nil {
		return err
	}
	if err := f.checkWritable(op, from, rs, src.Rel); err != nil {
		return err
	}
	if err := f.checkWritable(op, to, rd, dst.Rel); err != nil {
		return err
	}
	sameRoot := rs.root == rd.root
	if sameRoot && (dst.Rel == src.Rel || strings.HasPrefix(dst.Rel, src.Rel+"/")) {
		return &PathError{Op: op, Path: to, Reason: fmt.Sprintf("is %s or inside it; a path cannot be moved into itself", src.Display)}
	}
	sfi, err := rs.root.Lstat(src.Rel)
	if err != nil {
		return f.opError(op, from, err)
	}
	dstDir, _ := parentRel(dst.Rel)
	if err := f.ensureDir(op, to, rd, dstDir, false); err != nil {
		return err
	}
	clear := func() error { return f.clearTarget(op, to, rd, dst, sfi.IsDir(), overwrite, KindMovedOver) }
	if sameRoot {
		if err := clear(); err != nil {
			return err
		}
		if err := rs.root.Rename(src.Rel, dst.Rel); err != nil {
			return f.opError(op, from, err)
		}
	} else {
		c := copier{src: rs.root, dst: rd.root, mode: sameMode}
		if err := f.placeCopy(op, to, rd, dst.Rel, &c, src.Rel, nil, clear); err != nil {
			return err
		}
		if err := rs.root.RemoveAll(src.Rel); err != nil {
			return f.contextError(op, from, "copied to "+dst.Display+", but removing the source failed", err)
		}
	}
	srcDir, _ := parentRel(src.Rel)
	syncDir(rs.root, srcDir)
	syncDir(rd.root, dstDir)
	return nil
}

// Restore brings a trash item back, with its content and modes (and owner, where permitted), to its
// original path or to `to`. An existing file there is replaced only with overwrite, and then goes to the
// trash. The item leaves the trash once restored.
func (f *FS) Restore(id, to string, overwrite bool) (TrashItem, error) {
	const op = "restore"
	if _, err := parseTrashID(id); err != nil {
		return TrashItem{}, &PathError{Op: op, Path: id, Reason: err.Error()}
	}
	m, ok := f.trash.get(id)
	if !ok {
		return TrashItem{}, &PathError{Op: op, Path: id, Err: fs.ErrNotExist,
			Reason: "is not in the trash (it may have expired); list the trash to see what can be restored"}
	}
	if to == "" {
		to = m.Path
	}
	r, res, err := f.resolve(op, to)
	if err != nil {
		return TrashItem{}, err
	}
	if err := f.checkWritable(op, to, r, res.Rel); err != nil {
		return TrashItem{}, err
	}
	dir, _ := parentRel(res.Rel)
	// The parents may have been deleted too; recreate them.
	if err := f.ensureDir(op, to, r, dir, true); err != nil {
		return TrashItem{}, err
	}
	ir, err := os.OpenRoot(filepath.Join(f.trash.items, id))
	if err != nil {
		return TrashItem{}, f.opError(op, id, err)
	}
	defer ir.Close()
	c := copier{src: ir, dst: r.root, mode: func(itemRel string, stored fs.FileMode, _ bool) fs.FileMode {
		if real, ok := m.Modes[itemRel]; ok {
			return real
		}
		return stored
	}}
	clear := func() error { return f.clearTarget(op, to, r, res, m.IsDir, overwrite, KindOverwritten) }
	if err := f.placeCopy(op, to, r, res.Rel, &c, trashData, &m, clear); err != nil {
		return TrashItem{}, err
	}
	syncDir(r.root, dir)
	f.trash.remove(id)
	out := f.trash.public(m)
	out.RestoredTo = res.Display
	return out, nil
}

// clearTarget makes way for an entry at dst: refused when it exists and overwrite is not set; otherwise
// the existing entry goes to the trash, and is removed when a rename could not replace it.
func (f *FS) clearTarget(op, path string, r *rootEntry, dst Resolved, incomingDir, overwrite bool, kind TrashKind) error {
	dfi, err := r.root.Lstat(dst.Rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return f.opError(op, path, err)
	}
	if !overwrite {
		return &PathError{Op: op, Path: path, Err: fs.ErrExist,
			Reason: "already exists; ask to overwrite to replace it (the current one goes to the trash)"}
	}
	if _, err := f.trash.put(r.root, dst.Rel, dst.Display, kind); err != nil {
		return f.contextError(op, path, "keeping the existing one in the trash failed, nothing was changed", err)
	}
	if dfi.IsDir() || incomingDir {
		if err := r.root.RemoveAll(dst.Rel); err != nil {
			return f.opError(op, path, err)
		}
	}
	return nil
}

// placeCopy copies c's srcRel into a temp entry beside dstRel, calls clear to make way, and renames the
// copy into place, so the target never holds a partial copy and is not touched if the copy fails. When
// meta is given, the top entry also gets its recorded owner back.
func (f *FS) placeCopy(op, path string, r *rootEntry, dstRel string, c *copier, srcRel string, meta *itemMeta, clear func() error) error {
	dir, _ := parentRel(dstRel)
	tmp, done, err := f.startTemp(r, dir)
	if err != nil {
		return f.opError(op, path, err)
	}
	defer done()
	_, err = c.copy(srcRel, tmp, ".")
	if err == nil && meta != nil && meta.Owned {
		restoreOwner(r.root, tmp, meta, c)
	}
	if err == nil {
		err = clear()
	}
	if err == nil {
		err = r.root.Rename(tmp, dstRel)
	}
	if err != nil {
		r.root.RemoveAll(tmp)
		return f.opError(op, path, err)
	}
	return nil
}

// restoreOwner gives the top entry its recorded owner back, best effort: only root may give files away.
func restoreOwner(r *os.Root, rel string, meta *itemMeta, c *copier) {
	if r.Lchown(rel, int(meta.UID), int(meta.GID)) != nil || meta.IsSymlink {
		return
	}
	// chown clears setuid/setgid, so the mode goes back on afterwards.
	_ = r.Chmod(rel, c.mode(".", meta.Mode, meta.IsDir))
}

// Trash lists the versions kept for a path, newest first, or every item when path is "".
func (f *FS) Trash(path string) ([]TrashItem, error) {
	if path == "" {
		return f.trash.list(""), nil
	}
	_, res, err := f.resolve("trash", path)
	if err != nil {
		return nil, err
	}
	return f.trash.list(f.versionKey(res.Display)), nil
}

func isEmptyDir(r *os.Root, rel string) (bool, error) {
	d, err := openDir(r, rel)
	if err != nil {
		return false, err
	}
	defer d.Close()
	_, err = d.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}
