package fsguard

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
)

// keepBits are the mode bits a copy carries over.
const keepBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// copier copies a file, symlink or directory tree between two os.Roots, so neither side can be led
// outside its root. Every file is fsynced, and every directory after its entries are in place.
type copier struct {
	src, dst *os.Root
	// mode picks the mode of the copy of the entry at itemRel (its path inside the copied tree, "." for
	// the top) whose source mode is m.
	mode func(itemRel string, m fs.FileMode, isDir bool) fs.FileMode
	size int64
}

func sameMode(_ string, m fs.FileMode, _ bool) fs.FileMode { return m }

// copy copies srcRel to dstRel, which must not exist, and returns the source's info. Symlinks are copied
// as symlinks (never followed); regular files with several hard links and special files are refused.
func (c *copier) copy(srcRel, dstRel, itemRel string) (fs.FileInfo, error) {
	fi, err := c.src.Lstat(srcRel)
	if err != nil {
		return nil, err
	}
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		target, err := c.src.Readlink(srcRel)
		if err != nil {
			return nil, err
		}
		return fi, c.dst.Symlink(target, dstRel)
	case m.IsRegular():
		return fi, c.copyFile(fi, srcRel, dstRel, itemRel)
	case m.IsDir():
		return fi, c.copyDir(fi, srcRel, dstRel, itemRel)
	}
	return nil, fmt.Errorf("%s is a %s: %w", srcRel, typeName(m), ErrUnsupportedType)
}

func (c *copier) copyFile(fi fs.FileInfo, srcRel, dstRel, itemRel string) error {
	in, err := c.src.OpenFile(srcRel, openReadFlags, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(fi, st) {
		return fmt.Errorf("%s changed while being copied; try again", srcRel)
	}
	if err := singleLink(st); err != nil {
		return err
	}
	out, err := c.dst.OpenFile(dstRel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, in)
	c.size += n
	if err == nil {
		err = out.Chmod(c.mode(itemRel, st.Mode()&keepBits, false))
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func (c *copier) copyDir(fi fs.FileInfo, srcRel, dstRel, itemRel string) error {
	d, err := openDir(c.src, srcRel)
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	if err := c.dst.Mkdir(dstRel, 0o700); err != nil {
		return err
	}
	slices.Sort(names)
	for _, name := range names {
		if _, err := c.copy(joinRel(srcRel, name), joinRel(dstRel, name), joinRel(itemRel, name)); err != nil {
			return err
		}
	}
	// The final mode goes on last: it may forbid the writes that filled the directory.
	if err := c.dst.Chmod(dstRel, c.mode(itemRel, fi.Mode()&keepBits, true)); err != nil {
		return err
	}
	return syncDir(c.dst, dstRel)
}

// openDir opens a directory in a root, never blocking on something else put in its place.
func openDir(r *os.Root, rel string) (*os.File, error) {
	return r.OpenFile(rel, openDirFlags, 0)
}

// syncDir makes the entries of a directory durable.
func syncDir(r *os.Root, rel string) error {
	d, err := openDir(r, rel)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
