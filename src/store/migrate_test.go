package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oldFile is the file an earlier build left: the store's first n steps of today's list applied, with
// nothing of today's Open (which prepares statements naming newer columns).
func oldFile(t *testing.T, path string, n int) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(context.Background(), db, migrations[:n]); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != migrations[n-1].Version {
		t.Fatalf("old file at version %d (%v), want %d", v, err, migrations[n-1].Version)
	}
	return db
}

// latest is the highest version of the store's own steps.
func latest() int { return migrations[len(migrations)-1].Version }

func TestMigrationsAreOrderedAndNamed(t *testing.T) {
	prev := 0
	for i, m := range migrations {
		if m.Version <= prev {
			t.Errorf("migrations[%d] has version %d after %d: versions must grow in list order", i, m.Version, prev)
		}
		// 5–7 were the store's steps once and now are an integration's, with their numbers: files
		// record them as applied, so a step of the store's that took one again would never run.
		if m.Version >= 5 && m.Version <= 7 {
			t.Errorf("migration %d (%s) takes a version an integration holds: use the next free one (see Migration)", m.Version, m.Name)
		}
		if m.Name == "" || m.Up == nil {
			t.Errorf("migration %d needs a name and an up function", m.Version)
		}
		prev = m.Version
	}
}

func TestOldFileIsUpgradedInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hamcp.db")
	ctx := context.Background()

	// A file written by a build that only knew the first migration, with that build's own insert.
	old := oldFile(t, path, 1)
	if _, err := old.ExecContext(ctx, `INSERT INTO audit_log (time, session_id, tool, outcome) VALUES (?, 'old', 'ha_execute_sql', 'ok')`, Millis(time.Now())); err != nil {
		t.Fatal(err)
	}
	var tables int
	old.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'permission_grants'`).Scan(&tables)
	if tables != 0 {
		t.Fatal("the old build should not have created permission_grants")
	}
	old.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v != latest() {
		t.Fatalf("upgraded schema version %d, want %d", v, latest())
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
	migrations = append(append([]Migration{}, saved...), Migration{latest() + 1, "broken", func(ctx context.Context, tx *sql.Tx) error {
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
	if v, _ := s.SchemaVersion(context.Background()); v != latest() {
		t.Fatalf("schema version %d, want %d", v, latest())
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
	next := latest() + 1
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
				if v, _ := s.SchemaVersion(ctx); v != latest() {
					t.Fatalf("schema version %d after a refused Migrate, want %d: nothing may be applied", v, latest())
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
			rows, err := s2.DB().QueryContext(ctx, `SELECT name FROM schema_migrations WHERE version > ? ORDER BY version`, latest())
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
