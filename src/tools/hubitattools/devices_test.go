package hubitattools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

type deviceRow struct {
	ID            string          `json:"id"`
	Label         string          `json:"label"`
	Room          string          `json:"room"`
	CurrentStates map[string]any  `json:"currentStates"`
	Capabilities  []string        `json:"capabilities"`
	Attributes    map[string]any  `json:"attributes"`
	Commands      []string        `json:"commands"`
	Extra         json.RawMessage `json:"-"`
}

// The Hubitat tools are declared the way hamcp's conventions want: named after upstream, in
// their toolsets, read-only where they change nothing, and the sensitive ones confirmed.
func TestToolsDeclare(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		readOnly bool
		confirm  bool
	}{
		"hubitat_list_devices": {true, false}, "hubitat_get_device": {true, false}, "hubitat_get_attribute": {true, false},
		"hubitat_send_command": {false, true}, "hubitat_get_device_events": {true, false},
		"hubitat_get_hub_info": {true, false}, "hubitat_get_modes": {true, false}, "hubitat_set_mode": {false, true},
		"hubitat_list_variables": {true, false}, "hubitat_get_variable": {true, false}, "hubitat_set_variable": {false, false},
		"hubitat_get_hsm_status": {true, false}, "hubitat_set_hsm": {false, true}, "hubitat_check_for_update": {true, false},
	}
	got := map[string]*toolkit.Tool{}
	for _, tool := range hubitattools.Tools(hubitattools.Deps{}) {
		got[tool.Name()] = tool
	}
	for name, w := range want {
		tool, ok := got[name]
		if !ok {
			t.Errorf("%s is missing", name)
			continue
		}
		if tool.ReadOnly() != w.readOnly || (tool.ConfirmWhen() != "") != w.confirm || tool.Category() != "" {
			t.Errorf("%s: read-only %v, confirm %q, category %q", name, tool.ReadOnly(), tool.ConfirmWhen(), tool.Category())
		}
		if ts := tool.Toolset(); ts != hubitattools.SetDevices && ts != hubitattools.SetSystem {
			t.Errorf("%s is in toolset %q", name, ts)
		}
	}
}

