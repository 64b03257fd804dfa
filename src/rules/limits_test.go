package rules

// Runaway rules against the simulated hub: a rule whose actions fire its own trigger, a ring of
// rules firing each other, and rules over their run or command budget are stopped and disabled
// with the reason, the hub receives a bounded number of commands, and a restart keeps them
// stopped. Each case has a hub of its own (the runaways command devices other tests watch) and
// the fake clock: nothing here waits for time to pass.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
)

// switchCommands is how many on and off commands device id received.
func switchCommands(h *simhub.Hub, id int) int {
	return h.Requests(fmt.Sprintf("GET /devices/%d/on", id)) + h.Requests(fmt.Sprintf("GET /devices/%d/off", id))
}

// stopped waits until the engine has stopped the rule and no run of it is left, and returns its
// diagnostics.
func (te *testEngine) stopped(id string) Diagnostics {
	te.t.Helper()
	var d Diagnostics
	testkit.Eventually(te.t, "rule "+id+" to be stopped", func() bool {
		d = te.diag(id)
		return !d.Rule.Enabled && d.Rule.DisabledReason != "" && !d.Running && d.Queued == 0
	})
	return d
}

// flip changes a switch at the hub as someone at the wall would, and waits until the engine has
// seen it.
func (te *testEngine) flip(id int) {
	te.t.Helper()
	v, _ := te.sim.Attribute(id, "switch")
	next := map[string]string{"on": "off", "off": "on"}[v]
	te.set(id, "switch", next)
	te.waitCached(id, "switch", next)
}

func toggle20(device string) []Action {
	return []Action{{Type: "repeat", Times: 20, Actions: []Action{{Type: "toggle_device", DeviceID: device}}}}
}

func anyChange(device, attr string) Trigger {
	return Trigger{Type: "device_event", DeviceID: device, Attribute: attr}
}

// The red team's rule: any change of the porch light toggles it 20 times. Each run's toggles
// trigger it again; unchecked it ran 240 times a second. It is stopped after a handful of runs,
// disabled in the store with the reason, and stays disabled after a restart.
func TestRunawaySelfRetriggeringRuleIsStopped(t *testing.T) {
	t.Parallel()
	h, c := ownHub(t, simhub.Options{})
	st := liveStore(t)
	te := startEngineOn(t, h, c, st, fakeclock.New(engineT0))
	r := te.create(Rule{Name: "toggle bomb", Triggers: []Trigger{anyChange("3", "switch")}, Actions: toggle20("3")})

	te.flip(3)
	d := te.stopped(r.ID)
	// At most the runs before the loop limit, each 20 commands; then nothing.
	bound := (DefaultLoopRuns + 1) * 20
	sent := switchCommands(h, 3)
	if sent > bound || sent < 20 {
		t.Errorf("the hub received %d switch commands; want 20–%d", sent, bound)
	}
	if !strings.Contains(d.Rule.DisabledReason, "its own commands triggered it again") || d.Rule.DisabledAt == nil ||
		!d.Rule.DisabledAt.Equal(engineT0) {
		t.Errorf("disabled %v with reason %q", d.Rule.DisabledAt, d.Rule.DisabledReason)
	}
	if d.Rule.ExecutionCount > DefaultLoopRuns+1 {
		t.Errorf("ran %d times", d.Rule.ExecutionCount)
	}
	logs, err := st.DebugLogs(context.Background(), hubstore.DebugQuery{RuleID: r.ID, Level: "error"})
	if err != nil || len(logs) == 0 || !strings.Contains(logs[len(logs)-1].Message, "stopped and disabled") {
		t.Errorf("no error line says it was stopped: %+v %v", logs, err)
	}

	// Stopped means stopped: the porch light changing again runs nothing.
	runs := d.Rule.ExecutionCount
	te.flip(3)
	if d := te.idle(r.ID); d.Rule.ExecutionCount != runs || switchCommands(h, 3) != sent {
		t.Errorf("a stopped rule ran: %d runs, %d commands", d.Rule.ExecutionCount, switchCommands(h, 3)-sent)
	}

	// A restart on the same store keeps it stopped, with its reason.
	te.Close()
	te2 := startEngineOn(t, h, c, st, fakeclock.New(engineT0.Add(time.Hour)))
	got, err := te2.Get(context.Background(), r.ID)
	if err != nil || got.Enabled || got.DisabledReason != d.Rule.DisabledReason {
		t.Fatalf("after a restart: enabled %v, reason %q, %v", got.Enabled, got.DisabledReason, err)
	}
	te2.flip(3)
	if d := te2.idle(r.ID); d.Rule.ExecutionCount != runs || switchCommands(h, 3) != sent {
		t.Errorf("the restarted engine ran the stopped rule: %d runs", d.Rule.ExecutionCount)
	}
	// An edit alone keeps the reason; enabling clears it.
	if upd, probs, err := te2.Update(context.Background(), r.ID, []byte(`{"description":"looked at it"}`)); err != nil || len(probs) > 0 ||
		upd.Enabled || upd.DisabledReason == "" {
		t.Errorf("after an edit: %+v %v %v", upd, probs, err)
	}
	on, err := te2.SetEnabled(context.Background(), r.ID, true)
	if err != nil || !on.Enabled || on.DisabledReason != "" || on.DisabledAt != nil {
		t.Fatalf("enabled again: %+v %v", on, err)
	}
	if d := te2.diag(r.ID); d.Rule.DisabledReason != "" || d.Limits.LoopRuns != 0 {
		t.Errorf("diagnostics after enabling: reason %q, limits %+v", d.Rule.DisabledReason, d.Limits)
	}
	if _, err := te2.SetEnabled(context.Background(), r.ID, false); err != nil {
		t.Fatal(err)
	}
}

