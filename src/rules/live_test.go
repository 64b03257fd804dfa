package rules

// Every action type and every condition type runs through the real engine, fired by a real hub
// event, and is judged by what the simulated hub received: unit tests against a fake Env cannot
// show that the engine, the client and the hub agree. Each
// case has a hub of its own (ownHub): the package's shared hub has nearly every device in use
// by engine_test.go's parallel tests, and many cases change hub-wide state (mode, HSM, hub
// variables, the hub's location). The trigger is always a push of button 1 of the Bedside
// Button (device 17), sent to the hub as a command so that it comes back over the eventsocket.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/store"
)

// liveButton is the device whose button 1 fires every rule of these tests.
const liveButton = "17"

var pushedButton = Trigger{Type: "button_event", DeviceID: liveButton, Action: "pushed"}

// liveEngine is an engine on a hub of its own, with a fake clock at `at`. Its debug log keeps
// every level: the tests count the rule's "triggered by" lines, and the log action writes one.
func liveEngine(t *testing.T, o simhub.Options, at time.Time) *testEngine {
	t.Helper()
	h, c := ownHub(t, o)
	te := startEngineOn(t, h, c, liveStore(t), fakeclock.New(at))
	if _, err := te.st.SetDebugLogLevel(context.Background(), "debug"); err != nil {
		t.Fatal(err)
	}
	return te
}

var (
	liveTemplateOnce sync.Once
	liveTemplate     []byte
	liveTemplateErr  error
)

// liveStore is a fresh store file for one case: a copy of a store migrated once per package
// (opening a new file runs every migration, several times the cost of the rest of a case).
func liveStore(t *testing.T) *hubstore.Store {
	t.Helper()
	liveTemplateOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hamcp-live-")
		if err != nil {
			liveTemplateErr = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "hamcp.db")
		s, err := store.Open(path)
		if err != nil {
			liveTemplateErr = err
			return
		}
		if _, err := hubstore.Open(context.Background(), s); err != nil {
			s.Close()
			liveTemplateErr = err
			return
		}
		if liveTemplateErr = s.Close(); liveTemplateErr == nil { // Close checkpoints the WAL into the file
			liveTemplate, liveTemplateErr = os.ReadFile(path)
		}
	})
	if liveTemplateErr != nil {
		t.Fatal(liveTemplateErr)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hamcp.db"), liveTemplate, 0o600); err != nil {
		t.Fatal(err)
	}
	return openTestStore(t, dir)
}

// triggered counts the rule's "triggered by" lines in the debug log: one per run that passed
// its trigger's gate, whether the rule's conditions were met or not.
func (te *testEngine) triggered(id string) int {
	te.t.Helper()
	logs, err := te.st.DebugLogs(context.Background(), hubstore.DebugQuery{RuleID: id})
	if err != nil {
		te.t.Fatal(err)
	}
	n := 0
	for _, l := range logs {
		if strings.Contains(l.Message, "triggered by button_event") {
			n++
		}
	}
	return n
}

// push presses button 1 at the hub and waits until the rule has run (or found its conditions
// unmet) and is idle.
func (te *testEngine) push(id string) Diagnostics {
	te.t.Helper()
	before := te.triggered(id)
	if err := te.hub.SendCommand(context.Background(), liveButton, "push", "1"); err != nil {
		te.t.Fatal(err)
	}
	var d Diagnostics
	testkit.Eventually(te.t, "the button push to run rule "+id, func() bool {
		if te.triggered(id) <= before {
			return false
		}
		d = te.diag(id)
		return !d.Running && d.Queued == 0
	})
	return d
}

// command sends a command to the hub and waits until the client's cache, which the engine
// reads, shows its effect.
func (te *testEngine) command(id int, attr, want, cmd string, args ...string) {
	te.t.Helper()
	if err := te.hub.SendCommand(context.Background(), fmt.Sprint(id), cmd, args...); err != nil {
		te.t.Fatal(err)
	}
	te.waitCached(id, attr, want)
}

