package hatools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/homeassistant"
)

func TestListAutomations(t *testing.T) {
	e := admStart(t, admOpts{})
	all := e.ok(t, "ha_list_automations", nil)
	list := admItems(t, all, "items")
	if len(list) < 3 {
		t.Fatalf("demo automations: %v", all)
	}
	for _, a := range list {
		if !strings.HasPrefix(a["entity_id"].(string), "automation.") || a["alias"] == "" || a["state"] == "" || a["mode"] == "" || a["config"] != nil {
			t.Fatalf("item: %v", a)
		}
	}
	first := list[0]
	cases := []struct {
		name string
		args map[string]any
		code string
		want func(r map[string]any) bool
	}{
		{"search by alias", map[string]any{"search": strings.ToUpper(first["alias"].(string))}, "", func(r map[string]any) bool {
			return admItems(t, r, "items")[0]["entity_id"] == first["entity_id"]
		}},
		{"state filter", map[string]any{"state": "off"}, "", func(r map[string]any) bool {
			for _, it := range admItems(t, r, "items") {
				if it["state"] != "off" {
					return false
				}
			}
			return true
		}},
		{"include config", map[string]any{"search": first["alias"], "include_config": true}, "", func(r map[string]any) bool {
			cfg, _ := admItems(t, r, "items")[0]["config"].(map[string]any)
			return cfg["triggers"] != nil || cfg["trigger"] != nil
		}},
		{"paging", map[string]any{"limit": 1}, "", func(r map[string]any) bool {
			return r["count"].(float64) == 1 && r["next_offset"].(float64) == 1
		}},
		{"bad state", map[string]any{"state": "enabled"}, "invalid_argument", nil},
		{"bad limit", map[string]any{"limit": -1}, "invalid_argument", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code != "" {
				e.fails(t, "ha_list_automations", c.args, c.code, "")
				return
			}
			if r := e.ok(t, "ha_list_automations", c.args); !c.want(r) {
				t.Fatalf("unexpected: %v", r)
			}
		})
	}
	t.Run("down", func(t *testing.T) {
		e.down(t)
		e.fails(t, "ha_list_automations", nil, "backend_unavailable", "not reachable")
	})
}

