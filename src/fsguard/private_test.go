package fsguard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// privateMarker is in every file of hamcp's own data folder in privateTree.
const privateMarker = "HAMCP-OWN-TOKEN-91c2"

// privateTree is a root that, as a future or misconfigured root might, contains hamcp's own data
// folder, with links that lead into it:
//
//	base/root            /share
//	base/root/home/data  hamcp's data folder (Options.Private): options.json, hamcp.db, ssh key
type privateTree struct {
	base, root, data string
	fs               *FS
}

func newPrivateTree(t testing.TB) *privateTree {
	t.Helper()
	base := t.TempDir()
	pt := &privateTree{base: base, root: filepath.Join(base, "root"), data: filepath.Join(base, "root", "home", "data")}
	for _, name := range []string{"options.json", "hamcp.db", "ssh_host_ed25519_key"} {
		must(t, os.MkdirAll(pt.data, 0o700))
		must(t, os.WriteFile(filepath.Join(pt.data, name), []byte(privateMarker+" "+name+"\n"), 0o600))
	}
	must(t, os.WriteFile(filepath.Join(pt.root, "home", "notes.txt"), []byte("ordinary\n"), 0o644))
	for link, target := range map[string]string{
		"link_opts":     "home/data/options.json",
		"link_data":     "home/data",
		"link_home":     "home",
		"link_abs_opts": filepath.Join(pt.data, "options.json"),
		"home/up_data":  "../home/data",
	} {
		must(t, os.Symlink(target, filepath.Join(pt.root, link)))
	}
	var err error
	pt.fs, err = New(Options{Roots: []Root{{Alias: "/share", Path: pt.root}}, TrashDir: filepath.Join(base, "trash"), Private: []string{pt.data}})
	must(t, err)
	t.Cleanup(func() { pt.fs.Close() })
	return pt
}

// intact fails when anything in the data folder changed or went away.
func (pt *privateTree) intact(t testing.TB) {
	t.Helper()
	for _, name := range []string{"options.json", "hamcp.db", "ssh_host_ed25519_key"} {
		if b, err := os.ReadFile(filepath.Join(pt.data, name)); err != nil || !strings.Contains(string(b), privateMarker) {
			t.Fatalf("%s in hamcp's data folder changed: %q %v", name, b, err)
		}
	}
}

// A model with the filesystem grant tries every way to reach hamcp's options, store and keys through a
// root that contains them: each is refused, nothing there is read or changed, and the rest of the root
// still works.
func TestHamcpDataFolderIsOutOfReach(t *testing.T) {
	t.Parallel()
	pt := newPrivateTree(t)
	reads := []string{
		"/share/home/data/options.json", "/share/home/data/hamcp.db", "/share/home/data/ssh_host_ed25519_key",
		"/share/link_opts", "/share/link_data/options.json", "/share/link_home/data/options.json",
		"/share/link_abs_opts", "/share/home/up_data/options.json",
	}
	for _, p := range reads {
		t.Run("read "+p, func(t *testing.T) {
			b, _, err := pt.fs.ReadFile(p, 0, 0)
			if err == nil || strings.Contains(string(b), privateMarker) {
				t.Fatalf("read %s: %q %v", p, b, err)
			}
			if text, _, _, err := pt.fs.ReadLines(p, 1, 10); err == nil || strings.Contains(text, privateMarker) {
				t.Fatalf("read lines %s: %q %v", p, text, err)
			}
			if _, err := pt.fs.Stat(p); err == nil {
				t.Fatalf("stat %s answered", p)
			}
		})
	}
	refused := []struct {
		name string
		op   func() error
		want error
	}{
		{"list the folder", func() error { _, _, err := pt.fs.List("/share/home/data", ListOptions{Hidden: true}); return err }, ErrPrivate},
		{"list it through a link", func() error { _, _, err := pt.fs.List("/share/link_data", ListOptions{}); return err }, ErrPrivate},
		{"stat the folder", func() error { _, err := pt.fs.Stat("/share/home/data"); return err }, ErrPrivate},
		{"overwrite the options", func() error {
			_, err := pt.fs.WriteFile("/share/home/data/options.json", []byte("{}"), 0o600, WriteOptions{})
			return err
		}, ErrPrivate},
		{"write through a link", func() error {
			_, err := pt.fs.WriteFile("/share/link_data/authorized_keys", []byte("ssh-ed25519 AAAA"), 0o600, WriteOptions{})
			return err
		}, ErrPrivate},
		{"delete the store", func() error { _, err := pt.fs.Delete("/share/home/data/hamcp.db", false); return err }, ErrPrivate},
		{"delete the folder's parent", func() error { _, err := pt.fs.Delete("/share/home", true); return err }, ErrReadOnly},
		{"move the key out", func() error { return pt.fs.Move("/share/home/data/ssh_host_ed25519_key", "/share/key", false) }, ErrPrivate},
		{"move the folder's parent", func() error { return pt.fs.Move("/share/home", "/share/elsewhere", false) }, ErrReadOnly},
		{"move a file in", func() error { return pt.fs.Move("/share/home/notes.txt", "/share/home/data/options.json", true) }, ErrPrivate},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			err := c.op()
			if !errors.Is(err, c.want) {
				t.Fatalf("%s: %v, want %v", c.name, err, c.want)
			}
			if !strings.Contains(err.Error(), "hamcp's own data folder") {
				t.Errorf("the refusal does not say why: %v", err)
			}
		})
	}
	pt.intact(t)
	if b, _, err := pt.fs.ReadFile("/share/home/notes.txt", 0, 0); err != nil || string(b) != "ordinary\n" {
		t.Fatalf("an ordinary file beside the folder: %q %v", b, err)
	}
	if entries, _, err := pt.fs.List("/share/home", ListOptions{}); err != nil || len(entries) == 0 {
		t.Fatalf("listing the folder's parent: %v %v", entries, err)
	}
}

// No root may be hamcp's data folder or lie inside it: such a root could only serve to reach it.
func TestRootInsideHamcpDataFolderIsRefused(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	data := filepath.Join(base, "data")
	must(t, os.MkdirAll(filepath.Join(data, "sub"), 0o700))
	for _, root := range []string{data, filepath.Join(data, "sub")} {
		f, err := New(Options{Roots: []Root{{Alias: "/data", Path: root}}, TrashDir: filepath.Join(base, "trash"), Private: []string{data}})
		if err == nil {
			f.Close()
			t.Fatalf("root %s inside hamcp's data folder was accepted", root)
		}
		if !strings.Contains(err.Error(), "hamcp's own data folder") {
			t.Errorf("the error does not say why: %v", err)
		}
	}
}

// FuzzPrivatePaths: whatever path a model sends, nothing from hamcp's data folder comes back.
func FuzzPrivatePaths(f *testing.F) {
	for _, s := range []string{"/share/home/data/options.json", "/share/link_opts", "/share/link_data", "/share/home/up_data/x",
		"/share/link_home/data", "/share/link_abs_opts", "/share/home", "/share"} {
		f.Add(s)
	}
	pt := newPrivateTree(f)
	f.Fuzz(func(t *testing.T, p string) {
		if b, _, err := pt.fs.ReadFile(p, 0, 0); err == nil && strings.Contains(string(b), privateMarker) {
			t.Fatalf("read %q returned hamcp's own data", p)
		}
		if entries, _, err := pt.fs.List(p, ListOptions{Hidden: true}); err == nil {
			for _, e := range entries {
				if e.Name == "options.json" || e.Name == "hamcp.db" {
					t.Fatalf("list %q showed hamcp's data folder: %v", p, entries)
				}
			}
		}
	})
}
