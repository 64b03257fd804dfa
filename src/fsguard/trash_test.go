package fsguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDeleteRestoreFileIntact(t *testing.T) {
	tr := newTree(t)
	host := filepath.Join(tr.config, "script.sh")
	content := []byte("#!/bin/sh\necho hi\n\x00\xff binary tail")
	must(t, os.WriteFile(host, content, 0o600))
	must(t, os.Chmod(host, 0o751|fs.ModeSetuid))

	item, err := tr.fs.Delete("/config/script.sh", false)
	must(t, err)
	if _, err := os.Lstat(host); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("file still there after delete: %v", err)
	}
	if item.Kind != KindDeleted || item.Path != "/config/script.sh" || item.Size != int64(len(content)) ||
		item.Mode != 0o751|fs.ModeSetuid || !item.Expires.Equal(item.Time.Add(DefaultRetention)) {
		t.Fatalf("item = %+v", item)
	}
	restored, err := tr.fs.Restore(item.ID, "", false)
	must(t, err)
	if restored.ID != item.ID {
		t.Fatalf("restored %+v", restored)
	}
	if got := readHost(t, host); got != string(content) {
		t.Fatalf("restored content %q", got)
	}
	if m := modeOf(t, host); m != 0o751|fs.ModeSetuid {
		t.Fatalf("restored mode %v", m)
	}
	if items, _ := tr.fs.Trash("/config/script.sh"); len(items) != 0 {
		t.Fatalf("restored item still in the trash: %+v", items)
	}
	if _, err := tr.fs.Restore(item.ID, "", false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("restoring twice: err = %v", err)
	}
}

func TestDeleteRestoreTreeIntact(t *testing.T) {
	tr := newTree(t)
	root := filepath.Join(tr.config, "pkg")
	must(t, os.MkdirAll(filepath.Join(root, "locked", "inner"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "a.yaml"), []byte("a"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "locked", "inner", "ro.txt"), []byte("read only"), 0o400))
	must(t, os.WriteFile(filepath.Join(root, "none"), []byte("no perms"), 0))
	must(t, os.Symlink("../configuration.yaml", filepath.Join(root, "up")))
	must(t, os.Symlink("/nowhere/absolute", filepath.Join(root, "abs")))
	must(t, os.Chmod(filepath.Join(root, "locked"), 0o500))
	must(t, os.Chmod(root, 0o750))
	before := hostTree(t, root)

	if _, err := tr.fs.Delete("/config/pkg", false); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("non-recursive delete of a full directory: err = %v", err)
	}
	item, err := tr.fs.Delete("/config/pkg", true)
	must(t, err)
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) || !item.IsDir || item.Size != int64(len("a")+len("read only")+len("no perms")) {
		t.Fatalf("after delete: %v, item %+v", err, item)
	}
	_, err = tr.fs.Restore(item.ID, "", false)
	must(t, err)
	if after := hostTree(t, root); after != before {
		t.Fatalf("restored tree differs:\n%s\nwant:\n%s", after, before)
	}
	// Restore to another place, after deleting again.
	item, err = tr.fs.Delete("/config/pkg", true)
	must(t, err)
	_, err = tr.fs.Restore(item.ID, "/share/new/place/pkg", false)
	must(t, err)
	if after := hostTree(t, filepath.Join(tr.share, "new", "place", "pkg")); after != before {
		t.Fatalf("tree restored elsewhere differs:\n%s", after)
	}
}

