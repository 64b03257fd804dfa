package fsguard

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestWriteFile(t *testing.T) {
	tr := newTree(t)
	tests := []struct {
		name        string
		path        string
		perm        fs.FileMode
		opts        WriteOptions
		wantHost    string // host path relative to base that must hold the data
		wantMode    fs.FileMode
		wantCreated bool
		wantPrev    bool
		wantErr     string
	}{
		{"new file, default perm", "/config/new.yaml", 0, WriteOptions{}, "roots/config/new.yaml", 0o644, true, false, ""},
		{"new file, given perm", "/config/secret.yaml", 0o600, WriteOptions{}, "roots/config/secret.yaml", 0o600, true, false, ""},
		{"relative path", "rel.yaml", 0, WriteOptions{}, "roots/config/rel.yaml", 0o644, true, false, ""},
		{"existing keeps its mode", "/config/sub/a.yaml", 0o777, WriteOptions{}, "roots/config/sub/a.yaml", 0o640, false, true, ""},
		{"other alias, same dir", "/homeassistant/configuration.yaml", 0, WriteOptions{}, "roots/config/configuration.yaml", 0o644, false, true, ""},
		{"through an inside link", "/config/link_in/new.yaml", 0, WriteOptions{}, "roots/config/sub/new.yaml", 0o644, true, false, ""},
		{"create dirs", "/share/x/y/z.txt", 0, WriteOptions{CreateDirs: true}, "roots/share/x/y/z.txt", 0o644, true, false, ""},
		{"missing dir", "/share/nope/z.txt", 0, WriteOptions{}, "", 0, false, false, "directory does not exist"},
		{"exclusive, new", "/config/excl.yaml", 0, WriteOptions{Exclusive: true}, "roots/config/excl.yaml", 0o644, true, false, ""},
		{"exclusive on existing", "/config/.hidden", 0, WriteOptions{Exclusive: true}, "", 0, false, false, "already exists"},
		{"symlink", "/config/link_file_in", 0, WriteOptions{}, "", 0, false, false, "is a symlink"},
		{"directory", "/config/sub", 0, WriteOptions{}, "", 0, false, false, "is a directory"},
		{"fifo", "/config/fifo", 0, WriteOptions{}, "", 0, false, false, "FIFO"},
		{"hard link", "/config/hard_canary", 0, WriteOptions{}, "", 0, false, false, "hard link"},
		{"read-only root", "/ssl/new.pem", 0, WriteOptions{}, "", 0, false, false, "read-only root /ssl"},
		{"root itself", "/share", 0, WriteOptions{}, "", 0, false, false, "root directory itself"},
		{"perm too wide", "/config/p.yaml", 0o4755, WriteOptions{}, "", 0, false, false, "beyond 0777"},
		{"parent is a file", "/config/configuration.yaml/x", 0, WriteOptions{CreateDirs: true}, "", 0, false, false, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte("written by " + tt.name + "\n")
			res, err := tr.fs.WriteFile(tt.path, data, tt.perm, tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want %q", err, tt.wantErr)
				}
				if e := tr.escaped(t); e != "" {
					t.Fatal(e)
				}
				return
			}
			must(t, err)
			host := filepath.Join(tr.base, tt.wantHost)
			if got := readHost(t, host); got != string(data) {
				t.Fatalf("host file holds %q", got)
			}
			if m := modeOf(t, host); m != tt.wantMode {
				t.Fatalf("mode = %v, want %v", m, tt.wantMode)
			}
			if res.Created != tt.wantCreated || (res.PreviousVersionID != "") != tt.wantPrev || res.Bytes != int64(len(data)) {
				t.Fatalf("result = %+v", res)
			}
			if leftovers := tempFiles(t, tr.base); len(leftovers) > 0 {
				t.Fatalf("temp files left: %v", leftovers)
			}
		})
	}
}

