package hubitattools_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

func TestGetHubInfo(t *testing.T) {
	t.Parallel()
	var info struct {
		Name      string  `json:"name"`
		Model     string  `json:"model"`
		Firmware  string  `json:"firmwareVersion"`
		Latitude  float64 `json:"latitude"`
		TimeZone  string  `json:"timeZone"`
		TempScale string  `json:"temperatureScale"`
		Mode      string  `json:"mode"`
		HSM       string  `json:"hsmStatus"`
	}
	logins := hub.Logins()
	fx.Session(t).OK(t, "hubitat_get_hub_info", nil, &info)
	loc := hub.Location()
	if info.Name == "" || info.Model == "" || info.Firmware == "" || info.Latitude != loc.Latitude || info.TimeZone != loc.TimeZone ||
		info.TempScale != loc.TemperatureScale || info.Mode == "" || info.HSM == "" {
		t.Errorf("hub info %+v", info)
	}
	// Hub Security is on: the client logged in (or reused a session another test opened).
	if hub.Logins() == 0 {
		t.Errorf("no Hub Security login (before: %d)", logins)
	}
}

// Modes and HSM are the whole hub's: these run on a hub of their own.
func TestModes(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{}, hubitat.Options{})
	// The model's confirm alone does not set the mode (the Safety Monitor may disarm with it);
	// the user's answer in the client does.
	if e := served(withClient(c)).Session(t).Fail(t, "hubitat_set_mode", map[string]any{"mode": "Away", "confirm": true}); e.Code != "confirmation_required" || h.Mode() != "Day" {
		t.Fatalf("set_mode on the model's word: %+v; the hub is in %s", e, h.Mode())
	}
	var asked []string
	s := served(withClient(c)).SessionWith(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
	}})
	var modes struct {
		CurrentMode string `json:"currentMode"`
		Modes       []struct{ ID, Name string }
	}
	s.OK(t, "hubitat_get_modes", nil, &modes)
	if modes.CurrentMode != "Day" || len(modes.Modes) != 4 || modes.Modes[2].ID != "3" || modes.Modes[2].Name != "Night" {
		t.Fatalf("modes %+v", modes)
	}
	var change struct {
		Success               bool
		PreviousMode, NewMode string
	}
	s.OK(t, "hubitat_set_mode", map[string]any{"mode": "nIGHT"}, &change)
	if !change.Success || change.PreviousMode != "Day" || change.NewMode != "Night" || h.Mode() != "Night" {
		t.Errorf("set mode: %+v; the hub is in %s", change, h.Mode())
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "Night") {
		t.Errorf("the user was asked %q", asked)
	}
	testkit.Eventually(t, "the mode event", func() bool { return c.Cache().Mode() == "Night" })
	for _, bad := range []tooltest.ErrCase{
		{Name: "unknown mode", Tool: "hubitat_set_mode", Args: map[string]any{"mode": "Party"}, Code: "invalid_argument", Field: "mode", Contains: "Day, Evening, Night, Away"},
		{Name: "a mode id is not a name", Tool: "hubitat_set_mode", Args: map[string]any{"mode": "4"}, Code: "invalid_argument", Field: "mode"},
		{Name: "no mode", Tool: "hubitat_set_mode", Args: map[string]any{}, Code: "invalid_argument", Field: "mode"},
	} {
		bad.Check(t, s)
	}
	if h.Mode() != "Night" {
		t.Errorf("a refused call changed the mode to %s", h.Mode())
	}
}

