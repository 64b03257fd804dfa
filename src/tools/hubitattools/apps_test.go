package hubitattools_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
)

type appsOut struct {
	List struct {
		Total int                    `json:"total"`
		Items []hubitat.InstalledApp `json:"items"`
	} `json:"list"`
	App  *hubitat.AppConfig `json:"app"`
	Done string             `json:"done"`
}

func appByID(apps []hubitat.InstalledApp, id int64) (hubitat.InstalledApp, bool) {
	i := slices.IndexFunc(apps, func(a hubitat.InstalledApp) bool { return a.ID == id })
	if i < 0 {
		return hubitat.InstalledApp{}, false
	}
	return apps[i], true
}

// TestAppsListAndGet: the app tree (hidden helpers left out unless asked for, their children
// kept under a listed parent), filters, and an app's page with its password hidden.
func TestAppsListAndGet(t *testing.T) {
	t.Parallel()
	_, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{})
	s := served(withClient(c), withAdmin(true, false)).Session(t)
	var out appsOut
	s.OK(t, "hubitat_manage_apps", map[string]any{"action": "list"}, &out)
	if _, ok := appByID(out.List.Items, 61); ok || out.List.Total != 20 {
		t.Errorf("default list: %d apps, hidden 61 listed: %v", out.List.Total, ok)
	}
	if r, ok := appByID(out.List.Items, 12); !ok || r.ParentID != 1 || r.ParentType != "Rule Machine" || r.Name != "Lock Doors at Bedtime" {
		t.Errorf("rule 12: %+v", r)
	}
	if p, _ := appByID(out.List.Items, 13); !p.Paused || p.Name != "Porch Light at Sunset" {
		t.Errorf("paused rule 13 read as %+v", p)
	}
	s.OK(t, "hubitat_manage_apps", map[string]any{"action": "list", "includeHidden": true}, &out)
	if h, ok := appByID(out.List.Items, 61); !ok || h.ParentID != 60 || !h.Hidden {
		t.Errorf("includeHidden: %+v", h)
	}
	s.OK(t, "hubitat_manage_apps", map[string]any{"action": "list", "filter": "user"}, &out)
	if out.List.Total != 1 || out.List.Items[0].ID != 60 {
		t.Errorf("user apps: %+v", out.List.Items)
	}

	var got appsOut
	s.OK(t, "hubitat_manage_apps", map[string]any{"action": "get", "appId": 50}, &got)
	text := s.OK(t, "hubitat_manage_apps", map[string]any{"action": "get", "appId": 50}, nil)
	if strings.Contains(text, "ecobee-api-key-123") {
		t.Fatal("the app's password reached the model")
	}
	if got.App == nil || got.App.Label != "Ecobee Integration" || len(got.App.Sections) != 1 || got.App.Sections[0].Inputs[0].Value != hubitat.Redacted ||
		got.App.Sections[0].Inputs[1].Value != "5" || got.App.Sections[0].Inputs[2].Value != false {
		t.Errorf("get 50: %+v", got.App)
	}
	s.OK(t, "hubitat_manage_apps", map[string]any{"action": "get", "appId": 1}, &got)
	if len(got.App.Children) != 4 || got.App.Children[2].Label != "Porch Light at Sunset" {
		t.Errorf("Rule Machine's children: %+v", got.App.Children)
	}
	for _, c := range []tooltest.ErrCase{
		{Args: map[string]any{"action": "get", "appId": 999}, Code: "not_found"},
		{Args: map[string]any{"action": "get"}, Code: "invalid_argument", Field: "appId"},
		{Args: map[string]any{"action": "get", "appId": 50, "pageName": "nowhere"}, Code: "backend_error", Contains: "nowhere"},
		{Args: map[string]any{"action": "get", "appId": 50, "pageName": "../x"}, Code: "invalid_argument", Field: "pageName"},
		{Args: map[string]any{"action": "list", "filter": "everything"}, Code: "invalid_argument", Field: "filter"},
	} {
		c.Tool = "hubitat_manage_apps"
		c.Check(t, s)
	}
}

