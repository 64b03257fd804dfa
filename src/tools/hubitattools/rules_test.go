package hubitattools_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

// rig is a hub of the test's own with a started rule engine over it, on a store of its own, and
// fx serving the tools over both: rules a test enables act on its hub alone.
type rig struct {
	hub    *simhub.Hub
	engine *rules.Engine
	fx     *tooltest.Fixture
}

func newRig(t *testing.T) rig {
	t.Helper()
	h, c := newHub(t, simhub.Options{}, hubitat.Options{})
	st := privateStore(t)
	e := rules.New(rules.Options{Hub: c, Store: st, ServerVersion: testVersion})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return rig{hub: h, engine: e, fx: served(withClient(c), func(d *hubitattools.Deps) { d.Rules = e })}
}

// seed stores a rule the way an earlier, confirmed call would have (test setup, not under test).
func (r rig) seed(t *testing.T, rule rules.Rule) string {
	t.Helper()
	saved, probs, err := r.engine.Create(context.Background(), rule)
	if err != nil || len(probs) > 0 {
		t.Fatalf("seeding %q: %v %v", rule.Name, err, probs)
	}
	return saved.ID
}

func (r rig) count(t *testing.T) int {
	t.Helper()
	all, err := r.engine.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

func obj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func list(v ...any) []any { return append([]any{}, v...) }

// pushed is a trigger that fires only when the test pushes button n of the Bedside Button.
func pushed(n int) map[string]any {
	return obj("type", "button_event", "deviceId", "17", "action", "pushed", "buttonNumber", n)
}

var buttonOne = rules.Trigger{Type: "button_event", DeviceID: "17", Action: "pushed", ButtonNumber: ptr(1)}

func TestRuleToolsDeclare(t *testing.T) {
	t.Parallel()
	type want struct{ readOnly, confirm, grant bool }
	guarded := want{false, true, true}
	wants := map[string]want{
		"hubitat_list_rules": {true, false, false}, "hubitat_get_rule": {true, false, false}, "hubitat_test_rule": {true, false, false},
		"hubitat_export_rule": {true, false, false}, "hubitat_get_rule_diagnostics": {true, false, false},
		"hubitat_delete_rule": {}, "hubitat_disable_rule": {},
		"hubitat_create_rule": guarded, "hubitat_update_rule": guarded, "hubitat_import_rule": guarded,
		"hubitat_clone_rule": guarded, "hubitat_enable_rule": guarded,
	}
	n := 0
	for _, tool := range hubitattools.Tools(hubitattools.Deps{}) {
		if tool.Toolset() != hubitattools.SetRules {
			continue
		}
		n++
		w, ok := wants[tool.Name()]
		if !ok {
			t.Errorf("%s is not one of the 12 rule tools", tool.Name())
			continue
		}
		grants := tool.Grants()
		hasGrant := len(grants) == 1 && grants[0].Category == toolkit.Command && grants[0].When != ""
		if tool.ReadOnly() != w.readOnly || (tool.ConfirmWhen() != "") != w.confirm || hasGrant != w.grant || tool.Category() != "" {
			t.Errorf("%s: read-only %v, confirm %q, grants %+v", tool.Name(), tool.ReadOnly(), tool.ConfirmWhen(), grants)
		}
	}
	if n != 12 {
		t.Errorf("%d rule tools", n)
	}
}

// A rule's life through the tools: created, listed, read, tested (a dry run that changes
// nothing on the hub), changed, disabled, deleted to the trash and restored.
func TestRuleLifecycle(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	create := obj("name", "Evening", "enabled", false, "triggers", list(pushed(2)),
		"conditions", list(obj("type", "device_state", "deviceId", "1", "attribute", "switch", "value", "on")),
		"actions", list(
			obj("type", "device_command", "deviceId", "1", "command", "off"),
			obj("type", "if_then_else", "condition", obj("type", "mode", "mode", "Home"),
				"thenActions", list(obj("type", "set_level", "deviceId", "2", "level", 30)),
				"elseActions", list(obj("type", "set_mode", "mode", "Night"))),
		))
	// set_mode is in it: the user confirms (in the client here).
	s := r.fx.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: accept(nil)})
	var saved struct {
		Success     bool   `json:"success"`
		RuleID      string `json:"ruleId"`
		ActionCount int    `json:"actionCount"`
	}
	s.OK(t, "hubitat_create_rule", create, &saved)
	if !saved.Success || saved.RuleID == "" || saved.ActionCount != 2 {
		t.Fatalf("created %+v", saved)
	}
	id := saved.RuleID

	var listed struct {
		Rules []struct {
			ID           string `json:"id"`
			Name         string `json:"name"`
			Enabled      bool   `json:"enabled"`
			TriggerCount int    `json:"triggerCount"`
		} `json:"rules"`
		Count int `json:"count"`
	}
	s.OK(t, "hubitat_list_rules", nil, &listed)
	if listed.Count != 1 || listed.Rules[0].ID != id || listed.Rules[0].Enabled || listed.Rules[0].TriggerCount != 1 {
		t.Errorf("listed %+v", listed)
	}
	var got rules.Rule
	s.OK(t, "hubitat_get_rule", obj("ruleId", id), &got)
	if got.Name != "Evening" || len(got.Actions) != 2 || got.Actions[1].ElseActions[0].Mode != "Night" {
		t.Errorf("got %+v", got)
	}

	// test_rule never acts: nothing reaches the hub's command, mode or HSM routes.
	before := r.hub.Requests("GET /devices/1/off") + r.hub.Requests("GET /devices/2/setLevel/30")
	mode := r.hub.Mode()
	var rep rules.TestReport
	s.OK(t, "hubitat_test_rule", obj("ruleId", id), &rep)
	if len(rep.WouldDo) == 0 || len(rep.Conditions) != 1 {
		t.Errorf("the dry run reports %+v", rep)
	}
	if after := r.hub.Requests("GET /devices/1/off") + r.hub.Requests("GET /devices/2/setLevel/30"); after != before || r.hub.Mode() != mode {
		t.Errorf("the dry run reached the hub: %d commands, mode %s → %s", after-before, mode, r.hub.Mode())
	}
	if v, _ := r.hub.Attribute(1, "switch"); v != "on" {
		t.Errorf("the dry run switched the lamp %s", v)
	}

	s.OK(t, "hubitat_update_rule", obj("ruleId", id, "name", "Late evening"), nil)
	s.OK(t, "hubitat_get_rule", obj("ruleId", id), &got)
	if got.Name != "Late evening" || len(got.Actions) != 2 || len(got.Conditions) != 1 {
		t.Errorf("a rename changed more: %+v", got)
	}
	s.OK(t, "hubitat_update_rule", obj("ruleId", id, "conditions", list()), nil)
	got = rules.Rule{} // the answer leaves an empty list out
	s.OK(t, "hubitat_get_rule", obj("ruleId", id), &got)
	if len(got.Conditions) != 0 || got.Name != "Late evening" {
		t.Errorf("emptying the conditions: %+v", got)
	}
	var diag rules.Diagnostics
	s.OK(t, "hubitat_get_rule_diagnostics", obj("ruleId", id), &diag)
	if diag.Rule.ID != id || len(diag.Triggers) != 1 {
		t.Errorf("diagnostics %+v", diag)
	}

	var trashed struct {
		TrashID string `json:"trashId"`
	}
	s.OK(t, "hubitat_delete_rule", obj("ruleId", id), &trashed)
	tooltest.ErrCase{Tool: "hubitat_get_rule", Args: obj("ruleId", id), Code: "not_found", Contains: "hubitat_list_rules"}.Check(t, s)
	var trash struct {
		Trash []struct {
			TrashID string `json:"trashId"`
			Name    string `json:"name"`
		} `json:"trash"`
	}
	s.OK(t, "hubitat_list_rules", obj("trashed", true), &trash)
	if len(trash.Trash) != 1 || trash.Trash[0].TrashID != trashed.TrashID || trash.Trash[0].Name != "Late evening" {
		t.Errorf("trash %+v", trash)
	}
	s.OK(t, "hubitat_import_rule", obj("trashId", trashed.TrashID), &saved)
	s.OK(t, "hubitat_get_rule", obj("ruleId", saved.RuleID), &got)
	if got.Name != "Late evening" || got.Enabled {
		t.Errorf("restored %+v", got)
	}
}