// Two rules that toggle each other's trigger device: both are stopped, each naming the other.
func TestRunawayRingOfRulesIsStopped(t *testing.T) {
	t.Parallel()
	h, c := ownHub(t, simhub.Options{})
	te := startEngineOn(t, h, c, liveStore(t), fakeclock.New(engineT0))
	a := te.create(Rule{Name: "porch drives coffee", Triggers: []Trigger{anyChange("3", "switch")},
		Actions: []Action{{Type: "toggle_device", DeviceID: "4"}}})
	b := te.create(Rule{Name: "coffee drives porch", Triggers: []Trigger{anyChange("4", "switch")},
		Actions: []Action{{Type: "toggle_device", DeviceID: "3"}}})

	te.flip(3)
	da, db := te.stopped(a.ID), te.stopped(b.ID)
	if bound := 2 * (DefaultLoopRuns + 2); switchCommands(h, 3)+switchCommands(h, 4) > bound {
		t.Errorf("the hub received %d commands; want at most %d", switchCommands(h, 3)+switchCommands(h, 4), bound)
	}
	for _, tc := range []struct {
		d     Diagnostics
		other Rule
	}{{da, b}, {db, a}} {
		if reason := tc.d.Rule.DisabledReason; !strings.Contains(reason, "trigger each other in a loop") || !strings.Contains(reason, tc.other.Name) {
			t.Errorf("%s: reason %q does not name %q", tc.d.Rule.Name, reason, tc.other.Name)
		}
	}
}

// The budgets: a rule over its runs or commands a minute is stopped at the limit, naming it; one
// under them keeps running, minute after minute.
func TestRuleBudgets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		limits  Limits
		actions []Action
		minutes int // minutes in which the motion sensor fires the rule runsPer times
		runsPer int
		stopped string // in the reason; "" when it keeps running
		maxCmds int    // commands the porch light may receive in all
	}{
		{name: "busy but within the limits", limits: Limits{RunsPerMinute: 3, CommandsPerMinute: 6},
			actions: []Action{hubCmd("3", "on"), hubCmd("3", "off")}, minutes: 3, runsPer: 3, maxCmds: 18},
		{name: "too many runs", limits: Limits{RunsPerMinute: 3},
			actions: []Action{hubCmd("3", "on")}, minutes: 1, runsPer: 4, stopped: "triggered more than 3 times within a minute", maxCmds: 3},
		{name: "too many commands", limits: Limits{CommandsPerMinute: 10},
			actions: []Action{{Type: "repeat", Times: 50, Actions: []Action{hubCmd("3", "on"), hubCmd("3", "off")}}},
			minutes: 1, runsPer: 1, stopped: "sent more than 10 commands within a minute", maxCmds: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, c := ownHub(t, simhub.Options{})
			te := startLimitedEngine(t, h, c, liveStore(t), fakeclock.New(engineT0), tc.limits)
			r := te.create(Rule{Name: tc.name, Triggers: []Trigger{whenEvent("12", "motion", S("active"))}, Actions: tc.actions})
			runs := 0
			for m := range tc.minutes {
				for range tc.runsPer {
					te.set(12, "motion", "active")
					te.waitCached(12, "motion", "active")
					runs++
					testkit.Eventually(t, fmt.Sprintf("run %d", runs), func() bool {
						d := te.diag(r.ID)
						return (d.Rule.ExecutionCount == runs || d.Rule.DisabledReason != "") && !d.Running && d.Queued == 0
					})
					te.set(12, "motion", "inactive")
					te.waitCached(12, "motion", "inactive")
				}
				if m < tc.minutes-1 {
					te.clock.Advance(time.Minute)
				}
			}
			d := te.idle(r.ID)
			if got := switchCommands(h, 3); got > tc.maxCmds {
				t.Errorf("the hub received %d commands; want at most %d", got, tc.maxCmds)
			}
			if tc.stopped == "" {
				if !d.Rule.Enabled || d.Rule.DisabledReason != "" || d.Rule.ExecutionCount != runs || d.Rule.ErrorCount != 0 {
					t.Errorf("a rule within its limits was stopped: %+v", d.Rule)
				}
				if d.Limits.RunsLastMinute != tc.runsPer || d.Limits.RunsPerMinute != tc.limits.RunsPerMinute {
					t.Errorf("limits in the diagnostics: %+v", d.Limits)
				}
				return
			}
			if d.Rule.Enabled || !strings.Contains(d.Rule.DisabledReason, tc.stopped) {
				t.Errorf("enabled %v, reason %q; want it stopped: %q", d.Rule.Enabled, d.Rule.DisabledReason, tc.stopped)
			}
		})
	}
}

