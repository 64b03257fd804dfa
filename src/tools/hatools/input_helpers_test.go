package hatools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// The definitions are paid for in every conversation.
func TestHelperAndCalendarEventToolSizes(t *testing.T) {
	for _, tool := range hatools.Tools(hatools.Deps{}) {
		name := tool.Definition().Name
		if name != "ha_manage_helpers" && name != "ha_manage_calendar_events" {
			if name == "ha_list_input_helpers" {
				t.Errorf("ha_list_input_helpers is replaced by ha_manage_helpers action list")
			}
			continue
		}
		b, _ := json.Marshal(tool.Definition())
		if len(b) > 1400 {
			t.Errorf("%s definition is %d bytes, over 1400", name, len(b))
		}
	}
}

func TestManageHelpers(t *testing.T) {
	e := admStart(t, admOpts{})
	ctx := context.Background()

	r := e.ok(t, "ha_manage_helpers", map[string]any{"action": "list", "search": "night"})
	items := admItems(t, r["helpers"].(map[string]any), "items")
	if len(items) != 1 || items[0]["id"] != "night_temperature" || items[0]["settings"].(map[string]any)["step"] != 0.5 ||
		items[0]["settings"].(map[string]any)["unit_of_measurement"] != "°C" || items[0]["state"] != "17.5" {
		t.Fatalf("night temperature helper: %v", items)
	}

	// A counter posted over REST is listed with its attributes, and said to be not editable here.
	if _, _, err := e.ha.PostState(ctx, "counter.coffee_cups", homeassistant.StateUpdate{State: "3",
		Attributes: map[string]any{"minimum": 0, "maximum": 20, "step": 1, "initial": 0, "friendly_name": "Coffee cups"}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the posted counter in the mirror", func() bool {
		r = e.ok(t, "ha_manage_helpers", map[string]any{"action": "list", "domain": "counter"})
		return r["helpers"].(map[string]any)["total"] == 1.0
	})
	items = admItems(t, r["helpers"].(map[string]any), "items")
	if len(items) != 1 || items[0]["state"] != "3" || items[0]["id"] != nil || items[0]["settings"].(map[string]any)["maximum"] != 20.0 || r["note"] == nil {
		t.Fatalf("posted counter: %v", r)
	}

	created := e.ok(t, "ha_manage_helpers", map[string]any{"action": "create", "domain": "input_number",
		"config": map[string]any{"name": "Pool target", "min": 20, "max": 32, "step": 0.5, "unit_of_measurement": "°C"}})
	h := created["helper"].(map[string]any)
	if h["entity_id"] != "input_number.pool_target" || h["id"] != "pool_target" || h["state"] != "20.0" || created["version"] == nil {
		t.Fatalf("created: %v", created)
	}
	updated := e.ok(t, "ha_manage_helpers", map[string]any{"action": "update", "helper_id": "input_number.pool_target", "config": map[string]any{"max": 40, "unit_of_measurement": nil}, "confirm": true})
	s := updated["helper"].(map[string]any)["settings"].(map[string]any)
	if s["max"] != 40.0 || s["min"] != 20.0 || s["step"] != 0.5 || s["unit_of_measurement"] != nil || updated["version"] == nil {
		t.Fatalf("merged update: %v", updated)
	}
	hist := e.ok(t, "ha_config_history", map[string]any{"action": "list", "item": "helper:input_number.pool_target"})
	if vs := admItems(t, hist["versions"].(map[string]any), "items"); len(vs) != 2 {
		t.Errorf("versions kept: %v", hist)
	}
	deleted := e.ok(t, "ha_manage_helpers", map[string]any{"action": "delete", "helper_id": "input_number.pool_target", "confirm": true})
	if deleted["deleted"] != true || deleted["helper"].(map[string]any)["settings"].(map[string]any)["max"] != 40.0 {
		t.Fatalf("delete: %v", deleted)
	}
	testkit.Eventually(t, "the deleted helper gone from the list", func() bool {
		r = e.ok(t, "ha_manage_helpers", map[string]any{"action": "list", "search": "pool"})
		return r["helpers"].(map[string]any)["total"] == 0.0
	})

	created = e.ok(t, "ha_manage_helpers", map[string]any{"action": "create", "domain": "schedule",
		"config": map[string]any{"name": "Heating", "monday": []any{map[string]any{"from": "06:30", "to": "22:00"}}}})
	if h := created["helper"].(map[string]any); h["entity_id"] != "schedule.heating" || h["settings"].(map[string]any)["monday"] == nil {
		t.Errorf("schedule: %v", created)
	}

	for _, c := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"bad action", map[string]any{"action": "rename"}, "invalid_argument", "action"},
		{"bad domain", map[string]any{"action": "list", "domain": "input_magic"}, "invalid_argument", "domain"},
		{"create without domain", map[string]any{"action": "create", "config": map[string]any{"name": "x"}}, "invalid_argument", "domain"},
		{"create without name", map[string]any{"action": "create", "domain": "input_boolean", "config": map[string]any{}}, "invalid_argument", "config.name"},
		{"min above max", map[string]any{"action": "create", "domain": "input_number", "config": map[string]any{"name": "x", "min": 9, "max": 3}}, "invalid_argument", "is not greater than"},
		{"bad mode names the field", map[string]any{"action": "create", "domain": "input_number", "config": map[string]any{"name": "x", "min": 1, "max": 3, "mode": "dial"}}, "invalid_argument", "config.mode"},
		{"duplicate options", map[string]any{"action": "create", "domain": "input_select", "config": map[string]any{"name": "x", "options": []any{"a", "a"}}}, "invalid_argument", "Duplicate options"},
		{"update without id", map[string]any{"action": "update", "config": map[string]any{"max": 3}, "confirm": true}, "invalid_argument", "helper_id"},
		{"update without config", map[string]any{"action": "update", "helper_id": "input_boolean.guest_mode", "confirm": true}, "invalid_argument", "config"},
		{"update unknown", map[string]any{"action": "update", "helper_id": "input_boolean.nope", "config": map[string]any{"icon": "mdi:x"}, "confirm": true}, "not_found", "input_boolean.nope"},
		{"not a helper", map[string]any{"action": "delete", "helper_id": "light.kitchen_ceiling", "confirm": true}, "invalid_argument", "helper_id"},
		{"posted counter is not editable", map[string]any{"action": "update", "helper_id": "counter.coffee_cups", "config": map[string]any{"step": 2}, "confirm": true}, "not_editable", "YAML"},
		{"delete unconfirmed", map[string]any{"action": "delete", "helper_id": "input_boolean.guest_mode"}, "confirmation_required", "guest_mode"},
	} {
		t.Run(c.name, func(t *testing.T) { e.fails(t, "ha_manage_helpers", c.args, c.code, c.want) })
	}
}

