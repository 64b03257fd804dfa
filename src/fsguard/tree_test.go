package fsguard

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// canaryMarker is in every file outside the roots; seeing it in anything fsguard returned or copied
// means outside content was read.
const canaryMarker = "CANARY-SECRET-7f3a"

// testTree is a real directory tree with hostile links, and an FS over it:
//
//	base/outside/...            canaries, never to be read or changed
//	base/roots/config           /config and /homeassistant
//	base/roots/ssl              /ssl, read-only
//	base/roots/share            /share
//	base/trash                  the trash
type testTree struct {
	base, outside, config, ssl, share, trash string
	fs                                       *FS
	guarded                                  map[string]snapshot // everything that must never change
}

type snapshot struct {
	kind    fs.FileMode
	mode    fs.FileMode
	mtime   time.Time
	content string
}

func newTree(t testing.TB) *testTree {
	t.Helper()
	base := t.TempDir()
	tr := &testTree{
		base:    base,
		outside: filepath.Join(base, "outside"),
		config:  filepath.Join(base, "roots", "config"),
		ssl:     filepath.Join(base, "roots", "ssl"),
		share:   filepath.Join(base, "roots", "share"),
		trash:   filepath.Join(base, "trash"),
	}
	out := tr.outside
	mk := func(p, content string, mode fs.FileMode) {
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), mode))
	}
	ln := func(target, p string) { must(t, os.Symlink(target, p)) }

	mk(filepath.Join(out, "canary.txt"), canaryMarker+" outside\n", 0o644)
	mk(filepath.Join(out, "dir", "canary2.txt"), canaryMarker+" deeper\n", 0o600)
	mk(filepath.Join(out, "etc", "passwd"), canaryMarker+" passwd\n", 0o644)

	c := tr.config
	mk(filepath.Join(c, "configuration.yaml"), "homeassistant:\n  name: Home\n", 0o644)
	mk(filepath.Join(c, "sub", "a.yaml"), "a: 1\n", 0o640)
	mk(filepath.Join(c, "sub", "deep", "b.yaml"), "b: 2\n", 0o644)
	mk(filepath.Join(c, ".hidden"), "hidden\n", 0o600)
	mk(filepath.Join(c, ".storage", "core.config"), "{}\n", 0o600)
	ln("sub", filepath.Join(c, "link_in"))
	ln("sub/a.yaml", filepath.Join(c, "link_file_in"))
	ln("chain_in2", filepath.Join(c, "chain_in1"))
	ln("sub/a.yaml", filepath.Join(c, "chain_in2"))
	ln("../../outside/canary.txt", filepath.Join(c, "link_rel_out"))
	ln(filepath.Join(out, "canary.txt"), filepath.Join(c, "link_abs_out"))
	ln("../../outside", filepath.Join(c, "link_dir_out"))
	ln(out, filepath.Join(c, "link_dir_abs"))
	ln("..", filepath.Join(c, "link_parent"))
	ln("/", filepath.Join(c, "link_root_abs"))
	ln("chain2", filepath.Join(c, "chain1"))
	ln("chain3", filepath.Join(c, "chain2"))
	ln("../../outside/canary.txt", filepath.Join(c, "chain3"))
	ln("loop2", filepath.Join(c, "loop1"))
	ln("loop1", filepath.Join(c, "loop2"))
	ln("self", filepath.Join(c, "self"))
	ln("../../../outside/canary.txt", filepath.Join(c, "sub", "link_up_out"))
	ln("../configuration.yaml", filepath.Join(c, "sub", "link_up_in"))
	ln("../ssl", filepath.Join(c, "link_to_ssl"))
	must(t, os.Link(filepath.Join(out, "canary.txt"), filepath.Join(c, "hard_canary")))
	must(t, syscall.Mkfifo(filepath.Join(c, "fifo"), 0o644))

	mk(filepath.Join(tr.ssl, "cert.pem"), "-----BEGIN CERTIFICATE-----\n", 0o644)
	mk(filepath.Join(tr.share, "file.txt"), "shared\n", 0o644)
	must(t, os.Link(filepath.Join(out, "dir", "canary2.txt"), filepath.Join(tr.share, "hard_canary2")))
	ln("../../outside/dir", filepath.Join(tr.share, "link_out"))

	var err error
	tr.fs, err = New(tr.options())
	must(t, err)
	t.Cleanup(func() { tr.fs.Close() })
	tr.guarded = tr.snapshotGuarded(t)
	return tr
}

func (tr *testTree) options() Options {
	return Options{
		Roots: []Root{
			{Alias: "/config", Path: tr.config},
			{Alias: "/homeassistant", Path: tr.config},
			{Alias: "/ssl", Path: tr.ssl, ReadOnly: true},
			{Alias: "/share", Path: tr.share},
			{Alias: "/media", Path: filepath.Join(tr.base, "roots", "media")}, // missing: skipped
		},
		TrashDir: tr.trash,
	}
}

// snapshotGuarded records everything outside the roots and in the read-only root.
func (tr *testTree) snapshotGuarded(t testing.TB) map[string]snapshot {
	t.Helper()
	snap := map[string]snapshot{}
	for _, dir := range []string{tr.outside, tr.ssl} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			s := snapshot{kind: fi.Mode().Type(), mode: fi.Mode(), mtime: fi.ModTime()}
			if fi.Mode().IsRegular() {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				s.content = string(data)
			}
			snap[p] = s
			return nil
		})
		must(t, err)
	}
	return snap
}

// escaped describes how the guarded files changed, or returns "" when they did not.
func (tr *testTree) escaped(t testing.TB) string {
	t.Helper()
	now := tr.snapshotGuarded(t)
	var diffs []string
	for p, was := range tr.guarded {
		is, ok := now[p]
		switch {
		case !ok:
			diffs = append(diffs, "removed "+p)
		case is != was:
			diffs = append(diffs, "changed "+p)
		}
	}
	for p := range now {
		if _, ok := tr.guarded[p]; !ok {
			diffs = append(diffs, "created "+p)
		}
	}
	if p := tr.trashHolding(t, canaryMarker); p != "" {
		diffs = append(diffs, "canary content copied into the trash at "+p)
	}
	return strings.Join(diffs, "; ")
}

// trashHolding returns a trash file containing s, or "".
func (tr *testTree) trashHolding(t testing.TB, s string) string {
	found := ""
	filepath.WalkDir(tr.trash, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(s)) {
			found = p
		}
		return nil
	})
	return found
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readHost(t testing.TB, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	must(t, err)
	return string(data)
}

func modeOf(t testing.TB, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	must(t, err)
	return fi.Mode()
}

func fmtErr(err error) string { return fmt.Sprintf("%v", err) }
