package hass_test

import (
	"strings"
	"testing"
)

// The registry commands answer as Home Assistant's handlers do: results, error codes and wording.
func TestWSRegistryAdmin(t *testing.T) {
	w := dialAuthed(t, home.Token())
	floor := w.ok(map[string]any{"id": 1, "type": "config/floor_registry/create", "name": "RT Basement", "level": -1, "aliases": []any{" cellar ", ""}}).(map[string]any)
	if floor["floor_id"] != "rt_basement" || floor["level"] != -1.0 || len(floor["aliases"].([]any)) != 1 {
		t.Fatalf("created floor: %v", floor)
	}
	area := w.ok(map[string]any{"id": 2, "type": "config/area_registry/create", "name": "RT Cellar", "floor_id": "rt_basement"}).(map[string]any)
	label := w.ok(map[string]any{"id": 3, "type": "config/label_registry/create", "name": "RT Holiday", "color": "deep-orange"}).(map[string]any)
	if label["label_id"] != "rt_holiday" || label["color"] != "deep-orange" {
		t.Fatalf("created label: %v", label)
	}
	w.ok(map[string]any{"id": 4, "type": "config/entity_registry/update", "entity_id": "light.kitchen_ceiling", "labels": []any{"rt_holiday"}})
	if got := w.ok(map[string]any{"id": 5, "type": "config/label_registry/delete", "label_id": "rt_holiday"}); got != nil {
		t.Errorf("label delete result: %v, want null", got)
	}
	e := w.ok(map[string]any{"id": 6, "type": "config/entity_registry/get", "entity_id": "light.kitchen_ceiling"}).(map[string]any)
	if l := e["labels"].([]any); len(l) != 0 {
		t.Errorf("a deleted label stays on the entity: %v", l)
	}
	w.ok(map[string]any{"id": 7, "type": "config/floor_registry/delete", "floor_id": "rt_basement"})
	for _, a := range w.ok(map[string]any{"id": 8, "type": "config/area_registry/list"}).([]any) {
		if m := a.(map[string]any); m["area_id"] == area["area_id"] && m["floor_id"] != nil {
			t.Errorf("an area keeps a deleted floor: %v", m)
		}
	}
	cat := w.ok(map[string]any{"id": 9, "type": "config/category_registry/create", "scope": "automation", "name": "RT Heating", "icon": "mdi:fire"}).(map[string]any)
	if id, _ := cat["category_id"].(string); len(id) != 26 {
		t.Errorf("category id is not a ULID: %v", cat)
	}
	cats := w.ok(map[string]any{"id": 10, "type": "config/category_registry/list", "scope": "automation"}).([]any)
	if len(cats) < 3 {
		t.Errorf("automation categories: %v", cats)
	}
	if got := w.ok(map[string]any{"id": 11, "type": "config/category_registry/list", "scope": "script"}).([]any); len(got) != 0 {
		t.Errorf("categories are scoped, script has: %v", got)
	}
	zone := w.ok(map[string]any{"id": 12, "type": "zone/create", "name": "RT School", "latitude": 52.37, "longitude": 4.89}).(map[string]any)
	if zone["id"] != "rt_school" || zone["radius"] != 100.0 || zone["passive"] != false {
		t.Fatalf("created zone: %v", zone)
	}
	zone = w.ok(map[string]any{"id": 13, "type": "zone/update", "zone_id": "rt_school", "radius": 250}).(map[string]any)
	if zone["radius"] != 250.0 || zone["latitude"] != 52.37 { // update merges
		t.Errorf("updated zone: %v", zone)
	}
	if st := api(t, "GET", "/api/states/zone.rt_school", "").json(t).(map[string]any); st["attributes"].(map[string]any)["radius"] != 250.0 {
		t.Errorf("zone entity: %v", st)
	}
	w.ok(map[string]any{"id": 14, "type": "zone/delete", "zone_id": "rt_school"})
	if r := api(t, "GET", "/api/states/zone.rt_school", ""); r.status != 404 {
		t.Errorf("deleted zone's state still there: %d", r.status)
	}

	cases := []struct {
		name string
		msg  map[string]any
		code string
		text string
	}{
		{"floor name in use", map[string]any{"type": "config/floor_registry/create", "name": "ground floor"}, "invalid_info", "The name ground floor (groundfloor) is already in use"},
		{"floor delete unknown", map[string]any{"type": "config/floor_registry/delete", "floor_id": "nope"}, "invalid_info", "Floor ID doesn't exist"},
		{"floor update unknown", map[string]any{"type": "config/floor_registry/update", "floor_id": "nope", "name": "x"}, "unknown_error", "Unknown error"},
		{"label bad colour", map[string]any{"type": "config/label_registry/create", "name": "x", "color": "mauve"}, "invalid_format", "data['color']"},
		{"label delete unknown", map[string]any{"type": "config/label_registry/delete", "label_id": "nope"}, "invalid_info", "Label ID doesn't exist"},
		{"category without scope", map[string]any{"type": "config/category_registry/create", "name": "x"}, "invalid_format", "required key not provided @ data['scope']"},
		{"category delete unknown", map[string]any{"type": "config/category_registry/delete", "scope": "automation", "category_id": "nope"}, "invalid_info", "Category ID doesn't exist"},
		{"zone without latitude", map[string]any{"type": "zone/create", "name": "x", "longitude": 4.0}, "invalid_format", "required key not provided @ data['latitude']"},
		{"zone bad latitude", map[string]any{"type": "zone/create", "name": "x", "latitude": 95, "longitude": 4.0}, "invalid_format", "invalid latitude"},
		{"zone update unknown", map[string]any{"type": "zone/update", "zone_id": "nope", "radius": 5}, "not_found", "Unable to find zone_id nope"},
		{"entity not found", map[string]any{"type": "config/entity_registry/update", "entity_id": "light.nope", "name": "x"}, "not_found", "Entity not found"},
		{"rename taken", map[string]any{"type": "config/entity_registry/update", "entity_id": "light.kitchen_ceiling", "new_entity_id": "light.kitchen_island"}, "invalid_info", "Entity with this ID is already registered"},
		{"rename other domain", map[string]any{"type": "config/entity_registry/update", "entity_id": "light.kitchen_ceiling", "new_entity_id": "switch.rt_x"}, "invalid_info", "New entity ID should be same domain"},
		{"disabled_by integration", map[string]any{"type": "config/entity_registry/update", "entity_id": "light.kitchen_ceiling", "disabled_by": "integration"}, "invalid_format", "data['disabled_by']"},
		{"options without domain", map[string]any{"type": "config/entity_registry/update", "entity_id": "light.kitchen_ceiling", "options": map[string]any{}}, "invalid_format", "entity_option"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.msg["id"] = 100 + i
			m, _ := w.cmd(c.msg)
			if errCode(m) != c.code || !strings.Contains(errMsg(m), c.text) {
				t.Errorf("got %v, want %s containing %q", m, c.code, c.text)
			}
		})
	}
}

