package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/hubitat"
)

func fp(f float64) *float64 { return &f }

// actionTypes are the 29 action types of the model.
var actionTypes = []string{"device_command", "toggle_device", "activate_scene", "set_level", "set_color",
	"set_color_temperature", "lock", "unlock", "set_variable", "set_local_variable", "set_mode", "set_hsm", "delay",
	"if_then_else", "cancel_delayed", "repeat", "stop", "log", "capture_state", "restore_state", "send_notification",
	"set_thermostat", "http_request", "speak", "comment", "set_valve", "set_fan_speed", "set_shade", "variable_math"}

func TestActionTypes(t *testing.T) {
	t.Parallel()
	kitchenOn := &hubitat.Event{Name: "switch", Value: val("on"), DeviceID: "1", DisplayName: "Kitchen Light"}
	cases := []struct {
		name   string
		a      Action
		event  *hubitat.Event
		setup  func(w *world)
		writes []string
		err    string // substring of Outcome.Err; nothing is written then
	}{
		{name: "device_command", a: Action{Type: "device_command", DeviceID: "1", Command: "setLevel", Parameters: []string{"40", "%fade%"}},
			writes: []string{"cmd 1 setLevel(40,%fade%)"}},
		{name: "device_command parameters expanded", a: Action{Type: "device_command", DeviceID: "1", Command: "setLevel", Parameters: []string{"%counter%"}},
			writes: []string{"cmd 1 setLevel(7)"}},
		{name: "device_command unsupported", a: Action{Type: "device_command", DeviceID: "2", Command: "on"}, err: `Porch Sensor (2) has no command "on"`},
		{name: "device_command refused by the hub", a: Action{Type: "device_command", DeviceID: "1", Command: "flash"},
			setup: func(w *world) { w.cmdErr["1"] = errors.New("hub said 500") }, err: "hub said 500"},
		{name: "toggle_device on → off", a: Action{Type: "toggle_device", DeviceID: "1"}, writes: []string{"cmd 1 off()"}},
		{name: "toggle_device off → on", a: Action{Type: "toggle_device", DeviceID: "3"}, writes: []string{"cmd 3 on()"}},
		{name: "toggle_device without a switch", a: Action{Type: "toggle_device", DeviceID: "2"}, err: "no switch"},
		{name: "activate_scene", a: Action{Type: "activate_scene", SceneDeviceID: "3"}, writes: []string{"cmd 3 on()"}},
		{name: "set_level", a: Action{Type: "set_level", DeviceID: "1", Level: N(30)}, writes: []string{"cmd 1 setLevel(30)"}},
		{name: "set_level with fade", a: Action{Type: "set_level", DeviceID: "1", Level: S("75"), Duration: fp(2.5)}, writes: []string{"cmd 1 setLevel(75,2.5)"}},
		{name: "set_level no level", a: Action{Type: "set_level", DeviceID: "1"}, err: "level"},
		{name: "set_color", a: Action{Type: "set_color", DeviceID: "1", Hue: fp(66), Saturation: fp(100), Level: N(80)},
			writes: []string{"cmd 1 setHue(66)", "cmd 1 setSaturation(100)", "cmd 1 setLevel(80)"}},
		{name: "set_color no saturation", a: Action{Type: "set_color", DeviceID: "1", Hue: fp(66)}, err: "saturation"},
		{name: "set_color_temperature", a: Action{Type: "set_color_temperature", DeviceID: "1", Temperature: fp(2700), Level: N(60)},
			writes: []string{"cmd 1 setColorTemperature(2700,60)"}},
		{name: "lock", a: Action{Type: "lock", DeviceID: "5"}, writes: []string{"cmd 5 lock()"}},
		{name: "unlock", a: Action{Type: "unlock", DeviceID: "5"}, writes: []string{"cmd 5 unlock()"}},
		{name: "lock without device", a: Action{Type: "lock"}, err: "deviceId is required"},
		{name: "set_variable", a: Action{Type: "set_variable", VariableName: "last", Value: S("%device% was %value%")}, event: kitchenOn,
			writes: []string{"rulevar last=Kitchen Light was on"}},
		{name: "set_local_variable", a: Action{Type: "set_local_variable", VariableName: "seen", Value: N(3)}, writes: []string{"localvar seen=3"}},
		{name: "set_mode", a: Action{Type: "set_mode", Mode: "Away"}, writes: []string{"mode Away"}},
		{name: "set_hsm", a: Action{Type: "set_hsm", Status: "disarm"}, writes: []string{"hsm disarm"}},
		{name: "cancel_delayed all", a: Action{Type: "cancel_delayed", DelayID: "all"}, writes: []string{"cancel r1 all"}},
		{name: "cancel_delayed one", a: Action{Type: "cancel_delayed", DelayID: "lights-off"}, writes: []string{"cancel r1 lights-off"}},
		{name: "cancel_delayed without id", a: Action{Type: "cancel_delayed"}, err: "delayId is required"},
		{name: "log", a: Action{Type: "log", Message: "mode is %mode%", Level: S("warn")}, writes: []string{"log warn mode is Night"}},
		{name: "log default level", a: Action{Type: "log", Message: "hi"}, writes: []string{"log info hi"}},
		{name: "comment", a: Action{Type: "comment", Text: "why this rule exists"}, writes: []string{"log debug comment: why this rule exists"}},
		{name: "capture_state", a: Action{Type: "capture_state", DeviceIDs: []string{"1", "3"}, StateID: "evening"}, writes: []string{"capture evening 1,3"}},
		{name: "capture_state default id", a: Action{Type: "capture_state", DeviceIDs: []string{"1"}}, writes: []string{"capture default 1"}},
		{name: "capture_state no devices", a: Action{Type: "capture_state"}, err: "deviceIds"},
		{name: "restore_state", a: Action{Type: "restore_state", StateID: "evening"}, writes: []string{"restore evening"}},
		{name: "send_notification", a: Action{Type: "send_notification", DeviceID: "4", Message: "%device% is %value% at %time%"},
			event:  &hubitat.Event{Name: "contact", Value: val("open"), DeviceID: "7", Date: newWorld().at(21, 5)},
			writes: []string{"notify 4 Back Door is open at 21:05"}},
		{name: "set_thermostat", a: Action{Type: "set_thermostat", DeviceID: "6", ThermostatMode: "heat", HeatingSetpoint: fp(68), CoolingSetpoint: fp(76), FanMode: "auto"},
			writes: []string{"cmd 6 setThermostatMode(heat)", "cmd 6 setHeatingSetpoint(68)", "cmd 6 setCoolingSetpoint(76)", "cmd 6 setThermostatFanMode(auto)"}},
		{name: "set_thermostat nothing to set", a: Action{Type: "set_thermostat", DeviceID: "6"}, err: "at least one"},
		{name: "http_request GET", a: Action{Type: "http_request", URL: "https://example.test/hook?a=%mode%"},
			writes: []string{"http GET https://example.test/hook?a=%mode%  "}}, // the URL is never expanded
		{name: "http_request POST", a: Action{Type: "http_request", URL: "http://example.test/x", Method: "post", Body: `{"mode":"%mode%"}`, ContentType: "application/json"},
			writes: []string{`http POST http://example.test/x application/json {"mode":"Night"}`}},
		{name: "http_request error status", a: Action{Type: "http_request", URL: "https://user:secret@example.test/"},
			setup: func(w *world) { w.httpCode = 503 }, err: "answered HTTP 503"},
		{name: "http_request other scheme", a: Action{Type: "http_request", URL: "file:///etc/passwd"}, err: "only http and https"},
		{name: "http_request other method", a: Action{Type: "http_request", URL: "https://example.test/", Method: "DELETE"}, err: "GET or POST"},
		{name: "speak", a: Action{Type: "speak", DeviceID: "9", Message: "Good night", Volume: fp(30)}, writes: []string{"cmd 9 speak(Good night,30)"}},
		// Maker API splits arguments at commas: a comma in a message is sent as a space.
		{name: "speak with a comma", a: Action{Type: "speak", DeviceID: "9", Message: "Good night, Sam,see you"}, writes: []string{"cmd 9 speak(Good night Sam see you)"}},
		{name: "set_valve", a: Action{Type: "set_valve", DeviceID: "3", Command: "close"}, writes: []string{"cmd 3 close()"}},
		{name: "set_valve bad command", a: Action{Type: "set_valve", DeviceID: "3", Command: "half"}, err: "open or close"},
		{name: "set_fan_speed", a: Action{Type: "set_fan_speed", DeviceID: "3", Speed: "medium-high"}, writes: []string{"cmd 3 setSpeed(medium-high)"}},
		{name: "set_shade position", a: Action{Type: "set_shade", DeviceID: "3", Position: fp(40)}, writes: []string{"cmd 3 setPosition(40)"}},
		{name: "set_shade open", a: Action{Type: "set_shade", DeviceID: "3", Command: "open"}, writes: []string{"cmd 3 open()"}},
		{name: "variable_math", a: Action{Type: "variable_math", VariableName: "count", Operation: "add", Operand: N(2)}, writes: []string{"localvar count=7"}},
		{name: "unknown type", a: Action{Type: "launch_rocket"}, err: `unknown action type "launch_rocket"`},
		{name: "no type", a: Action{}, err: "no type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			if tc.setup != nil {
				tc.setup(w)
			}
			r := &Rule{ID: "r1", LocalVariables: map[string]any{"count": 5}}
			r.Actions = []Action{tc.a}
			out := Run(context.Background(), w, r, r.Actions, Context{RuleID: "r1", Event: tc.event}, 0)
			if tc.err != "" {
				var ae *ActionError
				if !errors.As(out.Err, &ae) || !strings.Contains(out.Err.Error(), tc.err) || ae.Path != "actions[0]" {
					t.Fatalf("Err = %v, want an ActionError at actions[0] containing %q", out.Err, tc.err)
				}
				if strings.Contains(out.Err.Error(), "secret") {
					t.Fatalf("the error shows the URL's password: %v", out.Err)
				}
				if out.Ran != 0 {
					t.Fatalf("Ran = %d for a failed action", out.Ran)
				}
				return
			}
			if out.Err != nil || out.Stopped || out.Delay != nil || out.Ran != 1 {
				t.Fatalf("Outcome = %+v", out)
			}
			if got := w.Writes(); !slices.Equal(got, tc.writes) {
				t.Fatalf("writes = %q\nwant     %q", got, tc.writes)
			}
		})
	}
}

