package recorder

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"
)

func TestQueryPaging(t *testing.T) {
	db := openDB(t, generated(t), Options{MaxRows: 50})
	raw := rawDB(t, generated(t))
	total := scalar[int](t, raw, "SELECT COUNT(*) FROM states WHERE metadata_id = 1")
	const q = "SELECT state_id FROM states WHERE metadata_id = ? ORDER BY state_id"
	tests := []struct {
		name              string
		limit, offset     int
		wantCount         int
		wantTruncated     bool
		wantNext          int
		wantWarnSubstring string
	}{
		{"first page", 10, 0, 10, true, 10, "without LIMIT"},
		{"middle page", 10, 20, 10, true, 30, ""},
		{"default limit is the cap", 0, 0, 50, true, 50, ""},
		{"limit above cap", 500, 0, 50, true, 50, "above the cap"},
		{"last partial page", 10, total - 3, 3, false, 0, ""},
		{"exact end", 10, total - 10, 10, false, 0, ""},
		{"past the end", 10, total + 5, 0, false, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := db.Query(context.Background(), q, []any{float64(1)}, tc.limit, tc.offset)
			if err != nil {
				t.Fatal(err)
			}
			if res.Count != tc.wantCount || len(res.Rows) != tc.wantCount || res.Truncated != tc.wantTruncated || res.NextOffset != tc.wantNext {
				t.Fatalf("count=%d truncated=%v next=%d, want %d %v %d", res.Count, res.Truncated, res.NextOffset, tc.wantCount, tc.wantTruncated, tc.wantNext)
			}
			if tc.wantWarnSubstring != "" && !strings.Contains(strings.Join(res.Warnings, "|"), tc.wantWarnSubstring) {
				t.Errorf("warnings %q lack %q", res.Warnings, tc.wantWarnSubstring)
			}
			// The page is exactly the rows SQLite returns at that offset.
			var want []int64
			rows, err := raw.Query(q+" LIMIT ? OFFSET ?", 1, tc.wantCount, tc.offset)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int64
				rows.Scan(&id)
				want = append(want, id)
			}
			rows.Close()
			for i, r := range res.Rows {
				if r[0] != want[i] {
					t.Fatalf("row %d = %v, want %d", i, r[0], want[i])
				}
			}
		})
	}
}

func TestQueryWarnings(t *testing.T) {
	db := openDB(t, generated(t), Options{MaxRows: 5})
	tests := []struct {
		sql      string
		wantWarn bool
	}{
		{"SELECT state_id FROM states", true},
		{"SELECT state_id FROM states LIMIT 3", false},
		{"SELECT * FROM (SELECT state_id FROM states LIMIT 3)", true},
		{"PRAGMA table_info(states)", false},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			res, err := db.Query(context.Background(), tc.sql, nil, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(strings.Join(res.Warnings, "|"), "SELECT without LIMIT: capped at 5 rows")
			if got != tc.wantWarn {
				t.Errorf("warnings %q: want the no-LIMIT warning %v", res.Warnings, tc.wantWarn)
			}
			if len(res.Rows) > 5 {
				t.Errorf("%d rows beyond the cap of 5", len(res.Rows))
			}
		})
	}
}

// TestQueryStatementEdges: empty statements and comments around the one
// statement Classify accepted do not confuse the driver.
func TestQueryStatementEdges(t *testing.T) {
	db := openDB(t, generated(t), Options{})
	for _, q := range []string{";SELECT 7", "SELECT 7;;", "SELECT 7; -- done", "/* a */ SELECT 7 /* b */", "-- first\nSELECT 7\n"} {
		res, err := db.Query(context.Background(), q, nil, 0, 0)
		if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(7) {
			t.Errorf("%q: %+v, %v", q, res, err)
		}
	}
}

