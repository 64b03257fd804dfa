package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
)

// world is a small in-memory Env for the evaluation unit tests: devices with attributes and
// events, mode, HSM, variables and the sun. It stands in for the hub only here, where the logic
// of conditions and actions is under test; the engine's tests drive the simulated hub. Every
// write is recorded (and counted) so that a test can say exactly what reached "the hub".
type world struct {
	mu       sync.Mutex
	now      time.Time
	loc      *time.Location
	rise     time.Time
	set      time.Time
	sunErr   error
	devices  map[string]hubitat.Device
	events   map[string][]hubitat.Event
	readErr  map[string]error // device id → Device/DeviceEvents error
	cmdErr   map[string]error // device id → SendCommand error
	mode     string
	hsm      string
	hubVars  map[string]string
	ruleVars map[string]string
	httpCode int
	writes   []string
}

var hubZone = time.FixedZone("hub", -5*3600)

// newWorld: Wednesday 25 November 2026, 21:30 at the hub; sunrise 06:45, sunset 16:50.
func newWorld() *world {
	day := func(h, m int) time.Time { return time.Date(2026, 11, 25, h, m, 0, 0, hubZone) }
	w := &world{
		now: day(21, 30), loc: hubZone, rise: day(6, 45), set: day(16, 50),
		readErr: map[string]error{}, cmdErr: map[string]error{},
		mode: "Night", hsm: "armedHome", httpCode: 200,
		hubVars:  map[string]string{"houseState": "occupied", "shared": "hub"},
		ruleVars: map[string]string{"counter": "7"},
		events:   map[string][]hubitat.Event{},
	}
	w.devices = map[string]hubitat.Device{
		"1": dev("1", "Kitchen Light", map[string]any{"switch": "on", "level": 50, "hue": 10},
			"on", "off", "setLevel", "setColor", "setColorTemperature", "flash"),
		"2": dev("2", "Porch Sensor", map[string]any{"illuminance": 30, "motion": "active"}),
		"3": dev("3", "Dryer Plug", map[string]any{"power": "120.5", "switch": "off"}, "on", "off"),
		"4": dev("4", "Ann's Phone", map[string]any{"presence": "present"}, "deviceNotification"),
		"5": dev("5", "Front Door Lock", map[string]any{"lock": "locked"}, "lock", "unlock"),
		"6": dev("6", "Hall Thermostat", map[string]any{"thermostatMode": "heat", "thermostatOperatingState": "heating",
			"temperature": "unknown"}, "setThermostatMode", "setHeatingSetpoint", "setCoolingSetpoint", "setThermostatFanMode"),
		"7": dev("7", "Back Door", map[string]any{"contact": "closed"}),
		"8": dev("8", "New Sensor", map[string]any{"temperature": nil}),
		"9": dev("9", "Kitchen Speaker", map[string]any{"status": "stopped"}, "speak"),
	}
	return w
}

func dev(id, label string, attrs map[string]any, cmds ...string) hubitat.Device {
	d := hubitat.Device{ID: id, Label: label, Detailed: true}
	for name, v := range attrs {
		d.Attributes = append(d.Attributes, hubitat.Attribute{Name: name, Value: val(v)})
	}
	for _, c := range cmds {
		d.Commands = append(d.Commands, hubitat.Command{Name: c})
	}
	return d
}

func val(v any) hubitat.Value {
	b, _ := json.Marshal(v)
	var out hubitat.Value
	_ = json.Unmarshal(b, &out)
	return out
}

