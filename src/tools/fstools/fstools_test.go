package fstools_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/fstools"
)

var fx *tooltest.Fixture

func TestMain(m *testing.M) {
	tooltest.Main(m, tooltest.Options{HistoryDays: -1, Tools: func(f *tooltest.Fixture) []*toolkit.Tool { return fstools.Tools(f.Files) }},
		func(f *tooltest.Fixture) { fx = f })
}

// dir makes a fresh folder under /share for one test and returns its alias path and real path.
func dir(t *testing.T) (alias, real string) {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	real, err := os.MkdirTemp(fx.Home.Sandbox().Share, name+"-") // fresh on every run (-count)
	if err != nil {
		t.Fatal(err)
	}
	return "/share/" + filepath.Base(real), real
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fsSession(t *testing.T) *tooltest.Session { return fx.Granted(t, permission.Filesystem) }

// Every file tool is in the filesystem category with honest annotations: the model learns from
// them which calls change something.
func TestFileToolsDeclareTheirCategory(t *testing.T) {
	t.Parallel()
	readOnly := map[string]bool{"ha_read_file": true, "ha_list_directory": true, "ha_file_info": true,
		"ha_write_file": false, "ha_delete_file": false, "ha_move_file": false, "ha_restore_file": false}
	tools := fstools.Tools(fx.Files)
	if len(tools) != len(readOnly) {
		t.Fatalf("%d tools, want %d", len(tools), len(readOnly))
	}
	for _, tool := range tools {
		ro, ok := readOnly[tool.Name()]
		ann := tool.Definition().Annotations
		if !ok || tool.Category() != toolkit.Filesystem || tool.ReadOnly() != ro || ann.ReadOnlyHint != ro || *ann.DestructiveHint == ro || tool.Toolset() != fstools.SetFiles {
			t.Errorf("%s: category %q read-only %v destructive %v toolset %q", tool.Name(), tool.Category(), tool.ReadOnly(), *ann.DestructiveHint, tool.Toolset())
		}
	}
}

// The model cannot use a file tool the user has not granted, nor one the user denied; the gate
// is consulted for every tool, and what was asked is in the session's audit log.
func TestFileToolsNeedTheUsersGrant(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	write(t, filepath.Join(real, "keep.txt"), "untouched")
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"ha_read_file", map[string]any{"path": alias + "/keep.txt"}},
		{"ha_write_file", map[string]any{"path": alias + "/keep.txt", "content": "overwritten"}},
		{"ha_list_directory", map[string]any{"path": alias}},
		{"ha_file_info", map[string]any{"path": alias + "/keep.txt"}},
		{"ha_delete_file", map[string]any{"path": alias + "/keep.txt"}},
		{"ha_move_file", map[string]any{"from": alias + "/keep.txt", "to": alias + "/moved.txt"}},
		{"ha_restore_file", map[string]any{}},
	}
	denied := fx.Session(t)
	denied.Deny(t, permission.Filesystem)
	for _, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			s := fx.Session(t)
			e := s.Fail(t, c.tool, c.args)
			if e.Code != "permission_required" || e.Details["category"] != "filesystem" || e.Details["request_id"] == nil {
				t.Errorf("no grant: %+v", e)
			}
			if got := s.Audit(t, store.AuditQuery{Tool: c.tool, Outcome: store.OutcomePermissionRequired}); len(got) == 0 {
				t.Errorf("the refused call is not in the session's audit log")
			}
			if e := denied.Fail(t, c.tool, c.args); e.Code != "permission_denied" || e.Details["category"] != "filesystem" {
				t.Errorf("denied: %+v", e)
			}
		})
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(real, "keep.txt")); err != nil || string(b) != "untouched" {
			t.Errorf("a refused call changed the file: %q %v", b, err)
		}
	})
}