// TestEveryActionTypeRuns runs one rule holding each of the 29 types and checks that each was
// recognised (the nested ones included).
func TestEveryActionTypeRuns(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var walk func([]Action)
	walk = func(acts []Action) {
		for _, a := range acts {
			seen[a.Type] = true
			walk(a.ThenActions)
			walk(a.ElseActions)
			walk(a.Actions)
		}
	}
	acts := everyAction()
	walk(acts)
	for _, typ := range actionTypes {
		if !seen[typ] {
			t.Errorf("everyAction lacks %s", typ)
		}
	}
	w := newWorld()
	r := &Rule{ID: "r1", Actions: acts}
	rc := Context{RuleID: "r1"}
	out := Run(context.Background(), w, r, r.Actions, rc, 0)
	for out.Delay != nil && out.Err == nil {
		out = Continue(context.Background(), w, r, rc, *out.Delay)
	}
	if out.Err != nil || !out.Stopped {
		t.Fatalf("Outcome = %+v", out)
	}
	if n := len(w.Writes()); n < 25 {
		t.Fatalf("only %d writes: %q", n, w.Writes())
	}
}

// everyAction is one of each action type, ending with a stop; it runs without error on newWorld.
func everyAction() []Action {
	return []Action{
		{Type: "comment", Text: "all of them"},
		{Type: "device_command", DeviceID: "1", Command: "on"},
		{Type: "toggle_device", DeviceID: "1"},
		{Type: "activate_scene", SceneDeviceID: "3"},
		{Type: "set_level", DeviceID: "1", Level: N(20)},
		{Type: "set_color", DeviceID: "1", Hue: fp(10), Saturation: fp(90)},
		{Type: "set_color_temperature", DeviceID: "1", Temperature: fp(3000)},
		{Type: "lock", DeviceID: "5"},
		{Type: "unlock", DeviceID: "5"},
		{Type: "set_variable", VariableName: "v", Value: S("1")},
		{Type: "set_local_variable", VariableName: "l", Value: S("2")},
		{Type: "set_mode", Mode: "Away"},
		{Type: "set_hsm", Status: "armAway"},
		{Type: "delay", Seconds: 30, DelayID: "d"},
		{Type: "if_then_else", Condition: &Condition{Type: "mode", Mode: "Away"},
			ThenActions: []Action{{Type: "log", Message: "away"}}, ElseActions: []Action{{Type: "log", Message: "home"}}},
		{Type: "cancel_delayed", DelayID: "all"},
		{Type: "repeat", Times: 2, Actions: []Action{{Type: "variable_math", VariableName: "n", Operation: "add", Operand: N(1)}}},
		{Type: "capture_state", DeviceIDs: []string{"1"}},
		{Type: "restore_state"},
		{Type: "send_notification", DeviceID: "4", Message: "hello"},
		{Type: "set_thermostat", DeviceID: "6", HeatingSetpoint: fp(66)},
		{Type: "http_request", URL: "https://example.test/"},
		{Type: "speak", DeviceID: "9", Message: "hi"},
		{Type: "set_valve", DeviceID: "3", Command: "open"},
		{Type: "set_fan_speed", DeviceID: "3", Speed: "low"},
		{Type: "set_shade", DeviceID: "3", Command: "close"},
		{Type: "stop"},
		{Type: "log", Message: "never"},
	}
}

