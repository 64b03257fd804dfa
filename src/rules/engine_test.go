package rules

// The engine's tests run against the simulated hub over loopback (its eventsocket feeds the
// client's cache, whose events drive the triggers) and a real SQLite store file per test; time
// is a fakeclock.Clock. The shared hub (engineHub) is started once per package; each test that uses
// it owns a set of devices no other test touches. Tests that change hub-wide state (mode, HSM)
// or need another location start their own with ownHub.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
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

var (
	sharedOnce   sync.Once
	sharedSim    *simhub.Hub
	sharedClient *hubitat.Client
	sharedErr    error
)

// engineHub is the package's shared simulated hub and a live client of it.
func engineHub(t testing.TB) (*simhub.Hub, *hubitat.Client) {
	t.Helper()
	sharedOnce.Do(func() {
		sharedSim, sharedClient, sharedErr = startSimHub(simhub.Options{Username: "admin", Password: "pw"})
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	testkit.Eventually(t, "the shared client's cache to go live", sharedClient.Cache().Live)
	return sharedSim, sharedClient
}

// ownHub is a hub of the test's own, closed at its end.
func ownHub(t testing.TB, o simhub.Options) (*simhub.Hub, *hubitat.Client) {
	t.Helper()
	h, c, err := startSimHub(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); h.Close() })
	testkit.Eventually(t, "the client's cache to go live", c.Cache().Live)
	return h, c
}

func startSimHub(o simhub.Options) (*simhub.Hub, *hubitat.Client, error) {
	h := simhub.New(o)
	url, err := h.Start(context.Background(), "")
	if err != nil {
		return nil, nil, err
	}
	c, err := hubitat.New(hubitat.Options{URL: url, AppID: h.AppID(), Token: h.Token(), Username: o.Username, Password: o.Password})
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	c.Start(context.Background())
	return h, c, nil
}

