package demo_test

import (
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/config"
)

func TestDatabaseTools(t *testing.T) {
	// The user trusts the assistant's confirm=true for deletes (confirm_trusted), so the purge below
	// needs no answer from them; with the default options it would (src/tools/hatools/confirm_test.go).
	e := startDemo(t, func(c *config.Config) {
		c.PermissionDatabase = "allow"
		c.ConfirmTrusted = []string{"delete", "change"}
	})
	cs := e.client(t, nil)

	var info struct {
		SchemaVersion int `json:"schema_version"`
		Entities      int `json:"entities"`
		Tables        []struct {
			Name string `json:"name"`
		} `json:"tables"`
	}
	if res := callJSON(t, cs, "ha_database_info", nil, &info); res.IsError || info.SchemaVersion < 43 || info.Entities == 0 {
		t.Fatalf("ha_database_info: %s", text(res))
	}

	var q struct {
		Columns []string `json:"columns"`
		Rows    [][]any  `json:"rows"`
	}
	res := callJSON(t, cs, "ha_execute_sql", map[string]any{"sql": "SELECT entity_id FROM states_meta WHERE entity_id LIKE ? ORDER BY entity_id", "params": []any{"light.%"}}, &q)
	if res.IsError || len(q.Rows) == 0 || q.Columns[0] != "entity_id" {
		t.Fatalf("select: %s", text(res))
	}
	light := q.Rows[0][0].(string)

	refusals := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"sql": "DELETE FROM states"}, "write_not_allowed"},
		{map[string]any{"sql": "ATTACH DATABASE '/tmp/x.db' AS x"}, "statement_refused"},
		{map[string]any{"sql": "SELECT load_extension('x')"}, "statement_refused"},
		{map[string]any{"sql": "PRAGMA journal_mode=DELETE"}, "statement_refused"},
		{map[string]any{"sql": "SELECT 1; DELETE FROM states"}, "statement_refused"},
	}
	for _, r := range refusals {
		res := callJSON(t, cs, "ha_execute_sql", r.args, nil)
		if !res.IsError || !strings.Contains(text(res), r.want) {
			t.Errorf("%v: %s", r.args["sql"], text(res))
		}
	}

	var hist struct {
		Total int `json:"total"`
		Items []struct {
			State string `json:"state"`
		} `json:"items"`
	}
	if res := callJSON(t, cs, "ha_get_state_history", map[string]any{"entity_id": light, "hours": 48}, &hist); res.IsError || hist.Total == 0 {
		t.Fatalf("state history: %s", text(res))
	}
	var ids struct {
		Total int `json:"total"`
	}
	if res := callJSON(t, cs, "ha_query_statistics_db", map[string]any{}, &ids); res.IsError || ids.Total == 0 {
		t.Fatalf("statistic ids: %s", text(res))
	}
	if res := callJSON(t, cs, "ha_purge_database", map[string]any{"keep_days": 1}, nil); !res.IsError || !strings.Contains(text(res), "confirm") {
		t.Fatalf("purge without confirm: %s", text(res))
	}
	if res := callJSON(t, cs, "ha_purge_database", map[string]any{"keep_days": 1, "confirm": true}, nil); res.IsError || !strings.Contains(text(res), "recorder.purge") {
		t.Fatalf("purge while HA runs must use recorder.purge: %s", text(res))
	}
}
