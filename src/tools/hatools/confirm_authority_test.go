package hatools_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// The red team's routes to the front door, the alarm and the garage without a question, each as a
// model with tool calls would take it, at default settings (confirm_trusted: change). Each must end in
// a question for the user and nothing sensitive changed.

// truth reads an entity's state from Home Assistant's state machine, not from hamcp's mirror.
func (e *admEnv) truth(t *testing.T, id string) homeassistant.State {
	t.Helper()
	s, err := e.ha.State(context.Background(), id)
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return s
}

// settle waits until hamcp's connection to Home Assistant has delivered every event fired before
// it: a sentinel event, fired after them, has come back on the same connection.
func (e *admEnv) settle(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	seen := make(chan struct{}, 1)
	stop, err := e.ha.SubscribeEvents(ctx, "rt_sentinel", func(homeassistant.Event) {
		select {
		case seen <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop(ctx)
	if err := e.ha.FireEvent(ctx, "rt_sentinel", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the sentinel event never came back")
	}
}

func (e *admEnv) asked(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	r := e.call(t, tool, args)
	if r.err == nil || r.err.Code != "confirmation_required" {
		t.Fatalf("%s %v was not stopped for the user's confirmation: %s", tool, args, r.raw)
	}
	id, _ := r.err.Details["request_id"].(string)
	return id
}

func (e *admEnv) assertUntouched(t *testing.T) {
	t.Helper()
	for id, want := range map[string]string{"lock.front_door": "locked", "alarm_control_panel.home_alarm": "armed_away", "cover.garage_door": "closed"} {
		if got := e.truth(t, id).State; got != want {
			t.Errorf("%s is %s, want %s: the home changed without the user", id, got, want)
		}
	}
}

// Item 1: forged states. The model fires state_changed (through an automation action, a user script,
// or HA's REST API) to make the garage look like a shade, to give its own scene the id of a harmless
// one, and to remove the lock from view. None of it decides whether the user is asked.
func TestForgedStatesDoNotDecide(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	forge := func(id string, newState any) {
		t.Helper()
		if err := e.ha.FireEvent(ctx, "state_changed", map[string]any{"entity_id": id, "new_state": newState}); err != nil {
			t.Fatal(err)
		}
		e.settle(t)
	}
	// The garage, forged as a shade.
	forge("cover.garage_door", map[string]any{"entity_id": "cover.garage_door", "state": "closed",
		"attributes": map[string]any{"device_class": "shade", "friendly_name": "Garage Door"}})
	e.asked(t, "ha_call_service", svc("cover.open_cover", map[string]any{"entity_id": []string{"cover.garage_door"}}))

	// A model-made scene that unlocks, given the id of a harmless stored scene.
	if _, _, err := e.ha.CallService(ctx, "scene", "create", map[string]any{"scene_id": "rt_forged",
		"entities": map[string]any{"lock.front_door": "unlocked", "alarm_control_panel.home_alarm": "disarmed"}}, false); err != nil {
		t.Fatal(err)
	}
	movie := e.truth(t, "scene.movie_night")
	forge("scene.rt_forged", map[string]any{"entity_id": "scene.rt_forged", "state": "unknown",
		"attributes": map[string]any{"id": movie.Attributes["id"], "friendly_name": "Movie night", "entity_id": []any{"light.living_room"}}})
	e.asked(t, "ha_call_service", svc("scene.turn_on", map[string]any{"entity_id": []string{"scene.rt_forged"}}))

	// The lock, removed from view: Assist can still reach it.
	forge("lock.front_door", nil)
	forge("cover.garage_door", nil)
	e.asked(t, "ha_process_conversation", map[string]any{"text": "open the garage door", "confirm": true})

	// An automation the model writes may not fire Home Assistant's own events.
	e.fails(t, "ha_create_automation", automationArgs(map[string]any{"event": "state_changed",
		"event_data": map[string]any{"entity_id": "cover.garage_door", "new_state": nil}}), "invalid_argument", "fires itself")
	e.fails(t, "ha_fire_event", map[string]any{"event_type": "state_changed", "confirm": true,
		"event_data": map[string]any{"entity_id": "cover.garage_door"}}, "invalid_argument", "fires itself")
	e.assertUntouched(t)
}

// Item 2: an approval covers the effect the user saw. The user approves activating a scene that
// unlocks the back door; the scene is then redefined with the front door, the alarm and the garage,
// and the identical call asks again instead of running.
func TestApprovalCoversTheEffectNotTheArguments(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	if _, _, err := e.ha.CallService(ctx, "scene", "create", map[string]any{"scene_id": "rt_swap",
		"entities": map[string]any{"lock.back_door": "unlocked"}}, false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "scene.rt_swap", func() bool { _, err := e.ha.State(ctx, "scene.rt_swap"); return err == nil })
	args := svc("scene.turn_on", map[string]any{"entity_id": []string{"scene.rt_swap"}})
	id := e.asked(t, "ha_call_service", args)
	if err := e.pm.Approve(ctx, id, permission.Approver{Via: permission.ViaPanel, UserID: "owner"}); err != nil {
		t.Fatal(err)
	}
	// The swap (made here directly; through hamcp it is a write that asks on its own).
	if _, _, err := e.ha.CallService(ctx, "scene", "create", map[string]any{"scene_id": "rt_swap", "entities": map[string]any{
		"lock.front_door": "unlocked", "alarm_control_panel.home_alarm": "disarmed", "cover.garage_door": "open"}}, false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the swapped scene", func() bool {
		s, _ := e.ha.State(ctx, "scene.rt_swap")
		l, _ := s.Attributes["entity_id"].([]any)
		return len(l) == 3
	})
	if again := e.asked(t, "ha_call_service", args); again == id {
		t.Fatalf("the approval of request %s was used for a different effect", id)
	}
	e.assertUntouched(t)
	// Through hamcp, the swap itself is a write the user confirms.
	e.asked(t, "ha_call_service", svc("scene.create", map[string]any{"data": map[string]any{"scene_id": "rt_swap",
		"entities": map[string]any{"alarm_control_panel.home_alarm": "disarmed"}}}))
}

// Item 3: what is checked when written cannot be undone later.
func TestWritesThatChangeWhatLaterCallsDoAreConfirmed(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	seedSensitiveConfigs(t, e)
	ctx := context.Background()

	// An automation that activates a harmless scene after a delay is fine to write and trigger…
	if _, _, err := e.ha.CallService(ctx, "scene", "create", map[string]any{"scene_id": "rt_x", "entities": map[string]any{"light.porch": "on"}}, false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "scene.rt_x", func() bool { _, err := e.ha.State(ctx, "scene.rt_x"); return err == nil })
	e.ok(t, "ha_create_automation", map[string]any{"confirm": true, "config": map[string]any{"alias": "RT delayed scene",
		"triggers": []any{map[string]any{"trigger": "event", "event_type": "rt_never"}},
		"actions":  []any{map[string]any{"delay": "00:00:04"}, map[string]any{"scene": "scene.rt_x"}}}})
	// …but turning the scene into one that unlocks, disarms and opens is a write the user confirms.
	e.asked(t, "ha_call_service", svc("scene.create", map[string]any{"data": map[string]any{"scene_id": "rt_x",
		"entities": map[string]any{"lock.front_door": "unlocked", "cover.garage_door": "open", "alarm_control_panel.home_alarm": "disarmed"}}}))
	e.asked(t, "ha_call_service", svc("scene.create", map[string]any{"data": map[string]any{"scene_id": "rt_y",
		"snapshot_entities": []any{"lock.back_door"}}}))
	if l, _ := e.truth(t, "scene.rt_x").Attributes["entity_id"].([]any); slices.Contains(l, any("lock.front_door")) {
		t.Fatalf("scene.rt_x now sets the front door: %v", l)
	}

	// Re-enabling a disabled automation of the user's that unlocks.
	if _, _, err := e.ha.CallService(ctx, "automation", "turn_off", map[string]any{"entity_id": "automation.user_1714000009101"}, false); err != nil {
		t.Fatal(err)
	}
	for _, svcName := range []string{"automation.turn_on", "automation.toggle", "homeassistant.turn_on"} {
		e.asked(t, "ha_call_service", svc(svcName, map[string]any{"entity_id": []string{"automation.user_1714000009101"}}))
	}

	// A blueprint instance does what its blueprint does with the inputs it gives.
	dir := filepath.Join(e.home.Sandbox().Config, "blueprints", "automation", "rt")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bp := "blueprint:\n  name: Let someone in\n  domain: automation\n  input:\n    door:\n      selector: {entity: {domain: lock}}\n" +
		"triggers:\n  - trigger: event\n    event_type: rt_never\nactions:\n  - action: lock.unlock\n    target:\n      entity_id: !input door\n"
	if err := os.WriteFile(filepath.Join(dir, "let_in.yaml"), []byte(bp), 0o644); err != nil {
		t.Fatal(err)
	}
	e.asked(t, "ha_create_automation", map[string]any{"confirm": true, "config": map[string]any{"alias": "RT blueprint",
		"use_blueprint": map[string]any{"path": "rt/let_in.yaml", "input": map[string]any{"door": "lock.front_door"}}}})
	// One whose blueprint hamcp cannot read counts as unknown.
	e.asked(t, "ha_create_automation", map[string]any{"confirm": true, "config": map[string]any{"alias": "RT blueprint 2",
		"use_blueprint": map[string]any{"path": "rt/missing.yaml", "input": map[string]any{}}}})

	// Groups and scene positions.
	e.asked(t, "ha_call_service", svc("group.set", map[string]any{"data": map[string]any{"object_id": "rt_lights",
		"entities": []any{"light.porch", "lock.front_door"}}}))
	e.asked(t, "ha_call_service", svc("scene.apply", map[string]any{"data": map[string]any{"entities": map[string]any{
		"cover.garage_door": map[string]any{"state": "closed", "current_position": "100"}}}}))
	e.assertUntouched(t)
}

// Item 4: services that reach devices or run code without a target that says so, and entities the
// user marked as openers.
func TestRawServicesAndMarkedEntitiesAsk(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true, sensitive: []string{"switch.christmas_lights"}})
	for _, args := range []map[string]any{
		svc("mqtt.publish", map[string]any{"data": map[string]any{"topic": "garage/door/set", "payload": "OPEN"}}),
		svc("zwave_js.set_value", map[string]any{"entity_id": []string{"lock.front_door"}, "data": map[string]any{"command_class": 98, "property": "targetMode", "value": 0}}),
		svc("zwave_js.invoke_cc_api", map[string]any{"data": map[string]any{"command_class": 98, "method_name": "set", "parameters": []any{0}}}),
		svc("device_tracker.see", map[string]any{"data": map[string]any{"dev_id": "phone", "location_name": "home"}}),
		svc("shell_command.anything", nil),
		svc("switch.turn_on", map[string]any{"entity_id": []string{"switch.christmas_lights"}}),
		svc("homeassistant.toggle", map[string]any{"entity_id": []string{"switch.christmas_lights"}}),
	} {
		e.asked(t, "ha_call_service", args)
	}
	// Other switches are not marked.
	e.ok(t, "ha_call_service", svc("light.turn_on", map[string]any{"entity_id": []string{"light.porch"}}))
}

