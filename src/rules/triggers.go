package rules

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
)

// ruleState is the engine's live state of one rule. Every field is guarded by Engine.mu.
type ruleState struct {
	rule   Rule
	gen    uint64             // bumped on every (dis)arm: a timer of an older generation does nothing
	sched  map[int]*scheduled // time and periodic triggers by index
	held   map[string]*hold   // duration triggers counting down, by trigger index and device
	delays map[string]Timer   // pending delays' timers by delay row id
	queue  []job              // runs waiting for the running one (a rule runs one at a time)
	errors []string           // the last few run errors, newest last
	notes  []string           // things the user should know (delays that fell due while down)
	use    usage              // recent runs and commands, against the limits

	running   bool
	cancelRun context.CancelFunc // cancels the running run (a runaway is stopped mid-run)
}

type scheduled struct {
	timer  Timer
	next   time.Time
	detail string // why it is not armed
}

// hold is a duration trigger whose state holds: it fires when the timer does, once, and re-arms
// only after the state stopped holding (a counter-event).
type hold struct {
	timer Timer
	fired bool
}

const (
	maxQueued    = 50 // runs of one rule waiting; beyond, new triggers are dropped and logged
	keepErrors   = 10
	keepNotes    = 10
	matchAll     = "all"
	buttonPushed = "pushed"
)

func (e *Engine) stateLocked(id string) *ruleState {
	st, ok := e.rules[id]
	if !ok {
		st = &ruleState{sched: map[int]*scheduled{}, held: map[string]*hold{}, delays: map[string]Timer{}}
		e.rules[id] = st
	}
	return st
}

// install makes the engine's state follow a stored rule (created, updated, enabled, restored).
func (e *Engine) install(r Rule) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.stateLocked(r.ID)
	e.disarmLocked(st, false)
	if r.Enabled && !st.rule.Enabled {
		st.use.reset() // enabled again: a fresh budget
	}
	st.rule = r
	// Queued runs were triggered under the rule as it was; resumed delays stay (an update has
	// cancelled its delays already, and disabling drops them here).
	st.queue = slices.DeleteFunc(st.queue, func(j job) bool { return j.delayRow == "" || !r.Enabled })
	if r.Enabled && e.started && !e.closed {
		e.armLocked(st)
	}
}

// armLocked schedules the rule's time and periodic triggers; event triggers need no arming
// (onEvent matches every enabled rule).
func (e *Engine) armLocked(st *ruleState) {
	for i := range st.rule.Triggers {
		switch st.rule.Triggers[i].Type {
		case "time", "periodic":
			e.scheduleLocked(st, i, e.clock.Now())
		}
	}
}

// disarmLocked stops the rule's schedule and duration timers; withDelays also stops the timers of
// its pending delays (whose rows stay in the store for the next Start).
func (e *Engine) disarmLocked(st *ruleState, withDelays bool) {
	st.gen++
	for i, s := range st.sched {
		if s.timer != nil {
			s.timer.Stop()
		}
		delete(st.sched, i)
	}
	for k, h := range st.held {
		if h.timer != nil {
			h.timer.Stop()
		}
		delete(st.held, k)
	}
	if withDelays {
		for id, t := range st.delays {
			t.Stop()
			delete(st.delays, id)
		}
	}
}

// onEvent matches one hub event against every enabled rule's event triggers. It runs on the
// cache's delivery goroutine, in event order; runs are queued, never executed here.
func (e *Engine) onEvent(ev hubitat.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.down.lastEvent = e.clock.Now()
	prevMode := e.prevMode
	if ev.Location() && ev.Name == "mode" {
		e.prevMode = ev.Value.String()
	}
	cause := e.causeLocked(ev)
	for _, st := range e.rules {
		if !st.rule.Enabled {
			continue
		}
		for i := range st.rule.Triggers {
			t := &st.rule.Triggers[i]
			switch t.Type {
			case "device_event":
				e.deviceEventLocked(st, i, t, ev, cause)
			case "button_event":
				if buttonMatches(t, ev) {
					e.fireLocked(st, i, ev, cause)
				}
			case "mode_change":
				if ev.Location() && ev.Name == "mode" && (t.ToMode == "" || t.ToMode == ev.Value.String()) &&
					(t.FromMode == "" || t.FromMode == prevMode) {
					e.fireLocked(st, i, ev, cause)
				}
			case "hsm_change":
				if ev.Location() && ev.Name == "hsmStatus" && (t.Status == "" || t.Status == ev.Value.String()) {
					e.fireLocked(st, i, ev, cause)
				}
			}
		}
	}
}

// triggerDevices is a device trigger's device ids (deviceId and deviceIds together).
func triggerDevices(t *Trigger) []string {
	ids := slices.Clone(t.DeviceIDs)
	if t.DeviceID != "" && !slices.Contains(ids, t.DeviceID) {
		ids = append(ids, t.DeviceID)
	}
	return ids
}

func buttonMatches(t *Trigger, ev hubitat.Event) bool {
	action := t.Action
	if action == "" {
		action = buttonPushed
	}
	if ev.Location() || ev.Name != action || !slices.Contains(triggerDevices(t), ev.DeviceID) {
		return false
	}
	if t.ButtonNumber == nil {
		return true
	}
	n, ok := ev.Value.Float()
	return ok && int(n) == *t.ButtonNumber
}

