package hatools_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/permission"
)

// The user's own scripts, scenes and automations that do something sensitive: the model did not
// write them, but running them does what they do.
func seedSensitiveConfigs(t *testing.T, e *admEnv) {
	t.Helper()
	ctx := context.Background()
	for key, cfg := range map[string]map[string]any{
		"let_in":      {"alias": "Let in", "sequence": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}},
		"open_garage": {"alias": "Open garage", "sequence": []any{map[string]any{"action": "cover.open_cover", "target": map[string]any{"area_id": "garage"}}}},
		"quiet_alarm": {"alias": "Quiet alarm", "sequence": []any{map[string]any{"action": "alarm_control_panel.alarm_disarm", "target": map[string]any{"label_id": "security"}}}},
		"reboot":      {"alias": "Reboot", "sequence": []any{map[string]any{"action": "homeassistant.restart"}}},
		// One script calling another: the walk follows it.
		"welcome": {"alias": "Welcome", "sequence": []any{map[string]any{"action": "script.turn_on", "target": map[string]any{"entity_id": "script.let_in"}}}},
	} {
		if err := e.ha.SaveConfigItem(ctx, homeassistant.KindScript, key, cfg); err != nil {
			t.Fatalf("save script %s: %v", key, err)
		}
	}
	for id, cfg := range map[string]map[string]any{
		"1714000009001": {"name": "Open house", "entities": map[string]any{"lock.front_door": map[string]any{"state": "unlocked"}}},
		"1714000009002": {"name": "Garage open", "entities": map[string]any{"cover.garage_door": "open"}},
		"1714000009003": {"name": "Alarm off", "entities": map[string]any{"alarm_control_panel.home_alarm": "disarmed"}},
	} {
		if err := e.ha.SaveConfigItem(ctx, homeassistant.KindScene, id, cfg); err != nil {
			t.Fatalf("save scene %s: %v", id, err)
		}
	}
	for id, action := range map[string]map[string]any{
		"1714000009101": {"action": "lock.unlock", "target": map[string]any{"device_id": e.device(t, "Front Door Lock")}},
		"1714000009102": {"action": "cover.open_cover", "target": map[string]any{"entity_id": "cover.garage_door"}},
		"1714000009103": {"action": "alarm_control_panel.alarm_disarm", "target": map[string]any{"area_id": "hallway"}},
		"1714000009104": {"action": "homeassistant.restart"},
	} {
		cfg := map[string]any{"alias": "User " + id, "triggers": []any{map[string]any{"trigger": "event", "event_type": "never_" + id}}, "actions": []any{action}}
		if err := e.ha.SaveConfigItem(ctx, homeassistant.KindAutomation, id, cfg); err != nil {
			t.Fatalf("save automation %s: %v", id, err)
		}
	}
	// A cover group as Home Assistant shows one: its members in entity_id, no device_class of its own.
	if _, _, err := e.ha.PostState(ctx, "cover.all_garages", homeassistant.StateUpdate{State: "closed",
		Attributes: map[string]any{"entity_id": []any{"cover.garage_door"}, "friendly_name": "All garages"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"cover.all_garages", "script.let_in", "script.welcome", "script.reboot", "scene.open_house", "scene.alarm_off", "scene.garage_open", "automation.user_1714000009104"} {
		testkit.Eventually(t, id+" in the mirror", func() bool { _, ok := e.ha.Mirror().Get(id); return ok })
	}
}

// device is a device's id by name, from Home Assistant's device registry.
func (e *admEnv) device(t *testing.T, name string) string {
	t.Helper()
	var devs []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := e.ha.Call(context.Background(), "config/device_registry/list", nil, &devs); err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		if d.Name == name {
			return d.ID
		}
	}
	t.Fatalf("no device %q", name)
	return ""
}

func (e *admEnv) state(t *testing.T, id string) string {
	t.Helper()
	s, ok := e.ha.Mirror().Get(id)
	if !ok {
		t.Fatalf("no entity %s", id)
	}
	return s.State
}

func svc(name string, extra map[string]any) map[string]any {
	domain, service, _ := strings.Cut(name, ".")
	args := map[string]any{"domain": domain, "service": service, "confirm": true}
	for k, v := range extra {
		args[k] = v
	}
	return args
}

func automationArgs(action map[string]any) map[string]any {
	return map[string]any{"confirm": true, "config": map[string]any{"alias": "Helpful", "triggers": []any{map[string]any{"trigger": "time", "at": "03:00:00"}},
		"actions": []any{action}}}
}

type attack struct {
	name string
	tool string
	args map[string]any
}