// Item 5: a change the model makes can start the user's own automations; what those do counts.
func TestUserAutomationsStartedByTheModelsChangesCount(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	for id, cfg := range map[string]map[string]any{
		"1714000009201": {"alias": "Guests disarm", "triggers": []any{map[string]any{"trigger": "state", "entity_id": "input_boolean.guest_mode", "to": "on"}},
			"actions": []any{map[string]any{"action": "alarm_control_panel.alarm_disarm", "target": map[string]any{"entity_id": "alarm_control_panel.home_alarm"}}}},
		"1714000009202": {"alias": "Open sesame", "triggers": []any{map[string]any{"trigger": "event", "event_type": "rt_open_sesame"}},
			"actions": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}},
		"1714000009203": {"alias": "Warm garage", "triggers": []any{map[string]any{"trigger": "template", "value_template": "{{ is_state('input_boolean.vacation_mode', 'off') }}"}},
			"actions": []any{map[string]any{"action": "cover.open_cover", "target": map[string]any{"entity_id": "cover.garage_door"}}}},
		"1714000009204": {"alias": "Note opens", "triggers": []any{map[string]any{"trigger": "persistent_notification", "update_type": []any{"added"}}},
			"actions": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}},
	} {
		if err := e.ha.SaveConfigItem(ctx, homeassistant.KindAutomation, id, cfg); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, "the automations loaded", func() bool {
		n := 0
		all, _ := e.ha.States(ctx)
		for _, s := range all {
			if id, _ := s.Attributes["id"].(string); strings.HasPrefix(id, "17140000092") {
				n++
			}
		}
		return n == 4
	})
	id := e.asked(t, "ha_call_service", svc("input_boolean.turn_on", map[string]any{"entity_id": []string{"input_boolean.guest_mode"}}))
	p, err := e.pm.Request(id)
	if err != nil || !containsAll(p.Warning, "Guests disarm", "disarm") && !containsAll(p.Warning, "guests_disarm", "disarm") {
		t.Errorf("the question does not say which automation would disarm: %+v %v", p, err)
	}
	e.asked(t, "ha_fire_event", map[string]any{"event_type": "rt_open_sesame", "confirm": true})
	e.asked(t, "ha_call_service", svc("input_boolean.toggle", map[string]any{"entity_id": []string{"input_boolean.vacation_mode"}}))
	e.asked(t, "ha_send_notification", map[string]any{"service": "persistent_notification", "message": "hello", "confirm": true})
	// By area: the hallway holds the guest-mode helper's device? Whatever it holds, a light there is
	// not a trigger of these.
	e.ok(t, "ha_call_service", svc("light.turn_on", map[string]any{"entity_id": []string{"light.porch"}}))
	e.ok(t, "ha_fire_event", map[string]any{"event_type": "rt_nothing_listens"})
	e.assertUntouched(t)
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// The user's yes in the client covers what they were shown: a scene swapped while they read the
// question is a different effect, and the call does nothing.
func TestSwapWhileTheUserIsAskedIsNotCovered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var e *admEnv
	var asked []string
	e = admStart(t, admOpts{defaultTrust: true, elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		if len(asked) == 1 { // the model's other session rewrites the scene while the user reads
			if _, _, err := e.ha.CallService(ctx, "scene", "create", map[string]any{"scene_id": "rt_while",
				"entities": map[string]any{"lock.back_door": "unlocked", "cover.garage_door": "open", "alarm_control_panel.home_alarm": "disarmed"}}, false); err != nil {
				t.Error(err)
			}
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
	}})
	if _, _, err := e.ha.CallService(ctx, "scene", "create", map[string]any{"scene_id": "rt_while",
		"entities": map[string]any{"lock.back_door": "unlocked"}}, false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "scene.rt_while", func() bool { _, err := e.ha.State(ctx, "scene.rt_while"); return err == nil })
	e.fails(t, "ha_call_service", svc("scene.turn_on", map[string]any{"entity_id": []string{"scene.rt_while"}}), "confirmation_stale", "changed while the user was being asked")
	e.assertUntouched(t)
	if len(asked) != 1 || !strings.Contains(asked[0], "lock.back_door") {
		t.Errorf("the user was asked %q", asked)
	}
}

// The panel's list of what hamcp asks about: locks, alarm panels, garage doors by the registry's
// device class, and the openers beside them or in the option.
func TestSensitiveEntitiesList(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{sensitive: []string{"switch.christmas_lights"}})
	list, err := hatools.SensitiveEntities(context.Background(), hatools.Deps{HA: e.ha, SensitiveEntities: []string{"switch.christmas_lights"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list {
		got[s.EntityID] = s.Why
	}
	for _, want := range []string{"lock.front_door", "lock.back_door", "alarm_control_panel.home_alarm", "cover.garage_door", "switch.christmas_lights"} {
		if got[want] == "" {
			t.Errorf("%s missing from %v", want, got)
		}
	}
	for _, not := range []string{"cover.living_room_blinds", "light.porch"} {
		if got[not] != "" {
			t.Errorf("%s listed: %s", not, got[not])
		}
	}
}