func TestDeleteSymlinkAndEmptyDir(t *testing.T) {
	tr := newTree(t)
	item, err := tr.fs.Delete("/config/link_abs_out", false)
	must(t, err)
	if !item.IsSymlink {
		t.Fatalf("item = %+v", item)
	}
	must(t, os.Mkdir(filepath.Join(tr.config, "empty"), 0o700))
	_, err = tr.fs.Delete("/config/empty", false)
	must(t, err)
	_, err = tr.fs.Restore(item.ID, "", false)
	must(t, err)
	if target, err := os.Readlink(filepath.Join(tr.config, "link_abs_out")); err != nil || target != filepath.Join(tr.outside, "canary.txt") {
		t.Fatalf("restored link -> %q, %v", target, err)
	}
	if e := tr.escaped(t); e != "" {
		t.Fatal(e)
	}
	for _, p := range []string{"/config", "/config/nope", "/ssl/cert.pem", "/config/hard_canary"} {
		if _, err := tr.fs.Delete(p, true); err == nil {
			t.Errorf("Delete(%s) succeeded", p)
		}
	}
}

func TestTrashVersionsAndRetention(t *testing.T) {
	tr := newTree(t)
	opts := tr.options()
	opts.MaxVersions = 3
	opts.TrashDir = filepath.Join(tr.base, "trash2")
	f, err := New(opts)
	must(t, err)
	defer f.Close()
	for i := range 6 {
		_, err := f.WriteFile("/config/v.txt", []byte(fmt.Sprintf("version %d", i)), 0, WriteOptions{})
		must(t, err)
	}
	_, err = f.WriteFile("/homeassistant/other.txt", []byte("o1"), 0, WriteOptions{})
	must(t, err)
	_, err = f.WriteFile("/homeassistant/other.txt", []byte("o2"), 0, WriteOptions{})
	must(t, err)

	items, err := f.Trash("/homeassistant/v.txt")
	must(t, err)
	if len(items) != 3 {
		t.Fatalf("kept %d versions, want 3: %+v", len(items), items)
	}
	for i, it := range items { // newest first: versions 4, 3, 2
		data, err := os.ReadFile(filepath.Join(opts.TrashDir, "items", it.ID, trashData))
		must(t, err)
		if want := fmt.Sprintf("version %d", 4-i); string(data) != want {
			t.Fatalf("item %d holds %q, want %q", i, data, want)
		}
	}
	all, err := f.Trash("")
	must(t, err)
	if len(all) != 4 {
		t.Fatalf("whole trash has %d items, want 4", len(all))
	}

	// The trash survives a restart: opening purges only what is past retention.
	f.Close()
	f, err = New(opts)
	must(t, err)
	defer f.Close()
	again, err := f.Trash("")
	must(t, err)
	if fmt.Sprint(again) != fmt.Sprint(all) {
		t.Fatalf("after restart:\n%+v\nwant\n%+v", again, all)
	}

	// Opened once every item is past retention (here: a retention shorter than their age), the trash
	// removes them from disk, though nothing new goes in.
	f.Close()
	opts.Retention = time.Nanosecond
	f, err = New(opts)
	must(t, err)
	defer f.Close()
	if left, _ := os.ReadDir(filepath.Join(opts.TrashDir, "items")); len(left) != 0 {
		t.Fatalf("trash directory still holds %d entries", len(left))
	}
	if items, _ := f.Trash(""); len(items) != 0 {
		t.Fatalf("expired items listed: %+v", items)
	}
}