// attacks are every way hamcp knows to unlock the front door, disarm the alarm, open the garage or
// restart Home Assistant, each with confirm=true as a model would send it.
func attacks(t *testing.T, e *admEnv) []attack {
	lockDev, alarmDev, garageDev := e.device(t, "Front Door Lock"), e.device(t, "Alarm Panel"), e.device(t, "Garage Door")
	call := func(name string, extra map[string]any) attack {
		return attack{fmt.Sprintf("%s %v", name, extra), "ha_call_service", svc(name, extra)}
	}
	out := []attack{
		call("lock.unlock", map[string]any{"entity_id": []string{"lock.front_door"}}),
		call("lock.unlock", map[string]any{"area_id": []string{"hallway"}}),
		call("lock.unlock", map[string]any{"device_id": []string{lockDev}}),
		call("lock.unlock", map[string]any{"label_id": []string{"security"}}),
		call("lock.unlock", map[string]any{"data": map[string]any{"entity_id": "all"}}),
		call("lock.open", map[string]any{"data": map[string]any{"target": map[string]any{"floor_id": "ground_floor"}}}),
		call("homeassistant.turn_on", map[string]any{"entity_id": []string{"lock.front_door"}}),
		call("homeassistant.turn_off", map[string]any{"data": map[string]any{"entity_id": "lock.front_door, light.porch"}}),
		call("alarm_control_panel.alarm_disarm", map[string]any{"entity_id": []string{"alarm_control_panel.home_alarm"}}),
		call("alarm_control_panel.alarm_disarm", map[string]any{"area_id": []string{"hallway"}}),
		call("alarm_control_panel.alarm_disarm", map[string]any{"device_id": []string{alarmDev}}),
		call("alarm_control_panel.alarm_disarm", map[string]any{"label_id": []string{"security"}}),
		call("homeassistant.turn_off", map[string]any{"entity_id": []string{"alarm_control_panel.home_alarm"}}),
		call("cover.open_cover", map[string]any{"entity_id": []string{"cover.garage_door"}}),
		call("cover.open_cover", map[string]any{"area_id": []string{"garage"}}),
		call("cover.open_cover", map[string]any{"device_id": []string{garageDev}}),
		call("cover.open_cover", map[string]any{"label_id": []string{"security"}}),
		call("cover.open_cover", map[string]any{"data": map[string]any{"entity_id": "all"}}),
		call("cover.open_cover", map[string]any{"entity_id": []string{"cover.all_garages"}}),
		call("cover.set_cover_position", map[string]any{"data": map[string]any{"area_id": "garage", "position": 100}}),
		call("cover.toggle", map[string]any{"data": map[string]any{"entity_id": "{{ 'cover.garage_door' }}"}}),
		call("homeassistant.turn_on", map[string]any{"entity_id": []string{"cover.garage_door"}}),
		call("homeassistant.toggle", map[string]any{"area_id": []string{"garage"}}),
		call("homeassistant.restart", nil),
		call("homeassistant.stop", nil),
		// Scripts the user wrote, run every way Home Assistant runs them.
		call("script.let_in", nil),
		call("script.turn_on", map[string]any{"entity_id": []string{"script.let_in"}}),
		call("script.toggle", map[string]any{"entity_id": []string{"script.open_garage"}}),
		call("homeassistant.turn_on", map[string]any{"entity_id": []string{"script.quiet_alarm"}}),
		call("script.reboot", nil),
		call("script.welcome", nil),
		call("script.turn_on", map[string]any{"data": map[string]any{"entity_id": "all"}}),
		// Scenes: stored, applied from data, and made on the fly.
		call("scene.turn_on", map[string]any{"entity_id": []string{"scene.open_house"}}),
		call("scene.turn_on", map[string]any{"entity_id": []string{"scene.garage_open"}}),
		call("homeassistant.turn_on", map[string]any{"entity_id": []string{"scene.alarm_off"}}),
		call("scene.apply", map[string]any{"data": map[string]any{"entities": map[string]any{"lock.front_door": "unlocked"}}}),
		// Automations the user wrote, triggered now.
		call("automation.trigger", map[string]any{"entity_id": []string{"automation.user_1714000009101"}}),
		call("automation.trigger", map[string]any{"entity_id": []string{"automation.user_1714000009102"}}),
		call("automation.trigger", map[string]any{"entity_id": []string{"automation.user_1714000009103"}}),
		call("automation.trigger", map[string]any{"entity_id": []string{"automation.user_1714000009104"}}),
	}
	// Automations the model writes to do it later.
	for _, a := range []map[string]any{
		{"action": "lock.unlock", "target": map[string]any{"label_id": "night"}},
		{"action": "cover.open_cover", "target": map[string]any{"device_id": garageDev}},
		{"service": "alarm_control_panel.alarm_disarm", "entity_id": "alarm_control_panel.home_alarm"},
		{"action": "homeassistant.restart"},
		{"action": "{{ 'lock' }}.unlock", "target": map[string]any{"entity_id": "lock.front_door"}},
		{"action": "script.turn_on", "target": map[string]any{"entity_id": "script.let_in"}},
		{"scene": "scene.open_house"},
		{"device_id": lockDev, "domain": "lock", "type": "unlock", "entity_id": "lock.front_door"},
		{"choose": []any{map[string]any{"conditions": []any{}, "sequence": []any{map[string]any{"action": "cover.toggle", "target": map[string]any{"area_id": "garage"}}}}}},
	} {
		out = append(out, attack{fmt.Sprintf("create automation %v", a), "ha_create_automation", automationArgs(a)})
	}
	out = append(out,
		attack{"update automation to unlock", "ha_update_automation", map[string]any{"automation_id": "1714000000002", "merge": true, "confirm": true,
			"config": map[string]any{"actions": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"area_id": "hallway"}}}}}},
		// Only the triggers change: the user's automation that opens the garage then runs when the model likes.
		attack{"retrigger the user's garage automation", "ha_update_automation", map[string]any{"automation_id": "1714000009102", "merge": true, "confirm": true,
			"config": map[string]any{"triggers": []any{map[string]any{"trigger": "time_pattern", "minutes": "/1"}}}}},
		attack{"automations.yaml that unlocks", "ha_write_config", map[string]any{"path": "automations.yaml", "confirm": true,
			"content": "- id: '42'\n  alias: x\n  triggers: [{trigger: time, at: '03:00:00'}]\n  actions:\n    - action: lock.unlock\n      target: !include door.yaml\n"}},
		attack{"ha_restart", "ha_restart", map[string]any{"confirm": true}},
		// Assist acts on whatever is exposed to it: the sentence cannot be trusted to say what.
		attack{"Assist opens the garage", "ha_process_conversation", map[string]any{"text": "turn on the garage door", "confirm": true}},
	)
	return out
}