func TestListDevices(t *testing.T) {
	t.Parallel()
	s := fx.Session(t)
	authorised := len(hub.DeviceIDs(true))
	tests := []struct {
		name  string
		args  map[string]any
		count int
		next  *int
		check func(t *testing.T, rows []deviceRow)
	}{
		{"compact", nil, authorised, nil, func(t *testing.T, rows []deviceRow) {
			r := rows[slices.IndexFunc(rows, func(r deviceRow) bool { return r.ID == "14" })]
			if r.Label != "Bathroom Climate" || r.Room != "Bathroom" || fmt.Sprint(r.CurrentStates["humidity"]) != "48" || fmt.Sprint(r.CurrentStates["battery"]) != "77" {
				t.Errorf("device 14: %+v", r)
			}
			if r.Attributes != nil || r.Commands != nil {
				t.Errorf("compact rows carry details: %+v", r)
			}
			if _, hidden := r.CurrentStates["numberOfButtons"]; hidden {
				t.Errorf("compact states beyond upstream's: %v", r.CurrentStates)
			}
		}},
		{"detailed", map[string]any{"detailed": true}, authorised, nil, func(t *testing.T, rows []deviceRow) {
			r := rows[slices.IndexFunc(rows, func(r deviceRow) bool { return r.ID == "5" })]
			if !slices.Contains(r.Capabilities, "ColorControl") || !slices.Contains(r.Commands, "setColorTemperature") || r.Attributes["colorName"] != "Warm White" {
				t.Errorf("device 5: %+v", r)
			}
		}},
		{"first page", map[string]any{"limit": 10}, 10, ptr(10), nil},
		{"last page", map[string]any{"limit": 10, "offset": 20}, authorised - 20, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out toolkit.List[deviceRow]
			s.OK(t, "hubitat_list_devices", tc.args, &out)
			if out.Total != authorised || out.Count != tc.count || len(out.Items) != tc.count {
				t.Fatalf("total %d count %d, want %d of %d", out.Total, out.Count, tc.count, authorised)
			}
			if (out.NextOffset == nil) != (tc.next == nil) || tc.next != nil && *out.NextOffset != *tc.next {
				t.Errorf("next_offset %v, want %v", out.NextOffset, tc.next)
			}
			for _, r := range out.Items {
				if r.ID == "29" {
					t.Errorf("device 29 is not authorised in Maker API, yet listed")
				}
			}
			if !slices.IsSortedFunc(out.Items, func(a, b deviceRow) int { return len(a.ID)*100 - len(b.ID)*100 + strings.Compare(a.ID, b.ID) }) {
				t.Errorf("not sorted by id")
			}
			if tc.check != nil {
				tc.check(t, out.Items)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestGetDeviceAndAttribute(t *testing.T) {
	t.Parallel()
	s := fx.Session(t)
	var dev struct {
		ID           string              `json:"id"`
		Label        string              `json:"label"`
		Room         string              `json:"room"`
		Capabilities []string            `json:"capabilities"`
		Attributes   []hubitat.Attribute `json:"attributes"`
		Commands     []hubitat.Command   `json:"commands"`
	}
	s.OK(t, "hubitat_get_device", map[string]any{"deviceId": "5"}, &dev)
	if dev.ID != "5" || dev.Label != "Bedroom Color Bulb" || dev.Room != "Bedroom" || !slices.Contains(dev.Capabilities, "ColorTemperature") {
		t.Errorf("device 5: %+v", dev)
	}
	mode := dev.Attributes[slices.IndexFunc(dev.Attributes, func(a hubitat.Attribute) bool { return a.Name == "colorMode" })]
	if mode.DataType != "ENUM" || !slices.Contains(mode.Values, "RGB") || mode.Value.String() != "CT" {
		t.Errorf("colorMode: %+v", mode)
	}
	if !slices.ContainsFunc(dev.Commands, func(c hubitat.Command) bool { return c.Name == "setColorTemperature" }) {
		t.Errorf("commands: %+v", dev.Commands)
	}

	var attr struct {
		DeviceID, Label, Attribute string
		Value                      any
	}
	s.OK(t, "hubitat_get_attribute", map[string]any{"deviceId": "15", "attribute": "humidity"}, &attr)
	if attr.DeviceID != "15" || attr.Label != "Basement Climate" || fmt.Sprint(attr.Value) != "61" {
		t.Errorf("humidity: %+v", attr)
	}
}

func TestGetDeviceEvents(t *testing.T) {
	t.Parallel()
	s := fx.Session(t)
	for i, v := range []string{"70", "71", "72"} {
		if err := hub.SetAttribute(28, "temperature", v, false); err != nil {
			t.Fatal(i, err)
		}
	}
	var out struct {
		DeviceID string `json:"deviceId"`
		Count    int    `json:"count"`
		Events   []struct {
			Name          string `json:"name"`
			Value         any    `json:"value"`
			Date          string `json:"date"`
			IsStateChange *bool  `json:"isStateChange"`
		} `json:"events"`
	}
	s.OK(t, "hubitat_get_device_events", map[string]any{"deviceId": "28", "limit": 2}, &out)
	if out.DeviceID != "28" || out.Count != 2 || len(out.Events) != 2 {
		t.Fatalf("events: %+v", out)
	}
	if e := out.Events[0]; e.Name != "temperature" || fmt.Sprint(e.Value) != "72" || e.Date == "" {
		t.Errorf("newest event: %+v", e)
	}
	s.OK(t, "hubitat_get_device_events", map[string]any{"deviceId": "28"}, &out)
	if out.Count > 10 || out.Count < 3 {
		t.Errorf("default limit: %d events", out.Count)
	}
}

// Every way a device call can go wrong says so, naming the argument, and unknown, malformed and
// unauthorised devices all answer upstream's "Device not found".
func TestDeviceErrors(t *testing.T) {
	t.Parallel()
	s := fx.Session(t)
	notFound := func(name, tool string, args map[string]any) tooltest.ErrCase {
		return tooltest.ErrCase{Name: name, Tool: tool, Args: args, Code: "not_found", Contains: "Device not found"}
	}
	cases := []tooltest.ErrCase{
		notFound("unknown device", "hubitat_get_device", map[string]any{"deviceId": "999"}),
		notFound("unknown device attribute", "hubitat_get_attribute", map[string]any{"deviceId": "999", "attribute": "switch"}),
		notFound("unknown device command", "hubitat_send_command", map[string]any{"deviceId": "999", "command": "on"}),
		notFound("unknown device events", "hubitat_get_device_events", map[string]any{"deviceId": "999"}),
		notFound("not a device id", "hubitat_get_device", map[string]any{"deviceId": "Porch Light"}),
		notFound("device Maker API did not authorise", "hubitat_get_attribute", map[string]any{"deviceId": "29", "attribute": "switch"}),
		notFound("command to a device Maker API did not authorise", "hubitat_send_command", map[string]any{"deviceId": "29", "command": "on"}),
		{Name: "no device id", Tool: "hubitat_get_device", Args: map[string]any{}, Code: "invalid_argument", Field: "deviceId"},
		{Name: "unknown attribute", Tool: "hubitat_get_attribute", Args: map[string]any{"deviceId": "14", "attribute": "pressure"},
			Code: "invalid_argument", Field: "attribute", Contains: "it has: "},
		{Name: "unsupported command", Tool: "hubitat_send_command", Args: map[string]any{"deviceId": "10", "command": "open"},
			Code: "invalid_argument", Field: "command", Contains: "does not support \"open\""},
		{Name: "similar command", Tool: "hubitat_send_command", Args: map[string]any{"deviceId": "3", "command": "turnOn"},
			Code: "invalid_argument", Field: "command", Contains: "it supports: "},
		{Name: "comma in a parameter", Tool: "hubitat_send_command", Args: map[string]any{"deviceId": "27", "command": "setLevel", "parameters": []any{"30,5"}},
			Code: "invalid_argument", Field: "parameters[0]", Contains: "comma"},
		{Name: "number instead of string parameter", Tool: "hubitat_send_command", Args: map[string]any{"deviceId": "27", "command": "setLevel", "parameters": []any{30}},
			Code: "invalid_argument", Field: "parameters"},
		{Name: "too many events", Tool: "hubitat_get_device_events", Args: map[string]any{"deviceId": "28", "limit": 5000}, Code: "invalid_argument", Field: "limit"},
		{Name: "bad page", Tool: "hubitat_list_devices", Args: map[string]any{"limit": 0.5}, Code: "invalid_argument", Field: "limit"},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			c.Check(t, s)
		})
	}
	if v, _ := hub.Attribute(29, "switch"); v != "off" {
		t.Errorf("the unauthorised device's switch is %q", v)
	}
}

// hubitat_devices narrows what Maker API authorised: the other devices do not exist for the
// model, with the very answer an unknown id gets.
func TestDeviceAllowList(t *testing.T) {
	t.Parallel()
	c, err := hubitat.New(hubitat.Options{URL: hub.URL(), AppID: hub.AppID(), Token: hub.Token(), Devices: []string{"1", "2", "8"}})
	if err != nil {
		t.Fatal(err)
	}
	c.Start(context.Background())
	t.Cleanup(func() { c.Close() })
	testkit.Eventually(t, "the allow-listed client's cache", c.Cache().Live)
	s := served(withClient(c)).Session(t)

	var out toolkit.List[deviceRow]
	s.OK(t, "hubitat_list_devices", nil, &out)
	var ids []string
	for _, r := range out.Items {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{"1", "2", "8"}) || out.Total != 3 {
		t.Errorf("listed %v (total %d)", ids, out.Total)
	}
	s.OK(t, "hubitat_get_attribute", map[string]any{"deviceId": "2", "attribute": "switch"}, nil)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"hubitat_get_device", map[string]any{"deviceId": "3"}},
		{"hubitat_get_attribute", map[string]any{"deviceId": "3", "attribute": "switch"}},
		{"hubitat_send_command", map[string]any{"deviceId": "3", "command": "on"}},
		{"hubitat_get_device_events", map[string]any{"deviceId": "3"}},
	} {
		denied := s.Fail(t, call.tool, call.args)
		call.args["deviceId"] = "999"
		unknown := s.Fail(t, call.tool, call.args)
		if denied.Code != "not_found" || denied.Message != "Device not found" || fmt.Sprint(denied) != fmt.Sprint(unknown) {
			t.Errorf("%s on a device outside hubitat_devices: %+v; on an unknown one: %+v", call.tool, denied, unknown)
		}
	}
	if v, _ := hub.Attribute(3, "switch"); v != "off" {
		t.Errorf("the porch light outside the allow-list was switched %s", v)
	}
}