// is checks a device attribute at the hub.
func (te *testEngine) is(id int, attr, want string) {
	te.t.Helper()
	if got, ok := te.sim.Attribute(id, attr); !ok || got != want {
		te.t.Errorf("device %d %s = %q at the hub; want %q", id, attr, got, want)
	}
}

// requested checks how many times the hub received a route ("GET /devices/3/on").
func (te *testEngine) requested(route string, want int) {
	te.t.Helper()
	if got := te.sim.Requests(route); got != want {
		te.t.Errorf("the hub received %q %d times; want %d", route, got, want)
	}
}

// ranOK checks that the rule ran n times without an error.
func ranOK(t *testing.T, d Diagnostics, n int) {
	t.Helper()
	if d.Rule.ExecutionCount != n || d.Rule.ErrorCount != 0 {
		t.Errorf("rule ran %d times with %d errors (%s); want %d runs and none", d.Rule.ExecutionCount, d.Rule.ErrorCount, d.Rule.LastError, n)
	}
}

// hubState is everything a rule could change at the hub: every device's attributes (but the
// trigger's button, which the push itself changes), the mode, HSM and the hub variables.
func (te *testEngine) hubState() string {
	te.t.Helper()
	ctx := context.Background()
	devs, err := te.hub.AllDevices(ctx)
	if err != nil {
		te.t.Fatal(err)
	}
	modes, err := te.hub.Modes(ctx)
	if err != nil {
		te.t.Fatal(err)
	}
	vars, err := te.hub.Variables(ctx)
	if err != nil {
		te.t.Fatal(err)
	}
	state := map[string]any{"mode": modes, "hsm": te.sim.HSM(), "variables": vars}
	for _, d := range devs {
		if d.ID == liveButton {
			continue
		}
		attrs := map[string]string{}
		for _, a := range d.Attributes {
			attrs[a.Name] = a.Value.String()
		}
		state["device "+d.ID] = attrs
	}
	b, err := json.Marshal(state)
	if err != nil {
		te.t.Fatal(err)
	}
	return string(b)
}

func fl(f float64) *float64 { return &f }

// notificationDevice finds a device of the hub that takes deviceNotification (Hubitat's
// Notification capability), which send_notification needs.
func notificationDevice(c *hubitat.Client) (string, bool) {
	for _, d := range c.Cache().All() {
		if d.HasCommand("deviceNotification") {
			return d.ID, true
		}
	}
	return "", false
}

// hook is an HTTP endpoint that records the requests an http_request action sends.
type hook struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newHook(t testing.TB) *hook {
	h := &hook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hook) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// liveRig is one case's engine on its own hub, a web hook when the case asks for one, and
// the hub's state before the push when the case took it.
type liveRig struct {
	*testEngine
	hook   *hook
	before string
}

// hookURL starts the case's web hook.
func (x *liveRig) hookURL() string {
	x.hook = newHook(x.t)
	return x.hook.URL
}

// liveAction is one case of TestLiveEveryActionType: a rule fired by the button push, and
// what the hub (or the store, the debug log, a web hook) must show afterwards.
type liveAction struct {
	name string
	typ  string // the action type the case is about
	// rule makes the rule's actions (and, when set, its local variables); x is the case's
	// rig, for cases that need something of it (a hook URL, a notifier id).
	rule  func(x *liveRig) Rule
	setup func(x *liveRig)
	check func(t *testing.T, x *liveRig, r Rule, d Diagnostics)
}