// The user approving the request a call posted lets the same call run, for that session only.
func TestFileGrantIsPerSession(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	write(t, filepath.Join(real, "a.txt"), "hello")
	s := fx.Session(t)
	e := s.Fail(t, "ha_read_file", map[string]any{"path": alias + "/a.txt"})
	if e.Code != "permission_required" {
		t.Fatalf("first call: %+v", e)
	}
	fx.Approve(t, e.Details["request_id"].(string))
	var r struct{ Content string }
	s.OK(t, "ha_read_file", map[string]any{"path": alias + "/a.txt"}, &r)
	if r.Content != "hello" {
		t.Errorf("after the grant: %q", r.Content)
	}
	if e := fx.Session(t).Fail(t, "ha_read_file", map[string]any{"path": alias + "/a.txt"}); e.Code != "permission_required" {
		t.Errorf("another session used the grant: %+v", e)
	}
}

// A client that can ask its user: the user's answer in the client grants (or refuses) the
// category for the session, and the model's arguments play no part in it.
func TestFileGrantByTheUserInTheClient(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	write(t, filepath.Join(real, "a.txt"), "hello")
	for _, c := range []struct {
		name   string
		answer *mcp.ElicitResult
		code   string // "" = the call runs
	}{
		{"accepted", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, ""},
		{"accepted without ticking the box", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": false}}, "permission_denied"},
		{"declined", &mcp.ElicitResult{Action: "decline"}, "permission_denied"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			asked := make(chan string, 4)
			s := fx.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked <- req.Params.Message
				return c.answer, nil
			}})
			for range 2 { // the answer holds for the session: the user is asked once
				res := s.Call(t, "ha_read_file", map[string]any{"path": alias + "/a.txt"})
				if c.code == "" && (res.IsError || !strings.Contains(tooltest.Text(res), "hello")) || c.code != "" && !strings.Contains(tooltest.Text(res), c.code) {
					t.Fatalf("%s", tooltest.Text(res))
				}
			}
			if len(asked) != 1 || !strings.Contains(<-asked, "ha_read_file") {
				t.Errorf("the user was asked %d times, not once, about ha_read_file", len(asked))
			}
		})
	}
}