func TestSendCommand(t *testing.T) {
	t.Parallel()
	s := fx.Session(t)
	tests := []struct {
		name       string
		id         int
		command    string
		params     []any
		attr, want string
		echoed     []any
	}{
		{"switch on", 4, "on", nil, "switch", "on", nil},
		{"integer level", 27, "setLevel", []any{"30"}, "level", "30", []any{30.0}},
		{"leading zero becomes a number", 2, "setLevel", []any{"045"}, "level", "45", []any{45.0}},
		{"decimal setpoint", 16, "setHeatingSetpoint", []any{"66.5"}, "heatingSetpoint", "66.5", []any{66.5}},
		{"text stays text", 22, "setSpeed", []any{"medium"}, "speed", "medium", []any{"medium"}},
		{"lock needs no confirmation", 8, "lock", nil, "lock", "locked", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out struct {
				Success    bool   `json:"success"`
				DeviceID   string `json:"deviceId"`
				Device     string `json:"device"`
				Command    string `json:"command"`
				Parameters []any  `json:"parameters"`
			}
			id := fmt.Sprint(tc.id)
			s.OK(t, "hubitat_send_command", map[string]any{"deviceId": id, "command": tc.command, "parameters": tc.params}, &out)
			if !out.Success || out.DeviceID != id || out.Command != tc.command || out.Device == "" || fmt.Sprint(out.Parameters) != fmt.Sprint(tc.echoed) {
				t.Errorf("result %+v", out)
			}
			if v, _ := hub.Attribute(tc.id, tc.attr); v != tc.want {
				t.Errorf("the hub's %s is %q, want %q", tc.attr, v, tc.want)
			}
			// The event comes back over the eventsocket into the cache the read tools use.
			testkit.Eventually(t, "the cache to see "+tc.attr+" "+tc.want, func() bool {
				d, _ := client.Cache().Get(id)
				a, _ := d.Attribute(tc.attr)
				return a.Value.String() == tc.want
			})
		})
	}
}