func TestAutomationLifecycle(t *testing.T) {
	e := admStart(t, admOpts{})
	config := map[string]any{
		"alias":    "Porch light at sunset",
		"triggers": []any{map[string]any{"trigger": "sun", "event": "sunset"}},
		"actions":  []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.porch"}}},
		"mode":     "single",
	}
	created := e.ok(t, "ha_create_automation", map[string]any{"config": config, "id": "porch_sunset"})
	if created["id"] != "porch_sunset" || created["entity_id"] != "automation.porch_light_at_sunset" || created["created"] != true {
		t.Fatalf("create: %v", created)
	}
	fromYAML := e.ok(t, "ha_create_automation", map[string]any{"automation_yaml": "- alias: Night check\n  triggers:\n    - trigger: time\n      at: \"23:00:00\"\n  actions:\n    - action: light.turn_off\n      target:\n        entity_id: all\n"})
	if fromYAML["entity_id"] != "automation.night_check" || fromYAML["id"] == "" {
		t.Fatalf("create from YAML: %v", fromYAML)
	}

	for _, c := range []struct {
		name string
		tool string
		args map[string]any
		code string
		want string
	}{
		{"duplicate id", "ha_create_automation", map[string]any{"config": config, "id": "porch_sunset"}, "invalid_argument", "already used"},
		{"no config", "ha_create_automation", nil, "invalid_argument", "config"},
		{"both forms", "ha_create_automation", map[string]any{"config": config, "automation_yaml": "alias: x"}, "invalid_argument", "either"},
		{"bad YAML", "ha_create_automation", map[string]any{"automation_yaml": "alias: [x"}, "invalid_argument", "YAML"},
		{"no triggers", "ha_create_automation", map[string]any{"config": map[string]any{"alias": "x", "actions": []any{}}}, "invalid_argument", "config.triggers"},
		{"HA rejects trigger (validate_config)", "ha_create_automation", map[string]any{"config": map[string]any{"alias": "x",
			"triggers": []any{map[string]any{"trigger": "telepathy"}}, "actions": []any{map[string]any{"action": "light.turn_on"}}}}, "invalid_argument", "Home Assistant rejected"},
		{"HA rejects mode (REST 400)", "ha_create_automation", map[string]any{"config": map[string]any{"alias": "x", "mode": "sometimes",
			"triggers": []any{map[string]any{"trigger": "sun", "event": "sunset"}}, "actions": []any{map[string]any{"action": "light.turn_on"}}}}, "invalid_argument", "Message malformed"},
		{"update unknown id (HA 404)", "ha_update_automation", map[string]any{"confirm": true, "automation_id": "nope", "config": config}, "not_found", "nope"},
		{"update unknown entity", "ha_update_automation", map[string]any{"confirm": true, "automation_id": "automation.nope", "config": config}, "not_found", "automation.nope"},
		{"update needs confirm", "ha_update_automation", map[string]any{"automation_id": "nope", "config": config}, "confirmation_required", "confirm"},
		{"update needs id", "ha_update_automation", map[string]any{"confirm": true, "config": config}, "invalid_argument", "automation_id"},
		{"hostile id", "ha_update_automation", map[string]any{"confirm": true, "automation_id": "../script/config/x", "config": config}, "invalid_argument", "automation_id"},
		{"hostile new id", "ha_create_automation", map[string]any{"config": config, "id": "a?b=c"}, "invalid_argument", "id"},
		{"delete needs confirm", "ha_delete_automation", map[string]any{"automation_id": "porch_sunset"}, "confirmation_required", "porch_sunset"},
		{"delete unknown (HA 400)", "ha_delete_automation", map[string]any{"automation_id": "ghost", "confirm": true}, "not_found", "ghost"},
	} {
		t.Run(c.name, func(t *testing.T) { e.fails(t, c.tool, c.args, c.code, c.want) })
	}

	t.Run("merge update", func(t *testing.T) {
		r := e.ok(t, "ha_update_automation", map[string]any{"confirm": true, "automation_id": "automation.porch_light_at_sunset", "merge": true,
			"config": map[string]any{"alias": "Porch light at dusk", "description": "warm light", "mode": nil}})
		if r["id"] != "porch_sunset" || r["entity_id"] != "automation.porch_light_at_sunset" {
			t.Fatalf("update: %v", r)
		}
		got := admItems(t, e.ok(t, "ha_list_automations", map[string]any{"search": "porch_sunset", "include_config": true}), "items")[0]
		cfg := got["config"].(map[string]any)
		if cfg["alias"] != "Porch light at dusk" || cfg["description"] != "warm light" || cfg["mode"] != nil || cfg["triggers"] == nil {
			t.Fatalf("merged config: %v", cfg)
		}
		testkit.Eventually(t, "the new alias", func() bool {
			it := admItems(t, e.ok(t, "ha_list_automations", map[string]any{"search": "porch_sunset"}), "items")
			return len(it) == 1 && it[0]["alias"] == "Porch light at dusk"
		})
	})

	t.Run("replace update", func(t *testing.T) {
		e.ok(t, "ha_update_automation", map[string]any{"confirm": true, "automation_id": "porch_sunset", "automation_yaml": "alias: Porch\ntriggers:\n  - trigger: sun\n    event: sunrise\nactions:\n  - action: light.turn_off\n    target:\n      entity_id: light.porch\n"})
		cfg := admItems(t, e.ok(t, "ha_list_automations", map[string]any{"search": "porch_sunset", "include_config": true}), "items")[0]["config"].(map[string]any)
		if cfg["description"] != nil || cfg["alias"] != "Porch" {
			t.Fatalf("replaced config: %v", cfg)
		}
	})

	t.Run("delete", func(t *testing.T) {
		r := e.ok(t, "ha_delete_automation", map[string]any{"automation_id": "porch_sunset", "confirm": true})
		if r["deleted"] != true {
			t.Fatalf("delete: %v", r)
		}
		testkit.Eventually(t, "the entity to go", func() bool {
			return len(admItems(t, e.ok(t, "ha_list_automations", map[string]any{"search": "porch_sunset"}), "items")) == 0
		})
	})

	t.Run("down", func(t *testing.T) {
		e.down(t)
		e.fails(t, "ha_create_automation", map[string]any{"config": config}, "backend_unavailable", "not reachable")
		e.fails(t, "ha_update_automation", map[string]any{"confirm": true, "automation_id": "x", "config": config}, "backend_unavailable", "not reachable")
		e.fails(t, "ha_delete_automation", map[string]any{"automation_id": "x", "confirm": true}, "backend_unavailable", "not reachable")
	})
}

