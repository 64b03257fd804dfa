package hatools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/homeassistant"
)

func TestManageScenesList(t *testing.T) {
	e := admStart(t, admOpts{})
	// scene.create makes a scene without an id: it has no entry in scenes.yaml.
	if _, _, err := e.ha.CallService(context.Background(), "scene", "create", map[string]any{"scene_id": "temp_look", "entities": map[string]any{"light.porch": "on"}}, false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "scene.temp_look in the mirror", func() bool { _, ok := e.ha.Mirror().Get("scene.temp_look"); return ok })

	all := admItems(t, e.ok(t, "ha_manage_scenes", map[string]any{"action": "list"}), "items")
	byID := map[string]map[string]any{}
	for _, it := range all {
		byID[it["entity_id"].(string)] = it
	}
	if it := byID["scene.movie_night"]; it == nil || it["id"] != "1735689600101" || it["alias"] != "Movie night" || it["editable"] != true {
		t.Fatalf("movie_night: %v", it)
	}
	if it := byID["scene.temp_look"]; it == nil || it["editable"] != false || it["id"] != nil {
		t.Fatalf("temp_look: %v", it)
	}
	cases := []struct {
		name string
		args map[string]any
		code string
		want func(r map[string]any) bool
	}{
		{"search", map[string]any{"action": "list", "search": "bright"}, "", func(r map[string]any) bool {
			it := admItems(t, r, "items")
			return len(it) == 1 && it[0]["entity_id"] == "scene.bright"
		}},
		{"paging", map[string]any{"action": "list", "limit": 2, "offset": 1}, "", func(r map[string]any) bool {
			return r["count"].(float64) == 2 && r["offset"].(float64) == 1
		}},
		{"get by entity id", map[string]any{"action": "get", "scene_id": "scene.movie_night"}, "", func(r map[string]any) bool {
			ents, _ := r["config"].(map[string]any)["entities"].(map[string]any)
			return r["id"] == "1735689600101" && r["alias"] == "Movie night" && len(ents) == 2
		}},
		{"get by id", map[string]any{"action": "get", "scene_id": "1735689600102"}, "", func(r map[string]any) bool {
			return r["entity_id"] == "scene.bright"
		}},
		{"get a scene.create scene", map[string]any{"action": "get", "scene_id": "scene.temp_look"}, "not_editable", nil},
		{"get unknown entity", map[string]any{"action": "get", "scene_id": "scene.nope"}, "not_found", nil},
		{"get unknown id", map[string]any{"action": "get", "scene_id": "nope"}, "not_found", nil},
		{"get path trick", map[string]any{"action": "get", "scene_id": "../script/config/good_night"}, "invalid_argument", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code != "" {
				e.fails(t, "ha_manage_scenes", c.args, c.code, "")
				return
			}
			if r := e.ok(t, "ha_manage_scenes", c.args); !c.want(r) {
				t.Fatalf("unexpected: %v", r)
			}
		})
	}
}

