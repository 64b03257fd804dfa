package hatools_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// exposedInTest is what the user exposed to Assist in these tests; every other entity of the demo
// home is outside expose_scope=assist.
var exposedInTest = []string{"light.kitchen_ceiling", "light.kitchen_island", "sensor.kitchen_temperature", "person.alex",
	"media_player.kitchen_speaker", "camera.front_door", "calendar.family", "switch.coffee_machine",
	"script.good_night", "automation.lights_off_when_everyone_leaves", "automation.good_morning", "todo.chores"}

func scopeStart(t *testing.T) *admEnv {
	t.Helper()
	return admStart(t, admOpts{exposeScope: hatools.ScopeAssist, beforeTools: exposeOnly(t)})
}

// exposeOnly is a household that un-exposed everything but exposedInTest (Home Assistant's defaults
// expose most lights, switches, covers and sensors).
func exposeOnly(t *testing.T) func(h *sim.Home) {
	return func(h *sim.Home) {
		var all []string
		for _, s := range h.Model().States() {
			all = append(all, s.EntityID)
		}
		if err := h.Model().ExposeEntities([]string{"conversation"}, all, false); err != nil {
			t.Fatal(err)
		}
		if err := h.Model().ExposeEntities([]string{"conversation"}, exposedInTest, true); err != nil {
			t.Fatal(err)
		}
	}
}

// hiddenIDs are the demo's entities not exposed to Assist, by the simulator's own account.
func hiddenIDs(e *admEnv) map[string]bool {
	out := map[string]bool{}
	for _, s := range e.home.Model().States() {
		if !slices.Contains(exposedInTest, s.EntityID) {
			out[s.EntityID] = true
		}
	}
	return out
}

var idToken = regexp.MustCompile(`[a-z0-9_]+\.[a-z0-9_]+`)

// leaked returns the hidden entity ids an answer names.
func leaked(text string, hidden map[string]bool) []string {
	var out []string
	for _, tok := range idToken.FindAllString(text, -1) {
		if hidden[tok] && !slices.Contains(out, tok) {
			out = append(out, tok)
		}
	}
	return out
}

// scopeReads are plausible calls of every tool that reads, including the list actions of the
// manage tools; an attacker model would make them all.
var scopeReads = map[string][]map[string]any{
	"ha_get_states":             {{}, {"detail": "full"}, {"area": "hallway"}, {"domain": "lock"}, {"search": "door"}},
	"ha_get_entity_details":     {{"entity_id": "light.kitchen_ceiling"}},
	"ha_get_history":            {{"entity_ids": []any{"light.kitchen_ceiling"}, "hours": 24}},
	"ha_get_logbook":            {{"hours": 24}, {"search": "door"}},
	"ha_search_entities":        {{"query": "door"}, {"query": "lock"}, {"query": "alarm"}, {"query": "light"}},
	"ha_get_overview":           {{}, {"group_by": "label"}, {"group_by": "device_class"}},
	"ha_get_recent_activity":    {{"minutes": 1440}},
	"ha_list_event_listeners":   {{}},
	"ha_get_subscription_stats": {{"include_events": true}},
	"ha_list_automations":       {{}, {"include_config": true}},
	"ha_list_blueprints":        {{}},
	"ha_list_areas":             {{}},
	"ha_list_labels":            {{}},
	"ha_list_devices":           {{}, {"detail": "full"}, {"area": "hallway", "detail": "full"}},
	"ha_get_person_location":    {{}, {"include_gps": true}},
	"ha_list_calendars":         {{}},
	"ha_get_calendar_events":    {{"days": 14}},
	"ha_get_energy_data":        {{}},
	"ha_get_statistics":         {{}, {"search": "door"}},
	"ha_validate_config":        {{}},
	"ha_system_info":            {{}},
	"ha_get_supervisor_info":    {{}},
	"ha_get_diagnostics":        {{}},
	"ha_get_traces":             {{"entity_id": "automation.good_morning"}, {"entity_id": "script.good_night"}},
	"ha_list_services":          {{"search": "lock"}, {"domain": "lock"}},
	"ha_manage_scripts":         {{"action": "list"}, {"action": "get", "script_id": "good_night"}},
	"ha_manage_scenes":          {{"action": "list"}},
	"ha_manage_dashboards":      {{"action": "list"}, {"action": "get"}},
	"ha_manage_helpers":         {{"action": "list"}},
	"ha_manage_todo":            {{"action": "lists"}, {"action": "list", "entity_id": "todo.chores"}},
	"ha_manage_integrations":    {{"action": "list"}},
	"ha_manage_updates":         {{"action": "list"}},
	"ha_config_history":         {{"action": "list"}},
	"ha_manage_shopping_list":   {{"action": "list"}},
}

