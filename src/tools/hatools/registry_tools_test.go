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

func TestRegistryToolDefinitionSizes(t *testing.T) {
	t.Parallel()
	for _, tool := range hatools.Tools(hatools.Deps{}) {
		name := tool.Definition().Name
		if name != "ha_manage_registry" && name != "ha_update_entity" && name != "ha_update_device" {
			continue
		}
		b, err := json.Marshal(tool.Definition())
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 1400 {
			t.Errorf("%s's definition is %d bytes, over 1,400", name, len(b))
		}
	}
}

func TestManageRegistry(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	cases := []struct {
		name      string
		args      map[string]any
		code      string // "" = success
		want      string // in the result or the error
		wantField string // result item field that must be set
	}{
		{"create floor", reg("create", "floor", "", map[string]any{"name": "RT Basement", "level": -1}), "", `"id":"rt_basement"`, "level"},
		{"create area on it", reg("create", "area", "", map[string]any{"name": "RT Cellar", "floor_id": "rt_basement", "labels": "climate"}), "", `"id":"rt_cellar"`, "floor_id"},
		{"area on an unknown floor", reg("create", "area", "", map[string]any{"name": "RT Attic", "floor_id": "roof"}), "invalid_argument", "not a floor", ""},
		{"area with an unknown label", reg("create", "area", "", map[string]any{"name": "RT Attic", "labels": []any{"nope"}}), "invalid_argument", "not a label", ""},
		{"rename area", reg("update", "area", "rt_cellar", map[string]any{"name": "RT Wine cellar"}), "", "RT Wine cellar", "name"},
		{"field of another kind", reg("update", "area", "rt_cellar", map[string]any{"color": "red"}), "invalid_argument", "fields.color", ""},
		{"no fields", reg("update", "area", "rt_cellar", nil), "invalid_argument", "fields", ""},
		{"update without id", reg("update", "area", "", map[string]any{"name": "x"}), "invalid_argument", "id", ""},
		{"create with id", reg("create", "label", "x", map[string]any{"name": "x"}), "invalid_argument", "chosen by Home Assistant", ""},
		{"unknown area", reg("update", "area", "nope", map[string]any{"name": "x"}), "not_found", "nope", ""},
		{"create label", reg("create", "label", "", map[string]any{"name": "RT Holiday", "color": "red", "icon": "mdi:pine-tree"}), "", `"id":"rt_holiday"`, "color"},
		{"label name in use", reg("create", "label", "", map[string]any{"name": "security"}), "invalid_argument", "already in use", ""},
		{"bad icon", reg("create", "label", "", map[string]any{"name": "RT x", "icon": "tree"}), "invalid_argument", "fields.icon", ""},
		{"category without scope", reg("create", "category", "", map[string]any{"name": "RT Heating"}), "invalid_argument", "scope", ""},
		{"create zone", reg("create", "zone", "", map[string]any{"name": "RT School", "latitude": 52.37, "longitude": 4.89}), "", `"id":"rt_school"`, "radius"},
		{"zone without longitude", reg("create", "zone", "", map[string]any{"name": "RT x", "latitude": 52.0}), "invalid_argument", "fields.longitude", ""},
		{"zone latitude out of range", reg("create", "zone", "", map[string]any{"name": "RT x", "latitude": 91.0, "longitude": 4.0}), "invalid_argument", "fields.latitude", ""},
		{"move zone", reg("update", "zone", "rt_school", map[string]any{"radius": 300}), "", `"radius":300`, "latitude"},
		{"delete label", reg("delete", "label", "rt_holiday", nil), "", `"action":"delete"`, ""},
		{"delete it again", reg("delete", "label", "rt_holiday", nil), "not_found", "rt_holiday", ""},
		{"delete fields", reg("delete", "zone", "rt_school", map[string]any{"name": "x"}), "invalid_argument", "fields", ""},
	}
	for _, c := range cases {
		r := e.call(t, "ha_manage_registry", c.args)
		if c.code != "" {
			if r.err == nil || r.err.Code != c.code || !strings.Contains(r.raw, c.want) {
				t.Errorf("%s: got %s, want %s containing %q", c.name, r.raw, c.code, c.want)
			}
			continue
		}
		if r.err != nil || !strings.Contains(r.raw, c.want) {
			t.Errorf("%s: got %s, want success containing %q", c.name, r.raw, c.want)
			continue
		}
		if v, _ := r.data["version"].(float64); v < 1 {
			t.Errorf("%s: no version kept: %s", c.name, r.raw)
		}
		if item, _ := r.data["item"].(map[string]any); c.wantField != "" && item[c.wantField] == nil {
			t.Errorf("%s: item lacks %s: %s", c.name, c.wantField, r.raw)
		}
	}
	cat := e.ok(t, "ha_manage_registry", map[string]any{"action": "create", "kind": "category", "scope": "automation", "fields": map[string]any{"name": "RT Heating", "icon": "mdi:fire"}})
	id, _ := cat["id"].(string)
	e.ok(t, "ha_manage_registry", map[string]any{"action": "update", "kind": "category", "scope": "automation", "id": id, "fields": map[string]any{"name": "RT Warmth"}})
	hist := e.ok(t, "ha_config_history", map[string]any{"action": "list", "item": "category:automation/" + id})
	if items := admItems(t, hist["versions"].(map[string]any), "items"); len(items) != 2 {
		t.Errorf("category history: %v", items)
	}
	e.ok(t, "ha_manage_registry", map[string]any{"action": "delete", "kind": "category", "scope": "automation", "id": id, "confirm": true})
}