func (w *world) record(format string, args ...any) {
	w.mu.Lock()
	w.writes = append(w.writes, fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

func (w *world) Writes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

func (w *world) Now() time.Time           { return w.now }
func (w *world) Location() *time.Location { return w.loc }
func (w *world) Sun(day time.Time) (time.Time, time.Time, error) {
	return w.rise, w.set, w.sunErr
}

func (w *world) Device(_ context.Context, id string) (hubitat.Device, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.readErr[id]; err != nil {
		return hubitat.Device{}, err
	}
	d, ok := w.devices[id]
	if !ok {
		return hubitat.Device{}, fmt.Errorf("no device %s", id)
	}
	return d, nil
}

func (w *world) DeviceEvents(_ context.Context, id string, limit int) ([]hubitat.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.readErr[id]; err != nil {
		return nil, err
	}
	ev := w.events[id]
	return ev[:min(limit, len(ev))], nil
}

func (w *world) SendCommand(_ context.Context, id, command string, args ...string) error {
	w.mu.Lock()
	err := w.cmdErr[id]
	w.mu.Unlock()
	if err != nil {
		return err
	}
	w.record("cmd %s %s(%s)", id, command, strings.Join(args, ","))
	// Enough of a device to toggle: on and off change the switch.
	if command == "on" || command == "off" {
		w.mu.Lock()
		d := w.devices[id]
		attrs := make([]hubitat.Attribute, 0, len(d.Attributes))
		for _, a := range d.Attributes {
			if a.Name == "switch" {
				a.Value = val(command)
			}
			attrs = append(attrs, a)
		}
		d.Attributes = attrs
		w.devices[id] = d
		w.mu.Unlock()
	}
	return nil
}

func (w *world) Mode(context.Context) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mode, nil
}

func (w *world) SetMode(_ context.Context, name string) error {
	w.record("mode %s", name)
	w.mu.Lock()
	w.mode = name
	w.mu.Unlock()
	return nil
}

func (w *world) HSM(context.Context) (string, error) { return w.hsm, nil }
func (w *world) SetHSM(_ context.Context, value string) error {
	w.record("hsm %s", value)
	return nil
}

func (w *world) Variable(_ context.Context, r *Rule, name string) (string, bool, error) {
	if name == "broken" {
		return "", false, errors.New("variable store down")
	}
	if r != nil {
		if v, ok := r.LocalVariables[name]; ok {
			return fmt.Sprint(v), true, nil
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if v, ok := w.hubVars[name]; ok {
		return v, true, nil
	}
	v, ok := w.ruleVars[name]
	return v, ok, nil
}

func (w *world) SetRuleVariable(_ context.Context, name, value string) error {
	w.record("rulevar %s=%s", name, value)
	w.mu.Lock()
	w.ruleVars[name] = value
	w.mu.Unlock()
	return nil
}

func (w *world) SetHubVariable(_ context.Context, name, value string) error {
	w.record("hubvar %s=%s", name, value)
	w.mu.Lock()
	w.hubVars[name] = value
	w.mu.Unlock()
	return nil
}

// SetLocalVariable changes the rule as the engine's Env does.
func (w *world) SetLocalVariable(_ context.Context, r *Rule, name, value string) error {
	w.record("localvar %s=%s", name, value)
	if r.LocalVariables == nil {
		r.LocalVariables = map[string]any{}
	}
	r.LocalVariables[name] = value
	return nil
}

func (w *world) CaptureState(_ context.Context, stateID string, ids []string) error {
	w.record("capture %s %s", stateID, strings.Join(ids, ","))
	return nil
}

func (w *world) RestoreState(_ context.Context, stateID string) error {
	w.record("restore %s", stateID)
	return nil
}

func (w *world) CancelDelayed(_ context.Context, r *Rule, delayID string) error {
	w.record("cancel %s %s", r.ID, delayID)
	return nil
}

func (w *world) Notify(_ context.Context, id, message string) error {
	w.record("notify %s %s", id, message)
	return nil
}

func (w *world) HTTPRequest(_ context.Context, method, url, contentType, body string) (int, error) {
	w.record("http %s %s %s %s", method, url, contentType, body)
	return w.httpCode, nil
}

func (w *world) Log(_ context.Context, r *Rule, level, message string) {
	w.record("log %s %s", level, message)
}

var _ Env = (*world)(nil)

// at is the world's day at h:m.
func (w *world) at(h, m int) time.Time { return time.Date(2026, 11, 25, h, m, 0, 0, w.loc) }

func event(name string, v any, at time.Time, change bool) hubitat.Event {
	return hubitat.Event{Name: name, Value: val(v), Date: at, IsStateChange: &change}
}

func TestConditionTypes(t *testing.T) {
	t.Parallel()
	rule := &Rule{ID: "r1", LocalVariables: map[string]any{"count": 5, "shared": "local"}}
	cases := []struct {
		name  string
		c     Condition
		setup func(w *world)
		want  bool
		err   string // a substring of the error; the result is then false (fail closed)
	}{
		{name: "device_state equals", c: Condition{Type: "device_state", DeviceID: "1", Attribute: "switch", Value: S("on")}, want: true},
		{name: "device_state not_equals", c: Condition{Type: "device_state", DeviceID: "1", Attribute: "switch", Operator: "not_equals", Value: S("on")}},
		{name: "device_state numeric >", c: Condition{Type: "device_state", DeviceID: "1", Attribute: "level", Operator: ">", Value: N(40)}, want: true},
		{name: "device_state 50 equals 50.0", c: Condition{Type: "device_state", DeviceID: "1", Attribute: "level", Value: S("50.0")}, want: true},
		{name: "device_state missing attribute", c: Condition{Type: "device_state", DeviceID: "1", Attribute: "temperature", Value: N(1)}, err: `no attribute "temperature"`},
		{name: "device_state null value", c: Condition{Type: "device_state", DeviceID: "8", Attribute: "temperature", Operator: "<", Value: N(100)}, err: "no value yet"},
		{name: "device_state unreadable device", c: Condition{Type: "device_state", DeviceID: "1", Attribute: "switch", Value: S("on")},
			setup: func(w *world) { w.readErr["1"] = errors.New("hub unreachable") }, err: "hub unreachable"},
		{name: "device_state unknown device", c: Condition{Type: "device_state", DeviceID: "99", Attribute: "switch", Value: S("on")}, err: "no device 99"},
		{name: "device_state no value", c: Condition{Type: "device_state", DeviceID: "1", Attribute: "switch"}, err: "value is required"},
		{name: "device_state text against number fails closed", c: Condition{Type: "device_state", DeviceID: "6", Attribute: "temperature", Operator: ">", Value: N(70)}, err: "one is a number"},

		{name: "device_was held since before the window", c: Condition{Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("closed"), ForSeconds: 300},
			setup: func(w *world) {
				w.events["7"] = []hubitat.Event{event("contact", "closed", w.now.Add(-10*time.Minute), true), event("contact", "open", w.now.Add(-12*time.Minute), true)}
			}, want: true},
		{name: "device_was entered inside the window", c: Condition{Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("closed"), ForSeconds: 300},
			setup: func(w *world) {
				w.events["7"] = []hubitat.Event{event("contact", "closed", w.now.Add(-1*time.Minute), true), event("contact", "open", w.now.Add(-12*time.Minute), true)}
			}},
		{name: "device_was other value inside the window", c: Condition{Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("closed"), ForSeconds: 300},
			setup: func(w *world) {
				w.events["7"] = []hubitat.Event{event("contact", "closed", w.now.Add(-1*time.Minute), true), event("contact", "open", w.now.Add(-2*time.Minute), true),
					event("contact", "closed", w.now.Add(-time.Hour), true)}
			}},
		{name: "device_was no history", c: Condition{Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("closed"), ForSeconds: 300}, want: true},
		{name: "device_was only a change into it in the window", c: Condition{Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("closed"), ForSeconds: 300},
			setup: func(w *world) {
				w.events["7"] = []hubitat.Event{event("contact", "closed", w.now.Add(-time.Minute), true)}
			}},
		{name: "device_was other attributes ignored", c: Condition{Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("closed"), ForSeconds: 300},
			setup: func(w *world) {
				w.events["7"] = []hubitat.Event{event("battery", 90, w.now.Add(-time.Minute), true), event("contact", "closed", w.now.Add(-time.Hour), true)}
			}, want: true},
		{name: "device_was not the value now", c: Condition{Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("open"), ForSeconds: 60}},
		{name: "device_was needs forSeconds", c: Condition{Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("closed")}, err: "forSeconds"},
		{name: "device_was unreadable events", c: Condition{Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("closed"), ForSeconds: 60},
			setup: func(w *world) { w.readErr["7"] = errors.New("timeout") }, err: "timeout"},

		{name: "time_range inside", c: Condition{Type: "time_range", Start: "21:00", End: "22:00"}, want: true},
		{name: "time_range end exclusive", c: Condition{Type: "time_range", Start: "20:00", End: "21:30"}},
		{name: "time_range across midnight, outside", c: Condition{Type: "time_range", Start: "22:00", End: "06:00"}},
		{name: "time_range across midnight, inside", c: Condition{Type: "time_range", Start: "21:00", End: "06:00"}, want: true},
		{name: "time_range after midnight", c: Condition{Type: "time_range", Start: "22:00", End: "06:00"},
			setup: func(w *world) { w.now = w.at(2, 15) }, want: true},
		{name: "time_range sunset+30 to 23:00", c: Condition{Type: "time_range", Start: "sunset+30", End: "23:00"}, want: true},
		{name: "time_range 20:00 to sunrise", c: Condition{Type: "time_range", Start: "20:00", End: "sunrise"}, want: true},
		{name: "time_range sunrise-30 to sunset", c: Condition{Type: "time_range", Start: "sunrise-30", End: "sunset"},
			setup: func(w *world) { w.now = w.at(6, 20) }, want: true},
		{name: "time_range before sunrise-30", c: Condition{Type: "time_range", Start: "sunrise-30", End: "sunset"},
			setup: func(w *world) { w.now = w.at(6, 10) }},
		{name: "time_range bad time", c: Condition{Type: "time_range", Start: "25:00", End: "06:00"}, err: "not a time"},
		{name: "time_range no sun", c: Condition{Type: "time_range", Start: "sunset", End: "23:00"},
			setup: func(w *world) { w.sunErr = errors.New("no coordinates") }, err: "no coordinates"},
		{name: "time_range without a known zone is UTC", c: Condition{Type: "time_range", Start: "02:00", End: "03:00"},
			setup: func(w *world) { w.loc = nil }, want: true},
		{name: "time_range now in another zone", c: Condition{Type: "time_range", Start: "21:00", End: "22:00"},
			setup: func(w *world) { w.now = w.now.UTC() }, want: true},

		{name: "mode in", c: Condition{Type: "mode", Modes: []string{"Home", "Night"}}, want: true},
		{name: "mode single", c: Condition{Type: "mode", Mode: "Away"}},
		{name: "mode not_in", c: Condition{Type: "mode", Modes: []string{"Home", "Night"}, Operator: "not_in"}},
		{name: "mode bad operator", c: Condition{Type: "mode", Mode: "Night", Operator: ">"}, err: "in or not_in"},
		{name: "mode none given", c: Condition{Type: "mode"}, err: "mode or modes"},

		{name: "variable local", c: Condition{Type: "variable", VariableName: "count", Operator: ">", Value: N(3)}, want: true},
		{name: "variable local before hub", c: Condition{Type: "variable", VariableName: "shared", Value: S("local")}, want: true},
		{name: "variable hub", c: Condition{Type: "variable", VariableName: "houseState", Value: S("occupied")}, want: true},
		{name: "variable rule store", c: Condition{Type: "variable", VariableName: "counter", Operator: "<=", Value: S("7")}, want: true},
		{name: "variable missing", c: Condition{Type: "variable", VariableName: "nope", Value: S("x")}, err: "not set"},
		{name: "variable lookup fails", c: Condition{Type: "variable", VariableName: "broken", Value: S("x")}, err: "store down"},

		{name: "days_of_week today", c: Condition{Type: "days_of_week", Days: []string{"Monday", "wednesday"}}, want: true},
		{name: "days_of_week not today", c: Condition{Type: "days_of_week", Days: []string{"Saturday", "Sunday"}}},
		{name: "days_of_week by the hub's zone", c: Condition{Type: "days_of_week", Days: []string{"Wednesday"}},
			setup: func(w *world) { w.now = w.at(23, 30).UTC() }, want: true}, // already Thursday in UTC

		{name: "sun_position down at night", c: Condition{Type: "sun_position", Position: "down"}, want: true},
		{name: "sun_position up at night", c: Condition{Type: "sun_position", Position: "up"}},
		{name: "sun_position up at noon", c: Condition{Type: "sun_position", Position: "up"}, setup: func(w *world) { w.now = w.at(12, 0) }, want: true},
		{name: "sun_position bad", c: Condition{Type: "sun_position", Position: "sideways"}, err: "up or down"},

		{name: "hsm_status", c: Condition{Type: "hsm_status", Status: "armedHome"}, want: true},
		{name: "hsm_status other", c: Condition{Type: "hsm_status", Status: "disarmed"}},
		{name: "presence", c: Condition{Type: "presence", DeviceID: "4", Status: "present"}, want: true},
		{name: "presence not", c: Condition{Type: "presence", DeviceID: "4", Status: "not present"}},
		{name: "lock locked", c: Condition{Type: "lock", DeviceID: "5", Status: "locked"}, want: true},
		{name: "lock unlocked", c: Condition{Type: "lock", DeviceID: "5", Status: "unlocked"}},
		{name: "lock no status", c: Condition{Type: "lock", DeviceID: "5"}, err: "value is required"},
		{name: "thermostat_mode", c: Condition{Type: "thermostat_mode", DeviceID: "6", Mode: "heat"}, want: true},
		{name: "thermostat_mode other", c: Condition{Type: "thermostat_mode", DeviceID: "6", Mode: "cool"}},
		{name: "thermostat_state", c: Condition{Type: "thermostat_state", DeviceID: "6", State: "heating"}, want: true},
		{name: "thermostat_state idle", c: Condition{Type: "thermostat_state", DeviceID: "6", State: "idle"}},
		{name: "illuminance <", c: Condition{Type: "illuminance", DeviceID: "2", Operator: "<", Value: N(50)}, want: true},
		{name: "illuminance >=", c: Condition{Type: "illuminance", DeviceID: "2", Operator: ">=", Value: N(50)}},
		{name: "power >", c: Condition{Type: "power", DeviceID: "3", Operator: ">", Value: N(100)}, want: true},
		{name: "power against text", c: Condition{Type: "power", DeviceID: "3", Operator: ">", Value: S("lots")}, err: "one is a number"},

		{name: "unknown type", c: Condition{Type: "expression"}, err: `unknown condition type "expression"`},
		{name: "no type", c: Condition{}, err: "no type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			if tc.setup != nil {
				tc.setup(w)
			}
			got, err := Evaluate(context.Background(), w, rule, tc.c, Context{RuleID: "r1"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one containing %q", err, tc.err)
				}
				if got {
					t.Fatal("an error must evaluate to false (fail closed)")
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Evaluate = %v, want %v", got, tc.want)
			}
			if len(w.Writes()) != 0 {
				t.Fatalf("evaluating wrote: %v", w.Writes())
			}
		})
	}
	// Every condition type of the model is covered above.
	seen := map[string]bool{}
	for _, tc := range cases {
		seen[tc.c.Type] = true
	}
	for _, typ := range conditionTypes {
		if !seen[typ] {
			t.Errorf("condition type %s has no case", typ)
		}
	}
}

var conditionTypes = []string{"device_state", "device_was", "time_range", "mode", "variable", "days_of_week",
	"sun_position", "hsm_status", "presence", "lock", "thermostat_mode", "thermostat_state", "illuminance", "power"}

func TestEvaluateCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok, err := Evaluate(ctx, newWorld(), &Rule{}, Condition{Type: "hsm_status", Status: "armedHome"}, Context{})
	if ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("Evaluate on a cancelled context = %v, %v", ok, err)
	}
}