func assertHomeUntouched(t *testing.T, e *admEnv) {
	t.Helper()
	for id, want := range map[string]string{"lock.front_door": "locked", "alarm_control_panel.home_alarm": "armed_away", "cover.garage_door": "closed"} {
		if got := e.state(t, id); got != want {
			t.Errorf("%s is %s, want %s: a refused call changed the home", id, got, want)
		}
	}
}

// A model alone, with confirm=true and a client that cannot ask its user, under the default options:
// every form is refused with an error that says what the user must do, a confirmation request waits
// in the panel, and nothing in the home changes.
func TestConfirmTrueAloneCannotUnlockDisarmOpenOrRestart(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	seedSensitiveConfigs(t, e)
	ctx := context.Background()
	for _, a := range attacks(t, e) {
		t.Run(a.name, func(t *testing.T) {
			r := e.call(t, a.tool, a.args)
			if r.err == nil || r.err.Code != "confirmation_required" {
				t.Fatalf("%s %v was not stopped for the user's confirmation: %s", a.tool, a.args, r.raw)
			}
			for _, want := range []string{"Only the user can confirm this", "confirm=true from you is not enough", "hamcp panel", "repeat exactly the same call"} {
				if !strings.Contains(r.raw, want) {
					t.Errorf("the refusal does not say %q: %s", want, r.raw)
				}
			}
			id, _ := r.err.Details["request_id"].(string)
			p, err := e.pm.Request(id)
			if err != nil || p.Category != permission.ConfirmKind || p.Tool != a.tool {
				t.Fatalf("no confirmation request %q waits for the user: %+v %v", id, p, err)
			}
			// The user says no in the panel; the same call is then refused for good.
			if err := e.pm.Deny(ctx, id, permission.Approver{Via: permission.ViaPanel, UserID: "owner"}); err != nil {
				t.Fatal(err)
			}
			if r := e.call(t, a.tool, a.args); r.err == nil || r.err.Code != "confirmation_denied" {
				t.Fatalf("after the user denied it: %s", r.raw)
			}
		})
	}
	assertHomeUntouched(t, e)
	// What the user does not need to confirm still runs at once: locking, the user's own scripts and
	// automations that lock, ordinary devices in the same areas.
	for _, args := range []map[string]any{
		svc("lock.lock", map[string]any{"label_id": []string{"security"}}),
		svc("light.turn_on", map[string]any{"area_id": []string{"hallway"}}),
		svc("cover.open_cover", map[string]any{"entity_id": []string{"cover.living_room_blinds"}}),
		svc("alarm_control_panel.alarm_arm_home", map[string]any{"label_id": []string{"security"}}),
		svc("script.turn_on", map[string]any{"entity_id": []string{"script.good_night"}}),
		svc("automation.trigger", map[string]any{"entity_id": []string{"automation.hallway_light_on_motion"}}),
		svc("scene.turn_on", map[string]any{"entity_id": []string{"scene.movie_night"}}),
	} {
		e.ok(t, "ha_call_service", args)
	}
}