func TestManageScenesLifecycle(t *testing.T) {
	e := admStart(t, admOpts{})
	reading := map[string]any{"name": "Reading", "icon": "mdi:book", "entities": map[string]any{
		"Light.Office_Desk": map[string]any{"state": true, "brightness": 200}, "light.hallway": false}}

	created := e.ok(t, "ha_manage_scenes", map[string]any{"action": "create", "config": reading})
	if created["id"] != "reading" || created["entity_id"] != "scene.reading" || created["created"] != true || created["version"] != 1.0 {
		t.Fatalf("create: %v", created)
	}
	cfg := e.ok(t, "ha_manage_scenes", map[string]any{"action": "get", "scene_id": "reading"})["config"].(map[string]any)
	ents := cfg["entities"].(map[string]any)
	if desk, _ := ents["light.office_desk"].(map[string]any); desk["state"] != "on" || ents["light.hallway"] != "off" || cfg["id"] != "reading" {
		t.Fatalf("normalised config: %v", cfg)
	}
	// scenes.yaml as copied from the file, and entities as a list of entity/state pairs.
	fromYAML := e.ok(t, "ha_manage_scenes", map[string]any{"action": "create",
		"yaml": "- id: '1714000000999'\n  name: Dinner\n  entities:\n    light.dining_table:\n      state: 'on'\n      brightness: 120\n"})
	if fromYAML["id"] != "1714000000999" || fromYAML["entity_id"] != "scene.dinner" {
		t.Fatalf("create from YAML: %v", fromYAML)
	}
	listed := e.ok(t, "ha_manage_scenes", map[string]any{"action": "create", "scene_id": "night_path",
		"config": map[string]any{"name": "Night path", "entities": []any{map[string]any{"entity_id": "light.hallway", "state": "on", "brightness": 20}, map[string]any{"entity_id": "light.porch", "state": "off"}}}})
	if listed["entity_id"] != "scene.night_path" {
		t.Fatalf("create from a list: %v", listed)
	}
	got := e.ok(t, "ha_manage_scenes", map[string]any{"action": "get", "scene_id": "night_path"})["config"].(map[string]any)["entities"].(map[string]any)
	if got["light.porch"] != "off" || got["light.hallway"].(map[string]any)["brightness"] != 20.0 {
		t.Fatalf("entities from a list: %v", got)
	}

	for _, c := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"duplicate", map[string]any{"action": "create", "config": reading}, "invalid_argument", "already exists"},
		{"no name", map[string]any{"action": "create", "config": map[string]any{"entities": map[string]any{"light.porch": "on"}}}, "invalid_argument", "config.name"},
		{"no entities", map[string]any{"action": "create", "config": map[string]any{"name": "Empty"}}, "invalid_argument", "config.entities"},
		{"entity id for a new scene", map[string]any{"action": "create", "scene_id": "scene.x", "config": reading}, "invalid_argument", "scene_id"},
		{"HA rejects an entity id (HA 400)", map[string]any{"action": "create", "config": map[string]any{"name": "Bad", "entities": map[string]any{"not an entity": "on"}}}, "invalid_argument", "Message malformed: Entity ID not an entity is an invalid entity ID"},
		{"HA rejects a missing state (HA 400)", map[string]any{"action": "create", "config": map[string]any{"name": "Dim", "entities": map[string]any{"light.porch": map[string]any{"brightness": 10}}}}, "invalid_argument", "State for light.porch should be a string"},
		{"update needs confirm", map[string]any{"action": "update", "scene_id": "reading", "config": reading}, "confirmation_required", "reading"},
		{"update a scene.create scene", map[string]any{"action": "update", "confirm": true, "scene_id": "scene.nope", "config": reading}, "not_found", ""},
		{"delete needs confirm", map[string]any{"action": "delete", "scene_id": "reading"}, "confirmation_required", "reading"},
		{"delete unknown", map[string]any{"action": "delete", "confirm": true, "scene_id": "ghost"}, "not_found", "ghost"},
	} {
		t.Run(c.name, func(t *testing.T) { e.fails(t, "ha_manage_scenes", c.args, c.code, c.want) })
	}

	t.Run("merge update", func(t *testing.T) {
		r := e.ok(t, "ha_manage_scenes", map[string]any{"action": "update", "confirm": true, "scene_id": "scene.reading", "merge": true,
			"config": map[string]any{"name": "Reading corner", "icon": nil}})
		if r["id"] != "reading" || r["entity_id"] != "scene.reading" || r["version"] != 2.0 {
			t.Fatalf("update: %v", r)
		}
		cfg := e.ok(t, "ha_manage_scenes", map[string]any{"action": "get", "scene_id": "reading"})["config"].(map[string]any)
		if cfg["name"] != "Reading corner" || cfg["icon"] != nil || cfg["entities"] == nil {
			t.Fatalf("merged config: %v", cfg)
		}
		testkit.Eventually(t, "the new name", func() bool {
			it := admItems(t, e.ok(t, "ha_manage_scenes", map[string]any{"action": "list", "search": "reading"}), "items")
			return len(it) == 1 && it[0]["alias"] == "Reading corner"
		})
	})

	t.Run("delete", func(t *testing.T) {
		r := e.ok(t, "ha_manage_scenes", map[string]any{"action": "delete", "confirm": true, "scene_id": "reading"})
		if r["deleted"] != true || r["entity_id"] != "scene.reading" || r["version"] != 3.0 {
			t.Fatalf("delete: %v", r)
		}
		testkit.Eventually(t, "the entity gone", func() bool { _, ok := e.ha.Mirror().Get("scene.reading"); return !ok })
		e.fails(t, "ha_manage_scenes", map[string]any{"action": "get", "scene_id": "reading"}, "not_found", "")
	})
}