func TestVariableMath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		op, scope string
		operand   *Scalar
		locals    map[string]any
		writes    []string
		err       string
	}{
		{name: "add local", op: "add", operand: N(2), locals: map[string]any{"x": 5}, writes: []string{"localvar x=7"}},
		{name: "subtract", op: "subtract", operand: N(0.5), locals: map[string]any{"x": "5"}, writes: []string{"localvar x=4.5"}},
		{name: "multiply", op: "multiply", operand: S("3"), locals: map[string]any{"x": 5}, writes: []string{"localvar x=15"}},
		{name: "divide", op: "divide", operand: N(4), locals: map[string]any{"x": 5}, writes: []string{"localvar x=1.25"}},
		{name: "modulo", op: "modulo", operand: N(3), locals: map[string]any{"x": 5}, writes: []string{"localvar x=2"}},
		{name: "set", op: "set", operand: N(42), locals: map[string]any{"x": "not a number"}, writes: []string{"localvar x=42"}},
		{name: "unset counts as 0", op: "add", operand: N(1), writes: []string{"localvar x=1"}},
		{name: "divide by zero leaves the value", op: "divide", operand: N(0), locals: map[string]any{"x": 5},
			writes: []string{"log warn variable_math: divide of \"x\" by zero; the value stays 5"}},
		{name: "modulo by zero leaves the value", op: "modulo", operand: S("0"), locals: map[string]any{"x": 5},
			writes: []string{"log warn variable_math: modulo of \"x\" by zero; the value stays 5"}},
		{name: "operand from a variable", op: "add", operand: S("%step%"), locals: map[string]any{"x": 5, "step": 10}, writes: []string{"localvar x=15"}},
		{name: "global reads and writes the hub variable, not a local of the same name", op: "add", scope: "global", operand: N(1),
			locals: map[string]any{"x": 100}, writes: []string{"hubvar x=11"}},
		{name: "not a number", op: "add", operand: N(1), locals: map[string]any{"x": "ten"}, err: "not a number"},
		{name: "bad operand", op: "add", operand: S("ten"), err: "operand"},
		{name: "bad operation", op: "power", operand: N(2), err: "operation"},
		{name: "bad scope", op: "add", scope: "cloud", operand: N(2), err: "scope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			w.hubVars["x"] = "10"
			r := &Rule{ID: "r", LocalVariables: tc.locals}
			r.Actions = []Action{{Type: "variable_math", VariableName: "x", Operation: tc.op, Operand: tc.operand, Scope: tc.scope}}
			out := Run(context.Background(), w, r, r.Actions, Context{}, 0)
			if tc.err != "" {
				if out.Err == nil || !strings.Contains(out.Err.Error(), tc.err) {
					t.Fatalf("Err = %v, want %q", out.Err, tc.err)
				}
				return
			}
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if got := w.Writes(); !slices.Equal(got, tc.writes) {
				t.Fatalf("writes = %q, want %q", got, tc.writes)
			}
		})
	}
}

