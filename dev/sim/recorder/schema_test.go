package recorder

import (
	"context"
	"database/sql"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// wantColumns is HA's current SQLite schema written out independently of
// schema.go: table → "name type notnull pk" per column, in order.
var wantColumns = map[string][]string{
	"events": {"event_id INTEGER 1 1", "event_type CHAR(0) 0 0", "event_data CHAR(0) 0 0", "origin CHAR(0) 0 0",
		"origin_idx SMALLINT 0 0", "time_fired CHAR(0) 0 0", "time_fired_ts FLOAT 0 0", "context_id CHAR(0) 0 0",
		"context_user_id CHAR(0) 0 0", "context_parent_id CHAR(0) 0 0", "data_id INTEGER 0 0",
		"context_id_bin BLOB(16) 0 0", "context_user_id_bin BLOB(16) 0 0", "context_parent_id_bin BLOB(16) 0 0",
		"event_type_id INTEGER 0 0"},
	"event_data":       {"data_id INTEGER 1 1", "hash BIGINT 0 0", "shared_data TEXT 0 0"},
	"event_types":      {"event_type_id INTEGER 1 1", "event_type VARCHAR(64) 0 0"},
	"state_attributes": {"attributes_id INTEGER 1 1", "hash BIGINT 0 0", "shared_attrs TEXT 0 0"},
	"states_meta":      {"metadata_id INTEGER 1 1", "entity_id VARCHAR(255) 0 0"},
	"states": {"state_id INTEGER 1 1", "entity_id CHAR(0) 0 0", "state VARCHAR(255) 0 0", "attributes CHAR(0) 0 0",
		"event_id SMALLINT 0 0", "last_changed CHAR(0) 0 0", "last_changed_ts FLOAT 0 0", "last_reported_ts FLOAT 0 0",
		"last_updated CHAR(0) 0 0", "last_updated_ts FLOAT 0 0", "old_state_id INTEGER 0 0", "attributes_id INTEGER 0 0",
		"context_id CHAR(0) 0 0", "context_user_id CHAR(0) 0 0", "context_parent_id CHAR(0) 0 0", "origin_idx SMALLINT 0 0",
		"context_id_bin BLOB(16) 0 0", "context_user_id_bin BLOB(16) 0 0", "context_parent_id_bin BLOB(16) 0 0",
		"metadata_id INTEGER 0 0"},
	"statistics_meta": {"id INTEGER 1 1", "statistic_id VARCHAR(255) 0 0", "source VARCHAR(32) 0 0",
		"unit_of_measurement VARCHAR(255) 0 0", "unit_class VARCHAR(255) 0 0", "has_mean BOOLEAN 0 0",
		"has_sum BOOLEAN 0 0", "name VARCHAR(255) 0 0", "mean_type SMALLINT 1 0"},
	"recorder_runs": {"run_id INTEGER 1 1", "start DATETIME 1 0", "end DATETIME 0 0", "closed_incorrect BOOLEAN 1 0",
		"created DATETIME 1 0"},
	"schema_changes":    {"change_id INTEGER 1 1", "schema_version INTEGER 0 0", "changed DATETIME 1 0"},
	"statistics_runs":   {"run_id INTEGER 1 1", "start DATETIME 1 0"},
	"migration_changes": {"migration_id VARCHAR(255) 1 1", "version SMALLINT 1 0"},
}

func init() {
	stats := []string{"id INTEGER 1 1", "created CHAR(0) 0 0", "created_ts FLOAT 0 0", "metadata_id INTEGER 0 0",
		"start CHAR(0) 0 0", "start_ts FLOAT 0 0", "mean FLOAT 0 0", "mean_weight FLOAT 0 0", "min FLOAT 0 0",
		"max FLOAT 0 0", "last_reset CHAR(0) 0 0", "last_reset_ts FLOAT 0 0", "state FLOAT 0 0", "sum FLOAT 0 0"}
	wantColumns["statistics"] = stats
	wantColumns["statistics_short_term"] = stats
}

// wantIndexes: "table name unique cols".
var wantIndexes = []string{
	"event_data ix_event_data_hash 0 hash",
	"event_types ix_event_types_event_type 1 event_type",
	"events ix_events_context_id_bin 0 context_id_bin",
	"events ix_events_data_id 0 data_id",
	"events ix_events_event_type_id_time_fired_ts 0 event_type_id,time_fired_ts",
	"events ix_events_time_fired_ts 0 time_fired_ts",
	"migration_changes sqlite_autoindex_migration_changes_1 1 migration_id",
	"recorder_runs ix_recorder_runs_start_end 0 start,end",
	"state_attributes ix_state_attributes_hash 0 hash",
	"states ix_states_attributes_id 0 attributes_id",
	"states ix_states_context_id_bin 0 context_id_bin",
	"states ix_states_last_updated_ts 0 last_updated_ts",
	"states ix_states_metadata_id_last_updated_ts 0 metadata_id,last_updated_ts",
	"states ix_states_old_state_id 0 old_state_id",
	"states_meta ix_states_meta_entity_id 1 entity_id",
	"statistics ix_statistics_start_ts 0 start_ts",
	"statistics ix_statistics_statistic_id_start_ts 1 metadata_id,start_ts",
	"statistics_meta ix_statistics_meta_statistic_id 1 statistic_id",
	"statistics_runs ix_statistics_runs_start 0 start",
	"statistics_short_term ix_statistics_short_term_start_ts 0 start_ts",
	"statistics_short_term ix_statistics_short_term_statistic_id_start_ts 1 metadata_id,start_ts",
}

// wantFKs: "table col -> parent(col) on_delete".
var wantFKs = []string{
	"events data_id -> event_data(data_id) NO ACTION",
	"events event_type_id -> event_types(event_type_id) NO ACTION",
	"states attributes_id -> state_attributes(attributes_id) NO ACTION",
	"states metadata_id -> states_meta(metadata_id) NO ACTION",
	"states old_state_id -> states(state_id) NO ACTION",
	"statistics metadata_id -> statistics_meta(id) CASCADE",
	"statistics_short_term metadata_id -> statistics_meta(id) CASCADE",
}

type schemaDump struct {
	columns map[string][]string
	indexes []string
	fks     []string
	sql     []string // sqlite_master text, sorted
}

func dumpSchema(t *testing.T, db *sql.DB) schemaDump {
	t.Helper()
	d := schemaDump{columns: map[string][]string{}}
	rows, err := db.Query("SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var typ, name, tbl, text string
		if err := rows.Scan(&typ, &name, &tbl, &text); err != nil {
			t.Fatal(err)
		}
		d.sql = append(d.sql, typ+" "+name+" "+text)
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	rows.Close()
	for _, tbl := range tables {
		cols, err := db.Query("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid", tbl)
		if err != nil {
			t.Fatal(err)
		}
		for cols.Next() {
			var name, typ string
			var nn, pk int
			if err := cols.Scan(&name, &typ, &nn, &pk); err != nil {
				t.Fatal(err)
			}
			d.columns[tbl] = append(d.columns[tbl], strings.Join([]string{name, typ, itoa(nn), itoa(pk)}, " "))
		}
		cols.Close()
		ixs, err := db.Query(`SELECT il.name, il."unique", (SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info(il.name) ORDER BY seqno))
			FROM pragma_index_list(?) il`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		for ixs.Next() {
			var name, colsText string
			var uniq int
			if err := ixs.Scan(&name, &uniq, &colsText); err != nil {
				t.Fatal(err)
			}
			d.indexes = append(d.indexes, strings.Join([]string{tbl, name, itoa(uniq), colsText}, " "))
		}
		ixs.Close()
		fks, err := db.Query(`SELECT "from", "table", "to", on_delete FROM pragma_foreign_key_list(?)`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		for fks.Next() {
			var from, parent, to, onDelete string
			if err := fks.Scan(&from, &parent, &to, &onDelete); err != nil {
				t.Fatal(err)
			}
			d.fks = append(d.fks, tbl+" "+from+" -> "+parent+"("+to+") "+onDelete)
		}
		fks.Close()
	}
	sort.Strings(d.indexes)
	sort.Strings(d.fks)
	return d
}

func itoa(i int) string { return string(rune('0' + i)) }

func createdDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "home-assistant_v2.db")
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSchemaMatchesHomeAssistant(t *testing.T) {
	for name, path := range map[string]string{"Create": createdDB(t), "Generate": sharedDB(t)} {
		t.Run(name, func(t *testing.T) {
			d := dumpSchema(t, rawDB(t, path))
			if len(d.columns) != len(wantColumns) {
				t.Errorf("tables: got %d, want %d", len(d.columns), len(wantColumns))
			}
			for tbl, want := range wantColumns {
				if got := d.columns[tbl]; strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("table %s columns:\n got %q\nwant %q", tbl, got, want)
				}
			}
			for tbl := range d.columns {
				if _, ok := wantColumns[tbl]; !ok {
					t.Errorf("unexpected table %s", tbl)
				}
			}
			if got, want := strings.Join(d.indexes, "\n"), strings.Join(wantIndexes, "\n"); got != want {
				t.Errorf("indexes:\n got %s\nwant %s", got, want)
			}
			if got, want := strings.Join(d.fks, "\n"), strings.Join(wantFKs, "\n"); got != want {
				t.Errorf("foreign keys:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestCreateAndGenerateHaveIdenticalDDL(t *testing.T) {
	a := dumpSchema(t, rawDB(t, createdDB(t))).sql
	b := dumpSchema(t, rawDB(t, sharedDB(t))).sql
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("sqlite_master differs:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

func TestFreshDatabaseBookkeeping(t *testing.T) {
	for name, path := range map[string]string{"Create": createdDB(t), "Generate": sharedDB(t)} {
		t.Run(name, func(t *testing.T) {
			db := rawDB(t, path)
			// 52: what every Home Assistant since 2025.11 records (db_schema.py SCHEMA_VERSION).
			if v := scalar[int](t, db, "SELECT schema_version FROM schema_changes ORDER BY change_id DESC LIMIT 1"); v != 52 {
				t.Errorf("schema_version = %d, want 52 (SchemaVersion %d)", v, SchemaVersion)
			}
			if n := scalar[int](t, db, "SELECT COUNT(*) FROM pragma_table_info('statistics_meta') WHERE name IN ('unit_class', 'mean_type')"); n != 2 {
				t.Errorf("statistics_meta has %d of unit_class, mean_type", n)
			}
			if n := scalar[int](t, db, `SELECT count(*) FROM recorder_runs WHERE "end" IS NULL AND closed_incorrect = 0`); n != 1 {
				t.Errorf("open recorder_runs = %d, want 1", n)
			}
			if n := scalar[int](t, db, "SELECT count(*) FROM statistics_runs"); n < 1 {
				t.Errorf("statistics_runs rows = %d, want >= 1", n)
			}
			if v := scalar[int](t, db, "SELECT version FROM migration_changes WHERE migration_id = 'state_context_id_as_binary'"); v != 2 {
				t.Errorf("state_context_id_as_binary version = %d, want 2", v)
			}
			if m := scalar[string](t, db, "PRAGMA journal_mode"); m != "wal" {
				t.Errorf("journal_mode = %q, want wal", m)
			}
			changed := scalar[string](t, db, "SELECT changed || '' FROM schema_changes LIMIT 1")
			if len(changed) != len("2026-03-04 15:07:00.000000") {
				t.Errorf("changed = %q, want SQLAlchemy's 'YYYY-MM-DD HH:MM:SS.ffffff'", changed)
			}
		})
	}
}

func TestCreateRefusesExistingAndOpenRejectsForeignFiles(t *testing.T) {
	path := createdDB(t)
	if _, err := Create(path); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Create on existing file: err = %v, want 'already exists'", err)
	}
	other := filepath.Join(t.TempDir(), "other.db")
	raw, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := Open(other); err == nil || !strings.Contains(err.Error(), "not a Home Assistant recorder database") {
		t.Errorf("Open foreign db: err = %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("Open missing file: want error")
	}
	if _, err := Create(filepath.Join(t.TempDir(), "bad?name.db")); err == nil || !strings.Contains(err.Error(), "must not contain") {
		t.Errorf("Create with '?': err = %v", err)
	}
}

// TestSQLiteCLIReadsFile checks the stock sqlite3 tool (as HA users run it)
// opens generated and created files, and they pass integrity and FK checks.
func TestSQLiteCLIReadsFile(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 CLI not installed")
	}
	for name, path := range map[string]string{"Create": createdDB(t), "Generate": sharedDB(t)} {
		t.Run(name, func(t *testing.T) {
			out, err := exec.CommandContext(context.Background(), cli, "-readonly", path,
				"PRAGMA integrity_check; PRAGMA foreign_key_check; SELECT 'tables', count(*) FROM sqlite_master WHERE type='table';").CombinedOutput()
			if err != nil {
				t.Fatalf("sqlite3: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != "ok\ntables|13" {
				t.Errorf("sqlite3 output = %q, want integrity ok, no FK violations, 13 tables", got)
			}
		})
	}
}