// deviceEventLocked handles a device_event trigger: the event must come from one of its devices
// and name its attribute. Without a value any change fires; with one, the operator decides
// whether the state holds. matchMode all needs every listed device to hold (read from the
// cache). A duration starts a countdown when the state begins to hold, cancelled by an event
// that breaks it; it fires once and re-arms when the state stops holding. Without a value, a
// duration fires when the attribute stayed at a new value that long.
func (e *Engine) deviceEventLocked(st *ruleState, i int, t *Trigger, ev hubitat.Event, cause []Hop) {
	devices := triggerDevices(t)
	if ev.Location() || ev.Name != t.Attribute || !slices.Contains(devices, ev.DeviceID) {
		return
	}
	key := strconv.Itoa(i) + "/" + ev.DeviceID
	if t.Value == nil {
		if t.Duration == 0 {
			e.fireLocked(st, i, ev, cause)
			return
		}
		// Any change held for the duration: every change restarts the countdown, so it fires
		// once the attribute stayed at its new value that long.
		if h := st.held[key]; h != nil && h.timer != nil {
			h.timer.Stop()
		}
		delete(st.held, key)
		e.holdLocked(st, i, t, key, ev, cause)
		return
	}
	holds := valueHolds(t, ev.Value.String())
	if t.MatchMode == matchAll && len(devices) > 1 {
		key = strconv.Itoa(i)
		holds = holds && e.allHold(t, devices, ev.DeviceID)
	}
	if t.Duration == 0 {
		if holds {
			e.fireLocked(st, i, ev, cause)
		}
		return
	}
	h := st.held[key]
	switch {
	case !holds && h != nil:
		if h.timer != nil {
			h.timer.Stop()
		}
		delete(st.held, key)
	case holds && h == nil:
		e.holdLocked(st, i, t, key, ev, cause)
	}
}

// holdLocked starts a duration trigger's countdown; it fires once unless stopped first.
func (e *Engine) holdLocked(st *ruleState, i int, t *Trigger, key string, ev hubitat.Event, cause []Hop) {
	h := &hold{}
	st.held[key] = h
	gen, id := st.gen, st.rule.ID
	h.timer = e.clock.AfterFunc(time.Duration(t.Duration)*time.Second, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		cur, ok := e.rules[id]
		if !ok || cur.gen != gen || cur.held[key] != h || e.closed {
			return
		}
		h.timer = nil
		// The event that broke the state may never have come: events sent while the eventsocket
		// was down are lost, and the resync after the reconnect updates the cache without
		// replaying them. So the state is read again before acting on it.
		if !e.stillHolds(t, ev) {
			delete(cur.held, key)
			return
		}
		h.fired = true
		e.fireLocked(cur, i, ev, cause)
	})
}

// stillHolds reports whether a duration trigger's state, begun by ev, holds in the hub cache
// now: the attribute still has ev's value (a trigger without a value) or still satisfies the
// trigger (with matchMode all, on every device).
func (e *Engine) stillHolds(t *Trigger, ev hubitat.Event) bool {
	if e.o.Hub == nil {
		return true
	}
	d, ok := e.o.Hub.Cache().Get(ev.DeviceID)
	if !ok {
		return false
	}
	a, ok := d.Attribute(t.Attribute)
	if !ok {
		return false
	}
	if t.Value == nil {
		same, err := Compare("equals", a.Value.String(), ev.Value.String())
		return same && err == nil
	}
	if !valueHolds(t, a.Value.String()) {
		return false
	}
	if devices := triggerDevices(t); t.MatchMode == matchAll && len(devices) > 1 {
		return e.allHold(t, devices, ev.DeviceID)
	}
	return true
}

// allHold reports whether every device other than the one that sent the event holds the
// trigger's state now, per the hub cache.
func (e *Engine) allHold(t *Trigger, devices []string, except string) bool {
	if e.o.Hub == nil {
		return false
	}
	for _, id := range devices {
		if id == except {
			continue
		}
		d, ok := e.o.Hub.Cache().Get(id)
		if !ok {
			return false
		}
		a, ok := d.Attribute(t.Attribute)
		if !ok || !valueHolds(t, a.Value.String()) {
			return false
		}
	}
	return true
}

// valueHolds compares an attribute's value with the trigger's using the condition operators.
func valueHolds(t *Trigger, actual string) bool {
	op := t.Operator
	if op == "" {
		op = "equals"
	}
	ok, err := Compare(op, actual, t.Value.String())
	return ok && err == nil // an incomparable reading does not hold (fail closed)
}

// fireLocked queues a run for trigger i. The trigger's own condition and the rule's conditions
// are evaluated by the run, off the event goroutine.
func (e *Engine) fireLocked(st *ruleState, i int, ev hubitat.Event, cause []Hop) {
	rc := Context{RuleID: st.rule.ID, Trigger: st.rule.Triggers[i].Type, At: e.clock.Now(), Cause: cause}
	if ev.Name != "" {
		evc := ev
		rc.Event = &evc
	}
	e.enqueueLocked(st, job{rc: rc, trigger: i})
}