func cmd(id, c string) Action { return Action{Type: "device_command", DeviceID: id, Command: c} }

func TestRunStopAndFailure(t *testing.T) {
	t.Parallel()
	night := &Condition{Type: "mode", Mode: "Night"}
	cases := []struct {
		name    string
		acts    []Action
		setup   func(w *world)
		writes  []string
		stopped bool
		ran     int
		errPath string
	}{
		{name: "in order", acts: []Action{cmd("1", "on"), cmd("3", "off")}, writes: []string{"cmd 1 on()", "cmd 3 off()"}, ran: 2},
		{name: "stop at the top", acts: []Action{cmd("1", "on"), {Type: "stop"}, cmd("3", "off")}, writes: []string{"cmd 1 on()"}, stopped: true, ran: 2},
		{name: "stop inside repeat inside if ends the whole run", acts: []Action{
			cmd("1", "on"),
			{Type: "if_then_else", Condition: night, ThenActions: []Action{
				{Type: "repeat", Times: 3, Actions: []Action{
					cmd("1", "flash"),
					{Type: "if_then_else", Condition: night, ThenActions: []Action{{Type: "stop"}}},
					cmd("1", "never"),
				}},
				cmd("1", "never"),
			}},
			cmd("1", "off"),
		}, writes: []string{"cmd 1 on()", "cmd 1 flash()"}, stopped: true, ran: 3},
		{name: "else branch", acts: []Action{{Type: "if_then_else", Condition: &Condition{Type: "mode", Mode: "Away"},
			ThenActions: []Action{cmd("1", "on")}, ElseActions: []Action{cmd("1", "off")}}, cmd("3", "on")},
			writes: []string{"cmd 1 off()", "cmd 3 on()"}, ran: 3},
		{name: "no else", acts: []Action{{Type: "if_then_else", Condition: &Condition{Type: "mode", Mode: "Away"},
			ThenActions: []Action{cmd("1", "on")}}, cmd("3", "on")}, writes: []string{"cmd 3 on()"}, ran: 2},
		{name: "a failure stops the run and names its path", acts: []Action{
			cmd("1", "on"),
			{Type: "if_then_else", Condition: night, ThenActions: []Action{cmd("3", "on"), cmd("5", "lock")}},
			cmd("1", "off"),
		}, setup: func(w *world) { w.cmdErr["5"] = errors.New("lock jammed") },
			writes: []string{"cmd 1 on()", "cmd 3 on()"}, ran: 2, errPath: "actions[1].thenActions[1]"},
		{name: "failure in a repeat's second action", acts: []Action{
			{Type: "repeat", Times: 2, Actions: []Action{cmd("1", "on"), {Type: "set_level", DeviceID: "1"}}},
		}, writes: []string{"cmd 1 on()"}, ran: 1, errPath: "actions[0].actions[1]"},
		{name: "an unreadable if takes neither branch", acts: []Action{
			{Type: "if_then_else", Condition: &Condition{Type: "device_state", DeviceID: "1", Attribute: "switch", Value: S("on")},
				ThenActions: []Action{cmd("1", "off")}, ElseActions: []Action{cmd("1", "on")}},
			cmd("3", "on"),
		}, setup: func(w *world) { w.readErr["1"] = errors.New("hub down") }, errPath: "actions[0]"},
		{name: "if without condition", acts: []Action{{Type: "if_then_else", ThenActions: []Action{cmd("1", "off")}}}, errPath: "actions[0]"},
		{name: "repeat 0 times", acts: []Action{{Type: "repeat", Actions: []Action{cmd("1", "off")}}}, errPath: "actions[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			if tc.setup != nil {
				tc.setup(w)
			}
			r := &Rule{ID: "r", Actions: tc.acts}
			out := Run(context.Background(), w, r, r.Actions, Context{}, 0)
			var ae *ActionError
			switch {
			case tc.errPath == "" && out.Err != nil:
				t.Fatalf("Err = %v", out.Err)
			case tc.errPath != "" && (!errors.As(out.Err, &ae) || ae.Path != tc.errPath):
				t.Fatalf("Err = %v, want an ActionError at %s", out.Err, tc.errPath)
			}
			if out.Stopped != tc.stopped || out.Ran != tc.ran || out.Delay != nil {
				t.Fatalf("Outcome = %+v, want stopped %v, ran %d", out, tc.stopped, tc.ran)
			}
			if got := w.Writes(); !slices.Equal(got, tc.writes) {
				t.Fatalf("writes = %q\nwant     %q", got, tc.writes)
			}
		})
	}
}