func reg(action, kind, id string, fields map[string]any) map[string]any {
	m := map[string]any{"action": action, "kind": kind, "confirm": true}
	if id != "" {
		m["id"] = id
	}
	if fields != nil {
		m["fields"] = fields
	}
	return m
}

func TestUpdateEntity(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	ctx := context.Background()
	got := e.ok(t, "ha_update_entity", map[string]any{"entity_id": "light.kitchen_island", "name": "Island", "labels": []any{"night"}, "aliases": []any{"bar light"}})
	if got["name"] != "Island" || got["version"] == nil || !strings.Contains(strings.Join(anyStrings(got["labels"]), ","), "night") {
		t.Errorf("entity update: %v", got)
	}
	testkit.Eventually(t, "the friendly name follows", func() bool {
		s, err := e.ha.State(ctx, "light.kitchen_island")
		return err == nil && s.FriendlyName() == "Island"
	})
	e.ok(t, "ha_update_entity", map[string]any{"entity_id": "light.kitchen_island", "name": ""})
	e.ok(t, "ha_update_entity", map[string]any{"entity_id": "light.kitchen_island", "new_entity_id": "light.rt_island", "expose": false})
	testkit.Eventually(t, "the state moves with the entity id", func() bool { _, err := e.ha.State(ctx, "light.rt_island"); return err == nil })
	exposed, err := e.ha.ExposedEntities(ctx)
	if err != nil || exposed["light.rt_island"]["conversation"] != false {
		t.Errorf("exposure after the rename: %v %v", exposed["light.rt_island"], err)
	}
	off := e.ok(t, "ha_update_entity", map[string]any{"entity_id": "light.rt_island", "enabled": false})
	if off["disabled_by"] != "user" {
		t.Errorf("disabled: %v", off)
	}
	on := e.ok(t, "ha_update_entity", map[string]any{"entity_id": "light.rt_island", "enabled": true})
	if on["disabled_by"] != nil || on["note"] == nil {
		t.Errorf("enabled again: %v", on)
	}
	if _, _, err := e.ha.PostState(ctx, "sensor.rt_rest_only", homeassistant.StateUpdate{State: "1"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"nothing to change", map[string]any{"entity_id": "light.rt_island"}, "invalid_argument", "at least one"},
		{"other domain", map[string]any{"entity_id": "light.rt_island", "new_entity_id": "switch.rt_island"}, "invalid_argument", "domain"},
		{"taken id", map[string]any{"entity_id": "light.rt_island", "new_entity_id": "light.kitchen_ceiling"}, "invalid_argument", "already registered"},
		{"unknown area", map[string]any{"entity_id": "light.rt_island", "area_id": "attic"}, "invalid_argument", "not an area"},
		{"unknown label", map[string]any{"entity_id": "light.rt_island", "labels": []any{"nope"}}, "invalid_argument", "not a label"},
		{"no registry entry", map[string]any{"entity_id": "sensor.rt_rest_only", "name": "x"}, "not_found", "no registry entry"},
	} {
		if r := e.call(t, "ha_update_entity", c.args); r.err == nil || r.err.Code != c.code || !strings.Contains(r.raw, c.want) {
			t.Errorf("%s: got %s, want %s containing %q", c.name, r.raw, c.code, c.want)
		}
	}
	dev := deviceOf(t, e, "light.living_room_lamp")
	saved := e.ok(t, "ha_update_device", map[string]any{"device_id": dev, "name": "Reading lamp", "area_id": "office", "labels": []any{"night"}})
	if saved["name"] != "Reading lamp" || saved["area_id"] != "office" || saved["version"] == nil {
		t.Errorf("device update: %v", saved)
	}
	e.fails(t, "ha_update_device", map[string]any{"device_id": "nope", "name": "x"}, "not_found", "ha_list_devices")
	e.fails(t, "ha_update_device", map[string]any{"device_id": dev}, "invalid_argument", "at least one")
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func deviceOf(t *testing.T, e *admEnv, entityID string) string {
	t.Helper()
	entries, err := e.ha.EntityEntries(context.Background(), []string{entityID})
	if err != nil || entries[entityID].DeviceID == nil {
		t.Fatalf("no device for %s: %v", entityID, err)
	}
	return *entries[entityID].DeviceID
}

// §5b rule 2: registry edits that change what counts as sensitive or what reaches it wait for the
// user; harmless ones do not.
func TestRegistryEditsConfirmed(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true, sensitive: []string{"switch.christmas_lights"}})
	ctx := context.Background()
	// A script that unlocks the front door, and an automation that does when someone reaches work.
	if err := e.ha.SaveConfigItem(ctx, homeassistant.KindScript, "rt_let_in", map[string]any{"alias": "Let in",
		"sequence": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.ha.SaveConfigItem(ctx, homeassistant.KindAutomation, "rt_work_zone", map[string]any{"alias": "Unlock when leaving work",
		"triggers": []any{map[string]any{"trigger": "zone", "entity_id": "person.alex", "zone": "zone.work", "event": "leave"}},
		"actions":  []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the script and the automation", func() bool {
		_, e1 := e.ha.State(ctx, "script.rt_let_in")
		_, e2 := e.ha.State(ctx, "automation.unlock_when_leaving_work")
		return e1 == nil && e2 == nil
	})
	lockDevice, lampDevice := deviceOf(t, e, "lock.front_door"), deviceOf(t, e, "light.living_room_lamp")
	asked := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"move the lock", "ha_update_entity", map[string]any{"entity_id": "lock.front_door", "area_id": "garden"}, "lock.front_door"},
		{"relabel the lock", "ha_update_entity", map[string]any{"entity_id": "lock.front_door", "labels": []any{}}, "lock.front_door"},
		{"garage shown as a door", "ha_update_entity", map[string]any{"entity_id": "cover.garage_door", "device_class": "door"}, "cover.garage_door"},
		{"disable the alarm", "ha_update_entity", map[string]any{"entity_id": "alarm_control_panel.home_alarm", "enabled": false}, "alarm_control_panel.home_alarm"},
		{"hide the lock", "ha_update_entity", map[string]any{"entity_id": "lock.front_door", "hidden": true}, "lock.front_door"},
		{"rename the lock's id", "ha_update_entity", map[string]any{"entity_id": "lock.front_door", "new_entity_id": "lock.rt_door"}, "lock.front_door"},
		{"move a marked switch", "ha_update_entity", map[string]any{"entity_id": "switch.christmas_lights", "area_id": "garden"}, "switch.christmas_lights"},
		{"expose the lock", "ha_update_entity", map[string]any{"entity_id": "lock.front_door", "expose": true}, "Assist"},
		{"expose an unlocking script", "ha_update_entity", map[string]any{"entity_id": "script.rt_let_in", "expose": true}, "unlock"},
		{"move the lock's device", "ha_update_device", map[string]any{"device_id": lockDevice, "area_id": "garden"}, "lock.front_door"},
		{"disable the lock's device", "ha_update_device", map[string]any{"device_id": lockDevice, "enabled": false}, "lock.front_door"},
		{"relabel the garage area", "ha_manage_registry", map[string]any{"action": "update", "kind": "area", "id": "garage", "fields": map[string]any{"labels": []any{"outdoor"}}}, "cover.garage_door"},
		{"move a zone automations use", "ha_manage_registry", map[string]any{"action": "update", "kind": "zone", "id": "work", "fields": map[string]any{"radius": 5000}}, "unlock"},
		{"delete an area", "ha_manage_registry", map[string]any{"action": "delete", "kind": "area", "id": "garden"}, "garden"},
		{"delete a label", "ha_manage_registry", map[string]any{"action": "delete", "kind": "label", "id": "outdoor"}, "outdoor"},
	}
	for _, c := range asked {
		args := map[string]any{"confirm": true}
		for k, v := range c.args {
			args[k] = v
		}
		r := e.call(t, c.tool, args)
		if r.err == nil || r.err.Code != "confirmation_required" || !strings.Contains(r.raw, c.want) {
			t.Errorf("%s: not stopped for the user (or the question lacks %q): %s", c.name, c.want, r.raw)
		}
	}
	// Harmless edits pass on the model's word alone.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"ha_update_entity", map[string]any{"entity_id": "lock.front_door", "name": "Front door lock", "icon": "mdi:lock"}},
		{"ha_update_entity", map[string]any{"entity_id": "light.living_room_lamp", "area_id": "garden", "hidden": true}},
		{"ha_update_entity", map[string]any{"entity_id": "light.living_room_lamp", "expose": true}},
		{"ha_update_device", map[string]any{"device_id": lockDevice, "name": "Door"}},
		{"ha_update_device", map[string]any{"device_id": lampDevice, "area_id": "garden", "enabled": false}},
		{"ha_manage_registry", map[string]any{"action": "update", "kind": "area", "id": "garage", "fields": map[string]any{"name": "Car port"}}},
		{"ha_manage_registry", map[string]any{"action": "update", "kind": "area", "id": "office", "fields": map[string]any{"labels": []any{"outdoor"}}}},
		{"ha_manage_registry", map[string]any{"action": "create", "kind": "zone", "fields": map[string]any{"name": "RT Gym", "latitude": 52.1, "longitude": 4.3}}},
		{"ha_manage_registry", map[string]any{"action": "update", "kind": "zone", "id": "rt_gym", "fields": map[string]any{"radius": 80}}},
	} {
		e.ok(t, c.tool, c.args)
	}
	e.assertUntouched(t)
}