func hops(ids ...string) []Hop {
	out := make([]Hop, len(ids))
	for i, id := range ids {
		out[i] = Hop{RuleID: id, At: engineT0}
	}
	return out
}

// loopOf names the rules of a loop: the running rule, then those since its previous run.
func TestLoopOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		chain []Hop
		want  []string
	}{
		{nil, nil},
		{hops("a"), nil},
		{hops("b", "c", "a"), nil},
		{hops("a", "a"), []string{"a"}},
		{hops("a", "b", "a"), []string{"a", "b"}},
		{hops("a", "b", "c", "b", "a"), []string{"a", "b", "c"}},
		{hops("a", "x", "a", "c", "a"), []string{"a", "c"}},
	}
	for _, tc := range tests {
		if got := loopOf(tc.chain); !slices.Equal(got, tc.want) {
			t.Errorf("loopOf(%v) = %v; want %v", tc.chain, got, tc.want)
		}
	}
}

// FuzzLoopOf: whatever chain of causes an event carries (runs of any rules at any times), a
// run's chain is bounded, keeps only causes within the loop window, and loopOf names a loop
// exactly when the rule ran before in it, with the rule first and no rule twice.
func FuzzLoopOf(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 0}, byte(0))
	f.Add([]byte{3, 3, 3, 3}, byte(3))
	f.Add(make([]byte, 200), byte(1))
	e := &Engine{limits: Limits{}.withDefaults()}
	f.Fuzz(func(t *testing.T, data []byte, self byte) {
		now := engineT0.Add(time.Hour)
		cause := make([]Hop, len(data))
		for i, b := range data {
			// Five rules; the age of each cause up to twice the loop window.
			age := time.Duration(b/5) * 2 * e.limits.LoopWindow / 51
			cause[i] = Hop{RuleID: fmt.Sprint(b % 5), At: now.Add(-age)}
		}
		id := fmt.Sprint(self % 5)
		chain := e.chainOf(id, cause, now)
		if len(chain) == 0 || len(chain) > maxHops || chain[len(chain)-1] != (Hop{RuleID: id, At: now}) {
			t.Fatalf("chain of %d hops ends %v", len(chain), chain[len(chain)-1])
		}
		before := chain[:len(chain)-1]
		for _, h := range before {
			if !h.At.After(now.Add(-e.limits.LoopWindow)) {
				t.Fatalf("a cause older than the loop window stayed: %v", h)
			}
		}
		ring := loopOf(chain)
		if ran := slices.ContainsFunc(before, func(h Hop) bool { return h.RuleID == id }); ran != (ring != nil) {
			t.Fatalf("rule %s ran before: %v, loop %v", id, ran, ring)
		}
		if ring == nil {
			return
		}
		if ring[0] != id {
			t.Fatalf("loop %v does not start with %s", ring, id)
		}
		for i, r := range ring {
			if slices.Index(ring, r) != i || !slices.ContainsFunc(chain, func(h Hop) bool { return h.RuleID == r }) {
				t.Fatalf("loop %v: %s twice or not in the chain", ring, r)
			}
		}
	})
}
