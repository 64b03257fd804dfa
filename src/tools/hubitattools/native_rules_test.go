package hubitattools_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

type ruleRow struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Engine string `json:"engine"`
	Type   string `json:"type"`
	Status string `json:"status"`
}

type rulesOut struct {
	List struct {
		Total int       `json:"total"`
		Items []ruleRow `json:"items"`
	} `json:"list"`
	Rule *ruleRow `json:"rule"`
	Done string   `json:"done"`
	Note string   `json:"note"`
}

func ruleByID(t *testing.T, rows []ruleRow, id int64) ruleRow {
	t.Helper()
	i := slices.IndexFunc(rows, func(r ruleRow) bool { return r.ID == id })
	if i < 0 {
		t.Fatalf("rule %d not listed: %+v", id, rows)
	}
	return rows[i]
}

// TestNativeRulesList: the hub's rules of every engine, with the state Rule Machine shows in
// the app list, and no app that is not a rule.
func TestNativeRulesList(t *testing.T) {
	t.Parallel()
	_, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{})
	s := served(withClient(c), withAdmin(true, false)).Session(t)
	var out rulesOut
	s.OK(t, "hubitat_manage_native_rules", map[string]any{"action": "list"}, &out)
	if out.List.Total != 7 || len(out.List.Items) != 7 {
		t.Fatalf("%d rules listed: %+v", out.List.Total, out.List.Items)
	}
	for id, want := range map[int64]ruleRow{
		11: {Name: "Night Lights", Engine: "Rule Machine", Type: "Rule-5.1", Status: "active"},
		13: {Name: "Porch Light at Sunset", Engine: "Rule Machine", Type: "Rule-5.0", Status: "paused"},
		21: {Name: "Hallway Motion Light", Engine: "Basic Rules", Type: "Basic Rule-1.0", Status: "active"},
		31: {Name: "Kitchen", Engine: "Room Lighting", Type: "Room Lights", Status: "active"},
		41: {Name: "Coffee Off at Noon", Engine: "Simple Automation Rules", Status: "active", Type: "Simple Automation Rule"},
	} {
		got := ruleByID(t, out.List.Items, id)
		want.ID = id
		if got != want {
			t.Errorf("rule %d: %+v, want %+v", id, got, want)
		}
	}
	if !strings.Contains(out.Note, "hubitat_rm_endpoint") {
		t.Errorf("the list does not say why a private boolean cannot be set: %q", out.Note)
	}
	s.OK(t, "hubitat_manage_native_rules", map[string]any{"action": "list", "engine": "Basic Rules"}, &out)
	if out.List.Total != 1 || out.List.Items[0].ID != 21 {
		t.Errorf("engine filter: %+v", out.List)
	}
	s.OK(t, "hubitat_manage_native_rules", map[string]any{"action": "list", "limit": 2, "offset": 4}, &out)
	if out.List.Total != 7 || len(out.List.Items) != 2 {
		t.Errorf("paging: %+v", out.List)
	}
	// Neither option: the tool is off; only the write option: reading is refused.
	tooltest.ErrCase{Tool: "hubitat_manage_native_rules", Args: map[string]any{"action": "list"}, Code: "tool_not_enabled", Contains: "hubitat_admin_read"}.
		Check(t, served(withClient(c)).Session(t))
	tooltest.ErrCase{Tool: "hubitat_manage_native_rules", Args: map[string]any{"action": "list"}, Code: "tool_not_enabled", Contains: "hubitat_admin_read"}.
		Check(t, served(withClient(c), withAdmin(false, true)).Session(t))
}

// ruleWrites are the native-rule calls that change what the hub does, with the hub routes
// they would reach.
var ruleWrites = []map[string]any{
	{"action": "run_actions", "ruleId": 12},
	{"action": "pause", "ruleId": 11},
	{"action": "resume", "ruleId": 13},
	{"action": "set_private_boolean", "ruleId": 11, "value": false},
}