func TestCompareOperators(t *testing.T) {
	t.Parallel()
	cases := []struct {
		op, got, want string
		ok            bool
		err           bool
	}{
		{"equals", "on", "on", true, false},
		{"", "on", "on", true, false},
		{"==", "on", "off", false, false},
		{"equals", "72.0", "72", true, false},
		{"equals", " 72 ", "72", true, false},
		{"equals", "On", "on", false, false}, // text is compared exactly
		{"not_equals", "72.0", "72", false, false},
		{"!=", "on", "off", true, false},
		{">", "10", "9", true, false}, // numeric, not "10" < "9" as text
		{"<", "9", "10", true, false},
		{">=", "-1.5", "-1.5", true, false},
		{"<=", "1e3", "999", false, false},
		{">", "b", "a", true, false}, // two texts: lexicographic
		{"<", "08:30", "09:00", true, false},
		{">", "unknown", "70", false, true}, // a text against a number: fail closed
		{"<=", "", "5", false, true},
		{">", "NaN", "1", false, true},
		{"equals", "NaN", "NaN", true, false}, // not numbers, but the same text
		{"like", "a", "a", false, true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q %s %q", tc.got, tc.op, tc.want), func(t *testing.T) {
			t.Parallel()
			ok, err := Compare(tc.op, tc.got, tc.want)
			if (err != nil) != tc.err {
				t.Fatalf("error = %v, want error %v", err, tc.err)
			}
			if ok != tc.ok {
				t.Fatalf("Compare = %v, want %v", ok, tc.ok)
			}
		})
	}
}

