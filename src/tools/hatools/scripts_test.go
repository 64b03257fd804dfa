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

func TestManageScriptsDefinitionSize(t *testing.T) {
	for _, tool := range hatools.Tools(hatools.Deps{}) {
		if n := tool.Name(); n != "ha_manage_scripts" && n != "ha_manage_scenes" {
			continue
		}
		b, err := json.Marshal(tool.Definition())
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 1400 {
			t.Errorf("%s: definition is %d bytes, more than 1400: %s", tool.Name(), len(b), b)
		}
	}
}

func TestManageScriptsList(t *testing.T) {
	e := admStart(t, admOpts{})
	// A script Home Assistant runs but the editor API does not hold (configuration.yaml, a package).
	if _, _, err := e.ha.PostState(context.Background(), "script.from_package", homeassistant.StateUpdate{State: "off",
		Attributes: map[string]any{"friendly_name": "From package", "mode": "single"}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "script.from_package in the mirror", func() bool { _, ok := e.ha.Mirror().Get("script.from_package"); return ok })

	all := admItems(t, e.ok(t, "ha_manage_scripts", map[string]any{"action": "list"}), "items")
	byID := map[string]map[string]any{}
	for _, it := range all {
		byID[it["entity_id"].(string)] = it
	}
	if it := byID["script.good_night"]; it == nil || it["id"] != "good_night" || it["alias"] != "Good night" || it["state"] != "off" || it["editable"] != true {
		t.Fatalf("good_night: %v", it)
	}
	if it := byID["script.from_package"]; it == nil || it["editable"] != false {
		t.Fatalf("from_package: %v", it)
	}
	cases := []struct {
		name string
		args map[string]any
		code string
		want func(r map[string]any) bool
	}{
		{"search", map[string]any{"action": "list", "search": "FLASH"}, "", func(r map[string]any) bool {
			it := admItems(t, r, "items")
			return len(it) == 1 && it[0]["entity_id"] == "script.flash_light"
		}},
		{"paging", map[string]any{"action": "list", "limit": 1}, "", func(r map[string]any) bool {
			return r["count"].(float64) == 1 && r["next_offset"].(float64) == 1 && r["total"].(float64) == float64(len(all))
		}},
		{"get by id", map[string]any{"action": "get", "script_id": "good_night"}, "", func(r map[string]any) bool {
			cfg, _ := r["config"].(map[string]any)
			return r["entity_id"] == "script.good_night" && r["alias"] == "Good night" && cfg["sequence"] != nil
		}},
		{"get by entity id", map[string]any{"action": "get", "script_id": "script.flash_light"}, "", func(r map[string]any) bool {
			cfg, _ := r["config"].(map[string]any)
			return r["id"] == "flash_light" && cfg["fields"] != nil
		}},
		{"get outside scripts.yaml", map[string]any{"action": "get", "script_id": "script.from_package"}, "not_editable", nil},
		{"get unknown", map[string]any{"action": "get", "script_id": "nope"}, "not_found", nil},
		{"get bad id", map[string]any{"action": "get", "script_id": "Good Night"}, "invalid_argument", nil},
		{"get path trick", map[string]any{"action": "get", "script_id": "../automation/config/1"}, "invalid_argument", nil},
		{"get without id", map[string]any{"action": "get"}, "invalid_argument", nil},
		{"bad action", map[string]any{"action": "run"}, "invalid_argument", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code != "" {
				e.fails(t, "ha_manage_scripts", c.args, c.code, "")
				return
			}
			if r := e.ok(t, "ha_manage_scripts", c.args); !c.want(r) {
				t.Fatalf("unexpected: %v", r)
			}
		})
	}
	t.Run("down", func(t *testing.T) {
		e.down(t)
		e.fails(t, "ha_manage_scripts", map[string]any{"action": "list"}, "backend_unavailable", "")
	})
}