func TestWriteKeepsPreviousVersion(t *testing.T) {
	tr := newTree(t)
	path := filepath.Join(tr.config, "configuration.yaml")
	must(t, os.Chmod(path, 0o755|fs.ModeSetgid))
	old := readHost(t, path)
	res, err := tr.fs.WriteFile("/config/configuration.yaml", []byte("new: true\n"), 0, WriteOptions{})
	must(t, err)
	if m := modeOf(t, path); m != 0o755|fs.ModeSetgid {
		t.Fatalf("mode after write = %v", m)
	}
	items, err := tr.fs.Trash("/config/configuration.yaml")
	must(t, err)
	if len(items) != 1 || items[0].ID != res.PreviousVersionID || items[0].Kind != KindOverwritten ||
		items[0].Size != int64(len(old)) || items[0].Path != "/config/configuration.yaml" {
		t.Fatalf("trash = %+v, write = %+v", items, res)
	}
	if _, err := tr.fs.Restore(res.PreviousVersionID, "", false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("restore onto the new version without overwrite: err = %v", err)
	}
	if _, err := tr.fs.Restore(res.PreviousVersionID, "", true); err != nil {
		t.Fatal(err)
	}
	if got := readHost(t, path); got != old {
		t.Fatalf("restored %q, want %q", got, old)
	}
	if m := modeOf(t, path); m != 0o755|fs.ModeSetgid {
		t.Fatalf("restored mode = %v", m)
	}
	items, err = tr.fs.Trash("/homeassistant/configuration.yaml") // same file through the other alias
	must(t, err)
	if len(items) != 1 || items[0].Kind != KindOverwritten || tr.trashHolding(t, "new: true") == "" {
		t.Fatalf("the clobbered new version is not in the trash: %+v", items)
	}
}

// TestWriteRefusesSystemDirs points roots at system directories, as a misconfiguration might, and
// checks that no write lands there whatever the root says. The names used do not exist, so a failure
// of the guard cannot damage the host.
func TestWriteRefusesSystemDirs(t *testing.T) {
	base := t.TempDir()
	must(t, os.Symlink("/usr/share", filepath.Join(base, "sneaky")))
	f, err := New(Options{
		Roots: []Root{
			{Alias: "/config", Path: base},
			{Alias: "/etcroot", Path: "/etc"},
			{Alias: "/via-link", Path: filepath.Join(base, "sneaky")},
			{Alias: "/proc", Path: "/proc/self"},
		},
		TrashDir: filepath.Join(t.TempDir(), "trash"),
	})
	must(t, err)
	defer f.Close()
	probe := fmt.Sprintf("hamcp-fsguard-probe-%08x", rand.Uint32())
	for _, p := range []string{"/etcroot/" + probe, "/etcroot/" + probe + "/x/y", "/via-link/" + probe, "/proc/" + probe} {
		t.Run(p, func(t *testing.T) {
			_, err := f.WriteFile(p, []byte("x"), 0, WriteOptions{CreateDirs: true})
			if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "never written") {
				t.Errorf("WriteFile: err = %v; want ErrReadOnly", err)
			}
			if _, err := f.Delete(p, true); !errors.Is(err, ErrReadOnly) {
				t.Errorf("Delete: err = %v; want ErrReadOnly", err)
			}
			if err := f.Move("/config/x", p, true); !errors.Is(err, ErrReadOnly) {
				t.Errorf("Move: err = %v; want ErrReadOnly", err)
			}
		})
	}
	for _, host := range []string{"/etc/" + probe, "/usr/share/" + probe} {
		if _, err := os.Lstat(host); err == nil {
			os.RemoveAll(host)
			t.Fatalf("%s was created", host)
		}
	}
	// Reading stays allowed.
	if _, _, err := f.ReadFile("/etcroot/hostname", 0, 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reading /etc/hostname: %v", err)
	}
}