// accept is a client whose user says yes to every question, recording them in asked.
func accept(asked *[]string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if asked != nil {
			*asked = append(*asked, req.Params.Message)
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
	}
}

// Mistakes are refused with their path inside the rule, and nothing is stored.
func TestRuleProblemsNamePaths(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.fx.Session(t)
	for _, c := range []tooltest.ErrCase{
		{Name: "unknown device, nested", Tool: "hubitat_create_rule", Args: obj("name", "x", "triggers", list(pushed(3)),
			"actions", list(obj("type", "if_then_else", "condition", obj("type", "mode", "mode", "Home"),
				"thenActions", list(obj("type", "device_command", "deviceId", "999", "command", "on"))))),
			Code: "invalid_argument", Field: "actions[0].thenActions[0].deviceId"},
		{Name: "unknown field", Tool: "hubitat_create_rule", Args: obj("name", "x", "triggers", list(pushed(3)),
			"actions", list(obj("type", "device_command", "deviceId", "1", "command", "on", "colour", "red"))),
			Code: "invalid_argument", Field: "actions[0].colour"},
		{Name: "no action", Tool: "hubitat_create_rule", Args: obj("name", "x", "triggers", list(pushed(3))), Code: "invalid_argument"},
		{Name: "unknown rule", Tool: "hubitat_enable_rule", Args: obj("ruleId", "nope"), Code: "not_found"},
		{Name: "import both", Tool: "hubitat_import_rule", Args: obj("trashId", "a", "exportData", obj()), Code: "invalid_argument", Field: "trashId"},
	} {
		t.Run(c.Name, func(t *testing.T) { c.Check(t, s) })
	}
	if n := r.count(t); n != 0 {
		t.Errorf("%d rules stored from refused calls", n)
	}
}