func TestEvaluateAllLogic(t *testing.T) {
	t.Parallel()
	yes := Condition{Type: "mode", Mode: "Night"}
	no := Condition{Type: "mode", Mode: "Away"}
	broken := Condition{Type: "device_state", DeviceID: "99", Attribute: "switch", Value: S("on")}
	cases := []struct {
		name   string
		logic  string
		conds  []Condition
		want   bool
		met    []bool
		errors int
	}{
		{"no conditions", "", nil, true, nil, 0},
		{"all met", "all", []Condition{yes, yes}, true, []bool{true, true}, 0},
		{"all, one not", "", []Condition{yes, no}, false, []bool{true, false}, 0},
		{"all, one broken", "all", []Condition{yes, broken}, false, []bool{true, false}, 1},
		{"any, one met", "any", []Condition{no, broken, yes}, true, []bool{false, false, true}, 1},
		{"any, none met", "ANY", []Condition{no, broken}, false, []bool{false, false}, 1},
		{"unknown logic fails closed", "most", []Condition{yes}, false, []bool{true, false}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &Rule{ID: "r", ConditionLogic: tc.logic, Conditions: tc.conds}
			ok, results := EvaluateAll(context.Background(), newWorld(), r, Context{RuleID: "r"})
			if ok != tc.want {
				t.Fatalf("EvaluateAll = %v, want %v (%+v)", ok, tc.want, results)
			}
			if len(results) != len(tc.met) {
				t.Fatalf("%d results, want %d: %+v", len(results), len(tc.met), results)
			}
			errs := 0
			for i, res := range results {
				if res.Met != tc.met[i] {
					t.Errorf("results[%d].Met = %v, want %v", i, res.Met, tc.met[i])
				}
				if res.Error != "" {
					errs++
				}
				if res.Index >= 0 && (res.Description == "" || res.Type != tc.conds[i].Type) {
					t.Errorf("results[%d] = %+v: no description or wrong type", i, res)
				}
			}
			if errs != tc.errors {
				t.Errorf("%d results with an error, want %d: %+v", errs, tc.errors, results)
			}
		})
	}
	t.Run("detail says what was read", func(t *testing.T) {
		t.Parallel()
		r := &Rule{Conditions: []Condition{{Type: "device_state", DeviceID: "1", Attribute: "switch", Value: S("off")}}}
		_, results := EvaluateAll(context.Background(), newWorld(), r, Context{})
		if want := `switch of Kitchen Light (1) is "on"`; results[0].Detail != want {
			t.Fatalf("Detail = %q, want %q", results[0].Detail, want)
		}
	})
}

