package home_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

func traceList(t *testing.T, h *home.Home, domain, item string) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal(h.TraceList(domain, &item), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func lastTrace(t *testing.T, h *home.Home, domain, item string) map[string]any {
	t.Helper()
	list := traceList(t, h, domain, item)
	if len(list) == 0 {
		t.Fatalf("no trace of %s.%s", domain, item)
	}
	raw, ok := h.TraceGet(domain, item, list[len(list)-1]["run_id"].(string))
	if !ok {
		t.Fatal("listed run not found")
	}
	var tr map[string]any
	if err := json.Unmarshal(raw, &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

// step is the n-th visit of a trace path.
func step(t *testing.T, tr map[string]any, path string, n int) map[string]any {
	t.Helper()
	list, _ := tr["trace"].(map[string]any)[path].([]any)
	if len(list) <= n {
		keys := []string{}
		for k := range tr["trace"].(map[string]any) {
			keys = append(keys, k)
		}
		t.Fatalf("no visit %d of %s; paths %v", n, path, keys)
	}
	return list[n].(map[string]any)
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestTracesRecordRuns(t *testing.T) {
	h, _ := newHome(t, t.TempDir())
	cases := []struct {
		name   string
		script string // the script's config (JSON); "" runs the demo automation below
		data   map[string]any
		exec   string            // script_execution
		last   string            // last_step
		err    string            // the summary's error
		steps  map[string]string // path → JSON its first visit must contain
		visits map[string]int
	}{
		{name: "service call", script: `{"sequence":[{"action":"light.turn_on","target":{"entity_id":"light.hallway"},"data":{"brightness_pct":40}}]}`,
			exec: "finished", last: "sequence/0",
			steps: map[string]string{"sequence/0": `"result":{"params":{"domain":"light","service":"turn_on","service_data":{"brightness_pct":40},"target":{"entity_id":"light.hallway"}},"running_script":false}`}},
		{name: "choose default and variables", script: `{"sequence":[{"variables":{"level":3}},{"choose":[{"conditions":[{"condition":"template","value_template":"{{ level > 5 }}"}],"sequence":[{"action":"light.turn_off","target":{"entity_id":"light.hallway"}}]}],"default":[{"event":"hamcp_test","event_data":{"n":"{{ level }}"}}]}]}`,
			exec: "finished", last: "sequence/1/default/0",
			steps: map[string]string{
				"sequence/0":                       `"changed_variables":{"level":3}`,
				"sequence/1":                       `"result":{"choice":"default"}`,
				"sequence/1/choose/0/conditions/0": `"result":{"result":false}`,
				"sequence/1/default/0":             `"result":{"event":"hamcp_test","event_data":{"n":3}}`,
			}},
		{name: "if then", script: `{"sequence":[{"if":[{"condition":"state","entity_id":"sun.sun","state":"above_horizon"}],"then":[{"action":"light.turn_on","target":{"entity_id":"light.hallway"}}],"else":[{"action":"light.turn_off","target":{"entity_id":"light.hallway"}}]}]}`,
			exec: "finished", last: "sequence/0/then/0",
			steps: map[string]string{"sequence/0": `"choice":"then"`, "sequence/0/if/condition/0": `"result":{"result":true}`}},
		{name: "repeat and parallel", script: `{"sequence":[{"repeat":{"count":3,"sequence":[{"action":"light.toggle","target":{"entity_id":"light.hallway"}}]}},{"parallel":[{"action":"light.turn_off","target":{"entity_id":"light.hallway"}},{"sequence":[{"event":"hamcp_test"}]}]}]}`,
			exec: "finished", last: "sequence/1/parallel/1/sequence/0",
			steps:  map[string]string{"sequence/0/repeat/sequence/0": `"changed_variables":{"repeat":{"first":true,"index":1,"last":false}}`},
			visits: map[string]int{"sequence/0/repeat/sequence/0": 3, "sequence/1/parallel/0/sequence/0": 1}},
		{name: "unknown service", script: `{"sequence":[{"action":"light.turn_on","target":{"entity_id":"light.hallway"}},{"action":"light.make_coffee"}]}`,
			exec: "error", last: "sequence/1", err: "Action light.make_coffee not found.",
			steps: map[string]string{"sequence/1": `"error":"Action light.make_coffee not found."`}},
		{name: "condition stops", script: `{"sequence":[{"condition":"state","entity_id":"sun.sun","state":"below_horizon"},{"action":"light.turn_on","target":{"entity_id":"light.hallway"}}]}`,
			exec: "aborted", last: "sequence/0", steps: map[string]string{"sequence/0": `"result":{"result":false}`}},
		{name: "stop with error", script: `{"sequence":[{"sequence":[{"stop":"No one home","error":true}]}]}`,
			exec: "aborted", last: "sequence/0/sequence/0",
			steps: map[string]string{"sequence/0/sequence/0": `"result":{"error":true,"stop":"No one home"}`, "sequence/0": `"error":"No one home"`}},
		{name: "plain stop", script: `{"sequence":[{"stop":"done"},{"action":"light.turn_on","target":{"entity_id":"light.hallway"}}]}`,
			exec: "finished", last: "sequence/0"},
		{name: "disabled step", script: `{"sequence":[{"action":"light.turn_on","target":{"entity_id":"light.hallway"},"enabled":false}]}`,
			exec: "finished", last: "sequence/0", steps: map[string]string{"sequence/0": `"result":{"enabled":false}`}},
		{name: "automation conditions fail", data: map[string]any{"entity_id": "automation.hallway_light_on_motion", "skip_condition": false},
			exec: "failed_conditions", last: "condition/0",
			steps: map[string]string{"trigger": `"changed_variables":{"trigger":{"platform":null`, "condition/0": `"result":{"result":false}`}},
		{name: "automation runs", data: map[string]any{"entity_id": "automation.hallway_light_on_motion"},
			exec: "finished", last: "action/0", steps: map[string]string{"action/0": `"service_data":{"brightness_pct":60}`}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			domain, item := "automation", "1714000000001"
			if c.script != "" {
				domain, item = "script", fmt.Sprintf("trace_case_%d", i)
				if err := h.PutConfigItem("script", item, []byte(c.script), ""); err != nil {
					t.Fatal(err)
				}
				_, _ = h.CallService(home.ServiceCall{Domain: "script", Service: item})
			} else {
				call(t, h, "automation", "trigger", c.data)
			}
			list := traceList(t, h, domain, item)
			sum := list[len(list)-1]
			if sum["state"] != "stopped" || sum["script_execution"] != c.exec || sum["last_step"] != c.last {
				t.Fatalf("summary %v, want %s at %s", sum, c.exec, c.last)
			}
			if got, _ := sum["error"].(string); got != c.err {
				t.Errorf("error %q, want %q", got, c.err)
			}
			if _, ok := sum["trigger"]; ok != (domain == "automation") {
				t.Errorf("trigger key in a %s summary: %v", domain, sum)
			}
			tr := lastTrace(t, h, domain, item)
			for _, k := range []string{"trace", "config", "blueprint_inputs", "context", "timestamp", "domain", "item_id", "run_id"} {
				if _, ok := tr[k]; !ok {
					t.Errorf("trace/get lacks %s", k)
				}
			}
			for path, want := range c.steps {
				if got := jsonOf(step(t, tr, path, 0)); !contains(got, want) {
					t.Errorf("%s = %s, want %s", path, got, want)
				}
			}
			for path, n := range c.visits {
				if got := len(tr["trace"].(map[string]any)[path].([]any)); got != n {
					t.Errorf("%s visited %d times, want %d", path, got, n)
				}
			}
		})
	}
}

func contains(s, sub string) bool { return len(sub) == 0 || indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestTracesKeepFiveChildAndDelay(t *testing.T) {
	h, _ := newHome(t, t.TempDir())
	put := func(kind, key, body string) {
		t.Helper()
		if err := h.PutConfigItem(kind, key, []byte(body), ""); err != nil {
			t.Fatal(err)
		}
	}
	put("script", "blink", `{"sequence":[{"action":"light.toggle","target":{"entity_id":"light.hallway"}}]}`)
	put("automation", "1900000000001", `{"alias":"Calls blink","triggers":[{"trigger":"event","event_type":"x"}],"actions":[{"action":"script.blink"}]}`)
	for range 7 {
		call(t, h, "automation", "trigger", map[string]any{"entity_id": "automation.calls_blink"})
	}
	if n := len(traceList(t, h, "automation", "1900000000001")); n != 5 {
		t.Errorf("kept %d automation runs, want 5", n)
	}
	tr := lastTrace(t, h, "automation", "1900000000001")
	child, _ := step(t, tr, "action/0", 0)["child_id"].(map[string]any)
	blink := traceList(t, h, "script", "blink")
	if child == nil || child["domain"] != "script" || child["item_id"] != "blink" || child["run_id"] != blink[len(blink)-1]["run_id"] {
		t.Errorf("child_id %v, latest blink run %v", child, blink[len(blink)-1])
	}
	if got := step(t, tr, "action/0", 0)["result"].(map[string]any)["running_script"]; got != true {
		t.Errorf("running_script = %v", got)
	}
	// trace/contexts maps each run's context to it
	var ctxs map[string]map[string]any
	_ = json.Unmarshal(h.TraceContexts("automation.1900000000001"), &ctxs)
	if len(ctxs) != 5 {
		t.Errorf("contexts: %v", ctxs)
	}

	// a top-level delay leaves the run "running" until it ends; a second start of a
	// single-mode script is recorded as failed_single
	put("script", "slow", `{"sequence":[{"delay":{"milliseconds":40}},{"action":"light.turn_on","target":{"entity_id":"light.hallway"}}]}`)
	call(t, h, "script", "turn_on", map[string]any{"entity_id": "script.slow"})
	call(t, h, "script", "turn_on", map[string]any{"entity_id": "script.slow"})
	list := traceList(t, h, "script", "slow")
	if len(list) != 2 || list[0]["state"] != "running" || list[1]["script_execution"] != "failed_single" {
		t.Fatalf("while waiting: %v", list)
	}
	deadline := time.Now().Add(5 * time.Second)
	for traceList(t, h, "script", "slow")[0]["state"] != "stopped" {
		if time.Now().After(deadline) {
			t.Fatal("the delayed run never stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	run := traceList(t, h, "script", "slow")[0]
	raw, _ := h.TraceGet("script", "slow", run["run_id"].(string))
	var full map[string]any
	_ = json.Unmarshal(raw, &full)
	if got := jsonOf(step(t, full, "sequence/0", 0)["result"]); got != `{"delay":0.04,"done":true}` || run["last_step"] != "sequence/1" {
		t.Errorf("delay step %s, last_step %v", got, run["last_step"])
	}
	if _, ok := h.TraceGet("script", "slow", "nope"); ok {
		t.Error("unknown run found")
	}
}