// TestExposeScopeReadsShowOnlyExposed walks every read tool of the registry as an attacker
// would: no answer names an entity the user did not expose to Assist.
func TestExposeScopeReadsShowOnlyExposed(t *testing.T) {
	e := scopeStart(t)
	hidden := hiddenIDs(e)
	if !hidden["lock.front_door"] || !hidden["alarm_control_panel.home_alarm"] {
		t.Fatal("the demo lost the entities this test hides")
	}
	for _, tool := range hatools.Tools(hatools.Deps{}) {
		if tool.Category() != "" {
			continue // root tools: the user's own grants (DOCS.md)
		}
		calls, listed := scopeReads[tool.Name()]
		if !listed && tool.ReadOnly() && tool.Name() != "ha_render_template" && tool.Name() != "ha_get_camera_snapshot" {
			t.Errorf("%s reads and has no call in scopeReads: add one", tool.Name())
		}
		for _, args := range calls {
			r := e.call(t, tool.Name(), args)
			if r.err != nil {
				t.Errorf("%s %v: %s", tool.Name(), args, r.raw)
			}
			if got := leaked(r.raw, hidden); len(got) > 0 {
				t.Errorf("%s %v names entities not exposed: %v\n%s", tool.Name(), args, got, r.raw)
			}
		}
	}
	// What is exposed is still there.
	got := e.ok(t, "ha_get_states", map[string]any{"limit": 1000})
	ids := []string{}
	for _, it := range admItems(t, got, "items") {
		ids = append(ids, it["entity_id"].(string))
	}
	if !slices.Contains(ids, "light.kitchen_ceiling") || len(ids) > len(exposedInTest) {
		t.Errorf("ha_get_states in scope: %v", ids)
	}
	if total := got["total"].(float64); int(total) != len(ids) {
		t.Errorf("total %v counts entities not shown (%d)", total, len(ids))
	}
}

// TestExposeScopeRefusesActing: arguments that name or reach an entity outside the scope are
// refused before anything runs, whatever tool carries them.
func TestExposeScopeRefusesActing(t *testing.T) {
	e := scopeStart(t)
	lockBefore, _ := e.home.Model().State("lock.front_door")
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"unlock by id", "ha_call_service", map[string]any{"domain": "lock", "service": "unlock", "entity_id": []any{"lock.front_door"}, "confirm": true}, "lock.front_door"},
		{"id in data", "ha_call_service", map[string]any{"domain": "lock", "service": "unlock", "data": map[string]any{"entity_id": "lock.front_door"}, "confirm": true}, "lock.front_door"},
		{"all", "ha_call_service", map[string]any{"domain": "lock", "service": "unlock", "entity_id": []any{"all"}, "confirm": true}, `entity_id \"all\"`},
		{"area reaches the lock", "ha_call_service", map[string]any{"domain": "lock", "service": "unlock", "area_id": []any{"hallway"}, "confirm": true}, "not exposed"},
		{"label reaches it", "ha_call_service", map[string]any{"domain": "homeassistant", "service": "turn_off", "label_id": []any{"security"}, "confirm": true}, "not exposed"},
		{"details", "ha_get_entity_details", map[string]any{"entity_id": "lock.front_door"}, "lock.front_door"},
		{"history", "ha_get_history", map[string]any{"entity_ids": []any{"alarm_control_panel.home_alarm"}}, "alarm_control_panel.home_alarm"},
		{"automation target", "ha_create_automation", map[string]any{"confirm": true, "config": map[string]any{"alias": "x", "triggers": []any{map[string]any{"trigger": "time", "at": "03:00:00"}},
			"actions": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}}}, "lock.front_door"},
		{"automation area target", "ha_create_automation", map[string]any{"confirm": true, "config": map[string]any{"alias": "x", "triggers": []any{map[string]any{"trigger": "time", "at": "03:00:00"}},
			"actions": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"area_id": "hallway"}}}}}, "not exposed"},
		{"automation in yaml", "ha_create_automation", map[string]any{"confirm": true, "automation_yaml": "alias: x\ntriggers: [{trigger: time, at: '03:00:00'}]\nactions: [{action: lock.unlock, target: {entity_id: lock.front_door}}]\n"}, "lock.front_door"},
		{"yaml area target", "ha_manage_scripts", map[string]any{"action": "create", "script_id": "x", "confirm": true, "yaml": "sequence:\n  - action: lock.unlock\n    target: {area_id: hallway}\n"}, "not exposed"},
		{"template", "ha_send_notification", map[string]any{"service": "persistent_notification", "message": "{{ states('lock.front_door') }}", "confirm": true}, "template"},
		{"render template", "ha_render_template", map[string]any{"template": "{{ states.lock | list }}"}, "expose_scope"},
		{"fire event", "ha_fire_event", map[string]any{"event_type": "my_event", "confirm": true}, "expose_scope"},
		{"camera", "ha_get_camera_snapshot", map[string]any{"entity_id": "camera.garden"}, "camera.garden"},
		{"registry", "ha_update_entity", map[string]any{"entity_id": "lock.front_door", "expose": true, "confirm": true}, "lock.front_door"},
		// The model reads these configurations without the hidden ids: saving what it read would drop them.
		{"replace a script that uses hidden entities", "ha_manage_scripts", map[string]any{"action": "update", "script_id": "good_night", "confirm": true,
			"config": map[string]any{"alias": "Good night", "sequence": []any{map[string]any{"action": "light.turn_off", "target": map[string]any{"entity_id": "light.kitchen_ceiling"}}}}}, "would lose them"},
		{"delete it", "ha_manage_scripts", map[string]any{"action": "delete", "script_id": "good_night", "confirm": true}, "would lose them"},
		{"save over a dashboard that shows hidden entities", "ha_manage_dashboards", map[string]any{"action": "save", "url_path": "lovelace", "confirm": true,
			"config": map[string]any{"views": []any{map[string]any{"title": "Home", "cards": []any{}}}}}, "would lose them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.fails(t, tt.tool, tt.args, "not_exposed", tt.want)
		})
	}
	if after, _ := e.home.Model().State("lock.front_door"); after.State != lockBefore.State {
		t.Errorf("the lock went from %s to %s", lockBefore.State, after.State)
	}
	// An exposed entity still works.
	e.ok(t, "ha_call_service", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []any{"light.kitchen_ceiling"}})
}

