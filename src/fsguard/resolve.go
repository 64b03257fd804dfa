package fsguard

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Resolved is a user path checked against the roots. Rel is slash-separated and relative to Root.Path
// ("." for the root itself); Display is the canonical alias form shown back to the user.
type Resolved struct {
	Root    *Root
	Rel     string
	Display string
}

// Resolve checks a user path lexically and names the root it belongs to. It does not touch the disk:
// symlinks are handled by every operation through os.Root.
func (f *FS) Resolve(userPath string) (Resolved, error) {
	_, res, err := f.resolve("resolve", userPath)
	return res, err
}

func (f *FS) resolve(op, userPath string) (*rootEntry, Resolved, error) {
	alias, rel, reason := splitPath(userPath)
	if reason != "" {
		return nil, Resolved{}, &PathError{Op: op, Path: userPath, Reason: reason, Roots: f.aliases, Err: ErrOutsideRoots}
	}
	r := f.byAlias[alias]
	if r == nil {
		return nil, Resolved{}, &PathError{Op: op, Path: userPath, Reason: f.unknownRoot(alias), Roots: f.aliases, Err: ErrOutsideRoots}
	}
	if err := f.checkPrivate(op, userPath, r, rel); err != nil {
		return nil, Resolved{}, err
	}
	display := alias
	if rel != "." {
		display = alias + "/" + rel
	}
	root := r.cfg // a copy: callers must not be able to change the configuration
	return r, Resolved{Root: &root, Rel: rel, Display: display}, nil
}

func (f *FS) unknownRoot(alias string) string {
	for _, a := range f.aliases {
		if strings.EqualFold(a, alias) {
			return fmt.Sprintf("names %s, which is not a root; root names are case-sensitive, write %s", alias, a)
		}
	}
	if alias == defaultRoot {
		return "names /config (relative paths are relative to /config), which is not available here; start with a root"
	}
	return fmt.Sprintf("is not under an allowed root (it names %s)", alias)
}

// checkWritable refuses creating, replacing or removing the entry at rel when its root is read-only, or
// when the entry is, is inside, or contains a protected directory: a system directory, a read-only root
// (perhaps the same directory under another alias), or the trash. The check uses the real host path of
// the parent as opened through os.Root, so a misconfigured root or an in-root symlink cannot hide where
// the write lands. A missing parent is judged by its nearest existing ancestor, where MkdirAll would start.
func (f *FS) checkWritable(op, path string, r *rootEntry, rel string) error {
	if r.cfg.ReadOnly {
		return &PathError{Op: op, Path: path, Reason: fmt.Sprintf("is in read-only root %s", r.cfg.Alias), Err: ErrReadOnly}
	}
	if rel == "." {
		return &PathError{Op: op, Path: path, Reason: "is a root directory itself; name an entry inside it", Err: ErrReadOnly}
	}
	dir, name := parentRel(rel)
	real, exact, err := f.realDir(r, dir)
	if err != nil {
		return f.opError(op, path, err)
	}
	target := real
	if exact {
		target = filepath.Join(real, name)
	}
	for _, p := range f.protected {
		if within(target, p.path) || exact && within(p.path, target) {
			return &PathError{Op: op, Path: path, Reason: "would change " + p.what, Err: ErrReadOnly}
		}
	}
	return nil
}

// protectedDir is a host directory no write may touch; what names it for the user.
type protectedDir struct{ path, what string }

func (f *FS) protectDirs() {
	for _, d := range systemDirs {
		what := d + ", a system directory that is never written"
		f.protected = append(f.protected, protectedDir{d, what})
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			f.protected = append(f.protected, protectedDir{real, what})
		}
	}
	for _, r := range f.roots {
		if r.cfg.ReadOnly {
			f.protected = append(f.protected, protectedDir{r.real, "read-only root " + r.cfg.Alias + ", which is never written"})
		}
	}
	f.protected = append(f.protected, protectedDir{f.trash.dir, "the trash, which is never written directly; use restore"})
	for _, p := range f.private {
		f.protected = append(f.protected, protectedDir{p, "hamcp's own data folder (its options, tokens, store and keys), which the file tools never reach"})
	}
}

// realDir finds the host path of a directory in a root, or of its nearest existing ancestor (exact is
// then false). It asks the kernel, through /proc, for the path of the directory actually opened via
// os.Root, so symlinks inside the root are accounted for; without /proc it resolves the joined path.
func (f *FS) realDir(r *rootEntry, dirRel string) (real string, exact bool, err error) {
	exact = true
	for {
		d, err := openDir(r.root, dirRel)
		if err == nil {
			defer d.Close()
			fi, err := d.Stat()
			if err != nil {
				return "", false, err
			}
			if !fi.IsDir() {
				return "", false, &os.PathError{Op: "open", Path: dirRel, Err: syscall.ENOTDIR}
			}
			if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(d.Fd()))); err == nil && filepath.IsAbs(p) {
				return p, exact, nil
			}
			p, err := filepath.EvalSymlinks(filepath.Join(r.real, filepath.FromSlash(dirRel)))
			return p, exact, err
		}
		if !os.IsNotExist(err) || dirRel == "." {
			return "", false, err
		}
		dirRel, _ = parentRel(dirRel)
		exact = false
	}
}
