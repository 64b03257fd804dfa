package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMigrationsAreOrderedAndNamed(t *testing.T) {
	for i, m := range migrations {
		if m.Version != i+1 {
			t.Errorf("migrations[%d] has version %d, want %d: versions must be 1, 2, 3… in list order", i, m.Version, i+1)
		}
		if m.Name == "" || m.Up == nil {
			t.Errorf("migration %d needs a name and an up function", m.Version)
		}
	}
}

func TestOldFileIsUpgradedInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hamcp.db")
	ctx := context.Background()

	// A file written by a build that only knew the first migration.
	saved := migrations
	migrations = saved[:1]
	old, err := Open(path)
	migrations = saved
	if err != nil {
		t.Fatal(err)
	}
	if err := old.AppendAudit(ctx, AuditEntry{SessionID: "old", Tool: "ha_execute_sql", Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	if v, _ := old.SchemaVersion(ctx); v != 1 {
		t.Fatalf("old file schema version %d, want 1", v)
	}
	var tables int
	old.DB().QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'permission_grants'`).Scan(&tables)
	if tables != 0 {
		t.Fatal("the old build should not have created permission_grants")
	}
	old.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v != len(migrations) {
		t.Fatalf("upgraded schema version %d, want %d", v, len(migrations))
	}
	got, total, err := s.ListAudit(ctx, AuditQuery{SessionID: "old"})
	if err != nil || total != 1 || got[0].Tool != "ha_execute_sql" {
		t.Fatalf("audit rows after upgrade: %v, %d, %v; want the old row kept", got, total, err)
	}
	if _, err := s.LoadGrants(ctx, got[0].Time); err != nil {
		t.Fatalf("new table unusable after upgrade: %v", err)
	}
}

func TestFileFromNewerBuildStillOpens(t *testing.T) {
	s, path := openTemp(t)
	ctx := context.Background()
	// A newer hamcp added migration 99 (additive, by rule); this build must keep working with the file.
	if _, err := s.DB().ExecContext(ctx, `CREATE TABLE future_feature (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(path)
	if err != nil {
		t.Fatalf("open file from a newer build: %v", err)
	}
	defer s2.Close()
	if v, _ := s2.SchemaVersion(ctx); v != 99 {
		t.Fatalf("schema version %d, want 99", v)
	}
	if err := s2.AppendAudit(ctx, AuditEntry{Tool: "t", Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
}

func TestFailedMigrationLeavesFileAtLastStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hamcp.db")
	saved := migrations
	defer func() { migrations = saved }()
	migrations = append(append([]Migration{}, saved...), Migration{len(saved) + 1, "broken", func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE half_done (id INTEGER)`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `THIS IS NOT SQL`)
		return err
	}})
	if s, err := Open(path); err == nil {
		s.Close()
		t.Fatal("Open with a broken migration succeeded")
	}
	migrations = saved
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	s.DB().QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'half_done'`).Scan(&n)
	if n != 0 {
		t.Fatal("a failed migration left a table behind: steps must be atomic")
	}
	if v, _ := s.SchemaVersion(context.Background()); v != len(saved) {
		t.Fatalf("schema version %d, want %d", v, len(saved))
	}
}

// An integration's steps join the file's one sequence: applied once, in version order, kept by
// builds that do not know them, and refused before anything runs when they reuse a version.
func TestIntegrationMigrations(t *testing.T) {
	ctx := context.Background()
	create := func(table string) func(ctx context.Context, tx *sql.Tx) error {
		return func(ctx context.Context, tx *sql.Tx) error {
			// No IF NOT EXISTS: running a step twice fails.
			_, err := tx.ExecContext(ctx, `CREATE TABLE `+table+` (id INTEGER PRIMARY KEY)`)
			return err
		}
	}
	next := len(migrations) + 1
	good := []Migration{{next + 1, "widgets_more", create("widget_parts")}, {next, "widgets", create("widgets")}}
	tests := []struct {
		name  string
		steps []Migration
		want  string // error text; "" = applied
	}{
		{"out of order", good, ""},
		{"a version the store uses", []Migration{{next, "widgets", create("widgets")}, {3, "stolen", create("stolen")}}, "already taken by the store's oauth"},
		{"a version twice", []Migration{{next, "widgets", create("widgets")}, {next, "again", create("again")}}, "already taken by widgets"},
		{"no version", []Migration{{0, "zero", create("zero")}}, "positive version"},
		{"no name", []Migration{{next, "", create("nameless")}}, "needs a positive version, a name"},
		{"no up", []Migration{{next, "idle", nil}}, "Up function"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, path := openTemp(t)
			err := s.Migrate(ctx, tc.steps...)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Migrate: %v, want an error saying %q", err, tc.want)
				}
				if v, _ := s.SchemaVersion(ctx); v != len(migrations) {
					t.Fatalf("schema version %d after a refused Migrate, want %d: nothing may be applied", v, len(migrations))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(ctx, tc.steps...); err != nil {
				t.Fatalf("second Migrate, as on every start: %v", err)
			}
			s.Close()
			// A build without the integration opens the file and keeps its tables and versions.
			s2, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if v, _ := s2.SchemaVersion(ctx); v != next+1 {
				t.Fatalf("schema version %d, want %d", v, next+1)
			}
			var names []string
			rows, err := s2.DB().QueryContext(ctx, `SELECT name FROM schema_migrations WHERE version > ? ORDER BY version`, len(migrations))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var n string
				rows.Scan(&n)
				names = append(names, n)
			}
			rows.Close()
			if strings.Join(names, ",") != "widgets,widgets_more" {
				t.Fatalf("recorded integration steps %v, want widgets then widgets_more", names)
			}
		})
	}
}

// A file written before integrations brought their own steps (every step the store had then, with
// data in each table) opens unchanged: no step runs again and nothing is lost, also when an
// integration then adds a step of its own.
func TestFileOfEarlierLayoutKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hamcp.db")
	old, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if err := old.AppendAudit(ctx, AuditEntry{SessionID: "old", Tool: "hubitat_reboot_hub", Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	if err := old.SaveGrant(ctx, GrantRecord{Key: "token:abc", Category: "hub_admin", Via: "panel", GrantedAt: at, ExpiresAt: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := old.SetRuleVariable(ctx, "away", "true", at); err != nil {
		t.Fatal(err)
	}
	if _, err := old.SaveCapturedState(ctx, CapturedState{ID: "evening", Devices: map[string]map[string]string{"1": {"switch": "on"}}, CapturedAt: at}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := old.SaveHubBackup(ctx, at, []byte("backup")); err != nil {
		t.Fatal(err)
	}
	if _, err := old.DB().ExecContext(ctx, `INSERT INTO hubitat_rules (id, name, enabled, body, created_at, updated_at) VALUES ('r1', 'Porch', 1, '{}', 0, 0)`); err != nil {
		t.Fatal(err)
	}
	var appliedBefore int64
	old.DB().QueryRowContext(ctx, `SELECT sum(applied_at) FROM schema_migrations`).Scan(&appliedBefore)
	old.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx, Migration{len(migrations) + 1, "integration_table", func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE integration_table (id INTEGER PRIMARY KEY)`)
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	var appliedAfter int64
	s.DB().QueryRowContext(ctx, `SELECT sum(applied_at) FROM schema_migrations WHERE version <= ?`, len(migrations)).Scan(&appliedAfter)
	if appliedAfter != appliedBefore {
		t.Error("a step the file already had was applied again")
	}
	checks := []struct {
		what string
		ok   func() bool
	}{
		{"audit", func() bool { _, n, err := s.ListAudit(ctx, AuditQuery{SessionID: "old"}); return err == nil && n == 1 }},
		{"grant", func() bool {
			g, err := s.LoadGrants(ctx, at)
			return err == nil && len(g) == 1 && g[0].Category == "hub_admin"
		}},
		{"rule variable", func() bool { v, ok, err := s.RuleVariable(ctx, "away"); return err == nil && ok && v.Value == "true" }},
		{"captured state", func() bool {
			cs, ok, err := s.CapturedState(ctx, "evening")
			return err == nil && ok && cs.Devices["1"]["switch"] == "on"
		}},
		{"hub backup", func() bool { b, ok, err := s.LastHubBackup(ctx); return err == nil && ok && b.TakenAt.Equal(at) }},
		{"rule", func() bool {
			var n int
			return s.DB().QueryRowContext(ctx, `SELECT count(*) FROM hubitat_rules WHERE id = 'r1'`).Scan(&n) == nil && n == 1
		}},
	}
	for _, c := range checks {
		if !c.ok() {
			t.Errorf("the %s written before is gone or changed", c.what)
		}
	}
}
