package dbtools_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/recorder"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/dbtools"
)

var fx *tooltest.Fixture

// historyDays of recorder history in the simulated home.
const historyDays = 1

func TestMain(m *testing.M) {
	tooltest.Main(m, tooltest.Options{HistoryDays: historyDays, Tools: func(f *tooltest.Fixture) []*toolkit.Tool {
		// As hamcp opens it (app.recorder): a page of rows stops at the answer's cap while it is read.
		o := &dbtools.Opener{Options: recorder.Options{Path: f.Home.RecorderPath(), MaxResultBytes: toolkit.DefaultMaxResponseBytes}}
		f.OnClose(func() { o.Close() })
		return dbtools.Tools(dbtools.Deps{DB: o, HA: f.HA})
	}}, func(f *tooltest.Fixture) { fx = f })
}

// errCase is a tooltest.ErrCase written positionally in this file's tables.
type errCase tooltest.ErrCase

func (c errCase) check(t *testing.T, s *tooltest.Session) { tooltest.ErrCase(c).Check(t, s) }

func dbSession(t *testing.T) *tooltest.Session { return fx.Granted(t, permission.Database) }

type sqlResult struct {
	Columns    []string `json:"columns"`
	Rows       [][]any  `json:"rows"`
	Count      int      `json:"count"`
	Offset     int      `json:"offset"`
	Truncated  bool     `json:"truncated"`
	NextOffset int      `json:"next_offset"`
	Warnings   []string `json:"warnings"`
}

// What each database tool declares: the grants its calls need, whether it changes anything, and
// which calls need the user's confirmation. One rule per tool: reads under database, writes under
// database and database_write, whichever statement the model sends.
func TestDatabaseToolsDeclare(t *testing.T) {
	t.Parallel()
	db := toolkit.Grant{Category: toolkit.Database}
	want := map[string]struct {
		readOnly bool
		confirm  string
		grants   []toolkit.Grant
	}{
		"ha_query_sql":      {true, "", []toolkit.Grant{db}},
		"ha_write_sql":      {false, "", []toolkit.Grant{db, {Category: toolkit.DatabaseWrite, When: "it runs (every call)"}}},
		"ha_database_info":  {true, "", []toolkit.Grant{db}},
		"ha_purge_database": {false, "always (`delete`)", nil},
	}
	tools := dbtools.Tools(dbtools.Deps{})
	if len(tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(tools), len(want))
	}
	for _, tool := range tools {
		w, ok := want[tool.Name()]
		_, hasConfirm := tool.Definition().InputSchema.(*jsonschema.Schema).Properties["confirm"]
		var category toolkit.Category
		if len(w.grants) > 0 {
			category = w.grants[0].Category
		}
		if !ok || hasConfirm != (w.confirm != "") || tool.Category() != category || tool.ReadOnly() != w.readOnly || tool.ConfirmWhen() != w.confirm ||
			*tool.Definition().Annotations.DestructiveHint == w.readOnly || tool.Toolset() != dbtools.SetDatabase || !slices.Equal(tool.Grants(), w.grants) {
			t.Errorf("%s: category %q read-only %v confirm %q grants %v", tool.Name(), tool.Category(), tool.ReadOnly(), tool.ConfirmWhen(), tool.Grants())
		}
	}
}

// No database tool runs before the user grants the category, nor after they deny it; the
// refusal is audited for the session.
func TestDatabaseToolsNeedTheUsersGrant(t *testing.T) {
	t.Parallel()
	denied := fx.Session(t)
	denied.Deny(t, permission.Database)
	for _, c := range []struct {
		tool     string
		args     map[string]any
		category string
	}{
		{"ha_query_sql", map[string]any{"sql": "SELECT 1"}, "database"},
		{"ha_write_sql", map[string]any{"sql": "DELETE FROM states"}, "database"},
		{"ha_database_info", map[string]any{}, "database"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			s := fx.Session(t)
			if e := s.Fail(t, c.tool, c.args); e.Code != "permission_required" || e.Details["category"] != c.category {
				t.Errorf("no grant: %+v", e)
			}
			if got := s.Audit(t, store.AuditQuery{Tool: c.tool, Outcome: store.OutcomePermissionRequired}); len(got) == 0 {
				t.Error("the refusal is not in the session's audit log")
			}
			if e := denied.Fail(t, c.tool, c.args); e.Code != "permission_denied" {
				t.Errorf("denied: %+v", e)
			}
		})
	}
}