type readResult struct {
	Path       string `json:"path"`
	Size       int64  `json:"size"`
	Encoding   string `json:"encoding"`
	Content    string `json:"content"`
	FromLine   int    `json:"from_line"`
	TotalLines int    `json:"total_lines"`
	Offset     int64  `json:"offset"`
	Truncated  bool   `json:"truncated"`
	Next       string `json:"next"`
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	var lines []string
	for i := 1; i <= 50; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	write(t, filepath.Join(real, "fifty.txt"), strings.Join(lines, "\n")+"\n")
	write(t, filepath.Join(real, "big.txt"), strings.Repeat("x", 3000))
	bin := []byte{0xff, 0xfe, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07}
	if err := os.WriteFile(filepath.Join(real, "blob.bin"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	s := fsSession(t)
	for _, c := range []struct {
		name string
		args map[string]any
		want readResult
	}{
		{"whole file", map[string]any{"path": alias + "/fifty.txt"},
			readResult{Encoding: "text", Content: strings.Join(lines, "\n") + "\n", Size: 391}},
		{"a window of lines, more follow", map[string]any{"path": alias + "/fifty.txt", "offset": 10, "lines": 3},
			readResult{Encoding: "text", Content: "line 10\nline 11\nline 12\n", FromLine: 10, TotalLines: 50, Truncated: true, Next: "larger offset"}},
		{"the last lines, nothing follows", map[string]any{"path": alias + "/fifty.txt", "offset": 49, "lines": 10},
			readResult{Encoding: "text", Content: "line 49\nline 50\n", FromLine: 49, TotalLines: 50}},
		{"lines alone start at line 1", map[string]any{"path": alias + "/fifty.txt", "lines": 2},
			readResult{Encoding: "text", Content: "line 1\nline 2\n", FromLine: 1, TotalLines: 50, Truncated: true, Next: "larger offset"}},
		{"base64 chunk under max_size", map[string]any{"path": alias + "/blob.bin", "encoding": "base64", "max_size": 4},
			readResult{Encoding: "base64", Content: base64.StdEncoding.EncodeToString(bin[:4]), Size: 10, Truncated: true, Next: "offset=4"}},
		{"base64 rest from a byte offset", map[string]any{"path": alias + "/blob.bin", "encoding": "base64", "offset": 4},
			readResult{Encoding: "base64", Content: base64.StdEncoding.EncodeToString(bin[4:]), Size: 10, Offset: 4}},
		{"relative paths are under /config", map[string]any{"path": "configuration.yaml", "lines": 1},
			readResult{Encoding: "text", FromLine: 1, Truncated: true, Next: "larger offset"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var r readResult
			s.OK(t, "ha_read_file", c.args, &r)
			w := c.want
			if w.Content != "" && r.Content != w.Content || r.Encoding != w.Encoding || w.Size != 0 && r.Size != w.Size || r.FromLine != w.FromLine ||
				r.TotalLines != w.TotalLines && w.TotalLines != 0 || r.Truncated != w.Truncated || r.Offset != w.Offset || !strings.Contains(r.Next, w.Next) || w.Next == "" && r.Next != "" {
				t.Errorf("got %+v\nwant %+v", r, w)
			}
			if r.Content == "" || !strings.HasPrefix(r.Path, "/") {
				t.Errorf("no content or path: %+v", r)
			}
		})
	}
	for _, c := range []errCase{
		{"over max_size", "ha_read_file", map[string]any{"path": alias + "/big.txt", "max_size": 1000}, "too_large", "max_size", "offset"},
		{"binary as text", "ha_read_file", map[string]any{"path": alias + "/blob.bin"}, "binary_file", "encoding", "base64"},
		{"a directory", "ha_read_file", map[string]any{"path": alias}, "is_directory", "path", "ha_list_directory"},
		{"missing file", "ha_read_file", map[string]any{"path": alias + "/nope.txt"}, "not_found", "", "ha_list_directory"},
		{"lines over 5000", "ha_read_file", map[string]any{"path": alias + "/fifty.txt", "lines": 5001}, "invalid_argument", "lines", ""},
		{"max_size over 4 MB", "ha_read_file", map[string]any{"path": alias + "/fifty.txt", "max_size": 5 << 20}, "invalid_argument", "max_size", ""},
		{"negative offset", "ha_read_file", map[string]any{"path": alias + "/fifty.txt", "offset": -1}, "invalid_argument", "offset", ""},
		{"unknown encoding", "ha_read_file", map[string]any{"path": alias + "/fifty.txt", "encoding": "utf16"}, "invalid_argument", "encoding", ""},
		{"no path", "ha_read_file", map[string]any{}, "invalid_argument", "path", ""},
		{"unknown argument", "ha_read_file", map[string]any{"path": alias + "/fifty.txt", "follow": true}, "invalid_argument", "follow", ""},
	} {
		t.Run(c.Name, func(t *testing.T) { t.Parallel(); c.check(t, s) })
	}
}

type trashItem struct {
	ID         string `json:"id"`
	Path       string `json:"path"`
	Kind       string `json:"kind"`
	Size       int64  `json:"size"`
	IsDir      bool   `json:"is_dir"`
	RestoredTo string `json:"restored_to"`
}

type versions struct {
	Restored *trashItem `json:"restored"`
	Versions *struct {
		Total int         `json:"total"`
		Items []trashItem `json:"items"`
	} `json:"versions"`
}

// A write replaces the file whole and keeps what it replaced, which ha_restore_file brings back.
func TestWriteFileKeepsThePreviousVersion(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	s := fsSession(t)
	path := alias + "/notes.yaml"
	var w struct {
		Path              string `json:"path"`
		Created           bool   `json:"created"`
		PreviousVersionID string `json:"previous_version_id"`
		Bytes             int64  `json:"bytes"`
	}
	s.OK(t, "ha_write_file", map[string]any{"path": path, "content": "v: 1\n", "mode": "0640"}, &w)
	if !w.Created || w.PreviousVersionID != "" || w.Bytes != 5 || w.Path != path {
		t.Fatalf("new file: %+v", w)
	}
	if fi, err := os.Stat(filepath.Join(real, "notes.yaml")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode of the new file: %v %v", fi.Mode(), err)
	}
	s.OK(t, "ha_write_file", map[string]any{"path": path, "content": "v: 2\n"}, &w)
	if w.Created || w.PreviousVersionID == "" {
		t.Fatalf("overwrite: %+v", w)
	}
	if b, _ := os.ReadFile(filepath.Join(real, "notes.yaml")); string(b) != "v: 2\n" {
		t.Fatalf("content after the write: %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(real, "notes.yaml")); fi.Mode().Perm() != 0o640 {
		t.Errorf("an overwrite changed the mode to %v", fi.Mode())
	}
	// Atomic: nothing but the file itself is left in the folder (no temp file).
	if ents, _ := os.ReadDir(real); len(ents) != 1 {
		t.Errorf("the folder holds %d entries after two writes", len(ents))
	}
	var v versions
	s.OK(t, "ha_restore_file", map[string]any{"path": path}, &v)
	if v.Versions == nil || v.Versions.Total != 1 || v.Versions.Items[0].ID != w.PreviousVersionID || v.Versions.Items[0].Size != 5 {
		t.Fatalf("versions of %s: %+v", path, v.Versions)
	}
	s.OK(t, "ha_restore_file", map[string]any{"id": w.PreviousVersionID, "overwrite": true}, &v)
	if v.Restored == nil || v.Restored.RestoredTo != path {
		t.Fatalf("restore: %+v", v.Restored)
	}
	if b, _ := os.ReadFile(filepath.Join(real, "notes.yaml")); string(b) != "v: 1\n" {
		t.Errorf("content after the restore: %q", b)
	}
	// The version the restore replaced is itself kept.
	s.OK(t, "ha_restore_file", map[string]any{"path": path}, &v)
	if v.Versions == nil || v.Versions.Total != 1 {
		t.Errorf("the restore did not keep the replaced version: %+v", v.Versions)
	}
	s.OK(t, "ha_write_file", map[string]any{"path": alias + "/deep/er/b64.bin", "content": base64.StdEncoding.EncodeToString([]byte{0, 1, 2}), "encoding": "base64", "create_dirs": true}, &w)
	if b, _ := os.ReadFile(filepath.Join(real, "deep/er/b64.bin")); string(b) != "\x00\x01\x02" || !w.Created {
		t.Errorf("base64 write with create_dirs: %q %+v", b, w)
	}
	for _, c := range []errCase{
		{"exclusive on an existing file", "ha_write_file", map[string]any{"path": path, "content": "x", "exclusive": true}, "already_exists", "", "overwrite"},
		{"missing parent without create_dirs", "ha_write_file", map[string]any{"path": alias + "/no/such/dir.txt", "content": "x"}, "not_found", "", ""},
		{"bad base64", "ha_write_file", map[string]any{"path": path, "content": "%%%", "encoding": "base64"}, "invalid_argument", "content", "base64"},
		{"mode not octal", "ha_write_file", map[string]any{"path": path, "content": "x", "mode": "rwx"}, "invalid_argument", "mode", "0644"},
		{"mode beyond 0777", "ha_write_file", map[string]any{"path": path, "content": "x", "mode": "4755"}, "invalid_argument", "mode", ""},
		{"unknown encoding", "ha_write_file", map[string]any{"path": path, "content": "x", "encoding": "hex"}, "invalid_argument", "encoding", ""},
		{"no path", "ha_write_file", map[string]any{"content": "x"}, "invalid_argument", "path", ""},
		{"write over a directory", "ha_write_file", map[string]any{"path": alias + "/deep", "content": "x"}, "", "", ""},
	} {
		t.Run(c.Name, func(t *testing.T) { t.Parallel(); c.check(t, s) })
	}
	if b, _ := os.ReadFile(filepath.Join(real, "notes.yaml")); string(b) != "v: 1\n" {
		t.Errorf("a refused write changed the file: %q", b)
	}
}

type listing struct {
	Total      int  `json:"total"`
	Count      int  `json:"count"`
	Offset     int  `json:"offset"`
	NextOffset *int `json:"next_offset"`
	Items      []struct {
		Path  string `json:"path"`
		Name  string `json:"name"`
		IsDir bool   `json:"is_dir"`
		Size  int64  `json:"size"`
	} `json:"items"`
}

func (l listing) names() []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Name)
	}
	return out
}