func TestTrashCleansUncommittedItems(t *testing.T) {
	tr := newTree(t)
	items := filepath.Join(tr.trash, "items")
	half := filepath.Join(items, newTrashID(time.Now()))
	must(t, os.MkdirAll(half, 0o700))
	must(t, os.WriteFile(filepath.Join(half, trashData), []byte("partial"), 0o600))
	foreign := filepath.Join(items, "not-an-id")
	must(t, os.Mkdir(foreign, 0o700))
	// A leftover temp file with its note, as a crash mid-write leaves them.
	tmp := filepath.Join(tr.config, "sub", ".hamcp-tmp-00000000000000aa")
	must(t, os.WriteFile(tmp, []byte("half written"), 0o600))
	must(t, os.WriteFile(filepath.Join(tr.trash, "pending", ".hamcp-tmp-00000000000000aa.json"),
		[]byte(`{"alias":"/config","rel":"sub/.hamcp-tmp-00000000000000aa"}`), 0o600))
	// A note naming something that is not a temp file must not remove it.
	must(t, os.WriteFile(filepath.Join(tr.trash, "pending", "evil.json"),
		[]byte(`{"alias":"/config","rel":"configuration.yaml"}`), 0o600))

	f, err := New(tr.options())
	must(t, err)
	defer f.Close()
	if _, err := os.Lstat(half); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("uncommitted item kept: %v", err)
	}
	if _, err := os.Lstat(foreign); err != nil {
		t.Fatalf("foreign entry removed: %v", err)
	}
	if _, err := os.Lstat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("leftover temp kept: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(tr.config, "configuration.yaml")); err != nil {
		t.Fatalf("a forged note removed a real file: %v", err)
	}
	if notes, _ := os.ReadDir(filepath.Join(tr.trash, "pending")); len(notes) != 0 {
		t.Fatalf("%d notes left", len(notes))
	}
}

func TestMove(t *testing.T) {
	tr := newTree(t)
	f := tr.fs
	write := func(p, s string) {
		_, err := f.WriteFile(p, []byte(s), 0o640, WriteOptions{CreateDirs: true})
		must(t, err)
	}
	write("/config/m/a.txt", "A")
	write("/config/m/b.txt", "B")

	must(t, f.Move("/config/m/a.txt", "/config/m/c.txt", false))
	if readHost(t, filepath.Join(tr.config, "m", "c.txt")) != "A" {
		t.Fatal("rename within a root lost content")
	}
	if err := f.Move("/config/m/c.txt", "/config/m/b.txt", false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("move onto an existing file without overwrite: %v", err)
	}
	must(t, f.Move("/config/m/c.txt", "/homeassistant/m/b.txt", true))
	if readHost(t, filepath.Join(tr.config, "m", "b.txt")) != "A" {
		t.Fatal("overwrite did not take")
	}
	items, err := f.Trash("/config/m/b.txt")
	must(t, err)
	if len(items) != 1 || items[0].Kind != KindMovedOver || tr.trashHolding(t, "B") == "" {
		t.Fatalf("overwritten target not in the trash: %+v", items)
	}
	// Between roots that are different directories: copy, then remove the source.
	must(t, f.Move("/config/m", "/share/m", false))
	if _, err := os.Lstat(filepath.Join(tr.config, "m")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("source kept after a move between roots")
	}
	if readHost(t, filepath.Join(tr.share, "m", "b.txt")) != "A" || modeOf(t, filepath.Join(tr.share, "m", "b.txt")) != 0o640 {
		t.Fatal("move between roots lost content or mode")
	}
	refusals := []struct{ from, to, want string }{
		{"/share/m", "/share/m/inner", "into itself"},
		{"/share/m", "/homeassistant/nope/x", "does not exist"},
		{"/ssl/cert.pem", "/config/cert.pem", "read-only"},
		{"/config/configuration.yaml", "/ssl/configuration.yaml", "read-only"},
		{"/config/hard_canary", "/share/hard", "hard link"},
		{"/config/nope", "/config/nope2", "no such file"},
		{"/config", "/share/config", "root directory itself"},
	}
	for _, r := range refusals {
		if err := f.Move(r.from, r.to, true); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("Move(%s, %s) = %v; want %q", r.from, r.to, err, r.want)
		}
	}
	if leftovers := tempFiles(t, tr.base); len(leftovers) > 0 {
		t.Fatalf("temp files left: %v", leftovers)
	}
	if e := tr.escaped(t); e != "" {
		t.Fatal(e)
	}
}