// TestAppsToggleGates: without the write option, the grant or the user's yes, no app is enabled
// or disabled; with them it is, and the Maker API instance hamcp uses is never disabled.
func TestAppsToggleGates(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{})
	readOnly := served(withClient(c), withAdmin(true, false))
	ready := served(withClient(c), withAdmin(true, true))
	disable := map[string]any{"action": "disable", "appId": 50, "confirm": true}

	off := &asking{answer: "accept"}
	if e := readOnly.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: off.handler}).Fail(t, "hubitat_manage_apps", disable); e.Code != "tool_not_enabled" || len(off.questions()) != 0 {
		t.Errorf("option off: %+v, asked %q", e, off.questions())
	}
	if e := ready.Session(t).Fail(t, "hubitat_manage_apps", disable); e.Code != "permission_required" || e.Details["category"] != "hub_admin" {
		t.Errorf("no grant: %+v", e)
	}
	no := &asking{answer: "decline"}
	tooltest.ErrCase{Tool: "hubitat_manage_apps", Args: disable, Code: "confirmation_declined"}.Check(t, no.session(t, ready))
	if q := no.questions(); len(q) != 1 || !strings.Contains(q[0], `Disable the Hubitat app "Ecobee Integration" (Ecobee Integration, id 50)`) {
		t.Errorf("the user was asked %q", q)
	}
	tooltest.ErrCase{Tool: "hubitat_manage_apps", Args: disable, Code: "confirmation_required"}.Check(t, ready.Granted(t, hubAdmin))
	if st, _ := h.InstalledApp(50); st.Disabled || h.Requests("POST /installedapp/disable") != 0 {
		t.Fatalf("app 50 changed through a closed gate: %+v", st)
	}

	user := &asking{answer: "accept"}
	s := user.session(t, ready)
	var out appsOut
	s.OK(t, "hubitat_manage_apps", map[string]any{"action": "disable", "appId": 50}, &out)
	if st, _ := h.InstalledApp(50); !st.Disabled || !strings.Contains(out.Done, "disabled") {
		t.Errorf("disable: %+v, %+v", st, out)
	}
	s.OK(t, "hubitat_manage_apps", map[string]any{"action": "list", "filter": "disabled"}, &out)
	if out.List.Total != 1 || out.List.Items[0].ID != 50 {
		t.Errorf("disabled apps: %+v", out.List.Items)
	}
	s.OK(t, "hubitat_manage_apps", map[string]any{"action": "enable", "appId": 50}, nil)
	if st, _ := h.InstalledApp(50); st.Disabled {
		t.Error("enable did not take")
	}
	if q := user.questions(); len(q) != 2 || !strings.HasPrefix(q[1], "Enable the Hubitat app") {
		t.Errorf("asked %q", q)
	}
	// The parent of rules: the user hears that its children are affected too.
	no = &asking{answer: "decline"}
	no.session(t, ready).Fail(t, "hubitat_manage_apps", map[string]any{"action": "disable", "appId": 1})
	if q := no.questions(); len(q) != 1 || !strings.Contains(q[0], "4 child apps") {
		t.Errorf("disabling Rule Machine asked %q", q)
	}
	tooltest.ErrCase{Tool: "hubitat_manage_apps", Args: map[string]any{"action": "disable", "appId": 7}, Code: "refused", Contains: "Maker API"}.Check(t, s)
	if st, _ := h.InstalledApp(7); st.Disabled {
		t.Error("the Maker API instance was disabled")
	}
}

// TestAppsPagesKeepTokens: Maker API's page shows its access token, alone and in every URL, and a
// Rule Machine rule's page shows its Local End Point URL with the rule's token. A model that reads
// those pages would hold keys to the hub that skip every gate (hubitat_devices, the confirmations):
// what the model gets has them hidden.
func TestAppsPagesKeepTokens(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{RuleEndpoint: simEndpoint})
	s := served(withClient(c), withAdmin(true, false)).Session(t)
	ruleToken := h.RuleEndpointURL()[strings.Index(h.RuleEndpointURL(), "access_token=")+len("access_token="):]
	maker, err := strconv.ParseInt(h.AppID(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range []int64{maker, 14} {
		text := s.OK(t, "hubitat_manage_apps", map[string]any{"action": "get", "appId": app}, nil)
		for _, secret := range []string{h.Token(), ruleToken} {
			if strings.Contains(text, secret) {
				t.Errorf("app %d's page gave the model a token:\n%s", app, text)
			}
		}
		if !strings.Contains(text, "[hidden]") || !strings.Contains(text, "/apps/api/") {
			t.Errorf("app %d's page lost its URLs instead of hiding the token:\n%s", app, text)
		}
	}
}
