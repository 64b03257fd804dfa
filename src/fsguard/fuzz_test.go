package fsguard

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve checks that no path resolves outside its root, and that reading, writing and deleting it
// never reaches the guarded files of a real tree full of hostile links.
func FuzzResolve(f *testing.F) {
	for _, p := range traversals {
		f.Add("/config/" + p)
	}
	for _, p := range outwardNames {
		f.Add("/config/" + p)
	}
	for _, p := range []string{"/config/sub/a.yaml", "sub/deep/b.yaml", "/share/file.txt", "/ssl/cert.pem",
		"/CONFIG/x", "//config", "/config/", "/config/link_in/new", "/share/link_out/canary2.txt"} {
		f.Add(p)
	}
	tr := newTree(f)
	f.Fuzz(func(t *testing.T, p string) {
		res, err := tr.fs.Resolve(p)
		if err != nil {
			if !errors.Is(err, ErrOutsideRoots) || !strings.Contains(err.Error(), "allowed roots") {
				t.Fatalf("Resolve(%q) error %v does not name the allowed roots", p, err)
			}
		} else {
			checkResolved(t, tr, p, res)
		}
		if data, _, err := tr.fs.ReadFile(p, 0, 0); err == nil && strings.Contains(string(data), canaryMarker) {
			t.Fatalf("ReadFile(%q) returned outside content", p)
		}
		tr.fs.WriteFile(p, []byte("fuzz\n"), 0, WriteOptions{CreateDirs: true})
		tr.fs.Delete(p, false)
		if e := tr.escaped(t); e != "" {
			t.Fatalf("%q escaped: %s", p, e)
		}
	})
}

func checkResolved(t *testing.T, tr *testTree, p string, res Resolved) {
	t.Helper()
	var root *rootEntry
	for _, r := range tr.fs.roots {
		if r.cfg == *res.Root {
			root = r
		}
	}
	if root == nil {
		t.Fatalf("Resolve(%q) named a root that is not configured: %+v", p, res.Root)
	}
	rel := res.Rel
	if rel != "." && (!filepath.IsLocal(rel) || path.Clean(rel) != rel || strings.ContainsAny(rel, "\\\x00")) {
		t.Fatalf("Resolve(%q) gave a non-local Rel %q", p, rel)
	}
	host := filepath.Join(root.real, rel)
	if !within(host, root.real) {
		t.Fatalf("Resolve(%q) lands at %s, outside %s", p, host, root.real)
	}
	want := root.cfg.Alias
	if rel != "." {
		want += "/" + rel
	}
	if res.Display != want {
		t.Fatalf("Resolve(%q).Display = %q, want %q", p, res.Display, want)
	}
}

func BenchmarkResolve(b *testing.B) {
	tr := newTree(b)
	for b.Loop() {
		if _, err := tr.fs.Resolve("/config/packages/lights/kitchen.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFile(b *testing.B) {
	tr := newTree(b)
	for b.Loop() {
		if _, _, err := tr.fs.ReadFile("/config/sub/a.yaml", 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFile measures a full atomic replace: trash copy, temp file, fsyncs, rename.
func BenchmarkWriteFile(b *testing.B) {
	tr := newTree(b)
	data := []byte(strings.Repeat("automation: []\n", 256)) // 4 KiB
	for b.Loop() {
		if _, err := tr.fs.WriteFile("/config/automations.yaml", data, 0, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListPage(b *testing.B) {
	tr := newTree(b)
	dir := filepath.Join(tr.config, "many")
	must(b, os.Mkdir(dir, 0o755))
	for i := range 2000 {
		must(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), nil, 0o644))
	}
	for b.Loop() {
		if _, _, err := tr.fs.List("/config/many", ListOptions{Offset: 1000, Limit: 100}); err != nil {
			b.Fatal(err)
		}
	}
}