// TestAutomationSingularKeys: Home Assistant's validate_config takes only triggers/conditions/
// actions, so configs written with the pre-2024.10 singular keys (by a model, or stored by an
// old HA) are made plural before validation and saving.
func TestAutomationSingularKeys(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	ctx := context.Background()
	stored := func(id string) map[string]any {
		raw, err := e.ha.GetConfigItem(ctx, homeassistant.KindAutomation, id)
		if err != nil {
			t.Fatal(err)
		}
		var cfg map[string]any
		if err := json.Unmarshal(raw, &cfg); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	plural := func(t *testing.T, cfg map[string]any) {
		t.Helper()
		for _, k := range []string{"trigger", "condition", "action"} {
			if _, ok := cfg[k]; ok {
				t.Fatalf("stored config keeps the singular %q: %v", k, cfg)
			}
		}
		if cfg["triggers"] == nil || cfg["actions"] == nil {
			t.Fatalf("stored config lacks triggers/actions: %v", cfg)
		}
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"config", map[string]any{"id": "old_style_config", "config": map[string]any{"alias": "Old style config",
			"trigger":   []any{map[string]any{"platform": "sun", "event": "sunset"}},
			"condition": []any{map[string]any{"condition": "state", "entity_id": "sun.sun", "state": "below_horizon"}},
			"action":    []any{map[string]any{"service": "light.turn_on", "target": map[string]any{"entity_id": "light.porch"}}}}}},
		{"yaml", map[string]any{"id": "old_style_yaml", "automation_yaml": "alias: Old style yaml\ntrigger:\n  - platform: time\n    at: \"06:00:00\"\naction:\n  - service: light.turn_on\n    target:\n      entity_id: light.porch\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.ok(t, "ha_create_automation", c.args)
			plural(t, stored(c.args["id"].(string)))
		})
	}
	t.Run("both forms", func(t *testing.T) {
		e.fails(t, "ha_create_automation", map[string]any{"config": map[string]any{"alias": "x", "trigger": []any{}, "triggers": []any{map[string]any{"trigger": "sun", "event": "sunset"}},
			"actions": []any{map[string]any{"action": "light.turn_on"}}}}, "invalid_argument", "config.trigger")
	})
	t.Run("merge into a config stored with singular keys", func(t *testing.T) {
		old := map[string]any{"alias": "Saved by HA 2024.6", "trigger": []any{map[string]any{"platform": "sun", "event": "sunrise"}},
			"action": []any{map[string]any{"service": "light.turn_off", "target": map[string]any{"entity_id": "light.porch"}}}}
		if err := e.ha.SaveConfigItem(ctx, homeassistant.KindAutomation, "saved_2024", old); err != nil {
			t.Fatal(err)
		}
		e.ok(t, "ha_update_automation", map[string]any{"confirm": true, "automation_id": "saved_2024", "merge": true, "config": map[string]any{"description": "kept working"}})
		cfg := stored("saved_2024")
		plural(t, cfg)
		if cfg["description"] != "kept working" || cfg["alias"] != "Saved by HA 2024.6" {
			t.Fatalf("merged: %v", cfg)
		}
		e.ok(t, "ha_update_automation", map[string]any{"confirm": true, "automation_id": "saved_2024", "merge": true,
			"config": map[string]any{"triggers": []any{map[string]any{"trigger": "sun", "event": "sunset"}}}})
		if tr := stored("saved_2024")["triggers"].([]any)[0].(map[string]any); tr["event"] != "sunset" {
			t.Fatalf("merged triggers: %v", tr)
		}
	})
}