// An entity whose id an assistant renamed comes back under its old id and name from the history,
// the restore can be taken back in turn, and its history is found under the id it has now. Before,
// the kept version named the old id, which no longer existed: the undo failed with "not found".
func TestRenamedEntityRestores(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	ctx := context.Background()
	got := e.ok(t, "ha_update_entity", map[string]any{"entity_id": "light.kitchen_island", "new_entity_id": "light.rt_moved", "name": "Moved"})
	if got["entity_id"] != "light.rt_moved" {
		t.Fatalf("rename: %v", got)
	}
	list := e.ok(t, "ha_config_history", map[string]any{"action": "list", "item": "entity:light.rt_moved"})
	items := admItems(t, list["versions"].(map[string]any), "items")
	if len(items) != 1 {
		t.Fatalf("the rename is kept under the new id: %v", items)
	}
	at := func(want, name string) {
		t.Helper()
		entry, err := e.ha.EntityRegistryEntry(ctx, want)
		if err != nil || stringOf(entry["name"]) != name {
			t.Fatalf("the entity should be %s named %q: %v %v", want, name, entry, err)
		}
	}
	restore := func(item string, version any) map[string]any {
		t.Helper()
		r := e.ok(t, "ha_config_history", map[string]any{"action": "restore", "item": item, "version": version, "confirm": true})
		undo, _ := r["undo"].(map[string]any)
		if undo == nil {
			t.Fatalf("restore of %s %v offers no undo: %v", item, version, r)
		}
		return undo
	}
	undo := restore("entity:light.rt_moved", items[0]["version"])
	at("light.kitchen_island", "")
	undo = restore(undo["item"].(string), undo["version"])
	at("light.rt_moved", "Moved")
	restore(undo["item"].(string), undo["version"])
	at("light.kitchen_island", "")

	// Another entity took the old id meanwhile: the restore still follows the renamed one, and
	// HA refuses the clash in words rather than hamcp changing the wrong entity.
	e.ok(t, "ha_update_entity", map[string]any{"entity_id": "light.kitchen_island", "new_entity_id": "light.rt_moved2"})
	e.ok(t, "ha_update_entity", map[string]any{"entity_id": "light.kitchen_ceiling", "new_entity_id": "light.kitchen_island", "name": "Ceiling"})
	items = admItems(t, e.ok(t, "ha_config_history", map[string]any{"action": "list", "item": "entity:light.rt_moved2"})["versions"].(map[string]any), "items")
	e.fails(t, "ha_config_history", map[string]any{"action": "restore", "item": "entity:light.rt_moved2", "version": items[0]["version"], "confirm": true}, "backend_error", "already registered")
	at("light.rt_moved2", "")
	at("light.kitchen_island", "Ceiling")
}

func stringOf(v any) string { s, _ := v.(string); return s }
