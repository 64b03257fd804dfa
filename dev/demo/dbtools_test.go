package demo_test

import (
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/config"
)

func TestDatabaseTools(t *testing.T) {
	t.Parallel()
	// The user trusts the assistant's confirm=true for deletes (confirm_trusted), so the purge below
	// needs no answer from them; with the default options it would (src/tools/hatools/confirm_test.go).
	// Purging is recorder.purge's rule, command, whichever tool asks.
	e := startDemoWithHistory(t, func(c *config.Config) {
		c.PermissionDatabase = "allow"
		c.PermissionCommand = "allow"
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
	res := callJSON(t, cs, "ha_query_sql", map[string]any{"sql": "SELECT entity_id FROM states_meta WHERE entity_id LIKE ? ORDER BY entity_id", "params": []any{"light.%"}}, &q)
	if res.IsError || len(q.Rows) == 0 || q.Columns[0] != "entity_id" {
		t.Fatalf("select: %s", text(res))
	}
	light := q.Rows[0][0].(string)

	refusals := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"sql": "DELETE FROM states"}, "ha_write_sql"},
		{map[string]any{"sql": "ATTACH DATABASE '/tmp/x.db' AS x"}, "statement_refused"},
		{map[string]any{"sql": "SELECT load_extension('x')"}, "statement_refused"},
		{map[string]any{"sql": "PRAGMA journal_mode=DELETE"}, "statement_refused"},
		{map[string]any{"sql": "SELECT 1; DELETE FROM states"}, "statement_refused"},
	}
	for _, r := range refusals {
		res := callJSON(t, cs, "ha_query_sql", r.args, nil)
		if !res.IsError || !strings.Contains(text(res), r.want) {
			t.Errorf("%v: %s", r.args["sql"], text(res))
		}
	}

	// The entity's generated history comes from the recorder file (ha_get_history, no grant needed).
	var hist struct {
		Source   string `json:"source"`
		Entities []struct {
			Total int `json:"total"`
		} `json:"entities"`
	}
	if res := callJSON(t, cs, "ha_get_history", map[string]any{"entity_ids": []string{light}, "hours": 96}, &hist); res.IsError || hist.Source != "recorder" || len(hist.Entities) != 1 || hist.Entities[0].Total == 0 {
		t.Fatalf("state history: %s", text(res))
	}
	// Writing needs database_write on top of the database grant the options give.
	if res := callJSON(t, cs, "ha_write_sql", map[string]any{"sql": "DELETE FROM states"}, nil); !res.IsError || !strings.Contains(text(res), `"category":"database_write"`) {
		t.Fatalf("a write with the database grant only: %s", text(res))
	}
	var ids struct {
		Available struct {
			Total int `json:"total"`
		} `json:"available"`
	}
	if res := callJSON(t, cs, "ha_get_statistics", map[string]any{}, &ids); res.IsError || ids.Available.Total == 0 {
		t.Fatalf("statistic ids: %s", text(res))
	}
	if res := callJSON(t, cs, "ha_purge_database", map[string]any{"keep_days": 1}, nil); !res.IsError || !strings.Contains(text(res), "confirm") {
		t.Fatalf("purge without confirm: %s", text(res))
	}
	if res := callJSON(t, cs, "ha_purge_database", map[string]any{"keep_days": 1, "confirm": true}, nil); res.IsError || !strings.Contains(text(res), "recorder.purge") {
		t.Fatalf("purge while HA runs must use recorder.purge: %s", text(res))
	}
}