func TestRunRepeatCap(t *testing.T) {
	t.Parallel()
	w := newWorld()
	r := &Rule{ID: "r", Actions: []Action{{Type: "repeat", Times: 150, Actions: []Action{cmd("1", "flash")}}}}
	out := Run(context.Background(), w, r, r.Actions, Context{}, 0)
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	writes := w.Writes()
	flashes := 0
	for _, s := range writes {
		if s == "cmd 1 flash()" {
			flashes++
		}
	}
	if flashes != MaxRepeat || !strings.HasPrefix(writes[0], "log warn actions[0]: repeat 150 times is capped at 100") {
		t.Fatalf("%d flashes (want %d); first write %q", flashes, MaxRepeat, writes[0])
	}
}

func TestRunCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := newWorld()
	r := &Rule{Actions: []Action{cmd("1", "on")}}
	out := Run(ctx, w, r, r.Actions, Context{}, 0)
	if !errors.Is(out.Err, context.Canceled) || len(w.Writes()) != 0 {
		t.Fatalf("Outcome = %+v, writes %q", out, w.Writes())
	}
}

func TestRunDelay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		acts   []Action
		change func(w *world) // between the runs, as the world moves on during the wait
		// legs: the writes of each run (the first, then one per Continue) and the pending delays.
		legs    [][]string
		pending []Pending
	}{
		{name: "top level", acts: []Action{cmd("1", "on"), {Type: "delay", Seconds: 60, DelayID: "off"}, cmd("1", "off")},
			legs:    [][]string{{"cmd 1 on()"}, {"cmd 1 off()"}},
			pending: []Pending{{Index: 1, Seconds: 60, DelayID: "off"}}},
		{name: "two delays", acts: []Action{{Type: "delay", Seconds: 0}, cmd("1", "on"), {Type: "delay", Seconds: 100000, DelayID: "b"}, cmd("1", "off")},
			legs:    [][]string{nil, {"cmd 1 on()"}, {"cmd 1 off()"}},
			pending: []Pending{{Index: 0, Seconds: 1, DelayID: "delay-1795660200000"}, {Index: 2, Seconds: MaxDelaySeconds, DelayID: "b"}}},
		{name: "inside repeat: each iteration waits, none repeats", acts: []Action{
			cmd("1", "on"),
			{Type: "repeat", Times: 3, Actions: []Action{cmd("1", "flash"), {Type: "delay", Seconds: 5, DelayID: "blink"}, cmd("3", "on")}},
			cmd("1", "off"),
		},
			legs: [][]string{{"cmd 1 on()", "cmd 1 flash()"}, {"cmd 3 on()", "cmd 1 flash()"}, {"cmd 3 on()", "cmd 1 flash()"}, {"cmd 3 on()", "cmd 1 off()"}},
			pending: []Pending{
				{Index: 1, Seconds: 5, DelayID: "blink", Within: []Frame{{Type: "repeat", Branch: "actions", Iteration: 0, Index: 1}}},
				{Index: 1, Seconds: 5, DelayID: "blink", Within: []Frame{{Type: "repeat", Branch: "actions", Iteration: 1, Index: 1}}},
				{Index: 1, Seconds: 5, DelayID: "blink", Within: []Frame{{Type: "repeat", Branch: "actions", Iteration: 2, Index: 1}}},
			}},
		{name: "inside if: the condition is not evaluated again", acts: []Action{
			{Type: "if_then_else", Condition: &Condition{Type: "mode", Mode: "Night"},
				ThenActions: []Action{cmd("1", "on"), {Type: "delay", Seconds: 300, DelayID: "d"}, cmd("1", "off")},
				ElseActions: []Action{cmd("3", "on")}},
			cmd("9", "speak"),
		},
			change: func(w *world) { w.mode = "Day" },
			legs:   [][]string{{"cmd 1 on()"}, {"cmd 1 off()", "cmd 9 speak()"}},
			pending: []Pending{{Index: 0, Seconds: 300, DelayID: "d",
				Within: []Frame{{Type: "if_then_else", Branch: "thenActions", Index: 1}}}}},
		{name: "if in the else branch of a repeat's second iteration", acts: []Action{
			{Type: "repeat", Times: 2, Actions: []Action{
				{Type: "if_then_else", Condition: &Condition{Type: "mode", Mode: "Day"},
					ThenActions: []Action{cmd("1", "on")},
					ElseActions: []Action{cmd("1", "off"), {Type: "delay", Seconds: 9, DelayID: "e"}, {Type: "set_mode", Mode: "Day"}}},
			}},
			{Type: "stop"},
			cmd("1", "never"),
		},
			legs: [][]string{{"cmd 1 off()"}, {"mode Day", "cmd 1 on()"}},
			pending: []Pending{{Index: 0, Seconds: 9, DelayID: "e", Within: []Frame{
				{Type: "repeat", Branch: "actions", Iteration: 0, Index: 0},
				{Type: "if_then_else", Branch: "elseActions", Index: 1}}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			r := &Rule{ID: "r", Actions: tc.acts}
			rc := Context{RuleID: "r", Trigger: "device_event"}
			out := Run(context.Background(), w, r, r.Actions, rc, 0)
			seen := 0
			for leg, want := range tc.legs {
				got := w.Writes()[seen:]
				seen += len(got)
				if !slices.Equal(got, want) {
					t.Fatalf("leg %d wrote %q, want %q", leg, got, want)
				}
				if out.Err != nil {
					t.Fatalf("leg %d: %v", leg, out.Err)
				}
				if leg == len(tc.legs)-1 {
					if out.Delay != nil {
						t.Fatalf("last leg still waits: %+v", *out.Delay)
					}
					break
				}
				if out.Delay == nil {
					t.Fatalf("leg %d did not wait: %+v", leg, out)
				}
				if !samePending(*out.Delay, tc.pending[leg]) {
					t.Fatalf("leg %d: Delay = %+v, want %+v", leg, *out.Delay, tc.pending[leg])
				}
				// The engine stores the Pending as JSON and reads it back when it falls due.
				b, err := json.Marshal(out.Delay)
				if err != nil {
					t.Fatal(err)
				}
				var p Pending
				if err := json.Unmarshal(b, &p); err != nil {
					t.Fatal(err)
				}
				if tc.change != nil {
					tc.change(w)
				}
				out = Continue(context.Background(), w, r, rc, p)
			}
		})
	}
}

