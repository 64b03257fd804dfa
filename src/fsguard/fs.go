package fsguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Root is one directory the tools may reach, under a fixed alias.
type Root struct {
	Alias    string // "/config"
	Path     string // the real directory on this host
	ReadOnly bool
}

// Options configures an FS.
type Options struct {
	// Roots lists the candidate roots; those whose Path does not exist are skipped. Several aliases may
	// name the same directory (/config and /homeassistant do in the add-on).
	Roots []Root
	// TrashDir keeps deleted and overwritten versions. It must lie outside every root; it is created.
	TrashDir string
	// Retention is how long trash items are kept (default 7 days).
	Retention time.Duration
	// MaxVersions is how many trash items are kept per path (default 10).
	MaxVersions int
	// Private lists hamcp's own folders (its data directory: store, SSH host key, options with their
	// tokens). No root may lie inside one, and no operation reads, lists, stats or changes anything in
	// one, even through a root that contains it.
	Private []string
}

// Defaults for Options and for reads.
const (
	DefaultRetention   = 7 * 24 * time.Hour
	DefaultMaxVersions = 10
	DefaultMaxRead     = 1 << 20
	MaxRead            = 16 << 20 // the most one ReadFile returns, so a caller cannot make it allocate gigabytes
)

// systemDirs are never written, whatever root or grant leads there.
var systemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/sys", "/proc"}

var aliasPattern = regexp.MustCompile(`^/[a-z0-9][a-z0-9_-]*$`)

// FS gives confined, recoverable access to the configured roots. It is safe for concurrent use.
type FS struct {
	roots   []*rootEntry
	byAlias map[string]*rootEntry
	aliases []string // for error messages, in configuration order
	trash   *trash
	// protected lists the host directories no write may touch.
	protected []protectedDir
	// private lists hamcp's own folders, which nothing reaches (private.go).
	private []string
}

type rootEntry struct {
	cfg  Root   // as configured, Path replaced by the real path
	real string // symlink-free absolute path
	root *os.Root
	// holdsPrivate: one of hamcp's own folders is inside this root, so paths are also checked on
	// their real host location.
	holdsPrivate bool
}

// New opens the existing roots and the trash, cleans up temp files left by a crashed write, and
// removes trash items past retention: a trash nothing has been added to since they expired would
// otherwise keep them on disk for ever.
func New(o Options) (*FS, error) {
	if len(o.Roots) == 0 {
		return nil, errors.New("fsguard: Options.Roots is empty; configure at least /config")
	}
	if o.Retention < 0 || o.MaxVersions < 0 {
		return nil, errors.New("fsguard: Options.Retention and Options.MaxVersions must not be negative")
	}
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.MaxVersions == 0 {
		o.MaxVersions = DefaultMaxVersions
	}
	f := &FS{byAlias: map[string]*rootEntry{}}
	if err := f.setPrivate(o.Private); err != nil {
		return nil, err
	}
	if err := f.openRoots(o.Roots); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.checkRootsPrivate(); err != nil {
		f.Close()
		return nil, err
	}
	t, err := f.openTrash(o)
	if err != nil {
		f.Close()
		return nil, err
	}
	f.trash = t
	f.protectDirs()
	f.cleanPending()
	f.trash.purge(time.Now())
	return f, nil
}

func (f *FS) openRoots(roots []Root) error {
	opened := map[string]*os.Root{}
	var missing []string
	for i, r := range roots {
		if !aliasPattern.MatchString(r.Alias) {
			return fmt.Errorf("fsguard: Options.Roots[%d].Alias %q must be a slash and a lowercase name, like /config", i, r.Alias)
		}
		if _, dup := f.byAlias[r.Alias]; dup || slices.Contains(missing, r.Alias) {
			return fmt.Errorf("fsguard: Options.Roots[%d].Alias %q is listed twice", i, r.Alias)
		}
		if r.Path == "" {
			return fmt.Errorf("fsguard: Options.Roots[%d].Path is empty; give the directory behind %s", i, r.Alias)
		}
		real, err := realPath(r.Path)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, r.Alias)
			continue
		}
		if err != nil {
			return fmt.Errorf("fsguard: Options.Roots[%d].Path: %w", i, err)
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return fmt.Errorf("fsguard: Options.Roots[%d].Path %q is not a directory", i, r.Path)
		}
		or := opened[real]
		if or == nil {
			if or, err = os.OpenRoot(real); err != nil {
				return fmt.Errorf("fsguard: Options.Roots[%d]: %w", i, err)
			}
			opened[real] = or
		}
		e := &rootEntry{cfg: Root{Alias: r.Alias, Path: real, ReadOnly: r.ReadOnly}, real: real, root: or}
		f.roots = append(f.roots, e)
		f.byAlias[r.Alias] = e
		f.aliases = append(f.aliases, r.Alias)
	}
	if len(f.roots) == 0 {
		return fmt.Errorf("fsguard: none of the configured roots exists (%s)", strings.Join(missing, ", "))
	}
	return nil
}

func (f *FS) openTrash(o Options) (*trash, error) {
	if o.TrashDir == "" {
		return nil, errors.New("fsguard: Options.TrashDir is empty; give a directory outside every root, e.g. /data/trash")
	}
	abs, err := filepath.Abs(o.TrashDir)
	if err != nil {
		return nil, fmt.Errorf("fsguard: Options.TrashDir: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("fsguard: Options.TrashDir: %w", err)
	}
	real, err := realPath(abs)
	if err != nil {
		return nil, fmt.Errorf("fsguard: Options.TrashDir: %w", err)
	}
	for _, r := range f.roots {
		if within(real, r.real) || within(r.real, real) {
			return nil, fmt.Errorf("fsguard: Options.TrashDir %q overlaps root %s (%s); put it outside every root", o.TrashDir, r.cfg.Alias, r.real)
		}
	}
	return openTrash(real, o.Retention, o.MaxVersions, f.versionKey)
}

// Close releases the open root directories.
func (f *FS) Close() error {
	seen := map[*os.Root]bool{}
	for _, r := range f.roots {
		if !seen[r.root] {
			seen[r.root] = true
			r.root.Close()
		}
	}
	return nil
}

// Roots returns the roots in use (those that exist), with their real paths.
func (f *FS) Roots() []Root {
	out := make([]Root, len(f.roots))
	for i, r := range f.roots {
		out[i] = r.cfg
	}
	return out
}

// versionKey groups trash items that are versions of one file, even when reached through different
// aliases of the same directory.
func (f *FS) versionKey(display string) string {
	alias, rel, reason := splitPath(display)
	if reason != "" {
		return display
	}
	if r := f.byAlias[alias]; r != nil {
		return r.real + "\x00" + rel
	}
	return display
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether p is dir or below it; both are clean absolute paths.
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
