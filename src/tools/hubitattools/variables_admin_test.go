package hubitattools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

type varsOut struct {
	Variable *struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
		Type  string `json:"type"`
	} `json:"variable"`
	History *struct {
		Total int                     `json:"total"`
		Items []hubitat.LocationEvent `json:"items"`
	} `json:"history"`
	BrokenRules []string `json:"brokenRules"`
	Done        string   `json:"done"`
	Note        string   `json:"note"`
}

// withEngine serves the tools with a rule engine of the test's own over c, holding rule.
func withEngine(t *testing.T, c *hubitat.Client, rule string) func(*hubitattools.Deps) {
	t.Helper()
	e := rules.New(rules.Options{Hub: c, Store: privateStore(t), ServerVersion: testVersion})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	var r rules.Rule
	if err := json.Unmarshal([]byte(rule), &r); err != nil {
		t.Fatal(err)
	}
	if _, probs, err := e.Create(context.Background(), r); err != nil || len(probs) > 0 {
		t.Fatalf("seeding the rule: %v %v", err, probs)
	}
	return func(d *hubitattools.Deps) { d.Rules = e }
}

const guestRule = `{"name":"Guest lights","triggers":[{"type":"button_event","deviceId":"17","action":"pushed","buttonNumber":1}],
 "conditions":[{"type":"variable","variableName":"GuestMode","operator":"equals","value":"true"}],
 "actions":[{"type":"device_command","deviceId":"3","command":"on"}]}`

// TestVariablesAdmin: create and delete hub variables through the Hub Variables app (behind Hub
// Security), a delete that names the hamcp rules it breaks, and the history the hub keeps.
func TestVariablesAdmin(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{})
	user := &asking{answer: "accept"}
	s := user.session(t, served(withClient(c), withStore(backedUp(t, time.Now())), withAdmin(true, true), withEngine(t, c, guestRule)))
	var out varsOut
	s.OK(t, "hubitat_manage_variables", map[string]any{"action": "create", "name": "PartyMode", "type": "Boolean", "value": "false"}, &out)
	if out.Variable == nil || out.Variable.Name != "PartyMode" || out.Variable.Type != "boolean" || !slices.Contains(h.HubVariableNames(), "PartyMode") {
		t.Fatalf("create: %+v; hub has %v", out, h.HubVariableNames())
	}
	if q := user.questions(); len(q) != 1 || q[0] != `Create the hub variable "PartyMode" (Boolean) with the value "false"? `+toolkit.OnceNote {
		t.Errorf("asked %q", q)
	}
	// A DateTime variable goes through the form's date and time pickers and its Done button; the
	// hub keeps the moment in its own zone (the simulated hub's is New York's).
	s.OK(t, "hubitat_manage_variables", map[string]any{"action": "create", "name": "AlarmAt", "type": "DateTime", "value": "2026-12-24T18:30"}, &out)
	if out.Variable == nil || out.Variable.Type != "datetime" || fmt.Sprint(out.Variable.Value) != "2026-12-24T18:30:00.000-0500" {
		t.Fatalf("DateTime create: %+v", out.Variable)
	}
	writes := h.Requests("POST /installedapp/update/json") + h.Requests("POST /installedapp/btn")
	for _, c := range []tooltest.ErrCase{
		{Name: "DateTime without a time", Args: map[string]any{"action": "create", "name": "Later", "type": "DateTime", "value": "2026-12-24"}, Code: "invalid_argument", Field: "value", Contains: "2026-05-06T12:00"},
		{Name: "exists", Args: map[string]any{"action": "create", "name": "GuestMode", "type": "Boolean", "value": "true"}, Code: "invalid_argument", Field: "name", Contains: "already exists"},
		{Name: "bad value", Args: map[string]any{"action": "create", "name": "Count", "type": "Number", "value": "many"}, Code: "invalid_argument", Field: "value"},
		{Name: "bad name", Args: map[string]any{"action": "create", "name": "a:b", "type": "String", "value": "x"}, Code: "invalid_argument", Field: "name"},
		{Name: "no type", Args: map[string]any{"action": "create", "name": "Count", "value": "1"}, Code: "invalid_argument", Field: "type"},
		{Name: "delete unknown", Args: map[string]any{"action": "delete", "name": "Nope"}, Code: "not_found"},
	} {
		c.Tool = "hubitat_manage_variables"
		c.Check(t, s)
	}
	if n := h.Requests("POST /installedapp/update/json") + h.Requests("POST /installedapp/btn"); n != writes {
		t.Errorf("refused calls wrote to the hub %d times", n-writes)
	}

	s.OK(t, "hubitat_manage_variables", map[string]any{"action": "delete", "name": "GuestMode"}, &out)
	if slices.Contains(h.HubVariableNames(), "GuestMode") || len(out.BrokenRules) != 1 || !strings.Contains(out.BrokenRules[0], "Guest lights") {
		t.Errorf("delete: %+v; hub has %v", out, h.HubVariableNames())
	}
	if q := user.questions(); !strings.Contains(q[len(q)-1], `hamcp rules that use it will break: "Guest lights"`) || !strings.Contains(q[len(q)-1], "cannot see whether the hub's own rules") {
		t.Errorf("the delete asked %q", q[len(q)-1])
	}

	for _, v := range []string{"07:00", "07:30"} {
		if err := c.SetVariable(t.Context(), "WakeTime", v); err != nil {
			t.Fatal(err)
		}
	}
	s.OK(t, "hubitat_manage_variables", map[string]any{"action": "history", "name": "WakeTime"}, &out)
	if out.History == nil || out.History.Total != 2 || out.History.Items[0].Value != "07:30" || out.History.Items[1].Value != "07:00" ||
		!strings.Contains(out.Note, "location events") {
		t.Errorf("history: %+v %q", out.History, out.Note)
	}
	// History is a read: the read option is enough.
	served(withClient(c), withAdmin(true, false)).Session(t).OK(t, "hubitat_manage_variables", map[string]any{"action": "history", "name": "WakeTime"}, nil)
}