func TestQueryValueEncoding(t *testing.T) {
	db := openDB(t, generated(t), Options{})
	long := strings.Repeat("é", maxCellBytes) // 2 bytes per rune: cut mid-value, on a rune boundary
	tests := []struct {
		name string
		sql  string
		args []any
		want string // JSON of the single cell
	}{
		{"null", "SELECT NULL", nil, `null`},
		{"integer", "SELECT 42", nil, `42`},
		{"real", "SELECT 1.5", nil, `1.5`},
		{"text", "SELECT 'héllo'", nil, `"héllo"`},
		{"short blob as hex", "SELECT x'00ff10'", nil, `{"blob_hex":"00ff10","bytes":3}`},
		{"long blob as base64", "SELECT zeroblob(40)", nil, `{"blob_base64":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","bytes":40}`},
		{"infinity", "SELECT 1e999", nil, `"Infinity"`},
		{"bound bool", "SELECT ?", []any{true}, `1`},
		{"whole float arg becomes integer", "SELECT typeof(?)", []any{float64(3)}, `"integer"`},
		{"fractional float arg stays real", "SELECT typeof(?)", []any{2.5}, `"real"`},
		{"named arg", "SELECT :who", []any{sql.Named("who", "me")}, `"me"`},
		{"datetime column as ISO", "SELECT start FROM recorder_runs ORDER BY run_id LIMIT 1", nil, `"2026-03-01T15:07:00Z"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := db.Query(context.Background(), tc.sql, tc.args, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(res.Rows[0][0])
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got %s, want %s", b, tc.want)
			}
		})
	}
	t.Run("context id blob is 16 bytes of hex", func(t *testing.T) {
		res, err := db.Query(context.Background(), "SELECT context_id_bin FROM states LIMIT 1", nil, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, ok := res.Rows[0][0].(Blob)
		if !ok || b.Bytes != 16 || len(b.Hex) != 32 {
			t.Fatalf("got %#v", res.Rows[0][0])
		}
	})
	t.Run("long text is cut with a warning", func(t *testing.T) {
		res, err := db.Query(context.Background(), "SELECT ? AS big LIMIT 1", []any{long}, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		s := res.Rows[0][0].(string)
		if len(s) > maxCellBytes || !strings.HasPrefix(long, s) || len(s) < maxCellBytes-1 {
			t.Fatalf("cut to %d bytes", len(s))
		}
		if !strings.Contains(strings.Join(res.Warnings, "|"), "substr(big") {
			t.Errorf("warnings %q do not say how to read the rest", res.Warnings)
		}
	})
	t.Run("unsupported arg", func(t *testing.T) {
		_, err := db.Query(context.Background(), "SELECT ?", []any{map[string]any{"a": 1}}, 1, 0)
		if err == nil || !strings.Contains(err.Error(), "args[0]") {
			t.Fatalf("err = %v, want one naming args[0]", err)
		}
	})
}

// slowSQL keeps SQLite busy for minutes unless interrupted.
const slowSQL = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c) SELECT count(*) FROM c WHERE n < 0 LIMIT 1"

func TestQueryTimeouts(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		ctx     func() (context.Context, context.CancelFunc)
		wantErr error
		wantMsg string
	}{
		{"statement timeout", Options{StatementTimeout: time.Second},
			func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			context.DeadlineExceeded, "statement timeout"},
		{"caller cancels", Options{},
			func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(200*time.Millisecond, cancel)
				return ctx, cancel
			},
			context.Canceled, "cancelled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openDB(t, generated(t), tc.opts)
			ctx, cancel := tc.ctx()
			defer cancel()
			_, err := db.Query(ctx, slowSQL, nil, 0, 0)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.wantErr, tc.wantMsg)
			}
			// The pool is still usable afterwards.
			if _, err := db.Query(context.Background(), "SELECT 1", nil, 0, 0); err != nil {
				t.Fatalf("after interrupt: %v", err)
			}
		})
	}
}

func TestQueryRefusesWrites(t *testing.T) {
	db := openDB(t, generated(t), Options{})
	for _, q := range []string{
		"DELETE FROM states",
		"UPDATE states SET state = 'x'",
		"WITH x AS (SELECT 1) INSERT INTO states_meta (entity_id) SELECT 'a.b' FROM x",
		"CREATE TABLE t (x)",
		"BEGIN",
		"PRAGMA user_version = 3",
		"ATTACH 'x.db' AS x",
	} {
		t.Run(q, func(t *testing.T) {
			if _, err := db.Query(context.Background(), q, nil, 0, 0); !errors.Is(err, ErrRefused) {
				t.Fatalf("err = %v, want ErrRefused", err)
			}
		})
	}
}

// TestReadOnlyLayers proves each layer of the read pool refuses writes on
// its own, so a write fails even if Classify were bypassed: mode=ro,
// query_only, and the authorizer; and the real pool (all three) through
// the unguarded query path.
func TestReadOnlyLayers(t *testing.T) {
	path := copyOf(t)
	raw := rawDB(t, path)
	before := scalar[int64](t, raw, "SELECT COUNT(*) FROM states_meta")
	uri := "file:" + uriPath(path)
	layers := []struct {
		name, why string // why: how SQLite refuses
		db        func(t *testing.T) *sql.DB
	}{
		{"mode=ro alone", "readonly database", func(t *testing.T) *sql.DB { return sql.OpenDB(connector{&sqlite.Driver{}, uri + "?mode=ro"}) }},
		{"query_only alone", "readonly database", func(t *testing.T) *sql.DB {
			return sql.OpenDB(connector{&sqlite.Driver{}, uri + "?mode=rw&_pragma=query_only(1)"})
		}},
		{"authorizer alone", "not authorized", func(t *testing.T) *sql.DB { return sql.OpenDB(connector{readDriver, uri + "?mode=rw"}) }},
		{"the read pool", "not authorized", func(t *testing.T) *sql.DB { return openDB(t, path, Options{}).r }},
	}
	writes := []string{
		"INSERT INTO states_meta (entity_id) VALUES ('sensor.intruder')",
		"UPDATE states SET state = 'hacked'",
		"DELETE FROM states_meta",
		"CREATE TABLE intruder (x)",
		"DROP INDEX ix_states_old_state_id",
	}
	for _, l := range layers {
		t.Run(l.name, func(t *testing.T) {
			db := l.db(t)
			defer db.Close()
			for _, w := range writes {
				if _, err := db.Exec(w); err == nil || !strings.Contains(err.Error(), l.why) {
					t.Errorf("%s: err = %v, want %q", w, err, l.why)
				}
			}
		})
	}
	t.Run("guard bypassed on the real pool", func(t *testing.T) {
		db := openDB(t, path, Options{})
		for _, w := range append(writes, "PRAGMA query_only = 0", "PRAGMA journal_mode = DELETE") {
			if _, err := db.query(context.Background(), Statement{Kind: KindRead}, w, nil, 0, 0); err == nil {
				t.Errorf("%s: succeeded", w)
			}
		}
		res, err := db.Query(context.Background(), "PRAGMA query_only", nil, 0, 0)
		if err != nil || fmt.Sprint(res.Rows) != "[[1]]" {
			t.Errorf("PRAGMA query_only = %v, %v; want 1", res, err)
		}
	})
	if after := scalar[int64](t, raw, "SELECT COUNT(*) FROM states_meta"); after != before {
		t.Fatalf("states_meta changed from %d to %d rows", before, after)
	}
	if n := scalar[int64](t, raw, "SELECT COUNT(*) FROM states WHERE state = 'hacked'"); n != 0 {
		t.Fatalf("%d states were rewritten", n)
	}
	if jm := scalar[string](t, raw, "PRAGMA journal_mode"); jm != "wal" {
		t.Fatalf("journal_mode = %s, want wal", jm)
	}
}