// TestNativeRulesGatesRefuse: without the write option, the hub_admin grant or the user's own
// yes (whatever the model says), no rule runs, pauses or resumes, and the hub is never clicked.
func TestNativeRulesGatesRefuse(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{RuleEndpoint: simEndpoint})
	readOnly := served(withClient(c), withAdmin(true, false))
	ready := served(withClient(c), withAdmin(true, true))
	for _, args := range ruleWrites {
		yes := with(args, "confirm", true)
		name := args["action"].(string)
		t.Run(name, func(t *testing.T) {
			if e := ready.Session(t).Fail(t, "hubitat_manage_native_rules", yes); e.Code != "permission_required" || e.Details["category"] != "hub_admin" {
				t.Errorf("no grant: %+v", e)
			}
			// The option off: the user is asked neither for the grant nor to confirm.
			off := &asking{answer: "accept"}
			s := readOnly.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: off.handler})
			if e := s.Fail(t, "hubitat_manage_native_rules", yes); e.Code != "tool_not_enabled" || !strings.Contains(e.Message, "hubitat_admin_write") {
				t.Errorf("option off: %+v", e)
			}
			if q := off.questions(); len(q) != 0 {
				t.Errorf("option off, yet the user was asked %q", q)
			}
			for _, answer := range []string{"decline", "cancel"} {
				no := &asking{answer: answer}
				tooltest.ErrCase{Tool: "hubitat_manage_native_rules", Args: yes, Code: "confirmation_declined"}.Check(t, no.session(t, ready))
				if q := no.questions(); len(q) != 1 || !strings.Contains(q[0], "Hubitat rule") {
					t.Errorf("the user was asked %q", q)
				}
			}
			// A client that cannot ask: the model's confirm=true is not the user's yes.
			tooltest.ErrCase{Tool: "hubitat_manage_native_rules", Args: yes, Code: "confirmation_required"}.Check(t, ready.Granted(t, hubAdmin))
		})
	}
	if n := h.Requests("POST /installedapp/btn"); n != 0 {
		t.Errorf("a closed gate clicked %d rule buttons", n)
	}
	for id, paused := range map[int]bool{11: false, 12: false, 13: true} {
		if st, _ := h.InstalledApp(id); st.Paused != paused || st.Runs != 0 || !st.PrivateBoolean {
			t.Errorf("rule %d changed through a closed gate: %+v", id, st)
		}
	}
	if n := h.Requests("GET /apps/api/14/setRuleBooleanFalse=11"); n != 0 {
		t.Errorf("a closed gate reached the rule endpoint %d times", n)
	}
	if v, _ := h.Attribute(9, "lock"); v != "unlocked" {
		t.Errorf("the back door is %s: a rule ran through a closed gate", v)
	}
}

