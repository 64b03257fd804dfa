package fsguard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// ErrPrivate: the path is in one of hamcp's own folders (Options.Private).
var ErrPrivate = errors.New("path is in hamcp's own data folder")

// privateReason is what a refused path is told: the folder holds what would let the assistant act as
// hamcp (or as the user who configured it), so no grant reaches it.
const privateReason = "is in hamcp's own data folder, which the file tools never reach: it holds hamcp's options " +
	"with their tokens, its store and its keys. Nothing there is meant to be read or changed by the assistant"

// setPrivate records the real paths of hamcp's own folders. A folder that does not exist yet is kept
// as given, made absolute, so it is refused once it appears.
func (f *FS) setPrivate(dirs []string) error {
	for i, d := range dirs {
		if d == "" {
			return fmt.Errorf("fsguard: Options.Private[%d] is empty; give hamcp's data directory, e.g. /data", i)
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return fmt.Errorf("fsguard: Options.Private[%d]: %w", i, err)
		}
		f.private = append(f.private, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			f.private = append(f.private, real)
		}
	}
	return nil
}

// checkRootsPrivate refuses a root inside one of hamcp's own folders: such a root could only serve to
// reach them. A root that contains one is allowed; every operation then refuses the folder itself.
func (f *FS) checkRootsPrivate() error {
	for _, r := range f.roots {
		for _, p := range f.private {
			if within(r.real, p) {
				return fmt.Errorf("fsguard: root %s (%s) is inside hamcp's own data folder %s, which the file tools never reach; map another directory", r.cfg.Alias, r.real, p)
			}
			if within(p, r.real) {
				r.holdsPrivate = true
			}
		}
	}
	return nil
}

// checkPrivate refuses a path that is in one of hamcp's own folders. The lexical check suffices for a
// root that contains none of them, since os.Root keeps every operation inside the root; for a root that
// does, the path's real host location is checked too, so an in-root symlink cannot lead there.
func (f *FS) checkPrivate(op, path string, r *rootEntry, rel string) error {
	refuse := &PathError{Op: op, Path: path, Reason: privateReason, Err: ErrPrivate}
	if f.isPrivate(filepath.Join(r.real, filepath.FromSlash(rel))) {
		return refuse
	}
	if !r.holdsPrivate || rel == "." {
		return nil
	}
	dir, name := parentRel(rel)
	real, exact, err := f.realDir(r, dir)
	if err != nil {
		return nil // the operation itself reports the missing or unreadable directory
	}
	if !exact {
		return nil // the parent does not exist, so neither does the path
	}
	target := filepath.Join(real, name)
	if f.isPrivate(target) {
		return refuse
	}
	// The last component may be a symlink: os.Root resolves it inside the root, as EvalSymlinks does
	// from the root's real path.
	if resolved, err := filepath.EvalSymlinks(target); err == nil && f.isPrivate(resolved) {
		return refuse
	}
	return nil
}

// checkOpenedPrivate checks what was actually opened, through the kernel's name for the descriptor,
// so a path swapped between the check and the open cannot lead into a private folder.
func (f *FS) checkOpenedPrivate(op, path string, file *os.File) error {
	if len(f.private) == 0 {
		return nil
	}
	if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(file.Fd()))); err == nil && filepath.IsAbs(p) && f.isPrivate(p) {
		return &PathError{Op: op, Path: path, Reason: privateReason, Err: ErrPrivate}
	}
	return nil
}

func (f *FS) isPrivate(hostPath string) bool {
	for _, p := range f.private {
		if within(hostPath, p) {
			return true
		}
	}
	return false
}