func TestHSM(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{}, hubitat.Options{})
	var asked []string
	s := served(withClient(c)).SessionWith(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
	}})
	alone := served(withClient(c)).Session(t) // a client that cannot ask its user
	var st struct {
		HSMStatus string   `json:"hsmStatus"`
		ArmModes  []string `json:"armModes"`
	}
	s.OK(t, "hubitat_get_hsm_status", nil, &st)
	if st.HSMStatus != "disarmed" || strings.Join(st.ArmModes, ",") != "armAway,armHome,armNight,disarm" {
		t.Fatalf("status %+v", st)
	}
	// Arming needs no confirmation (as an alarm panel's arm services), disarming does.
	var set struct {
		Success   bool   `json:"success"`
		HSMStatus string `json:"hsmStatus"`
	}
	alone.OK(t, "hubitat_set_hsm", map[string]any{"mode": "armAway"}, &set)
	if !set.Success || set.HSMStatus != "armedAway" || h.HSM() != "armedAway" {
		t.Fatalf("arm: %+v; hub %s", set, h.HSM())
	}
	if e := alone.Fail(t, "hubitat_set_hsm", map[string]any{"mode": "disarm", "confirm": true}); e.Code != "confirmation_required" {
		t.Fatalf("disarm on the model's word: %+v", e)
	}
	if h.HSM() != "armedAway" {
		t.Fatalf("the model disarmed the alarm: %s", h.HSM())
	}
	for _, bad := range []tooltest.ErrCase{
		{Name: "not an HSM mode", Tool: "hubitat_set_hsm", Args: map[string]any{"mode": "disarmAll"}, Code: "invalid_argument", Field: "mode", Contains: "armAway"},
		{Name: "wrong case", Tool: "hubitat_set_hsm", Args: map[string]any{"mode": "ARMAWAY"}, Code: "invalid_argument", Field: "mode"},
	} {
		bad.Check(t, alone)
	}
	s.OK(t, "hubitat_set_hsm", map[string]any{"mode": "disarm"}, &set)
	if h.HSM() != "disarmed" || len(asked) != 1 || !strings.Contains(asked[0], "Hubitat Safety Monitor to disarm") {
		t.Errorf("after the user accepted: hub %s; asked %q", h.HSM(), asked)
	}
}

func TestVariables(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{}, hubitat.Options{})
	s := served(withClient(c)).Session(t)
	type row struct {
		Name   string `json:"name"`
		Value  any    `json:"value"`
		Type   string `json:"type"`
		Source string `json:"source"`
	}
	var v row
	s.OK(t, "hubitat_get_variable", map[string]any{"name": "WakeTime"}, &v)
	if v.Value != "06:45" || v.Type != "string" || v.Source != "hub" {
		t.Errorf("WakeTime %+v", v)
	}
	var set struct {
		Success             bool
		Name, Value, Source string
	}
	s.OK(t, "hubitat_set_variable", map[string]any{"name": "TargetTemp", "value": "70"}, &set)
	if !set.Success || set.Source != "hub" {
		t.Errorf("set TargetTemp: %+v", set)
	}
	got, _ := c.Variable(context.Background(), "TargetTemp")
	if got.Value.String() != "70" {
		t.Errorf("the hub's TargetTemp is %s", got.Value)
	}
	// No hub variable of that name: the rule engine's store keeps it, as upstream.
	name := fmt.Sprintf("mcpVar%d", time.Now().UnixNano())
	s.OK(t, "hubitat_set_variable", map[string]any{"name": name, "value": "on holiday"}, &set)
	if set.Source != "rule_engine" {
		t.Errorf("set %s: %+v", name, set)
	}
	s.OK(t, "hubitat_get_variable", map[string]any{"name": name}, &v)
	if v.Value != "on holiday" || v.Source != "rule_engine" {
		t.Errorf("%s: %+v", name, v)
	}
	var all struct {
		Count     int   `json:"count"`
		Variables []row `json:"variables"`
	}
	s.OK(t, "hubitat_list_variables", nil, &all)
	sources := map[string]string{}
	for _, r := range all.Variables {
		sources[r.Name] = r.Source
	}
	if sources["GuestMode"] != "hub" || sources["PowerPrice"] != "hub" || sources[name] != "rule_engine" || all.Count != len(all.Variables) {
		t.Errorf("listed %+v", all)
	}
	for _, bad := range []tooltest.ErrCase{
		{Name: "unknown", Tool: "hubitat_get_variable", Args: map[string]any{"name": "NoSuchVariable"}, Code: "not_found", Contains: "NoSuchVariable"},
		{Name: "wrong type for the hub", Tool: "hubitat_set_variable", Args: map[string]any{"name": "TargetTemp", "value": "warm"}, Code: "invalid_argument", Field: "value", Contains: "not an integer"},
		{Name: "slash in a name", Tool: "hubitat_set_variable", Args: map[string]any{"name": "a/b", "value": "1"}, Code: "invalid_argument", Field: "name"},
		{Name: "no value", Tool: "hubitat_set_variable", Args: map[string]any{"name": "GuestMode"}, Code: "invalid_argument", Field: "value"},
	} {
		bad.Check(t, s)
	}
	// A wrong type was refused by the hub, not parked in the rule engine under the hub's name.
	s.OK(t, "hubitat_get_variable", map[string]any{"name": "TargetTemp"}, &v)
	if v.Source != "hub" || fmt.Sprint(v.Value) != "70" {
		t.Errorf("TargetTemp after a refused write: %+v", v)
	}
	_ = h
}