// TestNativeRulesDrive: with the user's yes, a rule's actions run on the hub (behind Hub
// Security), Rule Machine rules pause and resume (a rule already there is left alone), and
// what the hub cannot do is refused with nothing done.
func TestNativeRulesDrive(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{})
	user := &asking{answer: "accept"}
	s := user.session(t, served(withClient(c), withAdmin(true, true)))
	call := func(args map[string]any) rulesOut {
		t.Helper()
		var out rulesOut
		s.OK(t, "hubitat_manage_native_rules", args, &out)
		return out
	}

	out := call(map[string]any{"action": "run_actions", "ruleId": 12})
	if out.Rule == nil || out.Rule.Name != "Lock Doors at Bedtime" {
		t.Errorf("run: %+v", out)
	}
	if v, _ := h.Attribute(9, "lock"); v != "locked" {
		t.Errorf("the rule's actions did not lock the back door: %s", v)
	}
	q := user.questions()
	if len(q) != 1 || !strings.Contains(q[0], `"Lock Doors at Bedtime" (Rule Machine, id 12)`) || !strings.Contains(q[0], "cannot see inside") {
		t.Errorf("the user was asked %q", q)
	}
	if h.Logins() == 0 {
		t.Error("no Hub Security login")
	}

	if out := call(map[string]any{"action": "pause", "ruleId": 11}); out.Rule.Status != "paused" || out.Done != "rule paused" {
		t.Errorf("pause: %+v", out)
	}
	if out := call(map[string]any{"action": "pause", "ruleId": 11}); out.Rule.Status != "paused" || !strings.Contains(out.Done, "already paused") {
		t.Errorf("second pause: %+v", out)
	}
	if st, _ := h.InstalledApp(11); !st.Paused || len(st.Clicks) != 1 {
		t.Errorf("rule 11 after two pauses: %+v (pausRule is a toggle: one click)", st)
	}
	if out := call(map[string]any{"action": "resume", "ruleId": 13}); out.Rule.Status != "active" {
		t.Errorf("resume: %+v", out)
	}

	clicks := h.Requests("POST /installedapp/btn")
	for _, c := range []tooltest.ErrCase{
		{Name: "Basic Rules do not pause", Args: map[string]any{"action": "pause", "ruleId": 21}, Code: "invalid_argument", Field: "action", Contains: "only Rule Machine"},
		{Name: "an app that is not a rule", Args: map[string]any{"action": "run_actions", "ruleId": 50}, Code: "invalid_argument", Field: "ruleId", Contains: "hubitat_manage_apps"},
		{Name: "an unknown id", Args: map[string]any{"action": "run_actions", "ruleId": 999}, Code: "not_found"},
		{Name: "no id", Args: map[string]any{"action": "pause"}, Code: "invalid_argument", Field: "ruleId"},
	} {
		c.Tool = "hubitat_manage_native_rules"
		c.Check(t, s)
	}
	// A disabled rule's actions do not run: refused before the hub is clicked.
	if err := c.SetAppDisabled(t.Context(), 11, true); err != nil {
		t.Fatal(err)
	}
	tooltest.ErrCase{Tool: "hubitat_manage_native_rules", Args: map[string]any{"action": "run_actions", "ruleId": 11}, Code: "refused", Contains: "disabled"}.Check(t, s)
	if n := h.Requests("POST /installedapp/btn"); n != clicks {
		t.Errorf("%d buttons clicked by refused calls", n-clicks)
	}
}

