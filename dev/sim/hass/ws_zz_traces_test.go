package hass_test

import (
	"strings"
	"testing"
)

func TestWSTraces(t *testing.T) {
	w := dialAuthed(t, home.Token())
	body := `{"alias":"Trace probe","sequence":[{"action":"light.turn_on","target":{"entity_id":"light.hallway"}}]}`
	if r := api(t, "POST", "/api/config/script/config/trace_probe", body); r.status != 200 {
		t.Fatalf("create script: %d %s", r.status, r.body)
	}
	w.ok(map[string]any{"id": 1, "type": "call_service", "domain": "script", "service": "trace_probe"})
	list := w.ok(map[string]any{"id": 2, "type": "trace/list", "domain": "script", "item_id": "trace_probe"}).([]any)
	if len(list) != 1 {
		t.Fatalf("trace/list: %v", list)
	}
	sum := list[0].(map[string]any)
	for _, k := range []string{"last_step", "run_id", "state", "script_execution", "timestamp", "domain", "item_id"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %s: %v", k, sum)
		}
	}
	runID := sum["run_id"].(string)
	all := w.ok(map[string]any{"id": 3, "type": "trace/list", "domain": "script"}).([]any)
	if len(all) < 1 {
		t.Fatalf("domain-wide trace/list: %v", all)
	}
	tr := w.ok(map[string]any{"id": 4, "type": "trace/get", "domain": "script", "item_id": "trace_probe", "run_id": runID}).(map[string]any)
	if steps, _ := tr["trace"].(map[string]any)["sequence/0"].([]any); len(steps) != 1 || tr["context"] == nil {
		t.Fatalf("trace/get: %v", tr)
	}
	ctxs := w.ok(map[string]any{"id": 5, "type": "trace/contexts", "domain": "script", "item_id": "trace_probe"}).(map[string]any)
	if len(ctxs) != 1 {
		t.Fatalf("trace/contexts: %v", ctxs)
	}
	cases := []struct {
		name       string
		msg        map[string]any
		code, msg2 string
	}{
		{"unknown run", map[string]any{"type": "trace/get", "domain": "script", "item_id": "trace_probe", "run_id": "0"}, "not_found", "The trace could not be found"},
		{"bad domain", map[string]any{"type": "trace/list", "domain": "scene"}, "invalid_format", "value must be one of ['automation', 'script'] for dictionary value @ data['domain']. Got 'scene'"},
		{"no run_id", map[string]any{"type": "trace/get", "domain": "script", "item_id": "trace_probe"}, "invalid_format", "required key not provided @ data['run_id']"},
		{"half a group", map[string]any{"type": "trace/contexts", "domain": "script"}, "invalid_format", "some but not all values in the same group of inclusion 'id'"},
		{"extra key", map[string]any{"type": "trace/list", "domain": "script", "entity_id": "script.x"}, "invalid_format", "extra keys not allowed @ data['entity_id']"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.msg["id"] = 10 + i
			m, _ := w.cmd(c.msg)
			if errCode(m) != c.code || !strings.Contains(errMsg(m), c.msg2) {
				t.Fatalf("%v: %v", c.msg, m)
			}
		})
	}
	// trace/* is admin only
	u := dialAuthed(t, home.UserToken())
	if m, _ := u.cmd(map[string]any{"id": 1, "type": "trace/list", "domain": "script"}); errCode(m) != "unauthorized" {
		t.Fatalf("non-admin: %v", m)
	}
}
