package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

func TestMigrationsAreOrderedAndNamed(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 {
			t.Errorf("migrations[%d] has version %d, want %d: versions must be 1, 2, 3… in list order", i, m.version, i+1)
		}
		if m.name == "" || m.up == nil {
			t.Errorf("migration %d needs a name and an up function", m.version)
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
	migrations = append(append([]migration{}, saved...), migration{len(saved) + 1, "broken", func(ctx context.Context, tx *sql.Tx) error {
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