func TestParseTrashID(t *testing.T) {
	now := time.Unix(1_700_000_000, 123456789)
	good := newTrashID(now)
	tests := []struct {
		id string
		ok bool
	}{
		{good, true},
		{"0000000000000000-00000000", true},
		{"", false},
		{"18a2b3c4d5e6f708_9a8b7c6d", false},
		{"18A2B3C4D5E6F708-9A8B7C6D", false},
		{"18a2b3c4d5e6f708-9a8b7c6", false},
		{"18a2b3c4d5e6f708-9a8b7c6d0", false},
		{"../../../../etc/passwd0000", false},
		{"18a2b3c4d5e6f708-9a8b7c/d", false},
		{"18a2b3c4d5e6f70g-9a8b7c6d", false},
	}
	for _, tt := range tests {
		ts, err := parseTrashID(tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("parseTrashID(%q) err = %v, want ok=%v", tt.id, err, tt.ok)
		}
		if tt.id == good && !ts.Equal(now) {
			t.Errorf("time = %v, want %v", ts, now)
		}
	}
}

func FuzzParseTrashID(f *testing.F) {
	f.Add(newTrashID(time.Now()))
	f.Add("0000000000000000-00000000")
	f.Add("../x")
	f.Fuzz(func(t *testing.T, id string) {
		if _, err := parseTrashID(id); err == nil {
			// An accepted id is a plain file name: it can never lead out of the items directory.
			if strings.ContainsAny(id, "/\\.\x00") || filepath.Base(id) != id || len(id) != 25 {
				t.Fatalf("accepted %q", id)
			}
		}
	})
}

func FuzzParseJournal(f *testing.F) {
	f.Add([]byte(`{"alias":"/config","rel":"sub/.hamcp-tmp-00000000000000aa"}`))
	f.Add([]byte(`{"alias":"/config","rel":"configuration.yaml"}`))
	f.Add([]byte(`{"alias":"/config","rel":"../.hamcp-tmp-00000000000000aa"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := parseJournal(data)
		if err != nil {
			return
		}
		_, name := parentRel(e.Rel)
		if !isTempName(name) || !filepath.IsLocal(e.Rel) || strings.Contains(e.Rel, "..") {
			t.Fatalf("accepted %+v", e)
		}
	})
}

// hostTree renders a directory tree (names, types, modes, contents, link targets) for comparison.
func hostTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", target)
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteString("\n")
		return nil
	})
	must(t, err)
	return b.String()
}

// Restore reports where it wrote: the target given (in canonical form), not where the item was deleted
// from. It used to answer with the original path even when it had written somewhere else.
func TestRestoreReportsWhereItWrote(t *testing.T) {
	tr := newTree(t)
	for _, c := range []struct {
		name, deleted, to, want, host string
	}{
		{"to another root", "/config/a.txt", "/share/b.txt", "/share/b.txt", filepath.Join(tr.share, "b.txt")},
		{"renamed in place", "/config/c.txt", "/config/d.txt", "/config/d.txt", filepath.Join(tr.config, "d.txt")},
		{"original place", "/config/e.txt", "", "/config/e.txt", filepath.Join(tr.config, "e.txt")},
		{"through the other alias", "/homeassistant/f.txt", "", "", filepath.Join(tr.config, "f.txt")},
	} {
		t.Run(c.name, func(t *testing.T) {
			must(t, os.WriteFile(filepath.Join(tr.config, filepath.Base(c.deleted)), []byte(c.name), 0o644))
			item, err := tr.fs.Delete(c.deleted, false)
			must(t, err)
			restored, err := tr.fs.Restore(item.ID, c.to, false)
			must(t, err)
			want := c.want
			if want == "" {
				want = item.Path
			}
			if restored.RestoredTo != want || restored.Path != item.Path {
				t.Fatalf("restored to %q (want %q), was at %q (want %q)", restored.RestoredTo, want, restored.Path, item.Path)
			}
			if got := readHost(t, c.host); got != c.name {
				t.Fatalf("%s holds %q", c.host, got)
			}
			if st, err := tr.fs.Stat(restored.RestoredTo); err != nil || st.Size != int64(len(c.name)) {
				t.Fatalf("the reported path %s does not hold the file: %v", restored.RestoredTo, err)
			}
		})
	}
}
