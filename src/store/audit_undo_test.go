package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A file from the build before kinds and undo (store step 4, and step 8 of another package) keeps
// every audit row, and the rows read as not undoable and not undone.
func TestMigrationAuditKindKeepsOldRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hamcp.db")
	old := oldFile(t, path, 4)
	// confighistory's step 8, which files of that build carry too.
	if _, err := old.ExecContext(ctx, `CREATE TABLE config_versions (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (8, 'config_versions', 1)`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for i, tool := range []string{"ha_write_file", "ha_execute_command"} {
		if _, err := old.ExecContext(ctx, `INSERT INTO audit_log (time, session_id, client, tool, category, args_summary, outcome, detail, duration_ms)
			VALUES (?, 'sess', 'claude-ai', ?, 'filesystem', '/config/a.yaml', 'ok', 'd', 7)`, Millis(at.Add(time.Duration(i)*time.Minute)), tool); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v != latest() {
		t.Fatalf("schema version %d after upgrade, want %d", v, latest())
	}
	got, total, err := s.ListAudit(ctx, AuditQuery{})
	if err != nil || total != 2 {
		t.Fatalf("rows after upgrade: %d, %v; want both kept", total, err)
	}
	for _, e := range got {
		if e.SessionID != "sess" || e.Client != "claude-ai" || e.ArgsSummary != "/config/a.yaml" || e.DurationMS != 7 || !e.Time.Equal(at) && !e.Time.Equal(at.Add(time.Minute)) {
			t.Errorf("old row changed by the upgrade: %+v", e)
		}
		if e.Kind != "" || e.Undo != "" || e.Undone() || e.UndoneBy != "" {
			t.Errorf("old row reads as kind %q, undo %q, undone %v: want none", e.Kind, e.Undo, e.UndoneAt)
		}
	}
	var indexes int
	s.DB().QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('audit_log_kind_time', 'audit_log_client_time')`).Scan(&indexes)
	if indexes != 2 {
		t.Errorf("%d of the kind and client indexes exist, want 2", indexes)
	}
	// The upgrade is applied once: opening again changes nothing.
	s.Close()
	s2, err := Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	if _, total, _ := s2.ListAudit(ctx, AuditQuery{}); total != 2 {
		t.Errorf("%d rows after reopening, want 2", total)
	}
}

func TestAuditKindUndoAndFilters(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	base := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	entries := []AuditEntry{
		{Time: base, Tool: "ha_call_service", Kind: "device", Client: "claude-ai", Outcome: OutcomeOK, Undo: `{"type":"state"}`, Principal: "anna via Claude"},
		{Time: base.Add(time.Hour), Tool: "ha_config_set_automation", Kind: "config", Client: "claude-ai", Outcome: OutcomeOK, Undo: `{"type":"config"}`},
		{Time: base.Add(2 * time.Hour), Tool: "ha_write_file", Kind: "file", Client: "n8n", Outcome: OutcomeOK},
		{Time: base.Add(3 * time.Hour), Tool: "ha_get_states", Client: "n8n", Outcome: OutcomeOK},
	}
	if err := s.AppendAudits(ctx, entries); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		q     AuditQuery
		tools []string
	}{
		{"kind", AuditQuery{Kind: "config"}, []string{"ha_config_set_automation"}},
		{"since and until", AuditQuery{Since: base.Add(time.Hour), Until: base.Add(3 * time.Hour)}, []string{"ha_write_file", "ha_config_set_automation"}},
		{"until only", AuditQuery{Until: base.Add(time.Hour)}, []string{"ha_call_service"}},
		{"client and kind", AuditQuery{Client: "n8n", Kind: "file"}, []string{"ha_write_file"}},
		{"no kind matches nothing", AuditQuery{Kind: "hub"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, total, err := s.ListAudit(ctx, tc.q)
			if err != nil || total != len(tc.tools) || len(got) != len(tc.tools) {
				t.Fatalf("got %d (total %d), %v; want %v", len(got), total, err, tc.tools)
			}
			for i, e := range got {
				if e.Tool != tc.tools[i] {
					t.Errorf("row %d is %s, want %s", i, e.Tool, tc.tools[i])
				}
			}
		})
	}
	kinds, err := s.AuditValues(ctx, AuditKind, 10)
	if err != nil || len(kinds) != 3 || kinds[0] != "file" {
		t.Errorf("kind values %v, %v; want file, config, device", kinds, err)
	}

	all, _, _ := s.ListAudit(ctx, AuditQuery{Kind: "device"})
	id := all[0].ID
	e, err := s.GetAudit(ctx, id)
	if err != nil || e.Undo != `{"type":"state"}` || e.Principal != "anna via Claude" || e.Undone() {
		t.Fatalf("GetAudit = %+v, %v", e, err)
	}
	at := base.Add(4 * time.Hour)
	if err := s.MarkUndone(ctx, id, "Anna", at); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkUndone(ctx, id, "Bob", at.Add(time.Minute)); !errors.Is(err, ErrAlreadyUndone) {
		t.Errorf("second undo: %v, want ErrAlreadyUndone", err)
	}
	if e, _ := s.GetAudit(ctx, id); !e.UndoneAt.Equal(at) || e.UndoneBy != "Anna" {
		t.Errorf("undone %v by %q, want the first mark kept", e.UndoneAt, e.UndoneBy)
	}
	if _, err := s.GetAudit(ctx, 99999); !errors.Is(err, ErrNoAuditEntry) {
		t.Errorf("unknown entry: %v, want ErrNoAuditEntry", err)
	}
	if err := s.MarkUndone(ctx, 99999, "Anna", at); !errors.Is(err, ErrNoAuditEntry) {
		t.Errorf("marking an unknown entry: %v, want ErrNoAuditEntry", err)
	}
}

// An undo reference is kept whole or not at all: a clipped one would name something else.
func TestAuditUndoTooLongIsDropped(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	long := `{"ref":"` + string(make([]byte, maxUndo)) + `"}`
	if err := s.AppendAudit(ctx, AuditEntry{Tool: "x", Outcome: OutcomeOK, Undo: long}); err != nil {
		t.Fatal(err)
	}
	got, _, _ := s.ListAudit(ctx, AuditQuery{})
	if got[0].Undo != "" {
		t.Errorf("an oversized undo reference was stored (%d bytes)", len(got[0].Undo))
	}
}