func samePending(a, b Pending) bool {
	return a.Index == b.Index && a.Seconds == b.Seconds && a.DelayID == b.DelayID && slices.Equal(a.Within, b.Within)
}

// TestRunFromIndex: a top-level delay's resume is also Run from Index+1 (what the engine did first).
func TestRunFromIndex(t *testing.T) {
	t.Parallel()
	w := newWorld()
	r := &Rule{Actions: []Action{cmd("1", "on"), {Type: "delay", Seconds: 5}, cmd("1", "flash"), cmd("1", "off")}}
	out := Run(context.Background(), w, r, r.Actions, Context{}, out0(t, w, r).Index+1)
	if out.Err != nil || out.Ran != 2 || !slices.Equal(w.Writes(), []string{"cmd 1 on()", "cmd 1 flash()", "cmd 1 off()"}) {
		t.Fatalf("Outcome %+v, writes %q", out, w.Writes())
	}
}

func out0(t *testing.T, w *world, r *Rule) Pending {
	out := Run(context.Background(), w, r, r.Actions, Context{}, 0)
	if out.Delay == nil {
		t.Fatalf("no delay: %+v", out)
	}
	return *out.Delay
}

// TestContinueAfterTheRuleChanged: a pending position that no longer fits the rule is refused
// rather than resumed somewhere else.
func TestContinueAfterTheRuleChanged(t *testing.T) {
	t.Parallel()
	cases := []Pending{
		{Index: 0, Within: []Frame{{Type: "repeat", Branch: "actions", Index: 0}}},           // actions[0] is no longer a repeat
		{Index: 5, Within: []Frame{{Type: "if_then_else", Branch: "thenActions", Index: 0}}}, // out of range
		{Index: 1, Within: []Frame{{Type: "if_then_else", Branch: "sideways", Index: 0}}},
	}
	for i, p := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			r := &Rule{Actions: []Action{cmd("1", "on"), {Type: "if_then_else", Condition: &Condition{Type: "mode", Mode: "Night"}}}}
			out := Continue(context.Background(), w, r, Context{}, p)
			if out.Err == nil || len(w.Writes()) != 0 {
				t.Fatalf("Outcome %+v, writes %q", out, w.Writes())
			}
		})
	}
}
