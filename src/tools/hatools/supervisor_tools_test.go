package hatools_test

import (
	"strings"
	"testing"
)

func TestSupervisorInfo(t *testing.T) {
	for _, via := range []struct {
		name string
		opts admOpts
	}{{"supervisor client", admOpts{}}, {"websocket passthrough", admOpts{noSupervisor: true}}} {
		t.Run(via.name, func(t *testing.T) {
			e := admStart(t, via.opts)
			all := e.ok(t, "ha_get_supervisor_info", nil)
			for _, part := range []string{"supervisor", "core", "os", "host"} {
				if _, ok := all[part].(map[string]any); !ok {
					t.Fatalf("%s missing: %v", part, all)
				}
			}
			if all["supervisor"].(map[string]any)["addons"] != nil {
				t.Fatal("the summary carries the add-on list")
			}
			if !strings.Contains(admJSON(all["updates"]), `"slug":"core_mosquitto"`) || !strings.Contains(admJSON(all["issues"]), "update_rollback") {
				t.Fatalf("updates/issues: %v %v", all["updates"], all["issues"])
			}
			host := e.ok(t, "ha_get_supervisor_info", map[string]any{"component": "host"})
			if h, _ := host["host"].(map[string]any); h["hostname"] != "homeassistant" || h["features"] == nil || host["core"] != nil {
				t.Fatalf("host: %v", host)
			}
			e.fails(t, "ha_get_supervisor_info", map[string]any{"component": "kernel"}, "invalid_argument", "component")
		})
	}
	t.Run("works while Home Assistant is down", func(t *testing.T) {
		e := admStart(t, admOpts{})
		e.down(t)
		e.ok(t, "ha_get_supervisor_info", map[string]any{"component": "core"})
	})
}

func TestDiagnostics(t *testing.T) {
	e := admStart(t, admOpts{})
	r := e.ok(t, "ha_get_diagnostics", nil)
	summary := admJSON(r["summary"])
	if !strings.Contains(summary, "tuya (Tuya) is setup_retry") || !strings.Contains(summary, "repair issue") {
		t.Fatalf("summary: %v", r["summary"])
	}
	ents := r["entities"].(map[string]any)
	if ents["total"].(float64) < 50 {
		t.Fatalf("entities: %v", ents)
	}
	if rec, _ := r["recorder"].(map[string]any); rec["recording"] != true {
		t.Fatalf("recorder: %v", r["recorder"])
	}
	if cfg, _ := r["config"].(map[string]any); cfg["result"] != "valid" {
		t.Fatalf("config: %v", r["config"])
	}
	if !strings.Contains(admJSON(r["repairs"]), `"issue_id":"deprecated_yaml"`) || r["not_checked"] != nil {
		t.Fatalf("repairs / not_checked: %v %v", r["repairs"], r["not_checked"])
	}
	if !strings.Contains(admJSON(r["supervisor"]), "update_rollback") {
		t.Fatalf("supervisor: %v", r["supervisor"])
	}
	e.fails(t, "ha_get_diagnostics", map[string]any{"deep": true}, "invalid_argument", "deep")
	e.down(t)
	e.fails(t, "ha_get_diagnostics", nil, "backend_unavailable", "ha_get_logs")
}