func TestManageScriptsLifecycle(t *testing.T) {
	e := admStart(t, admOpts{})
	porch := map[string]any{"alias": "Porch on", "sequence": []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.porch"}}}}

	created := e.ok(t, "ha_manage_scripts", map[string]any{"action": "create", "config": porch})
	if created["id"] != "porch_on" || created["entity_id"] != "script.porch_on" || created["created"] != true || created["version"] != 1.0 {
		t.Fatalf("create: %v", created)
	}
	// scripts.yaml as copied from the file: the key names the script; one action for the sequence.
	fromYAML := e.ok(t, "ha_manage_scripts", map[string]any{"action": "create",
		"yaml": "say_hi:\n  alias: Say hi\n  sequence:\n    action: persistent_notification.create\n    data:\n      message: hi\n"})
	if fromYAML["id"] != "say_hi" || fromYAML["entity_id"] != "script.say_hi" {
		t.Fatalf("create from YAML: %v", fromYAML)
	}
	got := e.ok(t, "ha_manage_scripts", map[string]any{"action": "get", "script_id": "say_hi"})
	if seq, _ := got["config"].(map[string]any)["sequence"].([]any); len(seq) != 1 {
		t.Fatalf("a one-action sequence is stored as a list: %v", got)
	}
	accented := e.ok(t, "ha_manage_scripts", map[string]any{"action": "create", "config": map[string]any{"alias": "Café  lights!", "sequence": []any{}}})
	if accented["id"] != "cafe_lights" {
		t.Fatalf("id from an accented alias: %v", accented)
	}

	for _, c := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"duplicate", map[string]any{"action": "create", "config": porch}, "invalid_argument", "already exists"},
		{"duplicate of a demo script", map[string]any{"action": "create", "script_id": "good_night", "config": porch}, "invalid_argument", "already exists"},
		{"no config", map[string]any{"action": "create"}, "invalid_argument", "config"},
		{"both forms", map[string]any{"action": "create", "config": porch, "yaml": "alias: x"}, "invalid_argument", "either"},
		{"bad YAML", map[string]any{"action": "create", "yaml": "alias: [x"}, "invalid_argument", "YAML"},
		{"no sequence", map[string]any{"action": "create", "config": map[string]any{"alias": "Nothing"}}, "invalid_argument", "config.sequence"},
		{"no alias, no id", map[string]any{"action": "create", "config": map[string]any{"sequence": []any{}}}, "invalid_argument", "script_id"},
		{"bad new id", map[string]any{"action": "create", "script_id": "Porch Two", "config": porch}, "invalid_argument", "porch_two"},
		{"reserved id (HA 400)", map[string]any{"action": "create", "script_id": "turn_on", "config": porch}, "invalid_argument", "must not be one of"},
		{"HA rejects mode (HA 400)", map[string]any{"action": "create", "script_id": "odd", "config": map[string]any{"alias": "Odd", "mode": "sometimes", "sequence": []any{}}}, "invalid_argument", "Message malformed"},
		{"update needs confirm", map[string]any{"action": "update", "script_id": "porch_on", "config": porch}, "confirmation_required", "porch_on"},
		{"update unknown", map[string]any{"action": "update", "confirm": true, "script_id": "nope", "config": porch}, "not_found", "nope"},
		{"delete needs confirm", map[string]any{"action": "delete", "script_id": "porch_on"}, "confirmation_required", "porch_on"},
		{"delete unknown", map[string]any{"action": "delete", "confirm": true, "script_id": "ghost"}, "not_found", "ghost"},
	} {
		t.Run(c.name, func(t *testing.T) { e.fails(t, "ha_manage_scripts", c.args, c.code, c.want) })
	}

	t.Run("merge update", func(t *testing.T) {
		r := e.ok(t, "ha_manage_scripts", map[string]any{"action": "update", "confirm": true, "script_id": "script.porch_on", "merge": true,
			"config": map[string]any{"alias": "Porch light", "mode": "restart", "icon": nil}})
		if r["id"] != "porch_on" || r["entity_id"] != "script.porch_on" || r["version"] != 2.0 {
			t.Fatalf("update: %v", r)
		}
		cfg := e.ok(t, "ha_manage_scripts", map[string]any{"action": "get", "script_id": "porch_on"})["config"].(map[string]any)
		if cfg["alias"] != "Porch light" || cfg["mode"] != "restart" || cfg["sequence"] == nil {
			t.Fatalf("merged config: %v", cfg)
		}
		testkit.Eventually(t, "the new alias", func() bool {
			it := admItems(t, e.ok(t, "ha_manage_scripts", map[string]any{"action": "list", "search": "porch_on"}), "items")
			return len(it) == 1 && it[0]["alias"] == "Porch light"
		})
	})

	t.Run("replace update", func(t *testing.T) {
		e.ok(t, "ha_manage_scripts", map[string]any{"action": "update", "confirm": true, "script_id": "porch_on",
			"yaml": "alias: Porch off\nsequence:\n  - action: light.turn_off\n    target:\n      entity_id: light.porch\n"})
		cfg := e.ok(t, "ha_manage_scripts", map[string]any{"action": "get", "script_id": "porch_on"})["config"].(map[string]any)
		if cfg["mode"] != nil || cfg["alias"] != "Porch off" {
			t.Fatalf("replaced config: %v", cfg)
		}
	})

	t.Run("delete", func(t *testing.T) {
		r := e.ok(t, "ha_manage_scripts", map[string]any{"action": "delete", "confirm": true, "script_id": "script.porch_on"})
		if r["deleted"] != true || r["id"] != "porch_on" || r["version"] != 4.0 {
			t.Fatalf("delete: %v", r)
		}
		testkit.Eventually(t, "the entity gone", func() bool { _, ok := e.ha.Mirror().Get("script.porch_on"); return !ok })
		e.fails(t, "ha_manage_scripts", map[string]any{"action": "get", "script_id": "porch_on"}, "not_found", "")
	})
}

