package rules

// Fault tests, because hubs reboot and networks drop: the hub's eventsocket is cut mid-stream
// or the hub reboots while rules are armed. What they pin down:
//
//   - the client reconnects by itself and the same subscription keeps feeding the engine: an
//     event after the reconnect fires its rule, once;
//   - nothing runs twice: each delivered event runs its rule once, a reconnect or a reboot
//     replays nothing, and a pending delay survives the outage as one delay that acts once;
//   - events the hub emitted while the socket was down are lost to the engine (the hub keeps no
//     backlog for the socket and the resync after the reconnect replaces the cache without
//     emitting events): their triggers do not fire late, but conditions and duration triggers
//     read the resynced state — a duration countdown whose state was broken by a missed event
//     does not fire (it did before: the engine acted on a door it thought was still open).
//
// Each test has a hub of its own: cutting the eventsocket is hub-wide. The hub client reconnects
// with its production back-off (a quarter to half a second for the first attempt).

import (
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
)

// faultEngine is an engine on a hub of its own with a fake clock.
func faultEngine(t *testing.T) *testEngine {
	t.Helper()
	h, c := ownHub(t, simhub.Options{RebootDelay: 50 * time.Millisecond})
	return startEngineOn(t, h, c, liveStore(t), fakeclock.New(engineT0))
}

// reconnected waits until the client noticed the drop (its reconnect counter passed before) and
// is live again on a new socket.
func (te *testEngine) reconnected(before int) {
	te.t.Helper()
	testkit.Eventually(te.t, "the eventsocket to reconnect", func() bool {
		return te.hub.Status().Reconnects > before && te.hub.Cache().Live() && te.sim.Sockets() == 1
	})
}

// runs is how many times the rule ran, once it is idle.
func (te *testEngine) runs(id string) int {
	te.t.Helper()
	return te.idle(id).Rule.ExecutionCount
}

// toggle sets a device attribute to a different value, then to want, so that want arrives as a
// change (an unchanged value makes no event).
func (te *testEngine) toggle(id int, attr, other, want string) {
	te.t.Helper()
	te.set(id, attr, other)
	te.set(id, attr, want)
}

// settled proves every event the hub sent before now has reached the engine: the sentinel rule
// (Hallway Motion, device 13) runs once more, and events are delivered to the engine in order.
func (te *testEngine) settled(sentinel string) {
	te.t.Helper()
	before := te.runs(sentinel)
	v, _ := te.sim.Attribute(13, "motion")
	next := map[string]string{"active": "inactive", "inactive": "active"}[v]
	te.set(13, "motion", next)
	testkit.Eventually(te.t, "the sentinel rule to run", func() bool { return te.diag(sentinel).Rule.ExecutionCount > before })
}

func (te *testEngine) sentinelRule() Rule {
	return te.create(Rule{Name: "sentinel", Triggers: []Trigger{{Type: "device_event", DeviceID: "13", Attribute: "motion"}},
		Actions: []Action{{Type: "log", Message: "sentinel"}}})
}

// Cut mid-stream: a burst of motion events with the socket cut halfway. Whatever got through
// ran once per event (the hub saw exactly as many commands as the rule has runs); after the
// reconnect one event runs the rule exactly once more.
func TestFaultSocketCutRearmsWithoutDuplicates(t *testing.T) {
	t.Parallel()
	te := faultEngine(t)
	te.prime(12, "motion", "inactive")
	r := te.create(Rule{Name: "motion lights the coffee maker", Triggers: []Trigger{whenEvent("12", "motion", S("active"))},
		Actions: []Action{hubCmd("4", "on")}})
	sentinel := te.sentinelRule()
	const route = "GET /devices/4/on"

	te.set(12, "motion", "active")
	testkit.Eventually(t, "the first run", func() bool { return te.diag(r.ID).Rule.ExecutionCount == 1 })
	te.settled(sentinel.ID)
	if got, n := te.runs(r.ID), te.sim.Requests(route); got != 1 || n != 1 {
		t.Fatalf("before any fault: %d runs, %d commands at the hub; want 1 and 1", got, n)
	}

	// 10 "active" events, the socket cut after the fifth.
	before := te.hub.Status().Reconnects
	for i := range 20 {
		if i == 10 {
			te.sim.CutEventSockets()
		}
		te.set(12, "motion", map[bool]string{true: "inactive", false: "active"}[i%2 == 1])
	}
	te.reconnected(before)
	te.settled(sentinel.ID)
	burst, cmds := te.runs(r.ID), te.sim.Requests(route)
	if burst != cmds || burst < 1 || burst > 1+10 {
		t.Fatalf("after the cut burst: %d runs, %d commands at the hub; want equal, between 1 and 11", burst, cmds)
	}

	// Re-armed: one event after the reconnect, one run, one command; nothing later.
	te.set(12, "motion", "active")
	testkit.Eventually(t, "a run after the reconnect", func() bool { return te.diag(r.ID).Rule.ExecutionCount == burst+1 })
	te.settled(sentinel.ID)
	if got, n := te.runs(r.ID), te.sim.Requests(route); got != burst+1 || n != cmds+1 {
		t.Fatalf("after the reconnect: %d runs, %d commands; want %d and %d", got, n, burst+1, cmds+1)
	}
	if d := te.diag(r.ID); d.Rule.ErrorCount != 0 {
		t.Fatalf("errors: %+v", d.Rule)
	}
}