func TestCheckForUpdate(t *testing.T) {
	t.Parallel()
	type update struct {
		CurrentVersion  string `json:"currentVersion"`
		LatestVersion   string `json:"latestVersion"`
		UpdateAvailable bool   `json:"updateAvailable"`
		Source          string `json:"source"`
	}
	var out update
	fx.Session(t).OK(t, "hubitat_check_for_update", nil, &out)
	if out.CurrentVersion != testVersion || out.Source != "none" || out.LatestVersion != "" {
		t.Errorf("outside the add-on: %+v", out)
	}
	sup, err := supervisor.New(supervisor.Config{BaseURL: fx.Home.SupervisorURL(), Token: fx.Home.SupervisorToken()})
	if err != nil {
		t.Fatal(err)
	}
	self, err := sup.AddonInfo(context.Background(), "self")
	if err != nil {
		t.Fatal(err)
	}
	served(func(d *hubitattools.Deps) { d.Supervisor = sup }).Session(t).OK(t, "hubitat_check_for_update", nil, &out)
	if out.Source != "supervisor" || out.LatestVersion != self.VersionLatest || out.LatestVersion == "" || out.UpdateAvailable != self.UpdateAvailable {
		t.Errorf("in the add-on: %+v; the Supervisor says %s → %s", out, self.Version, self.VersionLatest)
	}
}

// A hub reboot mid-session: calls during the outage fail at once saying the hub is unreachable,
// the eventsocket comes back, the cache catches up with what changed meanwhile, and calls work
// again.
func TestHubRebootMidSession(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{RebootDelay: 700 * time.Millisecond}, hubitat.Options{})
	s := served(withClient(c)).Session(t)
	attr := map[string]any{"deviceId": "12", "attribute": "motion"}
	s.OK(t, "hubitat_get_attribute", attr, nil)
	before := c.Status().Reconnects

	done := h.Reboot()
	testkit.Eventually(t, "the hub to go down", h.Down)
	// A sensor reports while hamcp cannot hear it.
	if err := h.SetAttribute(12, "motion", "active", true); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"hubitat_send_command", map[string]any{"deviceId": "1", "command": "off"}},
		{"hubitat_get_device", map[string]any{"deviceId": "1"}},
		{"hubitat_get_modes", nil},
		{"hubitat_get_attribute", attr},
	} {
		start := time.Now()
		e := s.Fail(t, call.tool, call.args)
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s took %v during the outage", call.tool, took)
		}
		if e.Code != "backend_unavailable" || !strings.Contains(e.Message, "Hubitat hub is not reachable") || !strings.Contains(e.Hint, "rebooting") {
			t.Errorf("%s during the outage: %+v", call.tool, e)
		}
	}
	<-done
	testkit.Eventually(t, "the live link to come back", func() bool {
		st := c.Status()
		return st.Reconnects > before && st.Link == "connected" && st.CacheLive
	})
	var got struct {
		Value any `json:"value"`
	}
	s.OK(t, "hubitat_get_attribute", attr, &got)
	if got.Value != "active" {
		t.Errorf("after the reboot the cache says motion %v: it did not resync", got.Value)
	}
	s.OK(t, "hubitat_send_command", map[string]any{"deviceId": "1", "command": "off"}, nil)
	if v, _ := h.Attribute(1, "switch"); v != "off" {
		t.Errorf("the lamp is %s after the reboot", v)
	}
}