// A helper an automation of the user's triggers on is as sensitive as what that automation does.
func TestManageHelpersCountsTheAutomationsItStarts(t *testing.T) {
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	if err := e.ha.SaveConfigItem(ctx, homeassistant.KindAutomation, "guest_unlock", map[string]any{"alias": "Let guests in",
		"triggers": []any{map[string]any{"trigger": "state", "entity_id": "input_boolean.guest_mode", "to": "on"}},
		"actions":  []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}}); err != nil {
		t.Fatal(err)
	}
	var last *toolkit.Error
	for range 100 { // the automation's entity appears when Home Assistant has reloaded
		r := e.call(t, "ha_manage_helpers", map[string]any{"action": "update", "helper_id": "input_boolean.guest_mode", "config": map[string]any{"initial": true}, "confirm": true})
		if last = r.err; last != nil && last.Code == "confirmation_required" {
			break
		}
	}
	if last == nil || last.Code != "confirmation_required" || !strings.Contains(last.Message+last.Hint, "lock.front_door") {
		t.Fatalf("update of a helper that starts an unlock: %+v", last)
	}
	// A helper nothing listens to only needs the change the user trusts by default.
	e.ok(t, "ha_manage_helpers", map[string]any{"action": "update", "helper_id": "input_boolean.vacation_mode", "config": map[string]any{"icon": "mdi:beach"}, "confirm": true})
}

// A deleted helper the user had renamed comes back under its own entity id, which the automations
// and dashboards that used it name; Home Assistant would make its id from the new name.
func TestDeletedHelperRestoresUnderItsID(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	ctx := context.Background()
	e.ok(t, "ha_manage_helpers", map[string]any{"action": "create", "domain": "input_boolean", "config": map[string]any{"name": "Party mode"}})
	e.ok(t, "ha_manage_helpers", map[string]any{"action": "update", "helper_id": "input_boolean.party_mode", "config": map[string]any{"name": "Celebration"}, "confirm": true})
	e.ok(t, "ha_manage_helpers", map[string]any{"action": "delete", "helper_id": "input_boolean.party_mode", "confirm": true})
	testkit.Eventually(t, "the helper's state gone", func() bool { _, err := e.ha.State(ctx, "input_boolean.party_mode"); return err != nil })
	hist := admItems(t, e.ok(t, "ha_config_history", map[string]any{"action": "list", "item": "helper:input_boolean.party_mode"})["versions"].(map[string]any), "items")
	r := e.ok(t, "ha_config_history", map[string]any{"action": "restore", "item": "helper:input_boolean.party_mode", "version": hist[0]["version"], "confirm": true})
	testkit.Eventually(t, "the helper back under its own id", func() bool {
		s, err := e.ha.State(ctx, "input_boolean.party_mode")
		return err == nil && s.FriendlyName() == "Celebration"
	})
	if _, err := e.ha.State(ctx, "input_boolean.celebration"); err == nil {
		t.Fatalf("the restore left a second entity named after the new name: %v", r)
	}
	// The restore is undone in turn: the helper is deleted again.
	undo := r["undo"].(map[string]any)
	e.ok(t, "ha_config_history", map[string]any{"action": "restore", "item": undo["item"], "version": undo["version"], "confirm": true})
	testkit.Eventually(t, "deleted again", func() bool { _, err := e.ha.State(ctx, "input_boolean.party_mode"); return err != nil })
}