// openTestStore opens a store file in dir with the Hubitat tables, as the integration has it.
func openTestStore(t testing.TB, dir string) *hubstore.Store {
	t.Helper()
	s, err := store.Open(filepath.Join(dir, "hamcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs, err := hubstore.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// testEngine is an engine with its store, clock and hub.
type testEngine struct {
	*Engine
	t     testing.TB
	sim   *simhub.Hub
	hub   *hubitat.Client
	st    *hubstore.Store
	clock *fakeclock.Clock
}

// startEngine starts an engine on hub c with a fresh store and a fake clock at `at`.
func startEngine(t testing.TB, h *simhub.Hub, c *hubitat.Client, at time.Time) *testEngine {
	t.Helper()
	return startEngineOn(t, h, c, openTestStore(t, t.TempDir()), fakeclock.New(at))
}

func startEngineOn(t testing.TB, h *simhub.Hub, c *hubitat.Client, st *hubstore.Store, clock *fakeclock.Clock) *testEngine {
	t.Helper()
	return startLimitedEngine(t, h, c, st, clock, Limits{})
}

// startLimitedEngine is startEngineOn with limits of the test's (zero fields: the defaults).
func startLimitedEngine(t testing.TB, h *simhub.Hub, c *hubitat.Client, st *hubstore.Store, clock *fakeclock.Clock, lim Limits) *testEngine {
	t.Helper()
	return startEngineWith(t, h, c, st, clock, func(o *Options) { o.Limits = lim })
}

// startEngineWith is startEngineOn with options of the test's.
func startEngineWith(t testing.TB, h *simhub.Hub, c *hubitat.Client, st *hubstore.Store, clock *fakeclock.Clock, opt func(*Options)) *testEngine {
	t.Helper()
	o := Options{Hub: c, Store: st, Clock: clock, ServerVersion: "test", Logger: slog.New(slog.DiscardHandler)}
	opt(&o)
	e := New(o)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &testEngine{Engine: e, t: t, sim: h, hub: c, st: st, clock: clock}
}

// create stores an enabled rule and fails the test on any problem.
func (te *testEngine) create(r Rule) Rule {
	te.t.Helper()
	r.Enabled = true
	got, probs, err := te.Create(context.Background(), r)
	if err != nil || len(probs) > 0 {
		te.t.Fatalf("create %q: %v %v", r.Name, probs, err)
	}
	return got
}

func (te *testEngine) diag(id string) Diagnostics {
	te.t.Helper()
	d, err := te.Diagnostics(context.Background(), id)
	if err != nil {
		te.t.Fatal(err)
	}
	return d
}

// idle waits until no run of the rule is running or queued.
func (te *testEngine) idle(id string) Diagnostics {
	te.t.Helper()
	var d Diagnostics
	testkit.Eventually(te.t, "rule "+id+" to be idle", func() bool { d = te.diag(id); return !d.Running && d.Queued == 0 })
	return d
}

// set changes a device attribute on the simulated hub as a sensor would (an event follows).
func (te *testEngine) set(id int, attr, value string) {
	te.t.Helper()
	if err := te.sim.SetAttribute(id, attr, value, false); err != nil {
		te.t.Fatal(err)
	}
}

// prime puts a device attribute of the shared hub in a known state before a test's rules
// exist (an earlier test, or an earlier -count round, may have left it otherwise) and waits
// until the client's cache has it.
func (te *testEngine) prime(id int, attr, value string) {
	te.t.Helper()
	te.set(id, attr, value)
	te.waitCached(id, attr, value)
}

// waitAttr waits until the hub's device has the attribute value.
func (te *testEngine) waitAttr(id int, attr, want string) {
	te.t.Helper()
	testkit.Eventually(te.t, fmt.Sprintf("device %d %s = %s", id, attr, want), func() bool {
		v, _ := te.sim.Attribute(id, attr)
		return v == want
	})
}

// waitCached waits until the client's cache (what the engine saw) has the value: the event
// has been delivered to the engine's listener, which runs before the cache's next event.
func (te *testEngine) waitCached(id int, attr, want string) {
	te.t.Helper()
	testkit.Eventually(te.t, fmt.Sprintf("cached device %d %s = %s", id, attr, want), func() bool {
		d, ok := te.hub.Cache().Get(fmt.Sprint(id))
		if !ok {
			return false
		}
		a, ok := d.Attribute(attr)
		return ok && a.Value.String() == want
	})
}

func hubCmd(device, command string, params ...string) Action {
	return Action{Type: "device_command", DeviceID: device, Command: command, Parameters: params}
}

func whenEvent(device, attr string, value *Scalar) Trigger {
	return Trigger{Type: "device_event", DeviceID: device, Attribute: attr, Value: value}
}

var engineT0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func TestEngineCRUDPersistsAndTrashIsRecoverable(t *testing.T) {
	t.Parallel()
	h, c := engineHub(t)
	dir := t.TempDir()
	st := openTestStore(t, dir)
	te := startEngineOn(t, h, c, st, fakeclock.New(engineT0))
	ctx := context.Background()

	r := te.create(Rule{Name: "Porch on at heat", Triggers: []Trigger{whenEvent("16", "thermostatMode", S("heat"))},
		Actions: []Action{hubCmd("3", "on")}, LocalVariables: map[string]any{"count": "0"}})
	if r.ID == "" || r.CreatedAt.IsZero() || !r.Enabled {
		t.Fatalf("created rule lacks runtime fields: %+v", r)
	}
	got, err := te.Get(ctx, r.ID)
	if err != nil || got.Name != r.Name || len(got.Actions) != 1 || got.LocalVariables["count"] != "0" {
		t.Fatalf("Get = %+v, %v", got, err)
	}

	upd, probs, err := te.Update(ctx, r.ID, json.RawMessage(`{"name":"Porch light at motion","description":"evening"}`))
	if err != nil || len(probs) > 0 {
		t.Fatalf("Update: %v %v", probs, err)
	}
	if upd.Name != "Porch light at motion" || upd.Description != "evening" || len(upd.Triggers) != 1 || upd.CreatedAt != r.CreatedAt {
		t.Fatalf("a partial update must keep the other fields: %+v", upd)
	}
	for _, patch := range []string{`{"executionCount":5}`, `{"id":"x"}`, `[1]`, `{`} {
		if _, probs, err := te.Update(ctx, r.ID, json.RawMessage(patch)); err != nil || len(probs) == 0 {
			t.Errorf("Update(%s) = %v, %v; want a problem", patch, probs, err)
		}
	}
	// Problems in a patch name their path inside the rule.
	if _, probs, err := te.Update(ctx, r.ID, json.RawMessage(`{"actions":[{"type":"device_command","deviceId":"3","comand":"on"}]}`)); err != nil ||
		len(probs) == 0 || !strings.HasPrefix(probs[0].Path, "actions[0]") {
		t.Errorf("a misspelt field: %+v, %v", probs, err)
	}
	if _, _, err := te.Update(ctx, "nope", json.RawMessage(`{"name":"x"}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update of an unknown rule: %v", err)
	}

	off, err := te.SetEnabled(ctx, r.ID, false)
	if err != nil || off.Enabled {
		t.Fatalf("SetEnabled(false) = %+v, %v", off, err)
	}

	trashID, err := te.Delete(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := te.Get(ctx, r.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a deleted rule is still there: %v", err)
	}
	trash, err := te.Trash(ctx)
	if err != nil || len(trash) != 1 || trash[0].TrashID != trashID || trash[0].Rule.Name != upd.Name {
		t.Fatalf("Trash = %+v, %v", trash, err)
	}

	// A new engine on the same file sees the trash and restores the rule, disabled.
	te.Close()
	te2 := startEngineOn(t, h, c, st, fakeclock.New(engineT0.Add(time.Hour)))
	back, err := te2.Restore(ctx, trashID)
	if err != nil || back.ID != r.ID || back.Enabled || back.Name != upd.Name {
		t.Fatalf("Restore = %+v, %v", back, err)
	}
	if _, err := te2.Restore(ctx, trashID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("restoring twice: %v", err)
	}
	list, err := te2.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != r.ID {
		t.Fatalf("List = %+v, %v", list, err)
	}
}

// Each trigger type fires from real hub events and the action's command reaches the hub.
func TestEngineEventTriggers(t *testing.T) {
	t.Parallel()
	three := 3
	tests := []struct {
		name    string
		own     bool // needs its own hub (mode and HSM are hub-wide)
		trigger Trigger
		target  int // device the action turns on
		prime   [3]string
		fire    func(te *testEngine)
	}{
		{"device_event value", false, whenEvent("12", "motion", S("active")), 3, [3]string{"12", "motion", "inactive"},
			func(te *testEngine) { te.set(12, "motion", "active") }},
		{"device_event numeric operator", false, Trigger{Type: "device_event", DeviceID: "15", Attribute: "humidity", Operator: ">", Value: N(65)}, 5, [3]string{"15", "humidity", "61"},
			func(te *testEngine) {
				te.set(15, "humidity", "64")
				te.waitCached(15, "humidity", "64")
				if v, _ := te.sim.Attribute(5, "switch"); v != "off" {
					te.t.Fatal("64 > 65 fired the rule")
				}
				te.set(15, "humidity", "70")
			}},
		{"device_event any change of one of deviceIds", false, Trigger{Type: "device_event", DeviceIDs: []string{"13", "28"}, Attribute: "illuminance"}, 7, [3]string{"28", "illuminance", "8400"},
			func(te *testEngine) { te.set(28, "illuminance", "9100") }},
		{"button_event", false, Trigger{Type: "button_event", DeviceID: "18", Action: "pushed", ButtonNumber: &three}, 22, [3]string{},
			func(te *testEngine) {
				if err := te.hub.SendCommand(context.Background(), "18", "push", "3"); err != nil {
					te.t.Fatal(err)
				}
			}},
		{"mode_change", true, Trigger{Type: "mode_change", FromMode: "Day", ToMode: "Night"}, 3, [3]string{},
			func(te *testEngine) {
				if _, _, err := te.hub.SetMode(context.Background(), "Night"); err != nil {
					te.t.Fatal(err)
				}
			}},
		{"hsm_change", true, Trigger{Type: "hsm_change", Status: "armedAway"}, 3, [3]string{},
			func(te *testEngine) { te.sim.EmitLocationEvent("hsmStatus", "armedAway") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var te *testEngine
			if tc.own {
				h, c := ownHub(t, simhub.Options{})
				te = startEngine(t, h, c, engineT0)
			} else {
				h, c := engineHub(t)
				te = startEngine(t, h, c, engineT0)
			}
			target := fmt.Sprint(tc.target)
			te.prime(tc.target, "switch", "off")
			if tc.prime[0] != "" {
				id, _ := strconv.Atoi(tc.prime[0])
				te.prime(id, tc.prime[1], tc.prime[2])
			}
			r := te.create(Rule{Name: tc.name, Triggers: []Trigger{tc.trigger}, Actions: []Action{hubCmd(target, "on")}})
			tc.fire(te)
			te.waitAttr(tc.target, "switch", "on")
			d := te.idle(r.ID)
			if d.Rule.ExecutionCount != 1 || d.Rule.LastTriggered == nil || d.Rule.ErrorCount != 0 {
				t.Fatalf("counters after one run: %+v", d.Rule)
			}
		})
	}
}

func TestEngineModeChangeFromOtherModeDoesNotFire(t *testing.T) {
	t.Parallel()
	h, c := ownHub(t, simhub.Options{})
	te := startEngine(t, h, c, engineT0)
	r := te.create(Rule{Name: "away to night", Triggers: []Trigger{{Type: "mode_change", FromMode: "Away", ToMode: "Night"}},
		Actions: []Action{hubCmd("3", "on")}})
	if _, _, err := c.SetMode(context.Background(), "Night"); err != nil { // from Day
		t.Fatal(err)
	}
	testkit.Eventually(t, "the mode event", func() bool { return c.Cache().Mode() == "Night" })
	if _, _, err := c.SetMode(context.Background(), "Away"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the mode event", func() bool { return c.Cache().Mode() == "Away" })
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 0 {
		t.Fatalf("Day→Night fired a rule for Away→Night: %+v", d.Rule)
	}
	if _, _, err := c.SetMode(context.Background(), "Night"); err != nil {
		t.Fatal(err)
	}
	te.waitAttr(3, "switch", "on")
}

// A trigger's own condition gates it: the event is ignored while the condition is false.
func TestEngineTriggerConditionGates(t *testing.T) {
	t.Parallel()
	h, c := engineHub(t)
	te := startEngine(t, h, c, engineT0)
	tr := whenEvent("13", "motion", S("active"))
	tr.Condition = &Condition{Type: "device_state", DeviceID: "10", Attribute: "contact", Value: S("open")}
	te.prime(10, "contact", "closed")
	te.prime(13, "motion", "inactive")
	te.prime(6, "switch", "on")
	r := te.create(Rule{Name: "gated", Triggers: []Trigger{tr}, Actions: []Action{hubCmd("6", "off")}})

	te.set(13, "motion", "active")
	te.waitCached(13, "motion", "active")
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 0 {
		t.Fatalf("ran while the gate was closed: %+v", d.Rule)
	}
	if v, _ := h.Attribute(6, "switch"); v != "on" {
		t.Fatalf("device 6 switch = %s; the gated rule acted", v)
	}
	te.set(10, "contact", "open")
	te.waitCached(10, "contact", "open")
	te.set(13, "motion", "inactive")
	te.set(13, "motion", "active")
	te.waitAttr(6, "switch", "off")
}

// A duration trigger fires only when the state held for the whole duration; a counter-event
// cancels the countdown, and once fired it re-arms only after the state stopped holding.
func TestEngineDurationTrigger(t *testing.T) {
	t.Parallel()
	h, c := engineHub(t)
	te := startEngine(t, h, c, engineT0)
	tr := whenEvent("11", "contact", S("open"))
	tr.Duration = 300
	te.prime(11, "contact", "closed")
	te.prime(2, "switch", "off")
	r := te.create(Rule{Name: "garage door left open", Triggers: []Trigger{tr}, Actions: []Action{hubCmd("2", "on")}})
	held := func(n int) {
		t.Helper()
		testkit.Eventually(t, fmt.Sprintf("%d held durations", n), func() bool { return te.diag(r.ID).HeldDurations == n })
	}

	te.set(11, "contact", "open")
	held(1)
	te.clock.Advance(200 * time.Second)
	te.set(11, "contact", "closed") // the counter-event
	held(0)
	te.clock.Advance(200 * time.Second)
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 0 {
		t.Fatalf("a cancelled duration fired: %+v", d.Rule)
	}

	te.set(11, "contact", "open")
	held(1)
	te.clock.Advance(299 * time.Second)
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 0 {
		t.Fatal("fired before the duration was over")
	}
	te.clock.Advance(time.Second)
	te.waitAttr(2, "switch", "on")
	te.idle(r.ID)

	// Still open: another "open" report (the hub sends none for an unchanged value; a driver
	// might) does not start a second countdown.
	te.set(11, "contact", "open")
	te.waitCached(11, "contact", "open")
	te.clock.Advance(time.Hour)
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 1 {
		t.Fatalf("fired again without the state stopping to hold: %+v", d.Rule)
	}
	// Closed then open again: re-armed.
	te.set(11, "contact", "closed")
	held(0)
	te.set(11, "contact", "open")
	held(1)
	te.clock.Advance(300 * time.Second)
	testkit.Eventually(t, "the second run", func() bool { return te.diag(r.ID).Rule.ExecutionCount == 2 })
}

// A duration without a value: the attribute must stay at its new value that long; every
// change restarts the countdown.
func TestEngineDurationOfAnyChange(t *testing.T) {
	t.Parallel()
	h, c := engineHub(t)
	te := startEngine(t, h, c, engineT0)
	te.prime(28, "humidity", "70")
	te.prime(1, "switch", "on")
	r := te.create(Rule{Name: "humidity settled", Triggers: []Trigger{{Type: "device_event", DeviceID: "28", Attribute: "humidity", Duration: 60}},
		Actions: []Action{hubCmd("1", "off")}})
	te.set(28, "humidity", "71")
	testkit.Eventually(t, "the countdown", func() bool { return te.diag(r.ID).HeldDurations == 1 })
	te.clock.Advance(50 * time.Second)
	restart := te.clock.Now().Add(60 * time.Second)
	te.set(28, "humidity", "72")
	te.waitCached(28, "humidity", "72")
	// The cache can have the change before the engine does: advancing the clock then would run
	// the first countdown out before the engine heard of the second value.
	testkit.Eventually(t, "the countdown to restart", func() bool { return slices.Contains(te.clock.Pending(), restart) })
	te.clock.Advance(50 * time.Second) // 100 s after the first change, 50 s after the second
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 0 || d.HeldDurations != 1 {
		t.Fatalf("fired although the value changed within the duration: %+v", d)
	}
	te.clock.Advance(10 * time.Second)
	te.waitAttr(1, "switch", "off")
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 1 || d.HeldDurations != 0 {
		t.Fatalf("after the duration: %+v", d)
	}
}

// A failing rule counts its error and logs it with its id; another rule on the same event runs.
func TestEngineFailingRuleDoesNotStopOthers(t *testing.T) {
	t.Parallel()
	h, c := engineHub(t)
	te := startEngine(t, h, c, engineT0)
	te.prime(26, "water", "dry")
	te.prime(21, "valve", "closed")
	te.prime(20, "windowShade", "open")
	bad := te.create(Rule{Name: "bad", Triggers: []Trigger{whenEvent("26", "water", S("wet"))},
		Actions: []Action{{Type: "http_request", URL: "http://127.0.0.1:1/refused", Method: "GET"}, hubCmd("20", "close")}})
	good := te.create(Rule{Name: "good", Triggers: []Trigger{whenEvent("26", "water", S("wet"))}, Actions: []Action{hubCmd("21", "open")}})
	te.set(26, "water", "wet")
	te.waitAttr(21, "valve", "open")
	d := te.idle(bad.ID)
	if d.Rule.ErrorCount != 1 || d.Rule.LastError == "" || len(d.RecentErrors) != 1 || !strings.Contains(d.RecentErrors[0], "actions[0]") {
		t.Fatalf("the failure is not recorded: %+v %q", d.Rule, d.RecentErrors)
	}
	if v, _ := h.Attribute(20, "windowShade"); v != "open" {
		t.Fatalf("an action after the failing one ran: blind is %s", v)
	}
	if g := te.idle(good.ID); g.Rule.ExecutionCount != 1 || g.Rule.ErrorCount != 0 {
		t.Fatalf("the other rule: %+v", g.Rule)
	}
	logs, err := te.st.DebugLogs(context.Background(), hubstore.DebugQuery{RuleID: bad.ID})
	if err != nil || len(logs) == 0 || logs[len(logs)-1].Level != "error" {
		t.Fatalf("no error line with the rule's id in the debug log: %+v %v", logs, err)
	}
}

// A delay is stored with the run's position and context; after a restart on the same file a
// delay that fell due while hamcp was down runs at once (and says so), a future one waits.
func TestEngineDelaySurvivesRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		trigger int
		target  int
		down    time.Duration // how long hamcp is down
		due     bool
	}{
		{"fell due while down", 24, 27, 2 * time.Minute, true},
		{"still in the future", 25, 4, 30 * time.Second, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, c := engineHub(t)
			st := openTestStore(t, t.TempDir())
			clock := fakeclock.New(engineT0)
			te := startEngineOn(t, h, c, st, clock)
			target := fmt.Sprint(tc.target)
			te.prime(tc.target, "switch", "off")
			trig := Trigger{Type: "device_event", DeviceID: fmt.Sprint(tc.trigger), Attribute: "presence"}
			r := te.create(Rule{Name: tc.name, Triggers: []Trigger{trig},
				Actions: []Action{hubCmd(target, "on"), {Type: "delay", Seconds: 60, DelayID: "off-later"}, hubCmd(target, "off")}})
			from := "present"
			if v, _ := h.Attribute(tc.trigger, "presence"); v == "present" {
				from = "not present"
			}
			te.set(tc.trigger, "presence", from)
			te.waitAttr(tc.target, "switch", "on")
			var pd []PendingDelay
			testkit.Eventually(t, "the stored delay", func() bool { pd = te.diag(r.ID).PendingDelays; return len(pd) == 1 })
			if pd[0].DelayID != "off-later" || pd[0].Context.Event == nil || pd[0].Context.Event.Name != "presence" || !pd[0].Due.Equal(engineT0.Add(time.Minute)) {
				t.Fatalf("stored delay: %+v", pd[0])
			}
			te.Close()

			clock2 := fakeclock.New(engineT0.Add(tc.down))
			te2 := startEngineOn(t, h, c, st, clock2)
			if tc.due {
				te.waitAttr(tc.target, "switch", "off")
				d := te2.idle(r.ID)
				if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "fell due while hamcp was down") || len(d.PendingDelays) != 0 {
					t.Fatalf("diagnostics after a due delay: notes %q, delays %+v", d.Notes, d.PendingDelays)
				}
				return
			}
			if v, _ := h.Attribute(tc.target, "switch"); v != "on" {
				t.Fatalf("a future delay ran at start: switch %s", v)
			}
			clock2.Advance(29 * time.Second)
			if d := te2.idle(r.ID); len(d.PendingDelays) != 1 {
				t.Fatalf("the delay ran early: %+v", d.PendingDelays)
			}
			clock2.Advance(time.Second)
			te.waitAttr(tc.target, "switch", "off")
			if d := te2.idle(r.ID); len(d.PendingDelays) != 0 || len(d.Notes) != 0 {
				t.Fatalf("after the delay: %+v %q", d.PendingDelays, d.Notes)
			}
		})
	}
}

// Disabling a rule cancels its pending delays; cancel_delayed cancels by id.
func TestEngineDisableAndCancelDelayed(t *testing.T) {
	t.Parallel()
	h, c := engineHub(t)
	te := startEngine(t, h, c, engineT0)
	ctx := context.Background()
	// Any humidity change of device 14 opens the living-room shade and closes it 60 s later.
	te.prime(14, "humidity", "50")
	te.prime(14, "temperature", "70")
	te.prime(19, "windowShade", "closed")
	r := te.create(Rule{Name: "shade", Triggers: []Trigger{{Type: "device_event", DeviceID: "14", Attribute: "humidity"}},
		Actions: []Action{hubCmd("19", "open"), {Type: "delay", Seconds: 60}, hubCmd("19", "close")}})
	te.set(14, "humidity", "55")
	te.waitAttr(19, "windowShade", "open")
	testkit.Eventually(t, "the stored delay", func() bool { return len(te.diag(r.ID).PendingDelays) == 1 })
	if _, err := te.SetEnabled(ctx, r.ID, false); err != nil {
		t.Fatal(err)
	}
	if d := te.diag(r.ID); len(d.PendingDelays) != 0 {
		t.Fatalf("disabling kept the delay: %+v", d.PendingDelays)
	}
	te.clock.Advance(2 * time.Minute)
	te.idle(r.ID)
	if v, _ := h.Attribute(19, "windowShade"); v != "open" {
		t.Fatalf("a cancelled delay ran: shade %s", v)
	}

	// cancel_delayed from another rule's run (its own delays only) by id.
	r2 := te.create(Rule{Name: "two delays", Triggers: []Trigger{{Type: "device_event", DeviceID: "14", Attribute: "temperature"}},
		Actions: []Action{{Type: "delay", Seconds: 30, DelayID: "a"}, {Type: "cancel_delayed", DelayID: "b"}}})
	te.set(14, "temperature", "72")
	testkit.Eventually(t, "delay a", func() bool { return len(te.diag(r2.ID).PendingDelays) == 1 })
	if err := te.cancelDelays(ctx, r2.ID, "zzz"); err != nil {
		t.Fatal(err)
	}
	if n := len(te.diag(r2.ID).PendingDelays); n != 1 {
		t.Fatalf("cancelling another id removed %d", 1-n)
	}
	if err := te.cancelDelays(ctx, r2.ID, "a"); err != nil {
		t.Fatal(err)
	}
	if n := len(te.diag(r2.ID).PendingDelays); n != 0 {
		t.Fatalf("cancel by id left %d", n)
	}
}

// test_rule is a dry run: it reports but nothing reaches the hub.
func TestEngineTestNeverActs(t *testing.T) {
	t.Parallel()
	h, c := engineHub(t)
	te := startEngine(t, h, c, engineT0)
	r := te.create(Rule{Name: "unlock", Triggers: []Trigger{whenEvent("16", "thermostatMode", S("cool"))},
		Actions: []Action{hubCmd("9", "lock"), {Type: "set_mode", Mode: "Away"}, {Type: "delay", Seconds: 5}, hubCmd("9", "unlock")}})
	before := h.Requests("GET /devices/9/lock") + h.Requests("GET /devices/9/unlock") + h.Requests("GET /modes/4")
	rep, err := te.Test(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.ConditionsMet || len(rep.WouldDo) < 3 || len(rep.Triggers) != 1 || !rep.Triggers[0].Armed {
		t.Fatalf("report: %+v", rep)
	}
	after := h.Requests("GET /devices/9/lock") + h.Requests("GET /devices/9/unlock") + h.Requests("GET /modes/4")
	if after != before || h.Mode() != "Day" {
		t.Fatalf("test_rule acted: %d requests, mode %s", after-before, h.Mode())
	}
	if d := te.diag(r.ID); d.Rule.ExecutionCount != 0 || len(d.PendingDelays) != 0 {
		t.Fatalf("test_rule counted or stored a delay: %+v", d)
	}
}

// matchMode all: the trigger fires only when every listed device holds the state.
func TestEngineMatchModeAll(t *testing.T) {
	t.Parallel()
	h, c := ownHub(t, simhub.Options{})
	te := startEngine(t, h, c, engineT0)
	te.prime(24, "presence", "not present")
	te.prime(25, "presence", "not present")
	r := te.create(Rule{Name: "everyone home", Triggers: []Trigger{{Type: "device_event", DeviceIDs: []string{"24", "25"},
		Attribute: "presence", Value: S("present"), MatchMode: "all"}}, Actions: []Action{hubCmd("3", "on")}})
	te.set(24, "presence", "present")
	te.waitCached(24, "presence", "present")
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 0 {
		t.Fatal("fired with one of two present")
	}
	te.set(25, "presence", "present")
	te.waitAttr(3, "switch", "on")
}

// The live Env: captures go to the store and come back as hub commands, local variables set
// by a run persist in the stored rule, http_request reaches the URL with its body.
func TestEngineLiveEnv(t *testing.T) {
	t.Parallel()
	h, c := ownHub(t, simhub.Options{})
	te := startEngine(t, h, c, engineT0)
	ctx := context.Background()
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r.Method + " " + r.Header.Get("Content-Type") + " " + string(b)
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)

	te.prime(12, "motion", "inactive")
	r := te.create(Rule{Name: "env", Triggers: []Trigger{whenEvent("12", "motion", S("active"))}, Actions: []Action{
		{Type: "capture_state", DeviceIDs: []string{"1", "5"}, StateID: "before"},
		hubCmd("1", "off"), hubCmd("5", "on"), hubCmd("5", "setLevel", "90"),
		{Type: "restore_state", StateID: "before"},
		{Type: "set_local_variable", VariableName: "runs", Value: S("1")},
		{Type: "http_request", URL: srv.URL + "/hook", Method: "POST", ContentType: "application/json", Body: `{"a":1}`},
	}})
	te.set(12, "motion", "active")
	select {
	case m := <-got:
		if m != `POST application/json {"a":1}` {
			t.Fatalf("the hook got %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the http_request never arrived")
	}
	d := te.idle(r.ID)
	if d.Rule.ErrorCount != 0 {
		t.Fatalf("run failed: %s", d.Rule.LastError)
	}
	for _, w := range []struct {
		id         int
		attr, want string
	}{{1, "switch", "on"}, {1, "level", "60"}, {5, "switch", "off"}} {
		if v, _ := h.Attribute(w.id, w.attr); v != w.want {
			t.Errorf("device %d %s = %s after restore; want %s", w.id, w.attr, v, w.want)
		}
	}
	cs, ok, err := te.st.CapturedState(ctx, "before")
	if err != nil || !ok || cs.Devices["5"]["colorTemperature"] != "2700" {
		t.Fatalf("captured state: %+v %v %v", cs, ok, err)
	}
	if d.Rule.LocalVariables["runs"] != "1" {
		t.Fatalf("local variable not stored: %+v", d.Rule.LocalVariables)
	}
}