// A scene is activated later by anyone: the states it sets, and the automations those start, are
// confirmed by the user when it is written.
func TestManageScenesConfirm(t *testing.T) {
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	// The user's automation: the porch light coming on unlocks the front door.
	if err := e.ha.SaveConfigItem(ctx, homeassistant.KindAutomation, "1714000009555", map[string]any{"alias": "Porch greets",
		"triggers": []any{map[string]any{"trigger": "state", "entity_id": "light.porch", "to": "on"}},
		"actions":  []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "automation.porch_greets", func() bool { _, ok := e.ha.Mirror().Get("automation.porch_greets"); return ok })
	e.settle(t)

	for _, c := range []struct {
		name string
		args map[string]any
		id   string // must not exist afterwards
		want string // in the question
	}{
		{"unlock", map[string]any{"action": "create", "config": map[string]any{"name": "Open house", "entities": map[string]any{"lock.front_door": "unlocked"}}}, "open_house", "set lock.front_door"},
		{"unlock, model says confirmed", map[string]any{"action": "create", "confirm": true, "config": map[string]any{"name": "Open house", "entities": map[string]any{"lock.front_door": map[string]any{"state": "unlocked"}}}}, "open_house", ""},
		{"garage", map[string]any{"action": "create", "yaml": "name: Garage\nentities:\n  cover.garage_door: open\n"}, "garage", "cover.garage_door"},
		{"alarm, upper case id", map[string]any{"action": "create", "config": map[string]any{"name": "Quiet", "entities": map[string]any{"Alarm_Control_Panel.Home_Alarm": "disarmed"}}}, "quiet", "alarm_control_panel.home_alarm"},
		{"starts an automation that unlocks", map[string]any{"action": "create", "config": map[string]any{"name": "Porch glow", "entities": map[string]any{"light.porch": "on"}}}, "porch_glow", "start automation.porch_greets"},
		{"update to unlock", map[string]any{"action": "update", "confirm": true, "scene_id": "1735689600102", "config": map[string]any{"name": "Bright", "entities": map[string]any{"lock.front_door": "unlocked"}}}, "", ""},
		{"delete", map[string]any{"action": "delete", "confirm": true, "scene_id": "scene.bright"}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.asked(t, "ha_manage_scenes", c.args)
			if r := e.call(t, "ha_manage_scenes", c.args); c.want != "" && !strings.Contains(r.raw, c.want) {
				t.Fatalf("the question does not say %q: %s", c.want, r.raw)
			}
			if c.id != "" {
				if _, err := e.ha.GetConfigItem(ctx, homeassistant.KindScene, c.id); err == nil {
					t.Fatalf("scene %s was written without the user", c.id)
				}
			}
		})
	}
	if _, err := e.ha.GetConfigItem(ctx, homeassistant.KindScene, "1735689600102"); err != nil {
		t.Fatalf("Bright was deleted without the user: %v", err)
	}
	e.assertUntouched(t)

	t.Run("harmless create needs nobody", func(t *testing.T) {
		r := e.ok(t, "ha_manage_scenes", map[string]any{"action": "create", "config": map[string]any{"name": "Locked up",
			"entities": map[string]any{"lock.front_door": "locked", "light.kitchen_ceiling": "off"}}})
		if r["id"] != "locked_up" {
			t.Fatalf("create: %v", r)
		}
	})
	t.Run("merge counts the stored entities", func(t *testing.T) {
		if err := e.ha.SaveConfigItem(ctx, homeassistant.KindScene, "1714000009777", map[string]any{"name": "Let in", "entities": map[string]any{"lock.front_door": "unlocked"}}); err != nil {
			t.Fatal(err)
		}
		e.asked(t, "ha_manage_scenes", map[string]any{"action": "update", "confirm": true, "scene_id": "1714000009777", "merge": true, "config": map[string]any{"name": "Hello"}})
	})
}
