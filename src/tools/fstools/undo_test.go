package fstools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/fstools"
)

// Every file change an assistant makes can be undone, and the undo undone in turn: nothing is lost
// either way.
func TestFileChangesAreUndoable(t *testing.T) {
	t.Parallel()
	alias, real := dir(t)
	s := fsSession(t)
	content := func(name string) string {
		b, err := os.ReadFile(filepath.Join(real, name))
		if err != nil {
			return "<none>"
		}
		return string(b)
	}
	write(t, filepath.Join(real, "kept.txt"), "old")
	write(t, filepath.Join(real, "gone.txt"), "deleted")
	write(t, filepath.Join(real, "from.txt"), "moving")
	for _, tc := range []struct {
		name          string
		tool          string
		args          map[string]any
		file          string // whose content tells
		done, undone  string // file's content after the change, and after its undo
		other, otherV string // a second file to check after the undo
	}{
		{"overwrite", "ha_write_file", map[string]any{"path": alias + "/kept.txt", "content": "new"}, "kept.txt", "new", "old", "", ""},
		{"create", "ha_write_file", map[string]any{"path": alias + "/made.txt", "content": "fresh"}, "made.txt", "fresh", "<none>", "", ""},
		{"delete", "ha_delete_file", map[string]any{"path": alias + "/gone.txt"}, "gone.txt", "<none>", "deleted", "", ""},
		{"move", "ha_move_file", map[string]any{"from": alias + "/from.txt", "to": alias + "/to.txt"}, "to.txt", "moving", "<none>", "from.txt", "moving"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.OK(t, tc.tool, tc.args, nil)
			if got := content(tc.file); got != tc.done {
				t.Fatalf("after the change %s holds %q", tc.file, got)
			}
			var u toolkit.Undo
			testkit.Eventually(t, "the undo of "+tc.name, func() bool {
				list, _, err := fx.Store.ListAudit(context.Background(), store.AuditQuery{SessionID: s.Key, Tool: tc.tool, Limit: 5})
				if err != nil {
					return false
				}
				for _, e := range list {
					if json.Unmarshal([]byte(e.Undo), &u) == nil && strings.Contains(string(u.Ref), tc.file) {
						return e.Kind == "file"
					}
				}
				return false
			})
			var ref fstools.FileUndo
			if u.Type != fstools.UndoFile || json.Unmarshal(u.Ref, &ref) != nil || u.Note == "" {
				t.Fatalf("undo %+v", u)
			}
			back, err := fstools.ApplyUndo(fx.Files, ref)
			if err != nil {
				t.Fatal(err)
			}
			if got := content(tc.file); got != tc.undone {
				t.Errorf("after the undo %s holds %q, want %q", tc.file, got, tc.undone)
			}
			if tc.other != "" && content(tc.other) != tc.otherV {
				t.Errorf("after the undo %s holds %q, want %q", tc.other, content(tc.other), tc.otherV)
			}
			// And the undo of the undo brings the change back.
			var again fstools.FileUndo
			if back.Type != fstools.UndoFile || json.Unmarshal(back.Ref, &again) != nil {
				t.Fatalf("the undo's undo %+v", back)
			}
			if _, err := fstools.ApplyUndo(fx.Files, again); err != nil {
				t.Fatal(err)
			}
			if got := content(tc.file); got != tc.done {
				t.Errorf("after undoing the undo %s holds %q, want %q", tc.file, got, tc.done)
			}
		})
	}
	// An undo that meets a file where it would put one changes nothing and says why.
	write(t, filepath.Join(real, "lost.txt"), "deleted")
	s.OK(t, "ha_delete_file", map[string]any{"path": alias + "/lost.txt"}, nil)
	var ref fstools.FileUndo
	testkit.Eventually(t, "the undo of the delete", func() bool {
		list, _, _ := fx.Store.ListAudit(context.Background(), store.AuditQuery{SessionID: s.Key, Tool: "ha_delete_file", Limit: 1})
		var u toolkit.Undo
		return len(list) == 1 && json.Unmarshal([]byte(list[0].Undo), &u) == nil && json.Unmarshal(u.Ref, &ref) == nil && strings.HasSuffix(ref.Path, "lost.txt")
	})
	write(t, filepath.Join(real, "lost.txt"), "someone else's")
	if _, err := fstools.ApplyUndo(fx.Files, ref); err == nil || !strings.Contains(err.Error(), "a file is there now") {
		t.Errorf("undo onto an existing file: %v", err)
	}
	if got := content("lost.txt"); got != "someone else's" {
		t.Errorf("the refused undo changed the file: %q", got)
	}
}