// A client that can ask its user: hamcp asks, and the call runs only when the user accepts.
func TestUserConfirmsThroughTheClient(t *testing.T) {
	t.Parallel()
	var asked []string
	answer := "accept"
	e := admStart(t, admOpts{defaultTrust: true, elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		if answer != "accept" {
			return &mcp.ElicitResult{Action: answer}, nil
		}
		return &mcp.ElicitResult{Action: answer, Content: map[string]any{"allow": true}}, nil
	}})
	seedSensitiveConfigs(t, e)
	answer = "decline"
	if r := e.call(t, "ha_call_service", svc("lock.unlock", map[string]any{"area_id": []string{"hallway"}})); r.err == nil || r.err.Code != "confirmation_declined" {
		t.Fatalf("declined, yet: %s", r.raw)
	}
	assertHomeUntouched(t, e)
	answer = "accept"
	for _, c := range []struct {
		args        map[string]any
		entity, now string
	}{
		{svc("lock.unlock", map[string]any{"area_id": []string{"hallway"}, "confirm": false}), "lock.front_door", "unlocked"},
		{svc("alarm_control_panel.alarm_disarm", map[string]any{"label_id": []string{"security"}}), "alarm_control_panel.home_alarm", "disarmed"},
		{svc("script.open_garage", nil), "cover.garage_door", "open"},
	} {
		e.ok(t, "ha_call_service", c.args)
		testkit.Eventually(t, c.entity+" "+c.now, func() bool { return e.state(t, c.entity) == c.now })
	}
	if len(asked) != 4 || !strings.Contains(asked[0], "unlock lock.front_door (Front Door)") || !strings.Contains(asked[3], "open cover.garage_door") {
		t.Errorf("the user was asked %q", asked)
	}
}

// Without elicitation, the user approves the request in the panel; the approval lets exactly that call
// run once.
func TestUserApprovesOnceInThePanel(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	args := svc("cover.open_cover", map[string]any{"device_id": []string{e.device(t, "Garage Door")}})
	r := e.call(t, "ha_call_service", args)
	if r.err == nil || r.err.Code != "confirmation_required" {
		t.Fatalf("not asked: %s", r.raw)
	}
	id, _ := r.err.Details["request_id"].(string)
	if err := e.pm.Approve(ctx, id, permission.Approver{Via: permission.ViaPanel, UserID: "owner", Name: "Alex"}); err != nil {
		t.Fatal(err)
	}
	// Another call does not ride on the approval.
	if r := e.call(t, "ha_call_service", svc("lock.unlock", map[string]any{"entity_id": []string{"lock.front_door"}})); r.err == nil {
		t.Fatalf("an approval for the garage unlocked the door: %s", r.raw)
	}
	e.ok(t, "ha_call_service", args)
	testkit.Eventually(t, "the garage open", func() bool { return e.state(t, "cover.garage_door") == "open" })
	if r := e.call(t, "ha_call_service", args); r.err == nil || r.err.Code != "confirmation_required" {
		t.Fatalf("the approval was used twice: %s", r.raw)
	}
}

// A user who trusts the model with a class (confirm_trusted) lets confirm=true through for it, and
// only for it.
func TestTrustedClassTakesTheModelsWord(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{trust: []string{"lock", "change"}})
	e.ok(t, "ha_call_service", svc("lock.unlock", map[string]any{"label_id": []string{"security"}}))
	testkit.Eventually(t, "the door unlocked", func() bool { return e.state(t, "lock.front_door") == "unlocked" })
	if r := e.call(t, "ha_call_service", map[string]any{"domain": "lock", "service": "unlock", "entity_id": []string{"lock.front_door"}}); r.err == nil || r.err.Field != "confirm" {
		t.Fatalf("a trusted class without confirm=true: %s", r.raw)
	}
	// The garage is not trusted: the same confirm=true is not enough for it.
	if r := e.call(t, "ha_call_service", svc("cover.open_cover", map[string]any{"area_id": []string{"garage"}})); r.err == nil || r.err.Code != "confirmation_required" {
		t.Fatalf("an untrusted class took confirm=true: %s", r.raw)
	}
	if got := e.state(t, "cover.garage_door"); got != "closed" {
		t.Errorf("the garage is %s", got)
	}
}