func TestParseTimeBound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in       string
		kind     string
		off, hm  int
		hasError bool
	}{
		{"07:30", "", 0, 450, false},
		{"00:00", "", 0, 0, false},
		{"23:59", "", 0, 1439, false},
		{"sunrise", "sunrise", 0, 0, false},
		{"Sunset-30", "sunset", -30, 0, false},
		{"sunset + 15", "sunset", 15, 0, false},
		{"sunrise+180", "sunrise", 180, 0, false},
		{"sunrise+181", "", 0, 0, true},
		{"sunsetx", "", 0, 0, true},
		{"24:00", "", 0, 0, true},
		{"7:5", "", 0, 0, true},
		{"7:05", "", 0, 425, false},
		{"+7:05", "", 0, 0, true},
		{"-0:05", "", 0, 0, true},
		{"noon", "", 0, 0, true},
		{"", "", 0, 0, true},
	}
	for _, tc := range cases {
		kind, off, hm, err := ParseTimeBound(tc.in)
		if (err != nil) != tc.hasError || kind != tc.kind || off != tc.off || hm != tc.hm {
			t.Errorf("ParseTimeBound(%q) = %q, %d, %d, %v; want %q, %d, %d, error %v", tc.in, kind, off, hm, err, tc.kind, tc.off, tc.hm, tc.hasError)
		}
	}
}

