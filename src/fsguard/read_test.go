package fsguard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	tr := newTree(t)
	must(t, os.WriteFile(filepath.Join(tr.config, "ten.txt"), []byte("0123456789"), 0o644))
	tests := []struct {
		name            string
		path            string
		offset, maxSize int64
		want            string
		wantErr         string
	}{
		{"whole", "/config/ten.txt", 0, 0, "0123456789", ""},
		{"relative is under /config", "ten.txt", 0, 0, "0123456789", ""},
		{"alias", "/homeassistant/ten.txt", 0, 0, "0123456789", ""},
		{"capped", "/config/ten.txt", 0, 4, "0123", ""},
		{"offset", "/config/ten.txt", 6, 0, "6789", ""},
		{"offset and cap", "/config/ten.txt", 2, 3, "234", ""},
		{"offset at end", "/config/ten.txt", 10, 0, "", ""},
		{"offset past end", "/config/ten.txt", 99, 0, "", ""},
		{"symlink inside the root", "/config/link_file_in", 0, 0, "a: 1\n", ""},
		{"symlink chain inside", "/config/chain_in1", 0, 0, "a: 1\n", ""},
		{"through a linked directory", "/config/link_in/a.yaml", 0, 0, "a: 1\n", ""},
		{"up and back in", "/config/sub/link_up_in", 0, 0, "homeassistant:\n  name: Home\n", ""},
		{"read-only root", "/ssl/cert.pem", 0, 0, "-----BEGIN CERTIFICATE-----\n", ""},
		{"negative offset", "/config/ten.txt", -1, 0, "", "offset must be 0 or more"},
		{"maxSize too big", "/config/ten.txt", 0, MaxRead + 1, "", "at most"},
		{"directory", "/config/sub", 0, 0, "", "is a directory"},
		{"missing", "/config/nope", 0, 0, "", "no such file"},
		{"fifo", "/config/fifo", 0, 0, "", "FIFO"},
		{"hard link", "/config/hard_canary", 0, 0, "", "hard link"},
		{"loop", "/config/loop1", 0, 0, "", "symlink loop"},
		{"escaping link", "/config/link_rel_out", 0, 0, "", "resolves outside its root"},
		{"absolute link", "/config/link_abs_out", 0, 0, "", "resolves outside its root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, info, err := tr.fs.ReadFile(tt.path, tt.offset, tt.maxSize)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.path) {
					t.Fatalf("err = %v; want it to name %q and say %q", err, tt.path, tt.wantErr)
				}
				return
			}
			must(t, err)
			if string(got) != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if info.Size < int64(len(got)) || info.IsDir {
				t.Fatalf("info = %+v", info)
			}
		})
	}
}

func TestReadFileHardLinkSentinel(t *testing.T) {
	tr := newTree(t)
	_, _, err := tr.fs.ReadFile("/share/hard_canary2", 0, 0)
	if !errors.Is(err, ErrHardLink) {
		t.Fatalf("err = %v; want ErrHardLink", err)
	}
}

func TestReadLines(t *testing.T) {
	tr := newTree(t)
	long := strings.Repeat("x", 100<<10) // longer than the reader's buffer
	files := map[string]string{
		"five.txt":   "l1\nl2\nl3\nl4\nl5\n",
		"nonl.txt":   "l1\nl2\nl3",
		"empty.txt":  "",
		"long.txt":   "a\n" + long + "\nb\n",
		"blanks.txt": "\n\n\n",
	}
	for name, content := range files {
		must(t, os.WriteFile(filepath.Join(tr.config, name), []byte(content), 0o644))
	}
	tests := []struct {
		file        string
		from, lines int
		want        string
		total       int
		truncated   bool
	}{
		{"five.txt", 1, 0, "l1\nl2\nl3\nl4\nl5\n", 5, false},
		{"five.txt", 0, 2, "l1\nl2\n", 5, true},
		{"five.txt", 2, 2, "l2\nl3\n", 5, true},
		{"five.txt", 4, 2, "l4\nl5\n", 5, false},
		{"five.txt", 5, 10, "l5\n", 5, false},
		{"five.txt", 6, 10, "", 5, false},
		{"nonl.txt", 1, 100, "l1\nl2\nl3", 3, false},
		{"nonl.txt", 3, 1, "l3", 3, false},
		{"nonl.txt", 2, 1, "l2\n", 3, true},
		{"empty.txt", 1, 10, "", 0, false},
		{"blanks.txt", 2, 1, "\n", 3, true},
		{"long.txt", 2, 1, long + "\n", 3, true},
		{"long.txt", 3, 1, "b\n", 3, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d+%d", tt.file, tt.from, tt.lines), func(t *testing.T) {
			text, total, truncated, err := tr.fs.ReadLines("/config/"+tt.file, tt.from, tt.lines)
			must(t, err)
			if text != tt.want || total != tt.total || truncated != tt.truncated {
				t.Fatalf("got (%.40q, %d, %v), want (%.40q, %d, %v)", text, total, truncated, tt.want, tt.total, tt.truncated)
			}
		})
	}
	if _, _, _, err := tr.fs.ReadLines("/config/five.txt", -1, 1); err == nil || !strings.Contains(err.Error(), "fromLine") {
		t.Fatalf("negative fromLine: err = %v", err)
	}
}