// The security core: a model that writes a rule gets nothing a direct call would not give it.
// A rule that unlocks, disarms, opens a garage door or valve, changes lock codes or sets the mode
// needs the user, at any depth and through every tool that writes or enables a rule; the
// model's confirm=true is not the user.
func TestSensitiveRulesNeedTheUser(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	unlock := obj("type", "unlock", "deviceId", "8")
	rule := func(actions ...any) map[string]any {
		return obj("name", "sneaky", "triggers", list(pushed(4)), "actions", list(actions...), "confirm", true)
	}
	nested := obj("type", "if_then_else", "condition", obj("type", "mode", "mode", "Home"),
		"thenActions", list(obj("type", "log", "message", "hi")),
		"elseActions", list(obj("type", "repeat", "times", 1, "actions", list(unlock))))
	harmless := rules.Rule{Name: "harmless", Triggers: []rules.Trigger{buttonOne},
		Actions: []rules.Action{{Type: "device_command", DeviceID: "3", Command: "on"}}}
	harmlessID := r.seed(t, harmless)
	armed := harmless
	armed.Name, armed.Enabled = "unlocks, disabled", false
	armed.Actions = []rules.Action{{Type: "unlock", DeviceID: "8"}}
	armedID := r.seed(t, armed)
	s := r.fx.Session(t)
	var export map[string]any
	s.OK(t, "hubitat_export_rule", obj("ruleId", armedID), &export)

	calls := []struct {
		name, tool string
		args       map[string]any
	}{
		{"create: unlock", "hubitat_create_rule", rule(unlock)},
		{"create: unlock nested in else and repeat", "hubitat_create_rule", rule(nested)},
		{"create: device_command unlock", "hubitat_create_rule", rule(obj("type", "device_command", "deviceId", "9", "command", "unlock"))},
		{"create: new lock code", "hubitat_create_rule", rule(obj("type", "device_command", "deviceId", "8", "command", "setCode",
			"parameters", list("2", "0000", "Burglar")))},
		{"create: disarm", "hubitat_create_rule", rule(obj("type", "set_hsm", "status", "disarm"))},
		{"create: set the mode", "hubitat_create_rule", rule(obj("type", "set_mode", "mode", "Away"))},
		{"create: open the valve", "hubitat_create_rule", rule(obj("type", "set_valve", "deviceId", "21", "command", "open"))},
		{"create: disabled changes nothing", "hubitat_create_rule", with(rule(unlock), "enabled", false)},
		{"update: add an unlock", "hubitat_update_rule", obj("ruleId", harmlessID, "actions", list(unlock), "confirm", true)},
		{"update: new triggers for a rule that unlocks", "hubitat_update_rule", obj("ruleId", armedID, "triggers", list(pushed(3)), "confirm", true)},
		{"update: enable a rule that unlocks", "hubitat_update_rule", obj("ruleId", armedID, "enabled", true, "confirm", true)},
		{"enable a rule that unlocks", "hubitat_enable_rule", obj("ruleId", armedID, "confirm", true)},
		{"clone a rule that unlocks", "hubitat_clone_rule", obj("ruleId", armedID, "confirm", true)},
		{"import a rule that unlocks", "hubitat_import_rule", obj("exportData", export, "name", "imported", "confirm", true)},
	}
	for _, c := range calls {
		// A session keeps at most 8 confirmations waiting: one session per call.
		e := r.fx.Session(t).Fail(t, c.tool, c.args)
		if e.Code != "confirmation_required" {
			t.Errorf("%s: %+v", c.name, e)
			continue
		}
		id, _ := e.Details["request_id"].(string)
		if p, err := fx.Perms.Request(id); err != nil || p.Category != permission.ConfirmKind || p.Tool != c.tool {
			t.Errorf("%s: no confirmation request waits for the user: %+v %v", c.name, p, err)
		}
	}
	if n := r.count(t); n != 2 {
		t.Errorf("%d rules after refused calls, want the 2 seeded", n)
	}
	var got rules.Rule
	s.OK(t, "hubitat_get_rule", obj("ruleId", harmlessID), &got)
	if got.Actions[0].Type != "device_command" {
		t.Errorf("the harmless rule changed: %+v", got.Actions)
	}
	s.OK(t, "hubitat_get_rule", obj("ruleId", armedID), &got)
	if got.Enabled || got.Triggers[0].ButtonNumber == nil || *got.Triggers[0].ButtonNumber != 1 {
		t.Errorf("the disabled rule changed: %+v", got)
	}

	// Renaming it changes nothing it does: no question.
	s.OK(t, "hubitat_update_rule", obj("ruleId", armedID, "name", "unlocks, renamed", "description", "d"), nil)

	// The user declines in their client: nothing is stored.
	var asked []string
	declines := r.fx.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	if e := declines.Fail(t, "hubitat_create_rule", rule(nested)); e.Code != "confirmation_declined" {
		t.Errorf("declined, yet %+v", e)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "unlock") || !strings.Contains(asked[0], "Front Door Lock") || !strings.Contains(asked[0], `"sneaky"`) {
		t.Errorf("the user was asked %q", asked)
	}
	if n := r.count(t); n != 2 {
		t.Errorf("%d rules after a decline", n)
	}

	// The user approves enabling in the panel: that call, once, and the rule then acts on its own.
	enable := obj("ruleId", armedID)
	e := s.Fail(t, "hubitat_enable_rule", enable)
	fx.Approve(t, e.Details["request_id"].(string))
	s.OK(t, "hubitat_enable_rule", enable, nil)
	s.OK(t, "hubitat_get_rule", obj("ruleId", armedID), &got)
	if !got.Enabled {
		t.Fatalf("approved, yet disabled: %+v", got)
	}
	s.OK(t, "hubitat_disable_rule", enable, nil)
	if e := s.Fail(t, "hubitat_enable_rule", enable); e.Code != "confirmation_required" {
		t.Errorf("a second enable rode on the approval: %+v", e)
	}
	if v, _ := r.hub.Attribute(8, "lock"); v != "locked" {
		t.Errorf("the front door is %s", v)
	}
}

