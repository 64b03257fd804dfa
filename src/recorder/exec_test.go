package recorder

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExecCommits(t *testing.T) {
	path := copyOf(t)
	db := openDB(t, path, Options{})
	raw := rawDB(t, path)
	tests := []struct {
		name     string
		sql      string
		args     []any
		kind     Kind
		affected int64
		check    string // a query that must return 1 afterwards
	}{
		{"insert", "INSERT INTO states_meta (entity_id) VALUES (?)", []any{"sensor.added"}, KindWrite, 1,
			"SELECT COUNT(*) FROM states_meta WHERE entity_id = 'sensor.added'"},
		{"update", "UPDATE states SET state = 'fixed' WHERE state_id = ?", []any{float64(1)}, KindWrite, 1,
			"SELECT COUNT(*) FROM states WHERE state_id = 1 AND state = 'fixed'"},
		{"ddl", "CREATE INDEX ix_hamcp_test ON recorder_runs (created)", nil, KindDDL, 0,
			"SELECT COUNT(*) FROM sqlite_schema WHERE name = 'ix_hamcp_test'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := db.Exec(context.Background(), tc.sql, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != tc.kind || res.RowsAffected != tc.affected {
				t.Errorf("got %+v, want kind %s and %d rows", res, tc.kind, tc.affected)
			}
			if len(res.Warnings) != 1 || res.Warnings[0] != CacheWarning {
				t.Errorf("warnings %q, want the cache warning", res.Warnings)
			}
			if n := scalar[int](t, raw, tc.check); n != 1 {
				t.Errorf("%s = %d, want 1", tc.check, n)
			}
		})
	}
	// The read pool sees the committed write: nothing kept an old snapshot.
	res, err := db.Query(context.Background(), "SELECT COUNT(*) FROM states_meta WHERE entity_id = 'sensor.added'", nil, 0, 0)
	if err != nil || res.Rows[0][0] != int64(1) {
		t.Fatalf("read after write: %v %v", res, err)
	}
}

func TestExecRollsBack(t *testing.T) {
	path := copyOf(t)
	raw := rawDB(t, path)
	metaBefore := scalar[int64](t, raw, "SELECT COUNT(*) FROM states_meta")
	statesBefore := scalar[int64](t, raw, "SELECT COUNT(*) FROM states")
	tests := []struct {
		name    string
		opts    Options
		sql     string
		hold    bool // a raw connection holds the write lock, like HA mid-commit
		wantMsg string
	}{
		{"constraint fails on the second row", Options{},
			"INSERT INTO states_meta (entity_id) VALUES ('sensor.brand_new'), ('sensor.kitchen_temperature')", false, "UNIQUE"},
		{"foreign key", Options{}, "DELETE FROM states_meta WHERE metadata_id = 1", false, "FOREIGN KEY"},
		{"write timeout interrupts an endless insert", Options{WriteTimeout: 300 * time.Millisecond},
			"INSERT INTO states_meta (entity_id) SELECT 'sensor.n' || n FROM (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c) SELECT n FROM c)",
			false, "write timeout"},
		{"write lock held elsewhere", Options{WriteTimeout: 300 * time.Millisecond},
			"INSERT INTO states_meta (entity_id) VALUES ('sensor.blocked')", true, "holding the write lock"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openDB(t, path, tc.opts)
			if tc.hold {
				conn, err := raw.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
					t.Fatal(err)
				}
				defer func() {
					conn.ExecContext(context.Background(), "ROLLBACK")
					conn.Close()
				}()
			}
			_, err := db.Exec(context.Background(), tc.sql, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), "nothing changed") {
				t.Fatalf("err = %v, want a rollback mentioning %q", err, tc.wantMsg)
			}
		})
	}
	if n := scalar[int64](t, raw, "SELECT COUNT(*) FROM states_meta"); n != metaBefore {
		t.Errorf("states_meta has %d rows, had %d: a failed write left rows behind", n, metaBefore)
	}
	if n := scalar[int64](t, raw, "SELECT COUNT(*) FROM states"); n != statesBefore {
		t.Errorf("states has %d rows, had %d", n, statesBefore)
	}
}

func TestExecRefuses(t *testing.T) {
	db := openDB(t, copyOf(t), Options{})
	tests := []struct{ sql, want string }{
		{"SELECT 1", "run it as a read"},
		{"PRAGMA table_info(states)", "run it as a read"},
		{"BEGIN", "not needed"},
		{"COMMIT", "not needed"},
		{"VACUUM", "locks the whole database"},
		{"VACUUM INTO '/tmp/x.db'", "VACUUM INTO"},
		{"ATTACH '/tmp/x.db' AS x", "ATTACH"},
		{"PRAGMA writable_schema = 1", "writable_schema"},
		{"CREATE TRIGGER t AFTER INSERT ON states BEGIN SELECT 1 END", "CREATE TRIGGER"},
		{"UPDATE states SET state = 'x'; DELETE FROM states", "2 statements"},
		{"SELECT load_extension('x')", "load_extension"},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := db.Exec(context.Background(), tc.sql, nil)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrRefused naming %q", err, tc.want)
			}
		})
	}
}

// TestWriteAuthorizer: the write connection still refuses what Classify
// refuses, should a statement get past the text guard.
func TestWriteAuthorizer(t *testing.T) {
	path := copyOf(t)
	db := openDB(t, path, Options{})
	w := writeConn(t, db)
	for _, q := range []string{
		"ATTACH 'file:" + path + "-other?mode=rwc' AS x",
		"PRAGMA writable_schema = 1",
		"PRAGMA journal_mode = DELETE",
		"CREATE TRIGGER t AFTER INSERT ON states_meta BEGIN SELECT 1; END",
		"SELECT load_extension('x')",
		"SAVEPOINT a",
	} {
		if _, err := w.ExecContext(context.Background(), q); err == nil || !strings.Contains(err.Error(), "not authorized") {
			t.Errorf("%s: err = %v, want not authorized", q, err)
		}
	}
}