// TestExposeScopeCannotBeWidened: a fired state_changed and an exposed entity's attributes that name
// a hidden entity do not bring it into the scope.
func TestExposeScopeCannotBeWidened(t *testing.T) {
	e := scopeStart(t)
	hidden := hiddenIDs(e)
	m := e.home.Model()
	m.FireEvent("state_changed", map[string]any{"entity_id": "lock.front_door",
		"new_state": map[string]any{"entity_id": "lock.front_door", "state": "unlocked", "attributes": map[string]any{}}}, "LOCAL", "")
	if _, _, err := m.SetState("light.kitchen_ceiling", "on", map[string]any{"friendly_name": "Living Room", "entity_id": []any{"lock.front_door", "light.kitchen_ceiling"},
		"note": "see lock.front_door"}, true, ""); err != nil {
		t.Fatal(err)
	}
	// The mirror has taken the change, so the reads below see the attributes that name the lock.
	testkit.Eventually(t, "the mirror to see the new attributes", func() bool {
		s, ok := e.ha.Mirror().Get("light.kitchen_ceiling")
		return ok && s.Attributes["note"] == "see lock.front_door"
	})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"ha_get_states", map[string]any{"detail": "full"}},
		{"ha_get_entity_details", map[string]any{"entity_id": "light.kitchen_ceiling"}},
		{"ha_search_entities", map[string]any{"query": "front door"}},
	} {
		r := e.call(t, c.tool, c.args)
		if got := leaked(r.raw, hidden); len(got) > 0 {
			t.Errorf("%s: %v in %s", c.tool, got, r.raw)
		}
	}
	e.fails(t, "ha_call_service", map[string]any{"domain": "lock", "service": "unlock", "entity_id": []any{"lock.front_door"}, "confirm": true}, "not_exposed", "")
}

// TestExposeScopeLiveEvents: a session following state_changed hears only exposed entities.
func TestExposeScopeLiveEvents(t *testing.T) {
	got := make(chan string, 100)
	e := admStart(t, admOpts{exposeScope: hatools.ScopeAssist, logs: got, beforeTools: exposeOnly(t)})
	hidden := hiddenIDs(e)
	cs := e.cs
	//lint:ignore SA1019 live events ride on the deprecated (SEP-2577) MCP logging.
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ha_subscribe_events", Arguments: map[string]any{"event_type": "state_changed"}})
	if err != nil || res.IsError {
		t.Fatalf("subscribe: %v %v", err, res)
	}
	m := e.home.Model()
	for _, id := range []string{"lock.front_door", "light.office_desk", "light.kitchen_ceiling"} {
		if _, _, err := m.SetState(id, "on_"+strings.ReplaceAll(id, ".", "_"), nil, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(5 * time.Second)
	sawExposed := false
	for !sawExposed {
		select {
		case msg := <-got:
			if l := leaked(msg, hidden); len(l) > 0 {
				t.Fatalf("live event names %v: %s", l, msg)
			}
			sawExposed = strings.Contains(msg, "light.kitchen_ceiling")
		case <-deadline:
			t.Fatal("no event about the exposed light")
		}
	}
	// Anything still queued after the exposed one is checked too.
	time.Sleep(100 * time.Millisecond)
	for len(got) > 0 {
		if msg := <-got; len(leaked(msg, hidden)) > 0 {
			t.Fatalf("live event names a hidden entity: %s", msg)
		}
	}
}

// TestExposeScopeAllIsUnchanged: with expose_scope=all (the default) the same reads name the
// entities assist scope hides, so the walk above proves something.
func TestExposeScopeAllIsUnchanged(t *testing.T) {
	e := admStart(t, admOpts{})
	hidden := hiddenIDs(e)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"ha_get_states", map[string]any{"domain": "lock"}, "lock.front_door"},
		{"ha_manage_scripts", map[string]any{"action": "get", "script_id": "good_night"}, "switch.christmas_lights"},
		{"ha_get_entity_details", map[string]any{"entity_id": "alarm_control_panel.home_alarm"}, "alarm_control_panel.home_alarm"},
	} {
		r := e.call(t, c.tool, c.args)
		if !slices.Contains(leaked(r.raw, hidden), c.want) {
			t.Errorf("%s without a scope lacks %s: %s", c.tool, c.want, r.raw)
		}
	}
}