// An http_request action reaches the network from hamcp's position, when the model is gone: the
// rule needs the command permission, granted by the user, as an automation calling rest_command
// does. confirm=true is not a grant.
func TestHTTPRulesNeedTheCommandGrant(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	post := obj("type", "http_request", "url", "http://127.0.0.1:9/steal", "method", "POST", "body", "%mode%")
	rule := obj("name", "exfiltrate", "triggers", list(pushed(2)), "confirm", true,
		"actions", list(obj("type", "repeat", "times", 2, "actions", list(post))))
	harmlessID := r.seed(t, rules.Rule{Name: "harmless", Triggers: []rules.Trigger{buttonOne},
		Actions: []rules.Action{{Type: "device_command", DeviceID: "3", Command: "on"}}})
	httpRule := rules.Rule{Name: "posts, disabled", Triggers: []rules.Trigger{buttonOne},
		Actions: []rules.Action{{Type: "http_request", URL: "http://127.0.0.1:9/x", Method: "GET"}}}
	httpID := r.seed(t, httpRule)
	s := r.fx.Session(t)
	var export map[string]any
	s.OK(t, "hubitat_export_rule", obj("ruleId", httpID), &export)

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"hubitat_create_rule", rule},
		{"hubitat_update_rule", obj("ruleId", harmlessID, "actions", list(post), "confirm", true)},
		{"hubitat_enable_rule", obj("ruleId", httpID, "confirm", true)},
		{"hubitat_clone_rule", obj("ruleId", httpID)},
		{"hubitat_import_rule", obj("exportData", export)},
	}
	for _, c := range calls {
		if e := s.Fail(t, c.tool, c.args); e.Code != "permission_required" || e.Details["category"] != "command" {
			t.Errorf("%s without the grant: %+v", c.tool, e)
		}
	}
	if n := r.count(t); n != 2 {
		t.Errorf("%d rules after refused calls", n)
	}
	denied := r.fx.Session(t)
	denied.Deny(t, permission.Command)
	if e := denied.Fail(t, "hubitat_create_rule", rule); e.Code != "permission_denied" {
		t.Errorf("denied: %+v", e)
	}
	// Granted: every one of them goes through.
	g := r.fx.Granted(t, permission.Command)
	for _, c := range calls {
		g.OK(t, c.tool, c.args, nil)
	}
	if n := r.count(t); n != 5 {
		t.Errorf("%d rules after the granted calls, want 5", n)
	}
	// Renaming one, or writing a rule without http_request, needs no grant.
	s.OK(t, "hubitat_update_rule", obj("ruleId", httpID, "name", "renamed"), nil)
	s.OK(t, "hubitat_create_rule", obj("name", "fine", "triggers", list(pushed(2)), "actions", list(obj("type", "log", "message", "x"))), nil)
}