func TestQuerySQL(t *testing.T) {
	t.Parallel()
	s := dbSession(t)
	var n sqlResult
	s.OK(t, "ha_query_sql", map[string]any{"sql": "SELECT COUNT(*) FROM states_meta"}, &n)
	entities := int(n.Rows[0][0].(float64))
	if entities < 10 {
		t.Fatalf("states_meta holds %d rows", entities)
	}
	for _, c := range []struct {
		name      string
		args      map[string]any
		count     int
		truncated bool
		next      int
		warning   string
	}{
		{"bound parameter", map[string]any{"sql": "SELECT entity_id FROM states_meta WHERE entity_id = ?", "params": []any{"sun.sun"}}, 1, false, 0, ""},
		{"the statement's LIMIT", map[string]any{"sql": "SELECT entity_id FROM states_meta ORDER BY entity_id LIMIT 3"}, 3, false, 0, ""},
		{"a page of rows", map[string]any{"sql": "SELECT entity_id FROM states_meta ORDER BY entity_id", "limit": 5}, 5, true, 5, "without LIMIT"},
		{"the next page", map[string]any{"sql": "SELECT entity_id FROM states_meta ORDER BY entity_id", "limit": 5, "offset": 5}, 5, true, 10, "without LIMIT"},
		{"the last page", map[string]any{"sql": "SELECT entity_id FROM states_meta ORDER BY entity_id", "limit": 5, "offset": entities - 2}, 2, false, 0, "without LIMIT"},
		{"no LIMIT is capped and says so", map[string]any{"sql": "SELECT entity_id FROM states_meta ORDER BY entity_id"}, entities, false, 0, "capped"},
		{"a read PRAGMA", map[string]any{"sql": "PRAGMA user_version"}, 1, false, 0, ""},
		// Long-term statistics straight from the file (ha_query_statistics_db before), e.g. while HA is down.
		{"statistics rows", map[string]any{"sql": "SELECT s.start_ts, s.mean FROM statistics s JOIN statistics_meta m ON m.id = s.metadata_id " +
			"WHERE m.statistic_id = ? AND s.mean IS NOT NULL ORDER BY s.start_ts LIMIT 3", "params": []any{"sensor.house_power"}}, 3, false, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var r sqlResult
			s.OK(t, "ha_query_sql", c.args, &r)
			if r.Count != c.count || len(r.Rows) != c.count || r.Truncated != c.truncated || r.NextOffset != c.next ||
				c.warning != "" && !strings.Contains(strings.Join(r.Warnings, " "), c.warning) {
				t.Errorf("got count %d truncated %v next %d warnings %v", r.Count, r.Truncated, r.NextOffset, r.Warnings)
			}
		})
	}
	t.Run("pages follow on", func(t *testing.T) {
		t.Parallel()
		var a, b sqlResult
		q := "SELECT entity_id FROM states_meta ORDER BY entity_id"
		s.OK(t, "ha_query_sql", map[string]any{"sql": q, "limit": 4}, &a)
		s.OK(t, "ha_query_sql", map[string]any{"sql": q, "limit": 4, "offset": a.NextOffset}, &b)
		if a.Rows[3][0].(string) >= b.Rows[0][0].(string) || b.Offset != 4 {
			t.Errorf("page 2 does not follow page 1: %v then %v", a.Rows, b.Rows)
		}
	})
	for _, c := range []errCase{
		// The read tool runs reads only, whatever the model sends: the recorder's guard classifies it.
		{"a write", "ha_query_sql", map[string]any{"sql": "DELETE FROM states"}, "statement_refused", "sql", "ha_write_sql"},
		{"a write behind WITH", "ha_query_sql", map[string]any{"sql": "WITH x AS (SELECT 1) DELETE FROM states"}, "statement_refused", "sql", "database_write"},
		{"DDL", "ha_query_sql", map[string]any{"sql": "DROP TABLE states"}, "statement_refused", "sql", "ha_write_sql"},
		{"ATTACH", "ha_query_sql", map[string]any{"sql": "ATTACH DATABASE '/tmp/x.db' AS x"}, "statement_refused", "sql", ""},
		{"load_extension", "ha_query_sql", map[string]any{"sql": "SELECT load_extension('/tmp/x')"}, "statement_refused", "sql", ""},
		{"a file-changing PRAGMA", "ha_query_sql", map[string]any{"sql": "PRAGMA journal_mode=DELETE"}, "statement_refused", "sql", ""},
		{"two statements", "ha_query_sql", map[string]any{"sql": "SELECT 1; DELETE FROM states"}, "statement_refused", "sql", ""},
		{"the old allow_write", "ha_query_sql", map[string]any{"sql": "DELETE FROM states", "allow_write": true}, "invalid_argument", "allow_write", ""},
		{"no sql", "ha_query_sql", map[string]any{}, "invalid_argument", "sql", ""},
		{"limit over 1000", "ha_query_sql", map[string]any{"sql": "SELECT 1", "limit": 5000}, "invalid_argument", "limit", ""},
		{"negative offset", "ha_query_sql", map[string]any{"sql": "SELECT 1", "offset": -1}, "invalid_argument", "offset", ""},
		{"a missing table", "ha_query_sql", map[string]any{"sql": "SELECT * FROM no_such_table"}, "database_error", "", "no_such_table"},
		// The byte budget: a page stops at the answer's cap while it is read, and says how to narrow it.
		{"a page over the byte budget", "ha_query_sql", map[string]any{"sql": "SELECT printf('%.*c', 60000, 'x') FROM states LIMIT 50"}, "database_error", "", "add LIMIT or select fewer columns"},
	} {
		t.Run(c.Name, func(t *testing.T) { t.Parallel(); c.check(t, s) })
	}
}

