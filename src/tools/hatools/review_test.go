package hatools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/homeassistant"
)

// Security review of issue 21's tools: attacks a model can make with tool calls alone, with the
// user's default trust (the model's confirm stands only for `change`).

// An area's labels and floor decide what label and floor targets reach. ha_manage_registry asks
// before relabelling an area that holds a garage door; restoring an earlier version of the area
// writes the same labels and must ask too. The model stages the version on a harmless area (labels
// added, kept, then removed), and restores it once the garage door is in that area.
func TestReviewAreaRestoreRelabelsGuardedArea(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	e.ok(t, "ha_manage_registry", map[string]any{"action": "update", "kind": "area", "id": "office", "fields": map[string]any{"labels": []any{"outdoor"}}})
	staged := e.ok(t, "ha_manage_registry", map[string]any{"action": "update", "kind": "area", "id": "office", "fields": map[string]any{"labels": []any{}}})
	v, _ := staged["version"].(float64)
	if v == 0 {
		t.Fatalf("no version kept: %v", staged)
	}
	// Later the garage door ends up in the office (the user moves it, or says yes to a move that
	// reaches nothing by label).
	if _, err := e.ha.UpdateEntityRegistry(ctx, "cover.garage_door", map[string]any{"area_id": "office"}); err != nil {
		t.Fatal(err)
	}
	// The direct edit asks ...
	e.asked(t, "ha_manage_registry", map[string]any{"action": "update", "kind": "area", "id": "office", "fields": map[string]any{"labels": []any{"outdoor"}}, "confirm": true})
	// ... and so must the restore that writes the same labels.
	r := e.call(t, "ha_config_history", map[string]any{"action": "restore", "item": "area:office", "version": v, "confirm": true})
	if r.err == nil || r.err.Code != "confirmation_required" || !strings.Contains(r.raw, "cover.garage_door") {
		t.Fatalf("restoring the office's labels onto the garage door was not asked: %s", r.raw)
	}
}

// Renaming an entity's id makes a state appear under the new id (and vanish under the old one),
// which starts the user's automations triggered by either. The model takes a helper the user's
// automation triggers on out of the way, then gives its own helper, already on, that id.
func TestReviewEntityRenameStartsAutomations(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	if err := e.ha.SaveConfigItem(ctx, homeassistant.KindAutomation, "rv_guest_unlock", map[string]any{"alias": "RV let guests in",
		"triggers": []any{map[string]any{"trigger": "state", "entity_id": "input_boolean.guest_mode", "to": "on"}},
		"actions":  []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the automation", func() bool {
		_, err := e.ha.State(ctx, "automation.rv_let_guests_in")
		return err == nil
	})
	e.ok(t, "ha_manage_helpers", map[string]any{"action": "create", "domain": "input_boolean", "config": map[string]any{"name": "RV decoy", "initial": true}})
	testkit.Eventually(t, "the decoy on", func() bool {
		s, err := e.ha.State(ctx, "input_boolean.rv_decoy")
		return err == nil && s.State == "on"
	})
	// Taking the trigger's entity away is asked (its state vanishes under the trigger's id) ...
	e.asked(t, "ha_update_entity", map[string]any{"entity_id": "input_boolean.guest_mode", "new_entity_id": "input_boolean.rv_guest_mode_old", "confirm": true})
	// ... so here the id is free another way (the user renamed it; or a trigger left dangling).
	if _, err := e.ha.UpdateEntityRegistry(ctx, "input_boolean.guest_mode", map[string]any{"new_entity_id": "input_boolean.rv_guest_mode_old"}); err != nil {
		t.Fatal(err)
	}
	r := e.call(t, "ha_update_entity", map[string]any{"entity_id": "input_boolean.rv_decoy", "new_entity_id": "input_boolean.guest_mode", "confirm": true})
	if r.err == nil || r.err.Code != "confirmation_required" || !strings.Contains(r.raw, "lock.front_door") {
		t.Errorf("renaming an entity onto an id whose automation unlocks was not asked: %s", r.raw)
	}
	e.assertUntouched(t)
}

// A dashboard card with an entity and no tap_action runs the frontend's default action: a button
// card toggles a switch, light, group, fan or input_boolean. A button labelled "Lights" on a switch
// the user marked as an opener opens it, as an explicit toggle action would (which is asked).
func TestReviewDashboardDefaultActions(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true, sensitive: []string{"switch.christmas_lights"}})
	const tool = "ha_manage_dashboards"
	explicit := map[string]any{"type": "button", "name": "Lights", "entity": "switch.christmas_lights", "tap_action": map[string]any{"action": "toggle"}}
	e.asked(t, tool, dash("action", "create", "url_path", "dashboard-rv1", "title", "RV", "config", dash("views", []any{dash("cards", []any{explicit})}), "confirm", true))
	for i, card := range []map[string]any{
		{"type": "button", "name": "Lights", "entity": "switch.christmas_lights"},
		{"type": "vertical-stack", "cards": []any{map[string]any{"type": "tile", "name": "Lights", "entity": "switch.christmas_lights"}}},
		{"type": "entities", "entities": []any{"switch.christmas_lights"}},
	} {
		url := "dashboard-rv" + string(rune('2'+i))
		e.asked(t, tool, dash("action", "create", "url_path", url, "title", "RV", "config", dash("views", []any{dash("cards", []any{card})}), "confirm", true))
	}
	// A card whose default is more-info, or a lamp nothing listens to, needs nothing.
	e.ok(t, tool, dash("action", "create", "url_path", "dashboard-rv9", "title", "RV", "config",
		dash("views", []any{dash("cards", []any{map[string]any{"type": "button", "entity": "lock.front_door"}, map[string]any{"type": "tile", "entity": "light.living_room_lamp"}})})))
}

// Config and options flows make entities too: a switch_as_x light around a switch the user marked as
// an opener, or a template switch whose turn_on unlocks, is then run by a call hamcp sees as
// harmless. The step that submits such input is confirmed as writing it would be. (The simulator has
// no such flow, so a hue flow's id stands in: the confirmation is decided before Home Assistant
// sees the input.)
func TestReviewFlowStepWrapsSensitive(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true, sensitive: []string{"switch.christmas_lights"}})
	const tool = "ha_manage_integrations"
	start := func() string {
		r := e.ok(t, tool, map[string]any{"action": "flow_start", "domain": "hue"})
		f, _ := r["flow"].(map[string]any)
		id, _ := f["flow_id"].(string)
		if id == "" {
			t.Fatalf("no flow: %v", r)
		}
		return id
	}
	for _, in := range []map[string]any{
		{"entity_id": "switch.christmas_lights", "target_domain": "light"},
		{"name": "Lights", "turn_on": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}},
	} {
		e.asked(t, tool, map[string]any{"action": "flow_step", "flow_id": start(), "user_input": in, "confirm": true})
	}
	// An ordinary step is not asked.
	if r := e.call(t, tool, map[string]any{"action": "flow_step", "flow_id": start(), "user_input": map[string]any{"host": "192.168.1.20"}}); r.err != nil && r.err.Code == "confirmation_required" {
		t.Fatalf("a host was asked about: %s", r.raw)
	}
	e.assertUntouched(t)
}