// A rule created through the tools runs on its own: pushing the button turns the light off.
func TestCreatedRuleRuns(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.fx.Session(t)
	s.OK(t, "hubitat_create_rule", obj("name", "button off", "triggers", list(pushed(1)),
		"actions", list(obj("type", "device_command", "deviceId", "1", "command", "off"))), nil)
	s.OK(t, "hubitat_send_command", obj("deviceId", "17", "command", "push", "parameters", list("1")), nil)
	testkit.Eventually(t, "the rule to switch the lamp off", func() bool { v, _ := r.hub.Attribute(1, "switch"); return v == "off" })
}

// Export, then import into a hub where the devices have other ids: every reference is remapped,
// lists and nested actions included.
func TestRuleExportImportRemaps(t *testing.T) {
	t.Parallel()
	a, b := newRig(t), newRig(t)
	id := a.seed(t, rules.Rule{Name: "capture and dim", Triggers: []rules.Trigger{{Type: "device_event", DeviceIDs: []string{"12", "13"},
		Attribute: "motion", Value: rules.S("active")}},
		Actions: []rules.Action{
			{Type: "capture_state", DeviceIDs: []string{"1", "2"}, StateID: "before"},
			{Type: "if_then_else", Condition: &rules.Condition{Type: "device_state", DeviceID: "13", Attribute: "motion", Value: rules.S("active")},
				ThenActions: []rules.Action{{Type: "set_level", DeviceID: "1", Level: &rules.Scalar{Text: "20", Numeric: true}}}},
		}})
	var export map[string]any
	a.fx.Session(t).OK(t, "hubitat_export_rule", obj("ruleId", id), &export)
	var saved struct {
		RuleID string `json:"ruleId"`
	}
	mapping := map[string]any{"1": "27", "2": "3", "12": "13", "13": "12"}
	bs := b.fx.Session(t)
	bs.OK(t, "hubitat_import_rule", obj("exportData", export, "deviceMapping", mapping, "name", "moved"), &saved)
	var got rules.Rule
	bs.OK(t, "hubitat_get_rule", obj("ruleId", saved.RuleID), &got)
	if got.Name != "moved" || !slices.Equal(got.Triggers[0].DeviceIDs, []string{"13", "12"}) ||
		!slices.Equal(got.Actions[0].DeviceIDs, []string{"27", "3"}) || got.Actions[1].Condition.DeviceID != "12" ||
		got.Actions[1].ThenActions[0].DeviceID != "27" {
		t.Errorf("imported %+v", got)
	}
	tooltest.ErrCase{Tool: "hubitat_import_rule", Args: obj("exportData", export, "deviceMapping", map[string]any{"1": "999"}),
		Code: "invalid_argument", Contains: "999"}.Check(t, bs)
}

