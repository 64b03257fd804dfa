package permtools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/fstools"
	"github.com/hamcp/hamcp/src/tools/permtools"
)

var fx *tooltest.Fixture

// The file tools are here as the privileged calls whose grants and audit rows the permission
// tools show.
func TestMain(m *testing.M) {
	tooltest.Main(m, tooltest.Options{HistoryDays: -1, Tools: func(f *tooltest.Fixture) []*toolkit.Tool {
		return append(append(permtools.Tools(f.Perms, f.Store), fstools.Tools(f.Files)...), trashFile(f))
	}}, func(f *tooltest.Fixture) { fx = f })
}

// errCase is a tooltest.ErrCase written positionally in this file's tables.
type errCase tooltest.ErrCase

func (c errCase) check(t *testing.T, s *tooltest.Session) { tooltest.ErrCase(c).Check(t, s) }

// The permission tools need no grant (a session must be able to see what it lacks) and change
// nothing: there is no tool the model could grant itself anything with.
func TestPermissionToolsDeclare(t *testing.T) {
	t.Parallel()
	tools := permtools.Tools(fx.Perms, fx.Store)
	if len(tools) != 2 {
		t.Fatalf("%d tools", len(tools))
	}
	for _, tool := range tools {
		if tool.Category() != "" || !tool.ReadOnly() || tool.ConfirmWhen() != "" || tool.Toolset() != permtools.SetPermissions {
			t.Errorf("%s: category %q read-only %v", tool.Name(), tool.Category(), tool.ReadOnly())
		}
	}
}

type status struct {
	Category  string `json:"category"`
	Policy    string `json:"policy"`
	State     string `json:"state"`
	Via       string `json:"via"`
	RequestID string `json:"request_id"`
	Reason    string `json:"reason"`
	Warning   string `json:"warning"`
	HowTo     string `json:"how_to"`
}

type permissions struct {
	Session    string   `json:"session"`
	Categories []status `json:"categories"`
	Note       string   `json:"note"`
}

func (p permissions) of(c string) status {
	for _, s := range p.Categories {
		if s.Category == c {
			return s
		}
	}
	return status{}
}

// ha_get_permissions shows where the session stands in each category, under the label the user
// sees, and never a session id.
func TestGetPermissions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, s *tooltest.Session)
		want  map[string]string // category -> state
		check func(p permissions) bool
	}{
		{"a new session", func(*testing.T, *tooltest.Session) {},
			map[string]string{"filesystem": "not_requested", "database": "not_requested", "command": "not_requested"},
			func(p permissions) bool { return p.of("filesystem").HowTo != "" && p.of("filesystem").Warning != "" }},
		{"granted by the user", func(t *testing.T, s *tooltest.Session) { s.Grant(t, permission.Filesystem) },
			map[string]string{"filesystem": "granted", "database": "not_requested"},
			func(p permissions) bool { return p.of("filesystem").Via == permission.ViaApproval }},
		{"denied by the user", func(t *testing.T, s *tooltest.Session) { s.Deny(t, permission.Database) },
			map[string]string{"database": "denied", "filesystem": "not_requested"},
			func(p permissions) bool { return p.of("database").Reason != "" }},
		{"a call waiting for the user", func(t *testing.T, s *tooltest.Session) {
			if e := s.Fail(t, "ha_file_info", map[string]any{"path": "/config"}); e.Code != "permission_required" {
				t.Fatalf("%+v", e)
			}
		}, map[string]string{"filesystem": "pending"},
			func(p permissions) bool { return strings.HasPrefix(p.of("filesystem").RequestID, "req_") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := fx.Session(t)
			c.setup(t, s)
			var p permissions
			text := s.OK(t, "ha_get_permissions", nil, &p)
			if p.Session != fx.Perms.SessionLabel(s.Key) || !strings.HasPrefix(p.Session, "session ") || strings.Contains(text, s.Key) {
				t.Errorf("session shown as %q (key %s)", p.Session, s.Key)
			}
			for cat, state := range c.want {
				if got := p.of(cat); got.State != state || got.Policy != "ask" {
					t.Errorf("%s: %+v, want state %s", cat, got, state)
				}
			}
			if !c.check(p) || !strings.Contains(p.Note, "only the user") {
				t.Errorf("%+v", p)
			}
		})
	}
	t.Run("no arguments", func(t *testing.T) {
		t.Parallel()
		errCase{"", "ha_get_permissions", map[string]any{"grant": "filesystem"}, "invalid_argument", "grant", ""}.check(t, fx.Session(t))
	})
}