// Unlocking a Hubitat lock and changing its codes are what unlocking a Home Assistant lock is:
// the model's confirm=true does not do it; the user does, in their client or in the panel.
func TestLockCommandsNeedTheUser(t *testing.T) {
	t.Parallel()
	t.Run("refused without the user", func(t *testing.T) {
		t.Parallel()
		s := fx.Session(t)
		for _, args := range []map[string]any{
			{"deviceId": "8", "command": "unlock", "confirm": true},
			{"deviceId": "8", "command": "setCode", "parameters": []any{"2", "0000", "Burglar"}, "confirm": true},
			{"deviceId": "8", "command": "deleteCode", "parameters": []any{"1"}},
			{"deviceId": "21", "command": "open", "confirm": true},
		} {
			e := s.Fail(t, "hubitat_send_command", args)
			if e.Code != "confirmation_required" {
				t.Fatalf("%v: %+v", args, e)
			}
			id, _ := e.Details["request_id"].(string)
			if p, err := fx.Perms.Request(id); err != nil || p.Category != permission.ConfirmKind || p.Tool != "hubitat_send_command" {
				t.Errorf("%v: no confirmation request waits for the user: %+v %v", args, p, err)
			}
		}
		if v, _ := hub.Attribute(8, "lock"); v != "locked" {
			t.Errorf("the front door is %s", v)
		}
		if v, _ := hub.Attribute(8, "lockCodes"); strings.Contains(v, "Burglar") || !strings.Contains(v, "Family") {
			t.Errorf("the lock codes changed: %s", v)
		}
	})
	t.Run("the user answers in the client", func(t *testing.T) {
		t.Parallel()
		var asked []string
		answer := "decline"
		s := fx.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			if answer != "accept" {
				return &mcp.ElicitResult{Action: answer}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
		}})
		s.OK(t, "hubitat_send_command", map[string]any{"deviceId": "9", "command": "lock"}, nil) // not asked
		unlock := map[string]any{"deviceId": "9", "command": "unlock"}
		if e := s.Fail(t, "hubitat_send_command", unlock); e.Code != "confirmation_declined" {
			t.Fatalf("declined, yet: %+v", e)
		}
		if v, _ := hub.Attribute(9, "lock"); v != "locked" {
			t.Fatalf("the back door is %s after the user declined", v)
		}
		answer = "accept"
		s.OK(t, "hubitat_send_command", unlock, nil)
		if v, _ := hub.Attribute(9, "lock"); v != "unlocked" {
			t.Errorf("the back door is %s after the user accepted", v)
		}
		if len(asked) != 2 || !strings.Contains(asked[0], `"unlock" on Hubitat device 9 (Back Door Lock)`) {
			t.Errorf("the user was asked %q", asked)
		}
	})
	t.Run("the user approves in the panel", func(t *testing.T) {
		t.Parallel()
		s := fx.Session(t)
		args := map[string]any{"deviceId": "18", "command": "push", "parameters": []any{"1"}}
		s.OK(t, "hubitat_send_command", args, nil) // a button: nothing to confirm
		open := map[string]any{"deviceId": "21", "command": "open"}
		e := s.Fail(t, "hubitat_send_command", open)
		id, _ := e.Details["request_id"].(string)
		fx.Approve(t, id)
		s.OK(t, "hubitat_send_command", open, nil)
		if v, _ := hub.Attribute(21, "valve"); v != "open" {
			t.Errorf("the valve is %s after the user approved", v)
		}
		s.OK(t, "hubitat_send_command", map[string]any{"deviceId": "21", "command": "close"}, nil)
		// The approval was for that one call.
		if e := s.Fail(t, "hubitat_send_command", open); e.Code != "confirmation_required" {
			t.Errorf("a second open rode on the approval: %+v", e)
		}
	})
}

// Firmware that lists a device's commands as bare strings (/devices/<id>) gives the tools the
// same commands as the object form.
func TestBareCommandFirmware(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{BareCommands: true}, hubitat.Options{})
	s := served(withClient(c)).Session(t)
	var dev struct {
		Commands []hubitat.Command `json:"commands"`
	}
	s.OK(t, "hubitat_get_device", map[string]any{"deviceId": "1"}, &dev)
	var names []string
	for _, c := range dev.Commands {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, "setLevel") || !slices.Contains(names, "on") {
		t.Errorf("commands %v", names)
	}
	s.OK(t, "hubitat_send_command", map[string]any{"deviceId": "1", "command": "setLevel", "parameters": []any{"20"}}, nil)
	if v, _ := h.Attribute(1, "level"); v != "20" {
		t.Errorf("level %s", v)
	}
	tooltest.ErrCase{Tool: "hubitat_send_command", Args: map[string]any{"deviceId": "1", "command": "unlock"}, Code: "invalid_argument", Field: "command"}.Check(t, s)
}
