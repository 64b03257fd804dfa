package rules

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
)

// job is one run of a rule: fired by trigger index `trigger` (gated by that trigger's condition
// and the rule's conditions), or resuming after a delay (no gates: the run passed them before it
// waited).
type job struct {
	rc       Context
	trigger  int
	resume   *Pending // where a run waiting in a delay goes on (nil for a triggered run)
	delayRow string   // the stored delay it resumes, taken when the run starts
}

// runTimeout bounds one run segment (up to its first delay), so a hung hub call cannot wedge a
// rule's queue forever.
const runTimeout = 5 * time.Minute

// enqueueLocked queues a run. A rule runs one at a time (upstream's singleThreaded): a trigger
// while it runs waits in its queue.
func (e *Engine) enqueueLocked(st *ruleState, j job) {
	if e.closed {
		return
	}
	if st.running {
		if len(st.queue) >= maxQueued {
			e.noteErrorLocked(st, fmt.Sprintf("%s: %d runs already waiting; this %s trigger was dropped",
				e.clock.Now().UTC().Format(time.RFC3339), maxQueued, j.rc.Trigger))
			return
		}
		st.queue = append(st.queue, j)
		return
	}
	st.running = true
	e.wg.Add(1)
	go e.worker(st, j)
}

// worker runs j and then whatever queued up behind it.
func (e *Engine) worker(st *ruleState, j job) {
	defer e.wg.Done()
	for {
		e.runJob(j)
		e.mu.Lock()
		if len(st.queue) == 0 || e.closed {
			st.running, st.queue = false, nil
			e.mu.Unlock()
			return
		}
		j = st.queue[0]
		st.queue = st.queue[1:]
		e.mu.Unlock()
	}
}

func (e *Engine) noteErrorLocked(st *ruleState, msg string) {
	st.errors = append(st.errors, msg)
	if len(st.errors) > keepErrors {
		st.errors = st.errors[len(st.errors)-keepErrors:]
	}
}

// runJob runs one job to its end or its next delay. A failure is logged with the rule's id and
// counted; it never stops other rules.
func (e *Engine) runJob(j job) {
	ctx, cancel := context.WithTimeout(e.ctx, runTimeout)
	defer cancel()
	e.mu.Lock()
	st, ok := e.rules[j.rc.RuleID]
	if !ok || !st.rule.Enabled || e.closed || j.resume == nil && j.trigger >= len(st.rule.Triggers) {
		e.mu.Unlock()
		return
	}
	r := st.rule.Copy() // a deep copy: an update during the run, or this run's local variables, touch no shared map
	st.cancelRun = cancel
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		st.cancelRun = nil
		e.mu.Unlock()
	}()
	defer func() {
		// A bug in one action must not take hamcp, or the other rules, down with it.
		if p := recover(); p != nil {
			e.finish(ctx, &r, j.rc, Outcome{Err: fmt.Errorf("internal error (please report it): %v", p)})
		}
	}()
	env := e.env()
	if j.delayRow != "" {
		// Taking the stored delay as the run starts means it resumes once: not after it was
		// cancelled, not twice, and not at all if hamcp stops first (the next Start does).
		// A crash during the run loses the rest of it rather than repeating what was done.
		if took, err := e.db.takeDelay(ctx, j.delayRow); err != nil || !took {
			return
		}
	}

	if j.resume == nil {
		// Gates: the trigger's own condition, then the rule's conditions.
		t := r.Triggers[j.trigger]
		if t.Condition != nil {
			ok, err := Evaluate(ctx, env, &r, *t.Condition, j.rc)
			if err != nil || !ok {
				e.logf(ctx, "debug", r.ID, "Trigger %d (%s) fired but its condition is not met%s", j.trigger, t.Type, errSuffix(err))
				return
			}
		}
		at := j.rc.At.UTC()
		if ok, _ := EvaluateAll(ctx, env, &r, j.rc); !ok {
			e.record(ctx, r.ID, &at, 0, "")
			e.logf(ctx, "debug", r.ID, "Rule %q triggered by %s; conditions not met", r.Name, t.Type)
			return
		}
		var admitted bool
		if ctx, admitted = e.admit(ctx, &r, j.rc); !admitted {
			return
		}
		e.record(ctx, r.ID, &at, 1, "")
		e.logf(ctx, "info", r.ID, "Rule %q triggered by %s%s", r.Name, t.Type, describeEvent(j.rc.Event))
	} else {
		// The rest of a run after a delay: its commands are charged to it, and caused by what
		// caused the run.
		ctx = context.WithValue(ctx, runKey{}, &runInfo{ruleID: r.ID, chain: e.chainOf(r.ID, j.rc.Cause, e.clock.Now())})
	}
	var out Outcome
	if j.resume != nil {
		out = Continue(ctx, env, &r, j.rc, *j.resume)
	} else {
		out = Run(ctx, env, &r, r.Actions, j.rc, 0)
	}
	e.finish(ctx, &r, j.rc, out)
}