type dbInfo struct {
	SchemaVersion int        `json:"schema_version"`
	SchemaKnown   bool       `json:"schema_known"`
	Entities      int        `json:"entities"`
	Statistics    int        `json:"statistics"`
	FileBytes     int64      `json:"file_bytes"`
	OldestState   *time.Time `json:"oldest_state"`
	NewestState   *time.Time `json:"newest_state"`
	Tables        []struct {
		Name string `json:"name"`
		Rows int64  `json:"rows"`
	} `json:"tables"`
}

func TestDatabaseInfo(t *testing.T) {
	t.Parallel()
	s := dbSession(t)
	var i dbInfo
	s.OK(t, "ha_database_info", nil, &i)
	if !i.SchemaKnown || i.SchemaVersion < 43 || i.Entities < 10 || i.Statistics == 0 || i.FileBytes == 0 || i.OldestState == nil || i.NewestState == nil || len(i.Tables) == 0 {
		t.Errorf("%+v", i)
	}
	if e := s.Fail(t, "ha_database_info", map[string]any{"verbose": true}); e.Code != "invalid_argument" || e.Field != "verbose" {
		t.Errorf("unknown argument: %+v", e)
	}
}

const ancient = "SELECT COUNT(*) FROM states WHERE state = 'tooltest-ancient'"