// A model writes the red team's runaway rule (any change of the porch light toggles it 20
// times) and sets it off by switching the light. The engine stops it after a few runs, the hub
// receives a bounded number of commands, and the reason shows in the diagnostics, the list and
// the rule. The model cannot start it again on its own: enabling it asks the user, with why.
func TestRunawayRuleIsStoppedAndTheUserSeesWhy(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.fx.Session(t)
	var saved struct {
		RuleID string `json:"ruleId"`
	}
	s.OK(t, "hubitat_create_rule", obj("name", "toggle bomb",
		"triggers", list(obj("type", "device_event", "deviceId", "3", "attribute", "switch")),
		"actions", list(obj("type", "repeat", "times", 20, "actions", list(obj("type", "toggle_device", "deviceId", "3"))))), &saved)
	id := saved.RuleID
	s.OK(t, "hubitat_send_command", obj("deviceId", "3", "command", "on"), nil)

	var diag rules.Diagnostics
	testkit.Eventually(t, "the runaway to be stopped", func() bool {
		diag = rules.Diagnostics{}
		s.OK(t, "hubitat_get_rule_diagnostics", obj("ruleId", id), &diag)
		return !diag.Rule.Enabled && diag.Rule.DisabledReason != "" && !diag.Running && diag.Queued == 0
	})
	if !strings.Contains(diag.Rule.DisabledReason, "its own commands triggered it again") || diag.Rule.DisabledAt == nil {
		t.Errorf("diagnostics say %q at %v", diag.Rule.DisabledReason, diag.Rule.DisabledAt)
	}
	// The model's own command, then at most the runs before the loop limit, 20 commands each.
	sent := r.hub.Requests("GET /devices/3/on") + r.hub.Requests("GET /devices/3/off")
	if bound := 1 + (rules.DefaultLoopRuns+1)*20; sent > bound {
		t.Errorf("the hub received %d commands; want at most %d", sent, bound)
	}

	var listed struct {
		Rules []struct {
			DisabledReason string `json:"disabledReason"`
			DisabledAt     string `json:"disabledAt"`
		} `json:"rules"`
	}
	s.OK(t, "hubitat_list_rules", nil, &listed)
	if len(listed.Rules) != 1 || listed.Rules[0].DisabledReason != diag.Rule.DisabledReason || listed.Rules[0].DisabledAt == "" {
		t.Errorf("listed %+v", listed)
	}
	var got rules.Rule
	s.OK(t, "hubitat_get_rule", obj("ruleId", id), &got)
	if got.DisabledReason != diag.Rule.DisabledReason {
		t.Errorf("hubitat_get_rule says %q", got.DisabledReason)
	}

	// Enabling it again, or updating it enabled, is the user's decision, and the question says why.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"hubitat_enable_rule", obj("ruleId", id, "confirm", true)},
		{"hubitat_update_rule", obj("ruleId", id, "enabled", true, "confirm", true)},
	} {
		e := r.fx.Session(t).Fail(t, c.tool, c.args)
		if e.Code != "confirmation_required" {
			t.Errorf("%s: %+v", c.tool, e)
		}
	}
	var asked []string
	s2 := r.fx.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: accept(&asked)})
	s2.OK(t, "hubitat_enable_rule", obj("ruleId", id), nil)
	if len(asked) != 1 || !strings.Contains(asked[0], "hamcp stopped") || !strings.Contains(asked[0], "its own commands triggered it again") {
		t.Errorf("the user was asked %q", asked)
	}
	got = rules.Rule{}
	s.OK(t, "hubitat_get_rule", obj("ruleId", id), &got)
	if !got.Enabled || got.DisabledReason != "" || got.DisabledAt != nil {
		t.Errorf("enabled again: %+v", got)
	}
	s.OK(t, "hubitat_disable_rule", obj("ruleId", id), nil)
}