func TestListDirectory(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	for i := range 25 {
		write(t, filepath.Join(real, fmt.Sprintf("f%02d.txt", i)), strings.Repeat("a", i))
	}
	write(t, filepath.Join(real, ".hidden"), "h")
	if err := os.Mkdir(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := fsSession(t)
	next := func(n int) *int { return &n }
	for _, c := range []struct {
		name           string
		args           map[string]any
		total, count   int
		first, last    string
		next           *int
		hiddenIncluded bool
	}{
		{"first page", map[string]any{"path": alias, "limit": 10}, 26, 10, "f00.txt", "f09.txt", next(10), false},
		{"middle page", map[string]any{"path": alias, "limit": 10, "offset": 10}, 26, 10, "f10.txt", "f19.txt", next(20), false},
		{"last page", map[string]any{"path": alias, "limit": 10, "offset": 20}, 26, 6, "f20.txt", "sub", nil, false},
		{"past the end", map[string]any{"path": alias, "offset": 100}, 26, 0, "", "", nil, false},
		{"hidden names on request", map[string]any{"path": alias, "hidden": true, "limit": 1}, 27, 1, ".hidden", ".hidden", next(1), true},
		{"default is all of a small folder", map[string]any{"path": alias}, 26, 26, "f00.txt", "sub", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var l listing
			s.OK(t, "ha_list_directory", c.args, &l)
			n := l.names()
			if l.Total != c.total || l.Count != c.count || len(n) != c.count || c.count > 0 && (n[0] != c.first || n[len(n)-1] != c.last) ||
				(l.NextOffset == nil) != (c.next == nil) || c.next != nil && *l.NextOffset != *c.next {
				t.Errorf("got total %d count %d next %v names %v", l.Total, l.Count, l.NextOffset, n)
			}
			for _, it := range l.Items {
				if it.Name == "sub" && !it.IsDir || it.Path != alias+"/"+it.Name {
					t.Errorf("entry %+v", it)
				}
			}
		})
	}
	t.Run("roots", func(t *testing.T) {
		t.Parallel()
		var l listing
		s.OK(t, "ha_list_directory", map[string]any{"path": "/"}, &l)
		if n := strings.Join(l.names(), " "); l.Total != 8 || !strings.Contains(n, "config") || !strings.Contains(n, "share") {
			t.Errorf("roots: %d %s", l.Total, n)
		}
	})
	t.Run("default is /config", func(t *testing.T) {
		t.Parallel()
		var l listing
		s.OK(t, "ha_list_directory", map[string]any{}, &l)
		if !strings.Contains(strings.Join(l.names(), " "), "configuration.yaml") {
			t.Errorf("default listing: %v", l.names())
		}
	})
	for _, c := range []errCase{
		{"limit over 1000", "ha_list_directory", map[string]any{"path": alias, "limit": 1001}, "invalid_argument", "limit", ""},
		{"negative offset", "ha_list_directory", map[string]any{"path": alias, "offset": -5}, "invalid_argument", "offset", ""},
		{"a file", "ha_list_directory", map[string]any{"path": alias + "/f00.txt"}, "", "", ""},
		{"missing folder", "ha_list_directory", map[string]any{"path": alias + "/nope"}, "not_found", "", ""},
	} {
		t.Run(c.Name, func(t *testing.T) { t.Parallel(); c.check(t, s) })
	}
}

