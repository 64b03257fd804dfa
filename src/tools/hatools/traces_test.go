package hatools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

func TestTracesAndServicesDefinitionSize(t *testing.T) {
	seen := 0
	for _, tool := range hatools.Tools(hatools.Deps{}) {
		if n := tool.Name(); n != "ha_get_traces" && n != "ha_list_services" {
			continue
		}
		seen++
		b, _ := json.Marshal(tool.Definition())
		if len(b) > 1400 {
			t.Errorf("%s: definition is %d bytes, more than 1400: %s", tool.Name(), len(b), b)
		}
	}
	if seen != 2 {
		t.Fatalf("found %d of the 2 tools", seen)
	}
}

func TestGetTraces(t *testing.T) {
	e := admStart(t, admOpts{})
	ctx := context.Background()
	save := func(kind homeassistant.ConfigKind, key string, item map[string]any) {
		t.Helper()
		if err := e.ha.SaveConfigItem(ctx, kind, key, item); err != nil {
			t.Fatal(err)
		}
	}
	light := map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.hallway"}}
	save(homeassistant.KindAutomation, "1950000000001", map[string]any{"alias": "Trace never", "triggers": []any{map[string]any{"trigger": "event", "event_type": "x"}},
		"conditions": []any{map[string]any{"condition": "template", "value_template": "{{ false }}"}}, "actions": []any{light}})
	save(homeassistant.KindScript, "trace_fails", map[string]any{"sequence": []any{light, map[string]any{"action": "light.make_coffee"}}})
	loop := []any{}
	for range 4 {
		loop = append(loop, map[string]any{"event": "hamcp_trace_loop"})
	}
	save(homeassistant.KindScript, "trace_loop", map[string]any{"sequence": []any{map[string]any{"repeat": map[string]any{"count": 30, "sequence": loop}}}})
	testkit.Eventually(t, "new entities in the mirror", func() bool {
		_, a := e.ha.Mirror().Get("automation.trace_never")
		_, b := e.ha.Mirror().Get("script.trace_loop")
		return a && b
	})
	run := func(domain, service string, data map[string]any) {
		_, _ = e.ha.CallServiceWS(ctx, domain, service, data, homeassistant.ServiceTarget{}, false)
	}
	run("automation", "trigger", map[string]any{"entity_id": "automation.trace_never", "skip_condition": false})
	run("automation", "trigger", map[string]any{"entity_id": "automation.trace_never"})
	run("script", "trace_fails", nil)
	run("script", "trace_loop", nil)
	if _, _, err := e.ha.PostState(ctx, "automation.no_id", homeassistant.StateUpdate{State: "on", Attributes: map[string]any{"friendly_name": "No id"}}); err != nil {
		t.Fatal(err)
	}

	// the list: newest first
	r := e.ok(t, "ha_get_traces", map[string]any{"entity_id": "automation.trace_never"})
	runs := admItems(t, r, "runs")
	if r["item_id"] != "1950000000001" || len(runs) != 2 || runs[0]["result"] != "finished" || runs[1]["result"] != "failed_conditions" || runs[1]["last_step"] != "condition/0" {
		t.Fatalf("automation runs: %v", r)
	}
	steps := func(entity, runID string) ([]map[string]any, map[string]any) {
		t.Helper()
		r := e.ok(t, "ha_get_traces", map[string]any{"entity_id": entity, "run_id": runID})
		return admItems(t, r, "steps"), r
	}
	st, _ := steps("automation.trace_never", runs[1]["run_id"].(string))
	if len(st) != 2 || st[0]["path"] != "trigger" || !strings.Contains(st[0]["changed"].(string), `"trigger":{"platform":null}`) ||
		st[1]["path"] != "condition/0" || st[1]["result"] != "false" {
		t.Fatalf("failed conditions steps: %v", st)
	}
	st, _ = steps("automation.trace_never", runs[0]["run_id"].(string))
	if last := st[len(st)-1]; last["path"] != "action/0" || last["result"] != `light.turn_on target {"entity_id":"light.hallway"}` {
		t.Fatalf("action step: %v", st)
	}

	fails := admItems(t, e.ok(t, "ha_get_traces", map[string]any{"entity_id": "script.trace_fails"}), "runs")
	if len(fails) != 1 || fails[0]["result"] != "error" || !strings.Contains(fails[0]["error"].(string), "make_coffee") {
		t.Fatalf("script runs: %v", fails)
	}
	st, _ = steps("script.trace_fails", fails[0]["run_id"].(string))
	if len(st) != 2 || st[1]["path"] != "sequence/1" || !strings.Contains(st[1]["error"].(string), "make_coffee") {
		t.Fatalf("error steps: %v", st)
	}

	// a long loop is capped, with a note, and keeps where it ended
	loops := admItems(t, e.ok(t, "ha_get_traces", map[string]any{"entity_id": "script.trace_loop"}), "runs")
	st, full := steps("script.trace_loop", loops[0]["run_id"].(string))
	if len(st) != 60 || full["note"] == nil || st[0]["path"] != "sequence/0" {
		t.Fatalf("capped steps: %d, note %v", len(st), full["note"])
	}
	raw, _ := json.Marshal(full)
	if len(raw) > 9000 {
		t.Errorf("one run's steps are %d bytes", len(raw))
	}

	for _, c := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"not automation", map[string]any{"entity_id": "light.hallway"}, "invalid_argument"},
		{"no such automation", map[string]any{"entity_id": "automation.nope"}, "not_found"},
		{"no id", map[string]any{"entity_id": "automation.no_id"}, "not_found"},
		{"unknown run", map[string]any{"entity_id": "script.trace_fails", "run_id": "0123456789abcdef"}, "not_found"},
		{"bad entity id", map[string]any{"entity_id": "Automation"}, "invalid_argument"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(t, "ha_get_traces", c.args)
			if r.err == nil || r.err.Code != c.code {
				t.Fatalf("%v: %s, want %s", c.args, r.raw, c.code)
			}
		})
	}
	// no runs yet: an empty list with a note that says what it means
	r = e.ok(t, "ha_get_traces", map[string]any{"entity_id": "script.good_night"})
	if r["runs"] != nil || !strings.Contains(r["note"].(string), "has not run") {
		t.Fatalf("no runs: %v", r)
	}
}