type auditRow struct {
	Time     string `json:"time"`
	Client   string `json:"client"`
	Tool     string `json:"tool"`
	Category string `json:"category"`
	Args     string `json:"args"`
	Outcome  string `json:"outcome"`
	Detail   string `json:"detail"`
	Kind     string `json:"kind"`
}

type auditList struct {
	Total      int        `json:"total"`
	Count      int        `json:"count"`
	NextOffset *int       `json:"next_offset"`
	Items      []auditRow `json:"items"`
}

// ha_get_audit_log shows this session's rows only: another session's calls (their arguments,
// their ids) stay out of reach whatever the arguments, and the filters and paging work on the
// session's own rows.
func TestGetAuditLog(t *testing.T) {
	t.Parallel()
	mine, other := fx.Session(t), fx.Session(t)
	// Before anything: an empty log, not everyone's.
	var l auditList
	mine.OK(t, "ha_get_audit_log", nil, &l)
	if l.Total != 0 || l.Items == nil {
		t.Fatalf("a new session's log: %+v", l)
	}
	// mine: one refused call, then the grant, then two calls that run.
	mine.Fail(t, "ha_file_info", map[string]any{"path": "/config/mine-before-grant"})
	mine.Grant(t, permission.Filesystem)
	mine.OK(t, "ha_file_info", map[string]any{"path": "/config/configuration.yaml"}, nil)
	mine.OK(t, "ha_list_directory", map[string]any{"path": "/config"}, nil)
	// other: its own calls, and a row written straight to the store under its key.
	other.Grant(t, permission.Filesystem)
	other.OK(t, "ha_file_info", map[string]any{"path": "/config/scripts.yaml"}, nil)
	if err := fx.Store.AppendAudit(context.Background(), store.AuditEntry{SessionID: other.Key, Tool: "ha_file_info", Category: "filesystem",
		ArgsSummary: "/config/other-session-secret", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	mine.Audit(t, store.AuditQuery{Tool: "ha_list_directory"})
	other.Audit(t, store.AuditQuery{Tool: "ha_file_info", Outcome: "ok"})
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		name  string
		args  map[string]any
		check func(auditList) bool
	}{
		{"everything of mine", nil, func(l auditList) bool { return l.Total >= 4 }},
		{"by tool", map[string]any{"tool": "ha_file_info"}, func(l auditList) bool {
			return l.Total >= 2 && every(l, func(r auditRow) bool { return r.Tool == "ha_file_info" })
		}},
		{"by outcome", map[string]any{"outcome": "permission_required"}, func(l auditList) bool {
			return l.Total >= 1 && every(l, func(r auditRow) bool { return r.Outcome == "permission_required" })
		}},
		{"by category", map[string]any{"category": "filesystem", "outcome": "ok"}, func(l auditList) bool {
			return l.Total == 2 && every(l, func(r auditRow) bool { return r.Category == "filesystem" })
		}},
		{"by kind", map[string]any{"kind": "file"}, func(l auditList) bool {
			return l.Total >= 3 && every(l, func(r auditRow) bool { return r.Kind == "file" })
		}},
		{"by kind permission", map[string]any{"kind": "permission"}, func(l auditList) bool {
			return every(l, func(r auditRow) bool { return r.Kind == "permission" })
		}},
		{"since an hour ago", map[string]any{"since": past}, func(l auditList) bool { return l.Total >= 4 }},
		{"since a time to come", map[string]any{"since": future}, func(l auditList) bool { return l.Total == 0 && l.Count == 0 }},
		{"newest first, paged", map[string]any{"limit": 1}, func(l auditList) bool {
			return l.Count == 1 && l.NextOffset != nil && *l.NextOffset == 1
		}},
		{"the last page", map[string]any{"limit": 2, "offset": 2}, func(l auditList) bool { return l.Count >= 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var l auditList
			text := mine.OK(t, "ha_get_audit_log", c.args, &l)
			if !c.check(l) || l.Count != len(l.Items) {
				t.Errorf("%s", text)
			}
			for _, leak := range []string{other.Key, mine.Key, "scripts.yaml", "other-session-secret"} {
				if strings.Contains(text, leak) {
					t.Errorf("the log shows %q: %s", leak, text)
				}
			}
		})
	}
	for _, c := range []errCase{
		{"all sessions", "ha_get_audit_log", map[string]any{"all_sessions": true}, "invalid_argument", "all_sessions", ""},
		{"another session's id", "ha_get_audit_log", map[string]any{"session_id": other.Key}, "invalid_argument", "session_id", ""},
		{"unknown category", "ha_get_audit_log", map[string]any{"category": "everything"}, "invalid_argument", "category", ""},
		{"since not a time", "ha_get_audit_log", map[string]any{"since": "last week"}, "invalid_argument", "since", ""},
		{"limit over 1000", "ha_get_audit_log", map[string]any{"limit": 1001}, "invalid_argument", "limit", ""},
	} {
		t.Run(c.Name, func(t *testing.T) { t.Parallel(); c.check(t, mine) })
	}
}

func every(l auditList, ok func(auditRow) bool) bool {
	for _, r := range l.Items {
		if !ok(r) {
			return false
		}
	}
	return true
}

type trashArgs struct {
	Path string `json:"path" validate:"required"`
}

// trashFile is a tool that always needs the user's confirmation (class delete), as
// ha_purge_database does, over the fixture's files: the Gate's confirmation path without a
// backend that needs one.
func trashFile(f *tooltest.Fixture) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[trashArgs, fsguard.TrashItem]{
		Name: "test_trash_file", Toolset: "test", Description: "Move a file to the trash, after the user confirms it.", Destructive: true,
		Confirm: &toolkit.Confirm[trashArgs]{When: "always (`delete`)", Check: func(_ context.Context, _ *toolkit.Call, a trashArgs) (toolkit.Ask, error) {
			return toolkit.Ask{Classes: []string{string(sensitive.Delete)}, Question: "Delete " + a.Path + "?"}, nil
		}},
		Summary: func(a trashArgs) string { return a.Path },
		Handler: func(_ context.Context, _ *toolkit.Call, a trashArgs) (fsguard.TrashItem, error) {
			return f.Files.Delete(a.Path, false)
		},
	})
}

// A confirmation is the user's: confirm=true from the model posts a request for that exact call,
// which the user approves or denies in the panel; an approval runs the call once.
func TestConfirmationIsTheUsers(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp(fx.Home.Sandbox().Share, "confirm-")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"deny.txt", "approve.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	alias := "/share/" + filepath.Base(dir)
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	s := fx.Session(t)
	ask := func(name string) string {
		t.Helper()
		e := s.Fail(t, "test_trash_file", map[string]any{"path": alias + "/" + name, "confirm": true})
		id, _ := e.Details["request_id"].(string)
		if e.Code != "confirmation_required" || !strings.HasPrefix(id, "req_") || !strings.Contains(e.Message, "Delete "+alias+"/"+name+"?") {
			t.Fatalf("confirm=true alone: %+v", e)
		}
		return id
	}

	fx.DenyRequest(t, ask("deny.txt"))
	if e := s.Fail(t, "test_trash_file", map[string]any{"path": alias + "/deny.txt", "confirm": true}); e.Code != "confirmation_denied" || !exists("deny.txt") {
		t.Errorf("after the user denied: %+v", e)
	}

	fx.Approve(t, ask("approve.txt"))
	if e := s.Fail(t, "test_trash_file", map[string]any{"path": alias + "/deny.txt", "confirm": true}); e.Code != "confirmation_denied" || !exists("deny.txt") {
		t.Errorf("an approval of another call: %+v", e)
	}
	s.OK(t, "test_trash_file", map[string]any{"path": alias + "/approve.txt", "confirm": true}, nil)
	if exists("approve.txt") {
		t.Error("the approved call did not run")
	}
	if got := s.Audit(t, store.AuditQuery{Tool: "test_trash_file", Outcome: "ok"}); len(got) != 1 || got[0].Detail != "confirmed: "+toolkit.ConfirmedByApproval {
		t.Errorf("audit of the approved call: %+v", got)
	}
	// The approval is spent.
	if err := os.WriteFile(filepath.Join(dir, "approve.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if e := s.Fail(t, "test_trash_file", map[string]any{"path": alias + "/approve.txt", "confirm": true}); e.Code != "confirmation_required" || !exists("approve.txt") {
		t.Errorf("the approval ran twice: %+v", e)
	}
}