// An entity's registry update reaches its state: a rename moves it, a show-as class shows.
func TestWSEntityRegistryUpdateFollows(t *testing.T) {
	w := dialAuthed(t, home.Token())
	res := w.ok(map[string]any{"id": 1, "type": "config/entity_registry/update", "entity_id": "sensor.kitchen_humidity",
		"new_entity_id": "sensor.rt_garden_humidity", "device_class": "moisture", "aliases": []any{"garden damp", " "}}).(map[string]any)
	entry := res["entity_entry"].(map[string]any)
	if entry["entity_id"] != "sensor.rt_garden_humidity" || entry["device_class"] != "moisture" || len(entry["aliases"].([]any)) != 1 {
		t.Fatalf("updated entry: %v", entry)
	}
	if r := api(t, "GET", "/api/states/sensor.kitchen_humidity", ""); r.status != 404 {
		t.Errorf("old entity id still has a state: %d", r.status)
	}
	st := api(t, "GET", "/api/states/sensor.rt_garden_humidity", "").json(t).(map[string]any)
	if st["attributes"].(map[string]any)["device_class"] != "moisture" {
		t.Errorf("renamed state: %v", st)
	}
	w.ok(map[string]any{"id": 2, "type": "config/entity_registry/update", "entity_id": "sensor.rt_garden_humidity", "new_entity_id": "sensor.kitchen_humidity", "device_class": nil})
}

// Disabling a device disables its entities; enabling it gives back the ones it disabled.
func TestWSDeviceDisableFollows(t *testing.T) {
	w := dialAuthed(t, home.Token())
	e := w.ok(map[string]any{"id": 1, "type": "config/entity_registry/get", "entity_id": "sensor.garden_illuminance"}).(map[string]any)
	dev := e["device_id"].(string)
	if m, _ := w.cmd(map[string]any{"id": 2, "type": "config/device_registry/update", "device_id": dev, "disabled_by": "integration"}); errCode(m) != "invalid_format" {
		t.Errorf("disabled_by integration: %v", m)
	}
	if m, _ := w.cmd(map[string]any{"id": 3, "type": "config/device_registry/update", "device_id": "nope", "name_by_user": "x"}); errCode(m) != "unknown_error" {
		t.Errorf("unknown device: %v", m)
	}
	w.ok(map[string]any{"id": 4, "type": "config/device_registry/update", "device_id": dev, "disabled_by": "user"})
	e = w.ok(map[string]any{"id": 5, "type": "config/entity_registry/get", "entity_id": "sensor.garden_illuminance"}).(map[string]any)
	if e["disabled_by"] != "device" {
		t.Errorf("entity of a disabled device: %v", e["disabled_by"])
	}
	if m, _ := w.cmd(map[string]any{"id": 6, "type": "config/entity_registry/update", "entity_id": "sensor.garden_illuminance", "disabled_by": nil}); errCode(m) != "invalid_info" || !strings.Contains(errMsg(m), "Device is disabled") {
		t.Errorf("enabling an entity of a disabled device: %v", m)
	}
	w.ok(map[string]any{"id": 7, "type": "config/device_registry/update", "device_id": dev, "disabled_by": nil})
	e = w.ok(map[string]any{"id": 8, "type": "config/entity_registry/get", "entity_id": "sensor.garden_illuminance"}).(map[string]any)
	if e["disabled_by"] != nil {
		t.Errorf("entity after the device is enabled: %v", e["disabled_by"])
	}
}