func TestDescribeCondition(t *testing.T) {
	t.Parallel()
	cases := map[string]Condition{
		`device 1 switch equals "on"`:                  {Type: "device_state", DeviceID: "1", Attribute: "switch", Value: S("on")},
		`device 7 contact has been "closed" for 300 s`: {Type: "device_was", DeviceID: "7", Attribute: "contact", Value: S("closed"), ForSeconds: 300},
		"the time is between sunset-30 and 23:00":      {Type: "time_range", Start: "sunset-30", End: "23:00"},
		"the mode is not one of Away, Night":           {Type: "mode", Modes: []string{"Away", "Night"}, Operator: "not_in"},
		`variable "x" > "5"`:                           {Type: "variable", VariableName: "x", Operator: ">", Value: N(5)},
		"the day is one of Monday, Friday":             {Type: "days_of_week", Days: []string{"Monday", "Friday"}},
		"the sun is up":                                {Type: "sun_position", Position: "up"},
		"HSM is armedAway":                             {Type: "hsm_status", Status: "armedAway"},
		"device 4 is not present":                      {Type: "presence", DeviceID: "4", Status: "not present"},
		"device 5 is locked":                           {Type: "lock", DeviceID: "5", Status: "locked"},
		"thermostat 6 mode is heat":                    {Type: "thermostat_mode", DeviceID: "6", Mode: "heat"},
		"thermostat 6 is idle":                         {Type: "thermostat_state", DeviceID: "6", State: "idle"},
		"device 2 illuminance < 50 lux":                {Type: "illuminance", DeviceID: "2", Operator: "<", Value: N(50)},
		"device 3 power >= 100 W":                      {Type: "power", DeviceID: "3", Operator: ">=", Value: N(100)},
		`unknown condition type "expression"`:          {Type: "expression"},
	}
	types := map[string]bool{}
	for want, c := range maps.All(cases) {
		types[c.Type] = true
		if got := DescribeCondition(c); got != want {
			t.Errorf("DescribeCondition(%s) = %q, want %q", c.Type, got, want)
		}
	}
	for _, typ := range conditionTypes {
		if !types[typ] {
			t.Errorf("condition type %s has no description case", typ)
		}
	}
}