// A hub reboot while a delay is pending: the delay stays one delay, acts once when due, and the
// reboot's systemStart (and the resync it causes) fires nothing.
func TestFaultRebootKeepsOnePendingDelay(t *testing.T) {
	t.Parallel()
	te := faultEngine(t)
	te.prime(12, "motion", "inactive")
	r := te.create(Rule{Name: "coffee off ten minutes after motion", Triggers: []Trigger{whenEvent("12", "motion", S("active"))},
		Actions: []Action{{Type: "delay", Seconds: 600, DelayID: "off"}, hubCmd("4", "off")}})
	sentinel := te.sentinelRule()
	const route = "GET /devices/4/off"

	te.set(12, "motion", "active")
	testkit.Eventually(t, "the pending delay", func() bool { return len(te.diag(r.ID).PendingDelays) == 1 })

	before := te.hub.Status().Reconnects
	<-te.sim.Reboot()
	te.reconnected(before)
	te.settled(sentinel.ID)
	d := te.idle(r.ID)
	if len(d.PendingDelays) != 1 || d.Rule.ExecutionCount != 1 || te.sim.Requests(route) != 0 {
		t.Fatalf("after the reboot: %d pending delays, %d runs, %d commands; want 1, 1, 0", len(d.PendingDelays), d.Rule.ExecutionCount, te.sim.Requests(route))
	}

	te.clock.Advance(10 * time.Minute)
	testkit.Eventually(t, "the delayed command", func() bool { return te.sim.Requests(route) >= 1 })
	te.settled(sentinel.ID)
	te.clock.Advance(time.Hour)
	d = te.idle(r.ID)
	if n := te.sim.Requests(route); n != 1 || len(d.PendingDelays) != 0 || d.Rule.ExecutionCount != 1 || d.Rule.ErrorCount != 0 {
		t.Fatalf("after the delay: %d commands, %d pending, %+v; want 1 command, none pending, 1 run", n, len(d.PendingDelays), d.Rule)
	}
}

// Events emitted while the eventsocket is down are not replayed: the resync after the reconnect
// brings the cache up to date without firing the triggers those events would have fired. A
// duration countdown whose state a missed event broke does not fire when it runs out.
func TestFaultMissedEventsAreNotReplayed(t *testing.T) {
	t.Parallel()
	te := faultEngine(t)
	te.prime(12, "motion", "inactive")
	te.prime(10, "contact", "closed")
	onMotion := te.create(Rule{Name: "porch light on motion", Triggers: []Trigger{whenEvent("12", "motion", S("active"))},
		Actions: []Action{hubCmd("3", "on")}})
	open := whenEvent("10", "contact", S("open"))
	open.Duration = 600
	leftOpen := te.create(Rule{Name: "front door left open", Triggers: []Trigger{open}, Actions: []Action{hubCmd("27", "on")}})
	sentinel := te.sentinelRule()
	const motionRoute, doorRoute = "GET /devices/3/on", "GET /devices/27/on"

	te.set(10, "contact", "open") // the countdown starts while the link is up
	testkit.Eventually(t, "the door countdown", func() bool { return te.diag(leftOpen.ID).HeldDurations == 1 })

	// The outage: the socket is cut and refused until both changes happened at the hub.
	before := te.hub.Status().Reconnects
	te.sim.RefuseEventSockets(true)
	te.sim.CutEventSockets()
	testkit.Eventually(t, "the link to notice", func() bool { return te.hub.Status().Reconnects > before && !te.hub.Cache().Live() })
	te.set(12, "motion", "active")  // nobody hears it
	te.set(10, "contact", "closed") // the door closes unheard
	te.sim.RefuseEventSockets(false)
	te.reconnected(before)
	te.waitCached(12, "motion", "active") // the resync learned both
	te.waitCached(10, "contact", "closed")
	te.settled(sentinel.ID)
	if got, n := te.runs(onMotion.ID), te.sim.Requests(motionRoute); got != 0 || n != 0 {
		t.Fatalf("a missed event was replayed: %d runs, %d commands", got, n)
	}

	te.clock.Advance(10 * time.Minute) // the countdown runs out; the door has been closed since the outage
	if d := te.idle(leftOpen.ID); d.Rule.ExecutionCount != 0 || te.sim.Requests(doorRoute) != 0 || d.HeldDurations != 0 {
		t.Fatalf("the duration fired on a state a missed event had broken: %d runs, %d commands, %d held", d.Rule.ExecutionCount, te.sim.Requests(doorRoute), d.HeldDurations)
	}

	// After the reconnect both triggers work, once each.
	te.toggle(12, "motion", "inactive", "active")
	testkit.Eventually(t, "the motion rule", func() bool { return te.diag(onMotion.ID).Rule.ExecutionCount == 1 })
	te.set(10, "contact", "open")
	testkit.Eventually(t, "a new door countdown", func() bool { return te.diag(leftOpen.ID).HeldDurations == 1 })
	te.clock.Advance(10 * time.Minute)
	testkit.Eventually(t, "the door rule", func() bool { return te.diag(leftOpen.ID).Rule.ExecutionCount == 1 })
	te.settled(sentinel.ID)
	for _, c := range []struct {
		id, route string
	}{{onMotion.ID, motionRoute}, {leftOpen.ID, doorRoute}} {
		if got, n := te.runs(c.id), te.sim.Requests(c.route); got != 1 || n != 1 {
			t.Errorf("%s: %d runs, %d commands; want 1 and 1", c.route, got, n)
		}
	}
}