// finish records how a run segment ended: a failure is counted and logged; a delay is stored
// and its timer set.
func (e *Engine) finish(ctx context.Context, r *Rule, rc Context, out Outcome) {
	switch {
	case out.Err != nil:
		msg := out.Err.Error()
		e.record(ctx, r.ID, nil, 0, msg)
		e.mu.Lock()
		if st, ok := e.rules[r.ID]; ok {
			e.noteErrorLocked(st, e.clock.Now().UTC().Format(time.RFC3339)+": "+msg)
		}
		e.mu.Unlock()
		e.log.Warn("rule failed", "rule", r.ID, "error", msg)
		e.logf(ctx, "error", r.ID, "Rule %q failed: %s", r.Name, msg)
	case out.Delay != nil:
		d := PendingDelay{ID: newID(), RuleID: r.ID, DelayID: out.Delay.DelayID, Position: *out.Delay,
			Due: e.clock.Now().Add(time.Duration(out.Delay.Seconds) * time.Second).UTC(), Context: rc}
		if err := e.db.addDelay(ctx, d); err != nil {
			e.record(ctx, r.ID, nil, 0, err.Error())
			e.logf(ctx, "error", r.ID, "Rule %q could not wait: %s", r.Name, err)
			return
		}
		e.resumeDelay(d, false)
	}
}

// resumeDelay arms the timer of a stored delay; one already due (atStart: it fell due while
// hamcp was down) runs at once and is noted in the rule's diagnostics.
func (e *Engine) resumeDelay(d PendingDelay, atStart bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, ok := e.rules[d.RuleID]
	if !ok || e.closed {
		return
	}
	wait := d.Due.Sub(e.clock.Now())
	if atStart && wait <= 0 {
		note := fmt.Sprintf("A delay (due %s) fell due while hamcp was down; the rule resumed at start.", d.Due.Format(time.RFC3339))
		st.notes = append(st.notes, note)
		if len(st.notes) > keepNotes {
			st.notes = st.notes[len(st.notes)-keepNotes:]
		}
		e.wg.Add(1)
		go func() { // not under e.mu: the log is a store write
			defer e.wg.Done()
			e.logf(e.ctx, "warn", d.RuleID, "%s", note)
		}()
	}
	if wait <= 0 {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			e.delayDue(d)
		}()
		return
	}
	st.delays[d.ID] = e.clock.AfterFunc(wait, func() { e.delayDue(d) })
}

// delayDue queues the run whose delay is over; the run takes the stored delay when it starts.
func (e *Engine) delayDue(d PendingDelay) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, ok := e.rules[d.RuleID]
	if !ok || e.closed {
		return // a closing engine leaves the delay stored for the next Start
	}
	delete(st.delays, d.ID)
	if st.rule.Enabled {
		p := d.Position
		e.enqueueLocked(st, job{rc: d.Context, resume: &p, delayRow: d.ID})
		return
	}
	// Disabled while the run that stored it was still going: drop it, as disabling does.
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		_, _ = e.db.takeDelay(e.ctx, d.ID)
	}()
}

// cancelDelays cancels a rule's pending delays: "all" or those with one delayId.
func (e *Engine) cancelDelays(ctx context.Context, ruleID, delayID string) error {
	ids, err := e.db.cancelDelays(ctx, ruleID, delayID)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if st, ok := e.rules[ruleID]; ok {
		for _, id := range ids {
			if t, ok := st.delays[id]; ok {
				t.Stop()
				delete(st.delays, id)
			}
		}
	}
	return nil
}

// record updates the stored counters and the in-memory copy of the rule.
func (e *Engine) record(ctx context.Context, id string, triggered *time.Time, executed int, runErr string) {
	if err := e.db.recordRun(context.WithoutCancel(ctx), id, triggered, executed, runErr); err != nil && !errors.Is(err, context.Canceled) {
		e.log.Warn("rule counters not saved", "rule", id, "error", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if st, ok := e.rules[id]; ok {
		if triggered != nil {
			t := *triggered
			st.rule.LastTriggered = &t
		}
		st.rule.ExecutionCount += executed
		if runErr != "" {
			st.rule.ErrorCount++
			st.rule.LastError = runErr
		}
	}
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// logf writes one rule line to the debug log.
func (e *Engine) logf(ctx context.Context, level, ruleID, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if e.o.Log != nil {
		e.o.Log(ctx, level, "rule", ruleID, msg)
		return
	}
	if e.o.Store != nil {
		_, _ = e.o.Store.AppendDebugLog(context.WithoutCancel(ctx), storeEntry(e.clock.Now(), level, ruleID, msg))
	}
}

// setLocal stores a local variable and updates the engine's copy of the rule.
func (e *Engine) setLocal(ctx context.Context, id, name, value string) error {
	if err := e.db.setLocal(ctx, id, name, value); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if st, ok := e.rules[id]; ok {
		locals := make(map[string]any, len(st.rule.LocalVariables)+1)
		for k, v := range st.rule.LocalVariables {
			locals[k] = v
		}
		locals[name] = value
		st.rule.LocalVariables = locals
	}
	return nil
}

// describeEvent is the triggering event for a log line: " (Front Door contact = open)".
func describeEvent(ev *hubitat.Event) string {
	if ev == nil {
		return ""
	}
	who := ev.DisplayName
	if who == "" && ev.DeviceID != "" {
		who = "device " + ev.DeviceID
	}
	if who == "" {
		who = "location"
	}
	return fmt.Sprintf(" (%s %s = %s)", who, ev.Name, ev.Value.String())
}