// TestNativeRulesPrivateBoolean: with the user's endpoint and yes, a Rule Machine rule's private
// boolean is set through the endpoint rule (its token never shown); the question names the rule
// and the value, and a yes to false is not a yes to true. Other engines, a missing value, a
// missing endpoint or a renewed token change nothing and say what to do.
func TestNativeRulesPrivateBoolean(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{RuleEndpoint: simEndpoint})
	token := h.RuleEndpointURL()[strings.Index(h.RuleEndpointURL(), "access_token=")+len("access_token="):]
	user := &asking{answer: "accept"}
	s := user.session(t, served(withClient(c), withAdmin(true, true)))
	var list rulesOut
	s.OK(t, "hubitat_manage_native_rules", map[string]any{"action": "list"}, &list)
	if list.Note != "" {
		t.Errorf("with an endpoint the list still says %q", list.Note)
	}
	for _, value := range []bool{false, true, false} {
		var out rulesOut
		raw := s.OK(t, "hubitat_manage_native_rules", map[string]any{"action": "set_private_boolean", "ruleId": 11, "value": value}, &out)
		if out.Rule == nil || out.Rule.ID != 11 || !strings.Contains(out.Done, fmt.Sprint(value)) || !strings.Contains(out.Note, "does not report") {
			t.Errorf("set %v: %+v", value, out)
		}
		if strings.Contains(raw, token) {
			t.Errorf("the endpoint's token reached the model: %s", raw)
		}
		if st, _ := h.InstalledApp(11); st.PrivateBoolean != value {
			t.Errorf("rule 11's private boolean is %v after setting %v", st.PrivateBoolean, value)
		}
	}
	q := user.questions()
	if len(q) != 3 || !strings.Contains(q[0], `private boolean of the Hubitat rule "Night Lights" (Rule Machine, id 11) to false`) ||
		!strings.Contains(q[1], "to true") {
		t.Errorf("the user was asked %q", q)
	}
	if st, _ := h.InstalledApp(14); st.Runs != 0 || st.EndpointValue != "" {
		t.Errorf("setting a private boolean triggered the endpoint rule itself: %+v", st)
	}

	sent := h.Requests("GET /apps/api/14/setRuleBooleanFalse=11") + h.Requests("GET /apps/api/14/setRuleBooleanTrue=11")
	for _, tc := range []tooltest.ErrCase{
		{Name: "a Basic Rule", Args: map[string]any{"action": "set_private_boolean", "ruleId": 21, "value": true}, Code: "refused", Contains: "only Rule Machine"},
		{Name: "no value", Args: map[string]any{"action": "set_private_boolean", "ruleId": 11}, Code: "invalid_argument", Field: "value"},
		{Name: "a value for pause", Args: map[string]any{"action": "pause", "ruleId": 11, "value": true}, Code: "invalid_argument", Field: "value"},
		{Name: "not a rule", Args: map[string]any{"action": "set_private_boolean", "ruleId": 50, "value": true}, Code: "invalid_argument", Field: "ruleId"},
	} {
		tc.Tool = "hubitat_manage_native_rules"
		tc.Check(t, s)
	}
	if n := h.Requests("GET /apps/api/14/setRuleBooleanFalse=11") + h.Requests("GET /apps/api/14/setRuleBooleanTrue=11"); n != sent {
		t.Errorf("refused calls reached the endpoint %d times", n-sent)
	}
	if st, _ := h.InstalledApp(21); st.PrivateBoolean {
		t.Errorf("a Basic Rule has a private boolean now: %+v", st)
	}

	// Without the option: said before the user is asked, with the way to set it up.
	_, plain := newHub(t, simhub.Options{}, hubitat.Options{})
	none := &asking{answer: "accept"}
	tooltest.ErrCase{Tool: "hubitat_manage_native_rules", Args: map[string]any{"action": "set_private_boolean", "ruleId": 11, "value": false},
		Code: "not_configured", Contains: "hubitat_rm_endpoint"}.Check(t, none.session(t, served(withClient(plain), withAdmin(true, true))))
	if q := none.questions(); len(q) != 0 {
		t.Errorf("asked %q for what cannot be done", q)
	}

	// The token was renewed on the hub: the user is told to copy the URL again; nothing changed.
	old, stale := newHub(t, simhub.Options{}, hubitat.Options{RuleEndpoint: simEndpointOldToken})
	e := (&asking{answer: "accept"}).session(t, served(withClient(stale), withAdmin(true, true))).
		Fail(t, "hubitat_manage_native_rules", map[string]any{"action": "set_private_boolean", "ruleId": 11, "value": false})
	if e.Code != "not_configured" || !strings.Contains(e.Message, "copy the Local End Point URL again") || strings.Contains(e.Message, "renewed-since") {
		t.Errorf("a refused endpoint: %+v", e)
	}
	if st, _ := old.InstalledApp(11); !st.PrivateBoolean {
		t.Error("a refused endpoint changed the private boolean")
	}
}

// TestInstalledAppToolDefinitions: the definitions stay small, and say what the user is asked.
func TestInstalledAppToolDefinitions(t *testing.T) {
	mine := []string{"hubitat_manage_native_rules", "hubitat_manage_apps", "hubitat_manage_dashboards", "hubitat_manage_variables"}
	found := 0
	for _, tool := range hubitattools.Tools(defaultDeps()) {
		if !slices.Contains(mine, tool.Name()) {
			continue
		}
		found++
		b, err := json.Marshal(tool.Definition())
		if err != nil || len(b) > 1400 {
			t.Errorf("%s: definition %d bytes (max 1400), %v", tool.Name(), len(b), err)
		}
		if !strings.Contains(string(b), "confirms") {
			t.Errorf("%s does not say what the user confirms", tool.Name())
		}
	}
	if found != len(mine) {
		t.Errorf("%d of %v registered", found, mine)
	}
}