func liveActionCases() []liveAction {
	acts := func(a ...Action) func(*liveRig) Rule {
		return func(*liveRig) Rule { return Rule{Actions: a} }
	}
	return []liveAction{
		{name: "device_command", typ: "device_command", rule: acts(hubCmd("4", "on")),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(4, "switch", "on")
				x.requested("GET /devices/4/on", 1)
			}},
		{name: "toggle_device on to off", typ: "toggle_device", rule: acts(Action{Type: "toggle_device", DeviceID: "1"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(1, "switch", "off")
				x.requested("GET /devices/1/off", 1)
			}},
		{name: "toggle_device off to on", typ: "toggle_device", rule: acts(Action{Type: "toggle_device", DeviceID: "3"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(3, "switch", "on")
				x.requested("GET /devices/3/on", 1)
			}},
		{name: "activate_scene", typ: "activate_scene", rule: acts(Action{Type: "activate_scene", SceneDeviceID: "27"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(27, "switch", "on")
				x.requested("GET /devices/27/on", 1)
			}},
		{name: "set_level with a fade", typ: "set_level", rule: acts(Action{Type: "set_level", DeviceID: "2", Level: N(35), Duration: fl(2)}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(2, "level", "35")
				x.is(2, "switch", "on")
				x.requested("GET /devices/2/setLevel/35,2", 1)
			}},
		{name: "set_color", typ: "set_color", rule: acts(Action{Type: "set_color", DeviceID: "6", Hue: fl(30), Saturation: fl(50), Level: N(70)}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(6, "hue", "30")
				x.is(6, "saturation", "50")
				x.is(6, "level", "70")
			}},
		{name: "set_color_temperature", typ: "set_color_temperature", rule: acts(Action{Type: "set_color_temperature", DeviceID: "7", Temperature: fl(4000), Level: N(90)}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(7, "colorTemperature", "4000")
				x.is(7, "level", "90")
				x.is(7, "switch", "on")
			}},
		{name: "lock", typ: "lock", rule: acts(Action{Type: "lock", DeviceID: "9"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(9, "lock", "locked")
				x.requested("GET /devices/9/lock", 1)
			}},
		{name: "unlock", typ: "unlock", rule: acts(Action{Type: "unlock", DeviceID: "8"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(8, "lock", "unlocked")
				x.requested("GET /devices/8/unlock", 1)
			}},
		{name: "set_variable in the store, with the event's value", typ: "set_variable",
			rule: acts(Action{Type: "set_variable", VariableName: "lastButton", Value: S("button %value%")}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				v, ok, err := x.st.RuleVariable(context.Background(), "lastButton")
				if err != nil || !ok || v.Value != "button 1" {
					t.Errorf("rule variable lastButton = %+v, %v, %v; want \"button 1\"", v, ok, err)
				}
			}},
		{name: "set_local_variable", typ: "set_local_variable",
			rule: acts(Action{Type: "set_local_variable", VariableName: "pressedBy", Value: S("%device%")}),
			check: func(t *testing.T, x *liveRig, r Rule, d Diagnostics) {
				if got := d.Rule.LocalVariables["pressedBy"]; got != "Bedside Button" {
					t.Errorf("stored local variable pressedBy = %v; want Bedside Button", got)
				}
			}},
		{name: "variable_math on a hub variable", typ: "variable_math",
			rule: acts(Action{Type: "variable_math", VariableName: "TargetTemp", Operation: "add", Operand: N(2), Scope: "global"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				v, err := x.hub.Variable(context.Background(), "TargetTemp")
				if err != nil || v.Value.String() != "70" {
					t.Errorf("hub variable TargetTemp = %+v, %v; want 68+2 = 70", v, err)
				}
				x.requested("GET /hubvariables/TargetTemp/70", 1)
			}},
		{name: "variable_math on a local variable", typ: "variable_math",
			rule: func(*liveRig) Rule {
				return Rule{LocalVariables: map[string]any{"count": "5"},
					Actions: []Action{{Type: "variable_math", VariableName: "count", Operation: "multiply", Operand: N(3)}}}
			},
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				if got := d.Rule.LocalVariables["count"]; got != "15" {
					t.Errorf("local count = %v; want 5×3 = 15", got)
				}
			}},
		{name: "set_mode", typ: "set_mode", rule: acts(Action{Type: "set_mode", Mode: "Away"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				if m := x.sim.Mode(); m != "Away" {
					t.Errorf("hub mode = %s; want Away", m)
				}
				x.requested("GET /modes/4", 1)
			}},
		{name: "set_hsm", typ: "set_hsm", rule: acts(Action{Type: "set_hsm", Status: "armNight"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				if s := x.sim.HSM(); s != "armedNight" {
					t.Errorf("HSM = %s; want armedNight", s)
				}
				x.requested("GET /hsm/armNight", 1)
			}},
		{name: "delay resumes when the clock reaches it", typ: "delay",
			rule: acts(hubCmd("27", "on"), Action{Type: "delay", Seconds: 60, DelayID: "off-later"}, hubCmd("27", "off")),
			check: func(t *testing.T, x *liveRig, r Rule, d Diagnostics) {
				x.is(27, "switch", "on")
				if len(d.PendingDelays) != 1 || d.PendingDelays[0].DelayID != "off-later" {
					t.Fatalf("pending delays after the first segment: %+v", d.PendingDelays)
				}
				x.clock.Advance(59 * time.Second)
				if d := x.idle(r.ID); len(d.PendingDelays) != 1 {
					t.Fatalf("the delay ended after 59 of 60 s: %+v", d.PendingDelays)
				}
				x.is(27, "switch", "on")
				x.clock.Advance(time.Second)
				x.waitAttr(27, "switch", "off")
				if d := x.idle(r.ID); len(d.PendingDelays) != 0 || d.Rule.ErrorCount != 0 {
					t.Errorf("after the delay: %+v, %s", d.PendingDelays, d.Rule.LastError)
				}
			}},
		{name: "cancel_delayed stops a pending delay", typ: "cancel_delayed",
			// First push: 27 was off, so turn it on and wait 60 s before turning 3 on.
			// Second push: 27 is on, so cancel that wait.
			rule: acts(Action{Type: "if_then_else",
				Condition:   &Condition{Type: "device_state", DeviceID: "27", Attribute: "switch", Value: S("off")},
				ThenActions: []Action{hubCmd("27", "on"), {Type: "delay", Seconds: 60, DelayID: "porch"}, hubCmd("3", "on")},
				ElseActions: []Action{{Type: "cancel_delayed", DelayID: "porch"}}}),
			check: func(t *testing.T, x *liveRig, r Rule, d Diagnostics) {
				x.is(27, "switch", "on")
				if len(d.PendingDelays) != 1 {
					t.Fatalf("pending delays after the first push: %+v", d.PendingDelays)
				}
				x.waitCached(27, "switch", "on")
				d = x.push(r.ID)
				if len(d.PendingDelays) != 0 || d.Rule.ErrorCount != 0 {
					t.Fatalf("after cancel_delayed: %+v, %s", d.PendingDelays, d.Rule.LastError)
				}
				x.clock.Advance(2 * time.Minute)
				x.idle(r.ID)
				x.is(3, "switch", "off")
				x.requested("GET /devices/3/on", 0)
			}},
		{name: "if_then_else takes then", typ: "if_then_else",
			setup: func(x *liveRig) { x.command(27, "switch", "on", "on") },
			rule: acts(Action{Type: "if_then_else",
				Condition:   &Condition{Type: "device_state", DeviceID: "27", Attribute: "switch", Value: S("on")},
				ThenActions: []Action{hubCmd("3", "on")}, ElseActions: []Action{hubCmd("4", "on")}}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(3, "switch", "on")
				x.requested("GET /devices/4/on", 0)
			}},
		{name: "if_then_else takes else", typ: "if_then_else",
			rule: acts(Action{Type: "if_then_else",
				Condition:   &Condition{Type: "device_state", DeviceID: "27", Attribute: "switch", Value: S("on")},
				ThenActions: []Action{hubCmd("3", "on")}, ElseActions: []Action{hubCmd("4", "on")}}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(4, "switch", "on")
				x.requested("GET /devices/3/on", 0)
			}},
		{name: "repeat", typ: "repeat", rule: acts(Action{Type: "repeat", Times: 3, Actions: []Action{hubCmd("4", "on")}}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.requested("GET /devices/4/on", 3)
			}},
		{name: "stop", typ: "stop", rule: acts(hubCmd("3", "on"), Action{Type: "stop"}, hubCmd("27", "on")),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(3, "switch", "on")
				x.is(27, "switch", "off")
				x.requested("GET /devices/27/on", 0)
			}},
		{name: "log", typ: "log", rule: acts(Action{Type: "log", Level: S("warn"), Message: "button %value% of %device%"}),
			check: func(t *testing.T, x *liveRig, r Rule, d Diagnostics) {
				logs, err := x.st.DebugLogs(context.Background(), hubstore.DebugQuery{RuleID: r.ID, Level: "warn"})
				if err != nil || len(logs) != 1 || logs[0].Message != "button 1 of Bedside Button" || logs[0].Component != "rule" {
					t.Errorf("warn lines of the rule: %+v, %v; want one \"button 1 of Bedside Button\"", logs, err)
				}
			}},
		{name: "capture_state", typ: "capture_state", rule: acts(Action{Type: "capture_state", DeviceIDs: []string{"1", "5"}, StateID: "evening"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				cs, ok, err := x.st.CapturedState(context.Background(), "evening")
				if err != nil || !ok {
					t.Fatalf("captured state: %v, %v", ok, err)
				}
				if got := cs.Devices["1"]; got["switch"] != "on" || got["level"] != "60" {
					t.Errorf("captured device 1: %v; want switch on, level 60", got)
				}
				if got := cs.Devices["5"]; got["switch"] != "off" || got["colorTemperature"] != "2700" || got["hue"] != "8" {
					t.Errorf("captured device 5: %v; want switch off, colorTemperature 2700, hue 8", got)
				}
			}},
		{name: "restore_state", typ: "restore_state",
			rule: acts(Action{Type: "capture_state", DeviceIDs: []string{"1"}, StateID: "before"},
				hubCmd("1", "setLevel", "20"), hubCmd("1", "off"),
				Action{Type: "restore_state", StateID: "before"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(1, "switch", "on")
				x.is(1, "level", "60")
				x.requested("GET /devices/1/setLevel/60", 1)
			}},
		{name: "send_notification", typ: "send_notification",
			rule: func(x *liveRig) Rule {
				id, ok := notificationDevice(x.hub)
				if !ok {
					x.t.Fatal("the simulated hub has no device with the deviceNotification command (Hubitat's Notification " +
						"capability), so send_notification cannot reach it: dev/sim/hubitat/devices.go needs a notification device")
				}
				return Rule{Actions: []Action{{Type: "send_notification", DeviceID: id, Message: "Button %value% pushed"}}}
			},
			check: func(t *testing.T, x *liveRig, r Rule, d Diagnostics) {
				x.requested("GET /devices/"+r.Actions[0].DeviceID+"/deviceNotification/Button 1 pushed", 1)
			}},
		{name: "set_thermostat", typ: "set_thermostat",
			rule: acts(Action{Type: "set_thermostat", DeviceID: "16", ThermostatMode: "cool", CoolingSetpoint: fl(74), FanMode: "on"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(16, "thermostatMode", "cool")
				x.is(16, "coolingSetpoint", "74")
				x.is(16, "thermostatFanMode", "on")
			}},
		{name: "http_request", typ: "http_request",
			rule: func(x *liveRig) Rule {
				return Rule{Actions: []Action{{Type: "http_request", URL: x.hookURL() + "/pushed", Method: "POST",
					ContentType: "text/plain", Body: "button %value% of %device%"}}}
			},
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				want := []string{"POST /pushed text/plain button 1 of Bedside Button"}
				if got := x.hook.requests(); !reflect.DeepEqual(got, want) {
					t.Errorf("the hook received %q; want %q", got, want)
				}
			}},
		{name: "speak", typ: "speak", rule: acts(Action{Type: "speak", DeviceID: "23", Message: "Button %value% pushed", Volume: fl(40)}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(23, "trackDescription", "Button 1 pushed")
				x.is(23, "volume", "40")
				x.requested("GET /devices/23/speak/Button 1 pushed,40", 1)
			}},
		{name: "comment does nothing", typ: "comment",
			setup: func(x *liveRig) { x.before = x.hubState() },
			rule:  acts(Action{Type: "comment", Text: "turn nothing on"}, Action{Type: "set_variable", VariableName: "after", Value: S("yes")}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				if after := x.hubState(); after != x.before {
					t.Errorf("a comment changed the hub:\nbefore %s\nafter  %s", x.before, after)
				}
				if v, ok, _ := x.st.RuleVariable(context.Background(), "after"); !ok || v.Value != "yes" {
					t.Errorf("the run did not go on past the comment: %+v", v)
				}
			}},
		{name: "set_valve", typ: "set_valve", rule: acts(Action{Type: "set_valve", DeviceID: "21", Command: "open"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(21, "valve", "open")
			}},
		{name: "set_fan_speed", typ: "set_fan_speed", rule: acts(Action{Type: "set_fan_speed", DeviceID: "22", Speed: "medium"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(22, "speed", "medium")
				x.is(22, "switch", "on")
			}},
		{name: "set_shade to a position", typ: "set_shade", rule: acts(Action{Type: "set_shade", DeviceID: "19", Position: fl(40)}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(19, "position", "40")
				x.is(19, "windowShade", "partially open")
			}},
		{name: "set_shade by command", typ: "set_shade", rule: acts(Action{Type: "set_shade", DeviceID: "20", Command: "close"}),
			check: func(t *testing.T, x *liveRig, _ Rule, d Diagnostics) {
				x.is(20, "windowShade", "closed")
				x.is(20, "position", "0")
			}},
	}
}

// Every action type, in a rule fired by a real button push, acts at the hub.
func TestLiveEveryActionType(t *testing.T) {
	t.Parallel()
	cases := liveActionCases()
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.typ] = true
	}
	for _, typ := range ActionTypes {
		if !covered[typ] {
			t.Errorf("no live case for action type %s", typ)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := &liveRig{testEngine: liveEngine(t, simhub.Options{}, engineT0)}
			if tc.setup != nil {
				tc.setup(x)
			}
			r := tc.rule(x)
			r.Name, r.Triggers = tc.name, []Trigger{pushedButton}
			r = x.create(r)
			d := x.push(r.ID)
			ranOK(t, d, 1)
			tc.check(t, x, r, d)
		})
	}
}

// liveCondition is one case of TestLiveEveryConditionType: the hub is put in a state, the
// button is pushed, and the rule's action (Porch Light on) runs exactly when want says.
type liveCondition struct {
	name string
	cond Condition
	want bool
	hub  simhub.Options
	at   time.Time // the engine's clock; zero is engineT0 (Monday 1 June 2026, 08:00 in Boston)
	// hubTime starts the engine's clock at the real time instead: device_was compares it with
	// the hub's event history, which the simulated hub dates by the real clock.
	hubTime bool
	setup   func(te *testEngine)
}

var sydney = simhub.Location{Name: "Sydney", Latitude: -33.8688, Longitude: 151.2093, TimeZone: "Australia/Sydney", TemperatureScale: "C"}

func liveConditionCases() []liveCondition {
	switchOn := func(te *testEngine) { te.command(27, "switch", "on", "on") }
	state := Condition{Type: "device_state", DeviceID: "27", Attribute: "switch", Value: S("on")}
	warm := Condition{Type: "device_state", DeviceID: "14", Attribute: "temperature", Operator: ">", Value: N(75)}
	was := Condition{Type: "device_was", DeviceID: "27", Attribute: "switch", Value: S("on"), ForSeconds: 60}
	morning := Condition{Type: "time_range", Start: "08:00", End: "10:00"}
	lateNight := Condition{Type: "time_range", Start: "22:00", End: "06:00"}
	dusk := Condition{Type: "time_range", Start: "sunset-30", End: "23:00"} // Boston, 1 June: sunset 20:14
	evening := Condition{Type: "mode", Modes: []string{"Evening", "Night"}}
	guests := Condition{Type: "variable", VariableName: "GuestMode", Value: S("true")}
	weekend := Condition{Type: "days_of_week", Days: []string{"Saturday", "Sunday"}}
	sunUp := Condition{Type: "sun_position", Position: "up"}
	armedHome := Condition{Type: "hsm_status", Status: "armedHome"}
	samHome := Condition{Type: "presence", DeviceID: "25", Status: "present"}
	unlocked := Condition{Type: "lock", DeviceID: "8", Status: "unlocked"}
	cooling := Condition{Type: "thermostat_mode", DeviceID: "16", Mode: "cool"}
	heating := Condition{Type: "thermostat_state", DeviceID: "16", State: "heating"}
	dark := Condition{Type: "illuminance", DeviceID: "13", Operator: "<", Value: N(50)}
	brewing := Condition{Type: "power", DeviceID: "4", Operator: ">", Value: N(100)}
	// device_was: the switch turned on at the hub, then the engine's clock moves on.
	onFor := func(d time.Duration) func(te *testEngine) {
		return func(te *testEngine) {
			switchOn(te)
			evs, err := te.hub.DeviceEvents(context.Background(), "27", 1)
			if err != nil || len(evs) != 1 || evs[0].Name != "switch" || evs[0].Date.IsZero() {
				te.t.Fatalf("the hub's last event of device 27: %+v, %v", evs, err)
			}
			te.clock.AdvanceTo(evs[0].Date.Add(d))
		}
	}
	return []liveCondition{
		{name: "device_state true", cond: state, want: true, setup: switchOn},
		{name: "device_state false", cond: state},
		{name: "device_state numeric true", cond: warm, want: true, setup: func(te *testEngine) { te.set(14, "temperature", "78.5"); te.waitCached(14, "temperature", "78.5") }},
		{name: "device_state numeric false", cond: warm},
		{name: "device_was held long enough", cond: was, want: true, hubTime: true, setup: onFor(61 * time.Second)},
		{name: "device_was not held long enough", cond: was, hubTime: true, setup: onFor(30 * time.Second)},
		{name: "time_range inside", cond: morning, want: true, at: time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC)}, // 09:00 in Boston
		{name: "time_range outside", cond: morning, at: time.Date(2026, 6, 1, 15, 0, 0, 0, time.UTC)},            // 11:00 in Boston
		{name: "time_range over midnight inside", cond: lateNight, want: true, at: time.Date(2026, 6, 1, 7, 30, 0, 0, time.UTC)},
		{name: "time_range over midnight outside", cond: lateNight, at: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)},
		{name: "time_range from sunset-30 inside", cond: dusk, want: true, at: time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC)}, // 20:00
		{name: "time_range from sunset-30 outside", cond: dusk, at: time.Date(2026, 6, 1, 23, 0, 0, 0, time.UTC)},           // 19:00
		{name: "mode true", cond: evening, want: true, setup: func(te *testEngine) {
			if _, _, err := te.hub.SetMode(context.Background(), "Evening"); err != nil {
				te.t.Fatal(err)
			}
			testkit.Eventually(te.t, "the mode event", func() bool { return te.hub.Cache().Mode() == "Evening" })
		}},
		{name: "mode false", cond: evening},
		{name: "variable true", cond: guests, want: true, setup: func(te *testEngine) {
			if err := te.hub.SetVariable(context.Background(), "GuestMode", "true"); err != nil {
				te.t.Fatal(err)
			}
		}},
		{name: "variable false", cond: guests},
		{name: "days_of_week Saturday in Boston", cond: weekend, want: true, at: time.Date(2026, 6, 6, 16, 0, 0, 0, time.UTC)},
		// Saturday 03:00 in UTC is still Friday 23:00 at the hub.
		{name: "days_of_week Friday in Boston", cond: weekend, at: time.Date(2026, 6, 6, 3, 0, 0, 0, time.UTC)},
		// The same instant: noon in Boston, 02:00 in Sydney.
		{name: "sun_position up in Boston", cond: sunUp, want: true, at: time.Date(2026, 6, 1, 16, 0, 0, 0, time.UTC)},
		{name: "sun_position down in Sydney", cond: sunUp, hub: simhub.Options{Location: sydney}, at: time.Date(2026, 6, 1, 16, 0, 0, 0, time.UTC)},
		{name: "hsm_status true", cond: armedHome, want: true, setup: func(te *testEngine) {
			if err := te.hub.SetHSM(context.Background(), "armHome"); err != nil {
				te.t.Fatal(err)
			}
			testkit.Eventually(te.t, "the HSM event", func() bool { return te.hub.Cache().HSM() == "armedHome" })
		}},
		{name: "hsm_status false", cond: armedHome},
		{name: "presence true", cond: samHome, want: true, setup: func(te *testEngine) { te.command(25, "presence", "present", "arrived") }},
		{name: "presence false", cond: samHome},
		{name: "lock true", cond: unlocked, want: true, setup: func(te *testEngine) { te.command(8, "lock", "unlocked", "unlock") }},
		{name: "lock false", cond: unlocked},
		{name: "thermostat_mode true", cond: cooling, want: true, setup: func(te *testEngine) {
			te.command(16, "thermostatMode", "cool", "setThermostatMode", "cool")
		}},
		{name: "thermostat_mode false", cond: cooling},
		{name: "thermostat_state true", cond: heating, want: true, setup: func(te *testEngine) {
			te.command(16, "thermostatOperatingState", "heating", "setHeatingSetpoint", "72")
		}},
		{name: "thermostat_state false", cond: heating},
		{name: "illuminance true", cond: dark, want: true, setup: func(te *testEngine) { te.set(13, "illuminance", "30"); te.waitCached(13, "illuminance", "30") }},
		{name: "illuminance false", cond: dark},
		{name: "power true", cond: brewing, want: true, setup: func(te *testEngine) { te.set(4, "power", "150"); te.waitCached(4, "power", "150") }},
		{name: "power false", cond: brewing},
	}
}

// Every condition type gates a rule fired by a real button push: with the hub in a state
// that meets it the action reaches the hub, and in one that does not it never does.
func TestLiveEveryConditionType(t *testing.T) {
	t.Parallel()
	cases := liveConditionCases()
	covered := map[string][2]bool{}
	for _, tc := range cases {
		c := covered[tc.cond.Type]
		if tc.want {
			c[1] = true
		} else {
			c[0] = true
		}
		covered[tc.cond.Type] = c
	}
	for _, typ := range ConditionTypes {
		if covered[typ] != [2]bool{true, true} {
			t.Errorf("condition type %s lacks a live true and false case: %v", typ, covered[typ])
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			at := tc.at
			switch {
			case tc.hubTime:
				at = time.Now()
			case at.IsZero():
				at = engineT0
			}
			te := liveEngine(t, tc.hub, at)
			if tc.setup != nil {
				tc.setup(te)
			}
			r := te.create(Rule{Name: tc.name, Triggers: []Trigger{pushedButton}, Conditions: []Condition{tc.cond},
				Actions: []Action{hubCmd("3", "on")}})
			d := te.push(r.ID)
			if d.Rule.ErrorCount != 0 {
				t.Fatalf("the run failed: %s", d.Rule.LastError)
			}
			if tc.want {
				ranOK(t, d, 1)
				te.is(3, "switch", "on")
				te.requested("GET /devices/3/on", 1)
				return
			}
			if d.Rule.ExecutionCount != 0 {
				t.Errorf("the rule ran although %s is false", DescribeCondition(tc.cond))
			}
			te.is(3, "switch", "off")
			te.requested("GET /devices/3/on", 0)
		})
	}
}