// FuzzCompare: the operators agree with each other, and a failed comparison is never true.
func FuzzCompare(f *testing.F) {
	for _, s := range [][2]string{{"on", "on"}, {"72.0", "72"}, {"unknown", "70"}, {"08:30", "09:00"}, {"1e3", "999"}, {"NaN", "1"}, {"", "-0"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		eq, errEq := Compare("equals", a, b)
		ne, errNe := Compare("not_equals", a, b)
		if errEq != nil || errNe != nil || eq == ne {
			t.Fatalf("equals %v (%v), not_equals %v (%v)", eq, errEq, ne, errNe)
		}
		if back, _ := Compare("equals", b, a); back != eq {
			t.Fatalf("equals is not symmetric for %q, %q", a, b)
		}
		gt, errGt := Compare(">", a, b)
		lt, errLt := Compare("<", b, a)
		ge, _ := Compare(">=", a, b)
		if (errGt != nil) != (errLt != nil) || gt != lt {
			t.Fatalf("%q > %q is %v (%v) but %q < %q is %v (%v)", a, b, gt, errGt, b, a, lt, errLt)
		}
		if errGt != nil && (gt || ge) {
			t.Fatalf("a failed comparison of %q and %q is true", a, b)
		}
		if errGt == nil && ge != (gt || eq) {
			t.Fatalf("%q >= %q is %v, but > is %v and equals %v", a, b, ge, gt, eq)
		}
	})
}

// FuzzParseTimeBound: a bound that parses is in range, and an HH:mm one prints back the same.
func FuzzParseTimeBound(f *testing.F) {
	for _, s := range []string{"07:30", "sunset-30", "sunrise + 15", "24:00", "sunrise+181", "-1:00", "+7:05"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kind, off, hm, err := ParseTimeBound(s)
		if err != nil {
			return
		}
		switch kind {
		case "":
			if hm < 0 || hm >= 24*60 || off != 0 {
				t.Fatalf("%q → %d minutes, offset %d", s, hm, off)
			}
		case "sunrise", "sunset":
			if off < -MaxOffset || off > MaxOffset || hm != 0 {
				t.Fatalf("%q → offset %d", s, off)
			}
		default:
			t.Fatalf("%q → kind %q", s, kind)
		}
	})
}