// TestReadOnlyReachedThroughAnotherRoot nests a read-only root inside a writable one.
func TestReadOnlyReachedThroughAnotherRoot(t *testing.T) {
	base := t.TempDir()
	share := filepath.Join(base, "share")
	must(t, os.MkdirAll(filepath.Join(share, "certs"), 0o755))
	must(t, os.WriteFile(filepath.Join(share, "certs", "key.pem"), []byte("key"), 0o600))
	f, err := New(Options{
		Roots: []Root{
			{Alias: "/share", Path: share},
			{Alias: "/ssl", Path: filepath.Join(share, "certs"), ReadOnly: true},
		},
		TrashDir: filepath.Join(base, "trash"),
	})
	must(t, err)
	defer f.Close()
	checks := map[string]error{}
	_, checks["write into"] = f.WriteFile("/share/certs/key.pem", []byte("x"), 0, WriteOptions{})
	_, checks["delete into"] = f.Delete("/share/certs/key.pem", false)
	_, checks["delete containing"] = f.Delete("/share/certs", true)
	checks["move containing"] = f.Move("/share/certs", "/share/elsewhere", false)
	_, checks["write ro"] = f.WriteFile("/ssl/key.pem", []byte("x"), 0, WriteOptions{})
	for name, err := range checks {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: err = %v; want ErrReadOnly", name, err)
		}
	}
	if got := readHost(t, filepath.Join(share, "certs", "key.pem")); got != "key" {
		t.Fatalf("key.pem = %q", got)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "config")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(base, "file"), nil, 0o644))
	trash := filepath.Join(base, "trash")
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"no roots", Options{TrashDir: trash}, "Options.Roots is empty"},
		{"bad alias", Options{Roots: []Root{{Alias: "config", Path: dir}}, TrashDir: trash}, "Alias"},
		{"upper-case alias", Options{Roots: []Root{{Alias: "/Config", Path: dir}}, TrashDir: trash}, "Alias"},
		{"nested alias", Options{Roots: []Root{{Alias: "/a/b", Path: dir}}, TrashDir: trash}, "Alias"},
		{"duplicate alias", Options{Roots: []Root{{Alias: "/config", Path: dir}, {Alias: "/config", Path: dir}}, TrashDir: trash}, "listed twice"},
		{"empty path", Options{Roots: []Root{{Alias: "/config"}}, TrashDir: trash}, "Path is empty"},
		{"file as root", Options{Roots: []Root{{Alias: "/config", Path: filepath.Join(base, "file")}}, TrashDir: trash}, "not a directory"},
		{"none exist", Options{Roots: []Root{{Alias: "/config", Path: filepath.Join(base, "nope")}}, TrashDir: trash}, "none of the configured roots"},
		{"no trash", Options{Roots: []Root{{Alias: "/config", Path: dir}}}, "TrashDir is empty"},
		{"trash in root", Options{Roots: []Root{{Alias: "/config", Path: dir}}, TrashDir: filepath.Join(dir, ".trash")}, "overlaps root /config"},
		{"root in trash", Options{Roots: []Root{{Alias: "/config", Path: dir}}, TrashDir: base}, "overlaps root /config"},
		{"negative retention", Options{Roots: []Root{{Alias: "/config", Path: dir}}, TrashDir: trash, Retention: -1}, "Retention"},
		{"negative versions", Options{Roots: []Root{{Alias: "/config", Path: dir}}, TrashDir: trash, MaxVersions: -1}, "MaxVersions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(tt.opts)
			if err == nil {
				f.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v; want %q", err, tt.wantErr)
			}
		})
	}
	f, err := New(Options{Roots: []Root{{Alias: "/config", Path: dir}, {Alias: "/media", Path: filepath.Join(base, "media")}}, TrashDir: trash})
	must(t, err)
	defer f.Close()
	if roots := f.Roots(); len(roots) != 1 || roots[0].Alias != "/config" {
		t.Fatalf("roots = %+v; the missing /media should be skipped", roots)
	}
	if _, err := f.Resolve("/media/x"); err == nil || !strings.Contains(err.Error(), "allowed roots: /config") {
		t.Fatalf("resolving under a skipped root: %v", err)
	}
}

func TestDiskUsage(t *testing.T) {
	tr := newTree(t)
	usage, err := tr.fs.DiskUsage()
	must(t, err)
	if len(usage) != 4 {
		t.Fatalf("usage for %d roots, want 4: %+v", len(usage), usage)
	}
	for _, u := range usage {
		if u.Total == 0 || u.Used+u.Free != u.Total || u.Available > u.Free {
			t.Errorf("implausible usage %+v", u)
		}
	}
	if usage[2].Root != "/ssl" || !usage[2].ReadOnly {
		t.Errorf("usage[2] = %+v", usage[2])
	}
}

// tempFiles lists fsguard temp files under dir.
func tempFiles(t testing.TB, dir string) []string {
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && isTempName(d.Name()) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// TestConcurrentWrites races writers on one file: it always ends as one complete version, and the trash
// keeps no more versions than allowed. A write that finds the file changing under it while it keeps
// the previous version refuses, writing nothing ("try again"): how many do depends on scheduling, so
// only that at least one write landed is required.
func TestConcurrentWrites(t *testing.T) {
	tr := newTree(t)
	const writers, rounds = 4, 5
	versions := map[string]bool{}
	var wg sync.WaitGroup
	var landed atomic.Int32
	for w := range writers {
		for r := range rounds {
			versions[fmt.Sprintf("writer %d round %d\n", w, r)] = true
		}
		wg.Go(func() {
			for r := range rounds {
				_, err := tr.fs.WriteFile("/config/shared.yaml", []byte(fmt.Sprintf("writer %d round %d\n", w, r)), 0, WriteOptions{})
				switch {
				case err == nil:
					landed.Add(1)
				case !strings.Contains(err.Error(), "changed while being copied; try again"):
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if landed.Load() == 0 {
		t.Fatal("no write landed")
	}
	if got := readHost(t, filepath.Join(tr.config, "shared.yaml")); !versions[got] {
		t.Fatalf("final content %q is not one of the written versions", got)
	}
	items, err := tr.fs.Trash("/config/shared.yaml")
	must(t, err)
	if len(items) > DefaultMaxVersions || len(items) == 0 {
		t.Fatalf("%d versions kept", len(items))
	}
	if left := tempFiles(t, tr.base); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}