// A write runs only through ha_write_sql, in a session the user granted both database and
// database_write to: the database grant alone, which queries need, does not let SQL change
// anything. Purging deletes history for good, so the user confirms that exact call (the model's
// confirm=true is not enough under default options); while Home Assistant runs it goes through
// recorder.purge.
func TestWriteThenPurge(t *testing.T) {
	t.Parallel()
	insert := map[string]any{"sql": "INSERT INTO states (metadata_id, state, last_updated_ts, last_changed_ts) " +
		"SELECT metadata_id, 'tooltest-ancient', unixepoch('now', ?), unixepoch('now', ?) FROM states_meta WHERE entity_id = 'sun.sun'",
		"params": []any{"-30 days", "-30 days"}}
	readOnly := fx.Granted(t, permission.Database)
	for _, c := range []struct {
		name     string
		s        *tooltest.Session
		category string
	}{
		{"no grant", fx.Session(t), "database"},
		{"database only", readOnly, "database_write"},
		{"database_write only", fx.Granted(t, permission.DatabaseWrite), "database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if e := c.s.Fail(t, "ha_write_sql", insert); e.Code != "permission_required" || e.Details["category"] != c.category {
				t.Errorf("a write: %+v", e)
			}
		})
	}
	var n sqlResult
	readOnly.OK(t, "ha_query_sql", map[string]any{"sql": ancient}, &n)
	if n.Rows[0][0] != 0.0 {
		t.Fatalf("a refused write changed the database: %v", n.Rows)
	}

	s := fx.Granted(t, permission.Database, permission.DatabaseWrite)
	var w struct {
		Kind         string   `json:"kind"`
		RowsAffected int64    `json:"rows_affected"`
		Warnings     []string `json:"warnings"`
	}
	s.OK(t, "ha_write_sql", insert, &w)
	if w.Kind != "write" || w.RowsAffected != 1 || !strings.Contains(strings.Join(w.Warnings, " "), "caches recorder ids") {
		t.Fatalf("write: %+v", w)
	}
	if got := s.Audit(t, store.AuditQuery{Tool: "ha_write_sql", Outcome: store.OutcomeOK}); len(got) == 0 || !strings.Contains(got[0].ArgsSummary, "INSERT INTO states") {
		t.Errorf("the write is not in the audit log: %+v", got)
	}
	s.OK(t, "ha_query_sql", map[string]any{"sql": ancient}, &n)
	if n.Rows[0][0] != 1.0 {
		t.Fatalf("the row written: %v", n.Rows)
	}
	for _, c := range []errCase{
		{"a read", "ha_write_sql", map[string]any{"sql": "SELECT 1"}, "statement_refused", "sql", "ha_query_sql"},
		{"ATTACH", "ha_write_sql", map[string]any{"sql": "ATTACH DATABASE '/tmp/x.db' AS x"}, "statement_refused", "sql", ""},
		{"a trigger", "ha_write_sql", map[string]any{"sql": "CREATE TRIGGER t AFTER INSERT ON states BEGIN DELETE FROM states; END"}, "statement_refused", "sql", ""},
		{"VACUUM", "ha_write_sql", map[string]any{"sql": "VACUUM"}, "statement_refused", "sql", "repack"},
		{"BEGIN", "ha_write_sql", map[string]any{"sql": "BEGIN"}, "statement_refused", "sql", ""},
		{"no sql", "ha_write_sql", map[string]any{}, "invalid_argument", "sql", ""},
		{"paging is for reads", "ha_write_sql", map[string]any{"sql": "DELETE FROM states WHERE 0", "limit": 5}, "invalid_argument", "limit", ""},
	} {
		t.Run(c.Name, func(t *testing.T) { c.check(t, s) })
	}

	// Purging needs no category (it runs no code and reads no secret), only the user's yes to this
	// deletion: a session with no grant at all is asked, and the model's confirm=true is not the answer.
	args := map[string]any{"keep_days": 10, "confirm": true}
	p := fx.Session(t)
	e := p.Fail(t, "ha_purge_database", args)
	id, _ := e.Details["request_id"].(string)
	if e.Code != "confirmation_required" || id == "" || !strings.Contains(e.Message, "older than 10 days") {
		t.Fatalf("purge with the model's confirm only: %+v", e)
	}
	fx.Approve(t, id)
	// The approval is for that call: another keep_days is a question of its own.
	if e := p.Fail(t, "ha_purge_database", map[string]any{"keep_days": 1, "confirm": true}); e.Code != "confirmation_required" {
		t.Fatalf("the approval let another call through: %+v", e)
	}
	var r map[string]any
	p.OK(t, "ha_purge_database", args, &r)
	if r["via"] != "recorder.purge" {
		t.Fatalf("purge while HA runs: %v", r)
	}
	s.OK(t, "ha_query_sql", map[string]any{"sql": ancient}, &n)
	if n.Rows[0][0] != 0.0 {
		t.Errorf("the 30-day-old row survived a purge keeping 10 days: %v", n.Rows)
	}
	var info struct {
		OldestState time.Time `json:"oldest_state"`
	}
	s.OK(t, "ha_database_info", nil, &info)
	if info.OldestState.Before(time.Now().Add(-10 * 24 * time.Hour)) {
		t.Errorf("oldest state after the purge: %v", info.OldestState)
	}
	if e := p.Fail(t, "ha_purge_database", args); e.Code != "confirmation_required" {
		t.Errorf("one approval ran the purge twice: %+v", e)
	}
	if got := p.Audit(t, store.AuditQuery{Tool: "ha_purge_database", Outcome: store.OutcomeOK}); len(got) == 0 || !strings.Contains(got[0].Detail, "approved") {
		t.Errorf("audit of the purge: %+v", got)
	}
	for _, c := range []errCase{
		{"no keep_days", "ha_purge_database", map[string]any{}, "invalid_argument", "keep_days", ""},
		{"keep_days 0", "ha_purge_database", map[string]any{"keep_days": 0}, "invalid_argument", "keep_days", ""},
		{"confirm not a boolean", "ha_purge_database", map[string]any{"keep_days": 5, "confirm": "yes"}, "invalid_argument", "confirm", ""},
	} {
		t.Run(c.Name, func(t *testing.T) { c.check(t, s) })
	}
}

// hamcp starts without a recorder database; the tools then say what to set.
func TestMissingDatabase(t *testing.T) {
	t.Parallel()
	o := &dbtools.Opener{Options: recorder.Options{Path: filepath.Join(t.TempDir(), "home-assistant_v2.db")}}
	defer o.Close()
	for range 2 { // the error stays, and so does the advice
		_, err := o.DB()
		var te *toolkit.Error
		if !errors.As(err, &te) || te.Code != "database_unavailable" || !strings.Contains(te.Hint, "recorder_db") {
			t.Fatalf("%v", err)
		}
	}
	// ha_get_history reads through the same opener (hatools.Recorder) and gets the same error.
	_, _, err := o.StateHistory(context.Background(), "sun.sun", time.Now().Add(-time.Hour), time.Now(), 10, 0)
	if te := toolkit.AsError(err); te.Code != "database_unavailable" {
		t.Fatalf("state history without a file: %v", err)
	}
}