func TestFileInfo(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	write(t, filepath.Join(real, "a.txt"), "12345")
	if err := os.Chmod(filepath.Join(real, "a.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(real, "link")); err != nil {
		t.Fatal(err)
	}
	s := fsSession(t)
	type info struct {
		Path          string `json:"path"`
		Size          int64  `json:"size"`
		IsDir         bool   `json:"is_dir"`
		IsSymlink     bool   `json:"is_symlink"`
		SymlinkTarget string `json:"symlink_target"`
		Perm          string `json:"perm"`
		Mode          string `json:"mode"`
		MTime         string `json:"mtime"`
	}
	for _, c := range []struct {
		name string
		path string
		want info
	}{
		{"a file", alias + "/a.txt", info{Path: alias + "/a.txt", Size: 5, Perm: "0600", Mode: "-rw-------"}},
		{"a folder", alias, info{Path: alias, IsDir: true, Perm: "0700", Mode: "drwx------"}},
		{"a symlink", alias + "/link", info{Path: alias + "/link", IsSymlink: true, SymlinkTarget: "a.txt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var got info
			s.OK(t, "ha_file_info", map[string]any{"path": c.path}, &got)
			w := c.want
			if got.Path != w.Path || got.IsDir != w.IsDir || got.IsSymlink != w.IsSymlink || got.SymlinkTarget != w.SymlinkTarget ||
				w.Size != 0 && got.Size != w.Size || w.Perm != "" && got.Perm != w.Perm || w.Mode != "" && got.Mode != w.Mode || got.MTime == "" {
				t.Errorf("got %+v, want %+v", got, w)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		errCase{"", "ha_file_info", map[string]any{"path": alias + "/nope"}, "not_found", "", ""}.check(t, s)
	})
}

// Deleting, moving and restoring lose nothing: what is deleted or replaced goes to the trash,
// and comes back where it was or where the model says (restored_to).
func TestDeleteMoveRestore(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	write(t, filepath.Join(real, "a.txt"), "A")
	write(t, filepath.Join(real, "b.txt"), "B")
	if err := os.MkdirAll(filepath.Join(real, "full"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(real, "full", "x.txt"), "X")
	s := fsSession(t)
	gone := func(name string) bool { _, err := os.Lstat(filepath.Join(real, name)); return os.IsNotExist(err) }
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(real, name)); return string(b) }

	var del trashItem
	s.OK(t, "ha_delete_file", map[string]any{"path": alias + "/a.txt"}, &del)
	if !gone("a.txt") || del.ID == "" || del.Path != alias+"/a.txt" || del.Size != 1 {
		t.Fatalf("delete: %+v", del)
	}
	if e := s.Fail(t, "ha_delete_file", map[string]any{"path": alias + "/full"}); e.Code == "" || gone("full") || !strings.Contains(e.Message+e.Hint, "recursive") {
		t.Errorf("non-empty folder without recursive: %+v", e)
	}
	var dirItem trashItem
	s.OK(t, "ha_delete_file", map[string]any{"path": alias + "/full", "recursive": true}, &dirItem)
	if !gone("full") || !dirItem.IsDir {
		t.Errorf("recursive delete: %+v", dirItem)
	}

	// Move: onto a free name; onto an existing file only with overwrite, which keeps the target.
	var mv map[string]string
	s.OK(t, "ha_move_file", map[string]any{"from": alias + "/b.txt", "to": alias + "/c.txt"}, &mv)
	if !gone("b.txt") || read("c.txt") != "B" || mv["to"] != alias+"/c.txt" {
		t.Fatalf("move: %v", mv)
	}
	write(t, filepath.Join(real, "d.txt"), "D")
	if e := s.Fail(t, "ha_move_file", map[string]any{"from": alias + "/d.txt", "to": alias + "/c.txt"}); e.Code != "already_exists" || read("c.txt") != "B" {
		t.Errorf("move onto an existing file: %+v", e)
	}
	s.OK(t, "ha_move_file", map[string]any{"from": alias + "/d.txt", "to": alias + "/c.txt", "overwrite": true}, nil)
	if read("c.txt") != "D" || !gone("d.txt") {
		t.Errorf("move with overwrite: c.txt=%q", read("c.txt"))
	}
	var v versions
	s.OK(t, "ha_restore_file", map[string]any{"path": alias + "/c.txt"}, &v)
	if v.Versions == nil || v.Versions.Total != 1 || v.Versions.Items[0].Size != 1 {
		t.Fatalf("the replaced target is not in the trash: %+v", v.Versions)
	}
	replaced := v.Versions.Items[0].ID

	// Restore: where it was, or elsewhere (restored_to says where), never over a file without overwrite.
	s.OK(t, "ha_restore_file", map[string]any{"id": del.ID}, &v)
	if v.Restored == nil || v.Restored.RestoredTo != alias+"/a.txt" || read("a.txt") != "A" {
		t.Errorf("restore where it was: %+v", v.Restored)
	}
	s.OK(t, "ha_restore_file", map[string]any{"id": replaced, "path": alias + "/old-c.txt"}, &v)
	if v.Restored == nil || v.Restored.RestoredTo != alias+"/old-c.txt" || v.Restored.Path != alias+"/c.txt" || read("old-c.txt") != "B" {
		t.Errorf("restore elsewhere: %+v", v.Restored)
	}
	s.OK(t, "ha_restore_file", map[string]any{"id": dirItem.ID}, &v)
	if read("full/x.txt") != "X" {
		t.Errorf("restored folder: %+v", v.Restored)
	}
	// The trash is shared with the package's other tests: put one item of this test's own in it, so
	// the listing has something to page whatever ran before.
	write(t, filepath.Join(real, "e.txt"), "E")
	s.OK(t, "ha_delete_file", map[string]any{"path": alias + "/e.txt"}, nil)
	var all versions
	s.OK(t, "ha_restore_file", map[string]any{"limit": 1}, &all)
	if all.Versions == nil || all.Versions.Total < 1 || len(all.Versions.Items) != 1 {
		t.Errorf("the whole trash, paged: %+v", all.Versions)
	}
	for _, c := range []errCase{
		{"restore an unknown id", "ha_restore_file", map[string]any{"id": "nope"}, "", "", ""},
		{"restore the same id twice", "ha_restore_file", map[string]any{"id": del.ID}, "", "", ""},
		{"delete a missing file", "ha_delete_file", map[string]any{"path": alias + "/nope"}, "not_found", "", ""},
		{"move a missing file", "ha_move_file", map[string]any{"from": alias + "/nope", "to": alias + "/x"}, "not_found", "", ""},
		{"move into itself", "ha_move_file", map[string]any{"from": alias + "/full", "to": alias + "/full/in"}, "", "", "itself"},
		{"move without to", "ha_move_file", map[string]any{"from": alias + "/c.txt"}, "invalid_argument", "to", ""},
		{"delete without path", "ha_delete_file", map[string]any{}, "invalid_argument", "path", ""},
		{"info without path", "ha_file_info", map[string]any{}, "invalid_argument", "path", ""},
	} {
		t.Run(c.Name, func(t *testing.T) { c.check(t, s) })
	}
}

// Path rules hold through the tool surface: nothing outside the allowed roots is read, listed or
// written, by absolute path, `..`, or a symlink planted inside a root; the error names the field.
func TestPathRules(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	write(t, filepath.Join(real, "ok.txt"), "ok")
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.txt"), "outside")
	for name, target := range map[string]string{"to-etc": "/etc", "to-outside": outside, "to-secret": filepath.Join(outside, "secret.txt"), "to-trash": fx.Trash, "to-trash-2": fx.Trash} {
		if err := os.Symlink(target, filepath.Join(real, name)); err != nil {
			t.Fatal(err)
		}
	}
	s := fsSession(t)
	var cases []tooltest.ErrCase
	for _, p := range []string{"/etc/passwd", "/proc/self/environ", "/", "/config/../../etc/passwd", "../etc/passwd", alias + "/../../../etc/passwd",
		alias + "/to-etc/passwd", alias + "/to-outside/secret.txt", "/data/options.json", "/config\x00/x"} {
		for _, tool := range []string{"ha_read_file", "ha_file_info"} {
			if p == "/" && tool == "ha_file_info" {
				continue
			}
			cases = append(cases, tooltest.ErrCase{Name: tool + " " + p, Tool: tool, Args: map[string]any{"path": p}, Code: "path_not_allowed", Field: "path"})
		}
		cases = append(cases,
			tooltest.ErrCase{Name: "write " + p, Tool: "ha_write_file", Args: map[string]any{"path": p, "content": "pwned"}, Code: "path_not_allowed", Field: "path"},
			tooltest.ErrCase{Name: "delete " + p, Tool: "ha_delete_file", Args: map[string]any{"path": p}, Code: "path_not_allowed", Field: "path"})
	}
	// A symlink inside a root that points outside is never followed: reading it is refused.
	for _, p := range []string{alias + "/to-secret", alias + "/to-trash"} {
		cases = append(cases, tooltest.ErrCase{Name: "read " + p, Tool: "ha_read_file", Args: map[string]any{"path": p}, Code: "path_not_allowed", Field: "path"})
	}
	for _, p := range []string{"/etc", alias + "/to-etc", alias + "/to-outside", "/config/../.."} {
		cases = append(cases, tooltest.ErrCase{Name: "list " + p, Tool: "ha_list_directory", Args: map[string]any{"path": p}, Code: "path_not_allowed", Field: "path"})
	}
	for _, p := range []string{"/etc/cron.d/x", "/usr/local/bin/x", alias + "/to-etc/x", alias + "/to-outside/new.txt"} {
		cases = append(cases, tooltest.ErrCase{Name: "write " + p, Tool: "ha_write_file", Args: map[string]any{"path": p, "content": "x", "create_dirs": true}, Code: "path_not_allowed", Field: "path"})
	}
	var kept trashItem // a version of ok.txt in the trash, to try restoring it outside the roots
	s.OK(t, "ha_delete_file", map[string]any{"path": alias + "/ok.txt"}, &kept)
	write(t, filepath.Join(real, "ok.txt"), "ok")
	cases = append(cases,
		tooltest.ErrCase{Name: "restore to /etc", Tool: "ha_restore_file", Args: map[string]any{"id": kept.ID, "path": "/etc/passwd"}, Code: "path_not_allowed", Field: "path"},
		tooltest.ErrCase{Name: "restore through a symlink", Tool: "ha_restore_file", Args: map[string]any{"id": kept.ID, "path": alias + "/to-outside/ok.txt"}, Code: "path_not_allowed", Field: "path"},
		tooltest.ErrCase{Name: "restore a malformed id", Tool: "ha_restore_file", Args: map[string]any{"id": "x"}, Code: "filesystem_error", Contains: "malformed"},
		tooltest.ErrCase{Name: "move out to /etc", Tool: "ha_move_file", Args: map[string]any{"from": alias + "/ok.txt", "to": "/etc/ok.txt"}, Code: "path_not_allowed"},
		tooltest.ErrCase{Name: "move in from /etc", Tool: "ha_move_file", Args: map[string]any{"from": "/etc/hostname", "to": alias + "/hostname"}, Code: "path_not_allowed"},
		tooltest.ErrCase{Name: "move out through a symlink", Tool: "ha_move_file", Args: map[string]any{"from": alias + "/ok.txt", "to": alias + "/to-outside/ok.txt"}, Code: "path_not_allowed"},
	)
	t.Run("leaf symlinks", func(t *testing.T) {
		// Writing or deleting a link that points outside acts on the link in the root, never on its target.
		if e := s.Fail(t, "ha_write_file", map[string]any{"path": alias + "/to-secret", "content": "pwned"}); !strings.Contains(e.Message, "symlink") {
			t.Errorf("write through a link: %+v", e)
		}
		s.OK(t, "ha_delete_file", map[string]any{"path": alias + "/to-trash-2"}, nil)
		if _, err := os.Stat(fx.Trash); err != nil {
			t.Errorf("deleting a link to the trash removed the trash: %v", err)
		}
	})
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { t.Parallel(); c.Check(t, s) })
	}
	t.Cleanup(func() {
		if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "outside" {
			t.Errorf("a file outside the roots changed: %q", b)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 1 {
			t.Errorf("a file was created outside the roots: %d entries", len(ents))
		}
		if b, _ := os.ReadFile(filepath.Join(real, "ok.txt")); string(b) != "ok" {
			t.Errorf("ok.txt moved or changed: %q", b)
		}
	})
}

// errCase is a tooltest.ErrCase written positionally in this file's tables.
type errCase tooltest.ErrCase

func (c errCase) check(t *testing.T, s *tooltest.Session) { tooltest.ErrCase(c).Check(t, s) }

// The errors of ha_move_file name the argument at fault. It has no argument called "path".
func TestMoveErrorsNameTheirField(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	write(t, filepath.Join(real, "ok.txt"), "ok")
	s := fsSession(t)
	for _, c := range []errCase{
		{"to outside the roots", "ha_move_file", map[string]any{"from": alias + "/ok.txt", "to": "/etc/ok.txt"}, "path_not_allowed", "to", ""},
		{"from outside the roots", "ha_move_file", map[string]any{"from": "/etc/hostname", "to": alias + "/hostname"}, "path_not_allowed", "from", ""},
	} {
		t.Run(c.Name, func(t *testing.T) { t.Parallel(); c.check(t, s) })
	}
}