// TestVariablesAdminGatesRefuse: without the option, the grant, a recent backup or the user's
// yes, no variable is created or deleted and the Hub Variables app is not touched.
func TestVariablesAdminGatesRefuse(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{})
	readOnly := served(withClient(c), withStore(backedUp(t, time.Now())), withAdmin(true, false))
	noBackup := served(withClient(c), withStore(privateStore(t)), withAdmin(true, true))
	ready := served(withClient(c), withStore(backedUp(t, time.Now())), withAdmin(true, true))
	before := h.HubVariableNames()
	for _, args := range []map[string]any{
		{"action": "create", "name": "Gate", "type": "String", "value": "x"},
		{"action": "delete", "name": "GuestMode"},
	} {
		yes := with(args, "confirm", true)
		t.Run(args["action"].(string), func(t *testing.T) {
			off := &asking{answer: "accept"}
			if e := readOnly.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: off.handler}).Fail(t, "hubitat_manage_variables", yes); e.Code != "tool_not_enabled" || len(off.questions()) != 0 {
				t.Errorf("option off: %+v, asked %q", e, off.questions())
			}
			if e := ready.Session(t).Fail(t, "hubitat_manage_variables", yes); e.Code != "permission_required" {
				t.Errorf("no grant: %+v", e)
			}
			u := &asking{answer: "accept"}
			tooltest.ErrCase{Tool: "hubitat_manage_variables", Args: yes, Code: "backup_required"}.Check(t, u.session(t, noBackup))
			if len(u.questions()) != 0 {
				t.Errorf("asked %q before refusing for the backup", u.questions())
			}
			no := &asking{answer: "decline"}
			tooltest.ErrCase{Tool: "hubitat_manage_variables", Args: yes, Code: "confirmation_declined"}.Check(t, no.session(t, ready))
			tooltest.ErrCase{Tool: "hubitat_manage_variables", Args: yes, Code: "confirmation_required"}.Check(t, ready.Granted(t, hubAdmin))
		})
	}
	if after := h.HubVariableNames(); !slices.Equal(after, before) {
		t.Errorf("variables changed through a closed gate: %v → %v", before, after)
	}
	for _, route := range []string{"POST /installedapp/update/json", "POST /installedapp/btn"} {
		if n := h.Requests(route); n != 0 {
			t.Errorf("%s reached %d times through a closed gate", route, n)
		}
	}
}