func TestReadLinesByteCap(t *testing.T) {
	tr := newTree(t)
	line := strings.Repeat("y", 1023) + "\n"
	must(t, os.WriteFile(filepath.Join(tr.config, "big.log"), []byte(strings.Repeat(line, 2048)), 0o644)) // 2 MiB
	text, total, truncated, err := tr.fs.ReadLines("/config/big.log", 1, 5000)
	must(t, err)
	if len(text) != DefaultMaxRead || total != 2048 || !truncated {
		t.Fatalf("got %d bytes, %d lines, truncated=%v; want %d bytes, 2048 lines, truncated", len(text), total, truncated, DefaultMaxRead)
	}
}

func TestList(t *testing.T) {
	tr := newTree(t)
	dir := filepath.Join(tr.config, "many")
	must(t, os.Mkdir(dir, 0o755))
	for i := range 25 {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.yaml", i)), []byte("x"), 0o644))
	}
	for _, h := range []string{".a", ".b", ".hamcp-tmp-0123456789abcdef"} {
		must(t, os.WriteFile(filepath.Join(dir, h), nil, 0o600))
	}
	must(t, os.Symlink("f00.yaml", filepath.Join(dir, "zlink")))

	tests := []struct {
		name                string
		opts                ListOptions
		wantFirst, wantLast string
		count, total        int
	}{
		{"first page", ListOptions{Limit: 10}, "f00.yaml", "f09.yaml", 10, 26},
		{"second page", ListOptions{Offset: 10, Limit: 10}, "f10.yaml", "f19.yaml", 10, 26},
		{"last page", ListOptions{Offset: 20, Limit: 10}, "f20.yaml", "zlink", 6, 26},
		{"default limit", ListOptions{}, "f00.yaml", "zlink", 26, 26},
		{"hidden", ListOptions{Hidden: true, Limit: 3}, ".a", ".hamcp-tmp-0123456789abcdef", 3, 29},
		{"past the end", ListOptions{Offset: 26}, "", "", 0, 26},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, total, err := tr.fs.List("/config/many", tt.opts)
			must(t, err)
			if len(entries) != tt.count || total != tt.total {
				t.Fatalf("got %d entries of %d, want %d of %d", len(entries), total, tt.count, tt.total)
			}
			if tt.count > 0 && (entries[0].Name != tt.wantFirst || entries[len(entries)-1].Name != tt.wantLast) {
				t.Fatalf("page runs %s..%s, want %s..%s", entries[0].Name, entries[len(entries)-1].Name, tt.wantFirst, tt.wantLast)
			}
			for i := 1; i < len(entries); i++ {
				if entries[i-1].Name >= entries[i].Name {
					t.Fatalf("not sorted: %s before %s", entries[i-1].Name, entries[i].Name)
				}
			}
		})
	}
	entries, _, err := tr.fs.List("/config/many", ListOptions{Offset: 25})
	must(t, err)
	if e := entries[0]; !e.IsSymlink || e.SymlinkTarget != "f00.yaml" || e.Path != "/config/many/zlink" {
		t.Fatalf("symlink entry = %+v", e)
	}
	// The root itself, and a symlink that leads out listed as a link, not followed.
	entries, _, err = tr.fs.List("/config", ListOptions{Limit: 1000})
	must(t, err)
	for _, e := range entries {
		if e.Name == "link_dir_abs" && (!e.IsSymlink || e.IsDir) {
			t.Fatalf("link_dir_abs listed as %+v", e)
		}
	}
	for _, bad := range []ListOptions{{Offset: -1}, {Limit: -1}, {Limit: MaxListLimit + 1}} {
		if _, _, err := tr.fs.List("/config", bad); err == nil {
			t.Fatalf("List(%+v) succeeded", bad)
		}
	}
	if _, _, err := tr.fs.List("/config/configuration.yaml", ListOptions{}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("listing a file: err = %v", err)
	}
	if _, _, err := tr.fs.List("/config/link_dir_out", ListOptions{}); !errors.Is(err, ErrOutsideRoots) {
		t.Fatalf("listing a link that leads out: err = %v", err)
	}
}

func TestStat(t *testing.T) {
	tr := newTree(t)
	before := time.Now().Add(-time.Minute)
	info, err := tr.fs.Stat("/config/sub/a.yaml")
	must(t, err)
	if info.Path != "/config/sub/a.yaml" || info.Name != "a.yaml" || info.Size != 5 || info.IsDir ||
		info.Perm != "0640" || info.Mode != "-rw-r-----" || info.Links != 1 ||
		info.UID != uint32(os.Getuid()) || info.Owner == "" || info.Group == "" ||
		info.ModTime.Before(before) || info.AccessTime.IsZero() || info.ChangeTime.IsZero() || info.ModTime.Location() != time.UTC {
		t.Fatalf("info = %+v", info)
	}
	link, err := tr.fs.Stat("/config/link_abs_out")
	must(t, err)
	if !link.IsSymlink || link.SymlinkTarget != filepath.Join(tr.outside, "canary.txt") {
		t.Fatalf("link = %+v", link)
	}
	dir, err := tr.fs.Stat("/config")
	must(t, err)
	if !dir.IsDir || dir.Path != "/config" || dir.Mode[0] != 'd' {
		t.Fatalf("root = %+v", dir)
	}
	must(t, os.Chmod(filepath.Join(tr.config, "sub", "deep"), 0o755|os.ModeSetgid))
	sg, err := tr.fs.Stat("/config/sub/deep")
	must(t, err)
	if sg.Perm != "2755" {
		t.Fatalf("setgid dir perm = %s", sg.Perm)
	}
	hard, err := tr.fs.Stat("/config/hard_canary")
	must(t, err)
	if hard.Links != 2 {
		t.Fatalf("hard link info = %+v", hard)
	}
}