// A script is behaviour the model writes now and anyone runs later: what it can reach is confirmed
// by the user when it is written (design.md §5b rule 2).
func TestManageScriptsConfirm(t *testing.T) {
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	if err := e.ha.SaveConfigItem(ctx, homeassistant.KindScript, "let_in", map[string]any{"alias": "Let in",
		"sequence": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "script.let_in", func() bool { _, ok := e.ha.Mirror().Get("script.let_in"); return ok })
	unlock := map[string]any{"alias": "Open up", "sequence": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}}
	viaScript := map[string]any{"alias": "Welcome", "sequence": []any{map[string]any{"action": "script.turn_on", "target": map[string]any{"entity_id": "script.let_in"}}}}
	viaDevice := map[string]any{"alias": "Door", "sequence": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"device_id": e.device(t, "Front Door Lock")}}}}
	harmless := map[string]any{"alias": "Porch", "sequence": []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.porch"}}}}

	for _, c := range []struct {
		name string
		args map[string]any
		key  string // must not exist afterwards
	}{
		{"unlock", map[string]any{"action": "create", "config": unlock}, "open_up"},
		{"unlock, model says confirmed", map[string]any{"action": "create", "config": unlock, "confirm": true}, "open_up"},
		{"unlock as YAML", map[string]any{"action": "create", "yaml": "alias: Open up\nsequence:\n  - action: lock.unlock\n    target:\n      entity_id: lock.front_door\n"}, "open_up"},
		{"through another script", map[string]any{"action": "create", "config": viaScript}, "welcome"},
		{"through a device", map[string]any{"action": "create", "config": viaDevice}, "door"},
		{"harmless made harmful by update", map[string]any{"action": "update", "confirm": true, "script_id": "good_night", "config": unlock}, ""},
		{"merge keeps a sensitive sequence", map[string]any{"action": "update", "confirm": true, "script_id": "let_in", "merge": true, "config": map[string]any{"alias": "Hello"}}, ""},
		{"delete", map[string]any{"action": "delete", "confirm": true, "script_id": "flash_light"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.asked(t, "ha_manage_scripts", c.args)
			if c.key != "" {
				if _, err := e.ha.GetConfigItem(ctx, homeassistant.KindScript, c.key); err == nil {
					t.Fatalf("%s was written without the user", c.key)
				}
			}
		})
	}
	if _, err := e.ha.GetConfigItem(ctx, homeassistant.KindScript, "flash_light"); err != nil {
		t.Fatalf("flash_light was deleted without the user: %v", err)
	}
	raw, _ := e.ha.GetConfigItem(ctx, homeassistant.KindScript, "let_in")
	if !strings.Contains(string(raw), "Let in") {
		t.Fatalf("let_in was changed without the user: %s", raw)
	}
	e.assertUntouched(t)

	t.Run("harmless create needs nobody", func(t *testing.T) {
		if r := e.ok(t, "ha_manage_scripts", map[string]any{"action": "create", "config": harmless}); r["id"] != "porch" {
			t.Fatalf("create: %v", r)
		}
	})
	t.Run("harmless update needs the model's confirm only", func(t *testing.T) {
		e.asked(t, "ha_manage_scripts", map[string]any{"action": "update", "script_id": "porch", "config": harmless})
		e.ok(t, "ha_manage_scripts", map[string]any{"action": "update", "script_id": "porch", "config": harmless, "confirm": true})
	})
	t.Run("a reserved event is refused", func(t *testing.T) {
		e.fails(t, "ha_manage_scripts", map[string]any{"action": "create", "config": map[string]any{"alias": "Forge",
			"sequence": []any{map[string]any{"event": "state_changed"}}}}, "invalid_argument", "state_changed")
	})
}
