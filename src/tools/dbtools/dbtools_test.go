package dbtools_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/recorder"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/dbtools"
	"github.com/hamcp/hamcp/src/tools/internal/tooltest"
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

// What each database tool declares: the category every call needs, whether it changes anything,
// and which calls need the user's confirmation.
func TestDatabaseToolsDeclare(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		readOnly bool
		confirm  string
	}{
		"ha_execute_sql": {false, ""}, "ha_get_state_history": {true, ""}, "ha_query_statistics_db": {true, ""},
		"ha_database_info": {true, ""}, "ha_purge_database": {false, "always (`delete`)"},
	}
	tools := dbtools.Tools(dbtools.Deps{})
	if len(tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(tools), len(want))
	}
	for _, tool := range tools {
		w, ok := want[tool.Name()]
		_, hasConfirm := tool.Definition().InputSchema.(*jsonschema.Schema).Properties["confirm"]
		if !ok || hasConfirm != (w.confirm != "") || tool.Category() != toolkit.Database || tool.ReadOnly() != w.readOnly || tool.ConfirmWhen() != w.confirm ||
			*tool.Definition().Annotations.DestructiveHint == w.readOnly || tool.Toolset() != dbtools.SetDatabase {
			t.Errorf("%s: category %q read-only %v confirm %q", tool.Name(), tool.Category(), tool.ReadOnly(), tool.ConfirmWhen())
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
		tool string
		args map[string]any
	}{
		{"ha_execute_sql", map[string]any{"sql": "SELECT 1"}},
		{"ha_execute_sql", map[string]any{"sql": "DELETE FROM states", "allow_write": true}},
		{"ha_get_state_history", map[string]any{"entity_id": "sun.sun"}},
		{"ha_query_statistics_db", map[string]any{}},
		{"ha_database_info", map[string]any{}},
		{"ha_purge_database", map[string]any{"keep_days": 1, "confirm": true}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			s := fx.Session(t)
			if e := s.Fail(t, c.tool, c.args); e.Code != "permission_required" || e.Details["category"] != "database" {
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

func TestExecuteSQL(t *testing.T) {
	t.Parallel()
	s := dbSession(t)
	var n sqlResult
	s.OK(t, "ha_execute_sql", map[string]any{"sql": "SELECT COUNT(*) FROM states_meta"}, &n)
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
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var r sqlResult
			s.OK(t, "ha_execute_sql", c.args, &r)
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
		s.OK(t, "ha_execute_sql", map[string]any{"sql": q, "limit": 4}, &a)
		s.OK(t, "ha_execute_sql", map[string]any{"sql": q, "limit": 4, "offset": a.NextOffset}, &b)
		if a.Rows[3][0].(string) >= b.Rows[0][0].(string) || b.Offset != 4 {
			t.Errorf("page 2 does not follow page 1: %v then %v", a.Rows, b.Rows)
		}
	})
	for _, c := range []errCase{
		{"a write without allow_write", "ha_execute_sql", map[string]any{"sql": "DELETE FROM states"}, "write_not_allowed", "allow_write", "recorder.purge_entities"},
		{"DDL without allow_write", "ha_execute_sql", map[string]any{"sql": "DROP TABLE states"}, "write_not_allowed", "allow_write", ""},
		{"ATTACH", "ha_execute_sql", map[string]any{"sql": "ATTACH DATABASE '/tmp/x.db' AS x"}, "statement_refused", "sql", ""},
		{"ATTACH with allow_write", "ha_execute_sql", map[string]any{"sql": "ATTACH DATABASE '/tmp/x.db' AS x", "allow_write": true}, "statement_refused", "sql", ""},
		{"load_extension", "ha_execute_sql", map[string]any{"sql": "SELECT load_extension('/tmp/x')"}, "statement_refused", "sql", ""},
		{"a file-changing PRAGMA", "ha_execute_sql", map[string]any{"sql": "PRAGMA journal_mode=DELETE"}, "statement_refused", "sql", ""},
		{"two statements", "ha_execute_sql", map[string]any{"sql": "SELECT 1; DELETE FROM states"}, "statement_refused", "sql", ""},
		{"VACUUM with allow_write", "ha_execute_sql", map[string]any{"sql": "VACUUM", "allow_write": true}, "statement_refused", "sql", "repack"},
		{"BEGIN with allow_write", "ha_execute_sql", map[string]any{"sql": "BEGIN", "allow_write": true}, "statement_refused", "sql", ""},
		{"no sql", "ha_execute_sql", map[string]any{}, "invalid_argument", "sql", ""},
		{"limit over 1000", "ha_execute_sql", map[string]any{"sql": "SELECT 1", "limit": 5000}, "invalid_argument", "limit", ""},
		{"negative offset", "ha_execute_sql", map[string]any{"sql": "SELECT 1", "offset": -1}, "invalid_argument", "offset", ""},
		{"a missing table", "ha_execute_sql", map[string]any{"sql": "SELECT * FROM no_such_table"}, "database_error", "", "no_such_table"},
		// The byte budget: a page stops at the answer's cap while it is read, and says how to narrow it.
		{"a page over the byte budget", "ha_execute_sql", map[string]any{"sql": "SELECT printf('%.*c', 60000, 'x') FROM states LIMIT 50"}, "database_error", "", "add LIMIT or select fewer columns"},
	} {
		t.Run(c.Name, func(t *testing.T) { t.Parallel(); c.check(t, s) })
	}
}

type historyList struct {
	Total      int  `json:"total"`
	Count      int  `json:"count"`
	NextOffset *int `json:"next_offset"`
	Items      []struct {
		EntityID    string         `json:"entity_id"`
		State       string         `json:"state"`
		LastUpdated time.Time      `json:"last_updated"`
		Attributes  map[string]any `json:"attributes"`
		BeforeStart bool           `json:"before_start"`
	} `json:"items"`
}

// busiest is the entity with the most recorded states in the last day.
func busiest(t *testing.T, s *tooltest.Session) string {
	t.Helper()
	var r sqlResult
	s.OK(t, "ha_execute_sql", map[string]any{"sql": "SELECT m.entity_id FROM states s JOIN states_meta m ON m.metadata_id = s.metadata_id " +
		"WHERE s.last_updated_ts > unixepoch('now', '-1 day') GROUP BY m.entity_id ORDER BY COUNT(*) DESC LIMIT 1"}, &r)
	if len(r.Rows) != 1 {
		t.Fatalf("no recorded states: %+v", r)
	}
	return r.Rows[0][0].(string)
}

func TestStateHistory(t *testing.T) {
	t.Parallel()
	s := dbSession(t)
	entity := busiest(t, s)
	var all historyList
	s.OK(t, "ha_get_state_history", map[string]any{"entity_id": entity, "hours": 24, "limit": 1000}, &all)
	if all.Total < 3 || all.Count != all.Total || all.NextOffset != nil {
		t.Fatalf("a day of %s: total %d count %d", entity, all.Total, all.Count)
	}
	for i, it := range all.Items {
		if it.EntityID != entity || it.Attributes != nil || i > 0 && it.LastUpdated.Before(all.Items[i-1].LastUpdated) {
			t.Fatalf("row %d: %+v", i, it)
		}
	}
	end := time.Now().UTC().Format(time.RFC3339)
	start := time.Now().UTC().Add(-6 * time.Hour).Format(time.RFC3339)
	for _, c := range []struct {
		name  string
		args  map[string]any
		check func(historyList) bool
	}{
		{"paged", map[string]any{"entity_id": entity, "limit": 2}, func(l historyList) bool {
			return l.Count == 2 && l.Total == all.Total && l.NextOffset != nil && *l.NextOffset == 2
		}},
		{"second page", map[string]any{"entity_id": entity, "limit": 2, "offset": 2}, func(l historyList) bool {
			return l.Count == 2 && l.Items[0].LastUpdated.Equal(all.Items[2].LastUpdated)
		}},
		{"with attributes", map[string]any{"entity_id": entity, "limit": 1, "include_attributes": true}, func(l historyList) bool {
			return l.Count == 1 && l.Items[0].Attributes != nil
		}},
		{"start and end", map[string]any{"entity_id": entity, "start": start, "end": end}, func(l historyList) bool {
			return l.Total > 0 && l.Total <= all.Total
		}},
		{"the state at start comes first", map[string]any{"entity_id": "sun.sun", "hours": 1}, func(l historyList) bool {
			return l.Total >= 1 && l.Items[0].EntityID == "sun.sun"
		}},
		{"significant only is a subset", map[string]any{"entity_id": entity, "significant_only": true, "limit": 1000}, func(l historyList) bool {
			return l.Total <= all.Total
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var l historyList
			s.OK(t, "ha_get_state_history", c.args, &l)
			if !c.check(l) {
				t.Errorf("total %d count %d next %v first %+v", l.Total, l.Count, l.NextOffset, l.Items)
			}
		})
	}
	for _, c := range []errCase{
		{"no entity", "ha_get_state_history", map[string]any{}, "invalid_argument", "entity_id", ""},
		{"not an entity id", "ha_get_state_history", map[string]any{"entity_id": "Living Room"}, "invalid_argument", "entity_id", ""},
		{"an unknown entity", "ha_get_state_history", map[string]any{"entity_id": "sensor.nowhere_at_all"}, "not_found", "", ""},
		{"start after end", "ha_get_state_history", map[string]any{"entity_id": entity, "start": end, "end": start}, "invalid_argument", "start", ""},
		{"start not a time", "ha_get_state_history", map[string]any{"entity_id": entity, "start": "yesterday"}, "invalid_argument", "start", ""},
		{"hours over ten years", "ha_get_state_history", map[string]any{"entity_id": entity, "hours": 100000}, "invalid_argument", "hours", ""},
		{"limit over 1000", "ha_get_state_history", map[string]any{"entity_id": entity, "limit": 1001}, "invalid_argument", "limit", ""},
	} {
		t.Run(c.Name, func(t *testing.T) { t.Parallel(); c.check(t, s) })
	}
}

func TestStatistics(t *testing.T) {
	t.Parallel()
	s := dbSession(t)
	var ids struct {
		Total      int  `json:"total"`
		NextOffset *int `json:"next_offset"`
		Items      []struct {
			StatisticID string `json:"statistic_id"`
			HasSum      bool   `json:"has_sum"`
			MeanType    int    `json:"mean_type"`
		} `json:"items"`
	}
	s.OK(t, "ha_query_statistics_db", map[string]any{}, &ids)
	if ids.Total == 0 {
		t.Fatal("no statistic ids")
	}
	var mean string
	for _, it := range ids.Items {
		if it.MeanType == 1 && mean == "" {
			mean = it.StatisticID
		}
	}
	if mean == "" {
		t.Fatalf("no statistic with a mean: %+v", ids.Items)
	}
	var one = ids
	s.OK(t, "ha_query_statistics_db", map[string]any{"limit": 1}, &one)
	if len(one.Items) != 1 || one.NextOffset == nil && ids.Total > 1 {
		t.Errorf("paged ids: %+v", one)
	}
	var found = ids
	s.OK(t, "ha_query_statistics_db", map[string]any{"search": mean}, &found)
	if found.Total < 1 || found.Items[0].StatisticID != mean {
		t.Errorf("search %s: %+v", mean, found)
	}
	type rows struct {
		Total      int  `json:"total"`
		Count      int  `json:"count"`
		NextOffset *int `json:"next_offset"`
		Items      []struct {
			Start time.Time `json:"start"`
			Mean  *float64  `json:"mean"`
		} `json:"items"`
	}
	for _, c := range []struct {
		name  string
		args  map[string]any
		check func(rows) bool
	}{
		{"hourly rows, paged", map[string]any{"statistic_id": mean, "limit": 3}, func(r rows) bool {
			return r.Count == 3 && r.Total > 3 && r.NextOffset != nil && r.Items[0].Mean != nil && r.Items[0].Start.Before(r.Items[1].Start)
		}},
		{"5-minute rows", map[string]any{"statistic_id": mean, "table": "statistics_short_term", "days": 1, "limit": 1}, func(r rows) bool {
			return r.Count == 1 && r.Total > 24
		}},
		{"no rows in the future", map[string]any{"statistic_id": mean, "start": time.Now().Add(24 * time.Hour).Format(time.RFC3339), "end": time.Now().Add(48 * time.Hour).Format(time.RFC3339)}, func(r rows) bool {
			return r.Total == 0 && r.Count == 0 && r.Items != nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var r rows
			s.OK(t, "ha_query_statistics_db", c.args, &r)
			if !c.check(r) {
				t.Errorf("%+v", r)
			}
		})
	}
	for _, c := range []errCase{
		{"unknown table", "ha_query_statistics_db", map[string]any{"statistic_id": mean, "table": "states"}, "invalid_argument", "table", ""},
		{"unknown statistic", "ha_query_statistics_db", map[string]any{"statistic_id": "sensor.nothing_here"}, "not_found", "", ""},
		{"days over ten years", "ha_query_statistics_db", map[string]any{"statistic_id": mean, "days": 4000}, "invalid_argument", "days", ""},
		{"end not a time", "ha_query_statistics_db", map[string]any{"statistic_id": mean, "end": "soon"}, "invalid_argument", "end", ""},
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

// A write runs only with allow_write, in a session the user granted the database to. Purging
// deletes history for good, so the user confirms that exact call (the model's confirm=true is not
// enough under default options); while Home Assistant runs it goes through recorder.purge.
func TestWriteThenPurge(t *testing.T) {
	t.Parallel()
	s := dbSession(t)
	insert := map[string]any{"sql": "INSERT INTO states (metadata_id, state, last_updated_ts, last_changed_ts) " +
		"SELECT metadata_id, 'tooltest-ancient', unixepoch('now', ?), unixepoch('now', ?) FROM states_meta WHERE entity_id = 'sun.sun'",
		"params": []any{"-30 days", "-30 days"}, "allow_write": true}
	if e := fx.Session(t).Fail(t, "ha_execute_sql", insert); e.Code != "permission_required" {
		t.Errorf("a write without the grant: %+v", e)
	}
	var w struct {
		Kind         string   `json:"kind"`
		RowsAffected int64    `json:"rows_affected"`
		Warnings     []string `json:"warnings"`
	}
	s.OK(t, "ha_execute_sql", insert, &w)
	if w.Kind != "write" || w.RowsAffected != 1 || !strings.Contains(strings.Join(w.Warnings, " "), "caches recorder ids") {
		t.Fatalf("write: %+v", w)
	}
	if got := s.Audit(t, store.AuditQuery{Tool: "ha_execute_sql", Outcome: store.OutcomeOK}); len(got) == 0 || !strings.Contains(got[0].ArgsSummary, "INSERT INTO states") {
		t.Errorf("the write is not in the audit log: %+v", got)
	}
	var n sqlResult
	s.OK(t, "ha_execute_sql", map[string]any{"sql": ancient}, &n)
	if n.Rows[0][0] != 1.0 {
		t.Fatalf("the row written: %v", n.Rows)
	}

	args := map[string]any{"keep_days": 10, "confirm": true}
	e := s.Fail(t, "ha_purge_database", args)
	id, _ := e.Details["request_id"].(string)
	if e.Code != "confirmation_required" || id == "" || !strings.Contains(e.Message, "older than 10 days") {
		t.Fatalf("purge with the model's confirm only: %+v", e)
	}
	fx.Approve(t, id)
	// The approval is for that call: another keep_days is a question of its own.
	if e := s.Fail(t, "ha_purge_database", map[string]any{"keep_days": 1, "confirm": true}); e.Code != "confirmation_required" {
		t.Fatalf("the approval let another call through: %+v", e)
	}
	var r map[string]any
	s.OK(t, "ha_purge_database", args, &r)
	if r["via"] != "recorder.purge" {
		t.Fatalf("purge while HA runs: %v", r)
	}
	s.OK(t, "ha_execute_sql", map[string]any{"sql": ancient}, &n)
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
	if e := s.Fail(t, "ha_purge_database", args); e.Code != "confirmation_required" {
		t.Errorf("one approval ran the purge twice: %+v", e)
	}
	if got := s.Audit(t, store.AuditQuery{Tool: "ha_purge_database", Outcome: store.OutcomeOK}); len(got) == 0 || !strings.Contains(got[0].Detail, "approved") {
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
}