func TestListServices(t *testing.T) {
	e := admStart(t, admOpts{})
	r := e.ok(t, "ha_list_services", map[string]any{"domain": "light"})
	items := admItems(t, r, "items")
	var turnOn map[string]any
	for _, it := range items {
		if it["service"] == "light.turn_on" {
			turnOn = it
		}
	}
	if turnOn == nil || turnOn["target_domains"].([]any)[0] != "light" || len(turnOn["fields"].([]any)) < 5 {
		t.Fatalf("light.turn_on: %v", turnOn)
	}
	if f := strings.Join(strings.Fields(jsonText(turnOn["fields"])), " "); !strings.Contains(f, "brightness_pct: number 0–100") {
		t.Errorf("fields: %s", f)
	}
	// every domain's first page stays small
	domains := map[string]bool{}
	all, err := e.ha.Services(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range all {
		domains[d.Domain] = true
	}
	for d := range domains {
		r := e.call(t, "ha_list_services", map[string]any{"domain": d})
		if r.err != nil || len(r.raw) > 8192 {
			t.Errorf("%s: %d bytes, err %v", d, len(r.raw), r.err)
		}
	}
	cases := []struct {
		name string
		args map[string]any
		code string
		want func(map[string]any) bool
	}{
		{"search across domains", map[string]any{"search": "reload"}, "", func(r map[string]any) bool {
			doms := map[string]bool{}
			for _, it := range admItems(t, r, "items") {
				doms[strings.Split(it["service"].(string), ".")[0]] = true
			}
			return len(doms) > 2
		}},
		{"response", map[string]any{"domain": "todo", "search": "get_items"}, "", func(r map[string]any) bool {
			it := admItems(t, r, "items")
			return len(it) == 1 && it[0]["response"] == "required"
		}},
		{"paging", map[string]any{"domain": "light", "limit": 1}, "", func(r map[string]any) bool {
			return r["count"].(float64) == 1 && r["next_offset"].(float64) == 1 && r["note"] != nil
		}},
		{"neither", map[string]any{}, "invalid_argument", nil},
		{"unknown domain", map[string]any{"domain": "coffee"}, "not_found", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(t, "ha_list_services", c.args)
			if c.code != "" {
				if r.err == nil || r.err.Code != c.code {
					t.Fatalf("%v: %s", c.args, r.raw)
				}
				return
			}
			if r.err != nil || !c.want(r.data) {
				t.Fatalf("%v: %s", c.args, r.raw)
			}
		})
	}
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }
