package rules

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
)

// Runaway rules. A rule runs without anyone watching, and a rule whose actions fire its own
// triggers (toggle the switch it listens to, twenty times a run) runs again from every event it
// causes: hundreds of runs and thousands of hub commands a second, for as long as hamcp runs.
// So each rule has a budget of runs and commands per minute, and the engine follows causation:
// it knows which device it just commanded, so an event from that device shortly after is an
// effect of that run, and a run it triggers is caused by it (and by whatever caused that run,
// through other rules). A rule that is run again and again by its own commands, or by a ring of
// rules commanding each other, is stopped. A stopped rule is disabled in the store with the
// reason, so a restart does not start it again; enabling it (which asks the user) clears it.

// Limits bounds what one rule may do; a zero field takes its default.
type Limits struct {
	// RunsPerMinute caps a rule's runs (triggers that passed the conditions) in any minute.
	RunsPerMinute int
	// CommandsPerMinute caps what a rule's runs send in any minute: hub commands (device commands,
	// the mode, the Safety Monitor, hub variables, notifications) and http_request calls.
	CommandsPerMinute int
	// LoopRuns is how many runs caused by the rule's own commands (directly or through other
	// rules) it may make within LoopWindow; one more stops it and every rule of the loop.
	LoopRuns   int
	LoopWindow time.Duration
	// CauseWindow is how long after a command an event from the commanded device (or the mode
	// or Safety Monitor after setting them) counts as the command's effect.
	CauseWindow time.Duration
}

// The defaults. A rule driven by people and sensors runs a few times a minute at most; a motion
// sensor reports every few seconds. One run a second for a whole minute is far beyond any
// household rule and far below a runaway (the one that prompted this ran 240 times a second).
// Five commands a second for a minute is already more than a Z-Wave or Zigbee mesh carries for
// the whole house, yet leaves a rule that sets a scene of twenty devices fifteen runs a minute.
// A rule that feeds back on itself once or twice is common (a setLevel that also reports the
// switch); five times within half a minute is a loop. Devices report a command's effect within
// a second or two, a slow Z-Wave lock within a few.
const (
	DefaultRunsPerMinute     = 60
	DefaultCommandsPerMinute = 300
	DefaultLoopRuns          = 5
	DefaultLoopWindow        = 30 * time.Second
	DefaultCauseWindow       = 5 * time.Second
)

// maxHops bounds a cause chain (the newest are kept).
const maxHops = 64

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.RunsPerMinute, DefaultRunsPerMinute)
	def(&l.CommandsPerMinute, DefaultCommandsPerMinute)
	def(&l.LoopRuns, DefaultLoopRuns)
	if l.LoopWindow <= 0 {
		l.LoopWindow = DefaultLoopWindow
	}
	if l.CauseWindow <= 0 {
		l.CauseWindow = DefaultCauseWindow
	}
	return l
}

// Hop is one run in a cause chain: the rule that ran and when.
type Hop struct {
	RuleID string    `json:"ruleId"`
	At     time.Time `json:"at"`
}

// Budget is a rule's use of its limits in the last minute, for Diagnostics.
type Budget struct {
	RunsLastMinute     int `json:"runsLastMinute"`
	RunsPerMinute      int `json:"runsPerMinute"`
	CommandsLastMinute int `json:"commandsLastMinute"`
	CommandsPerMinute  int `json:"commandsPerMinute"`
	LoopRuns           int `json:"loopRuns"`   // runs caused by its own commands within loopWindow
	LoopWindow         int `json:"loopWindow"` // seconds
	MaxLoopRuns        int `json:"maxLoopRuns"`
}

// usage is a rule's recent runs and commands, oldest first (guarded by Engine.mu).
type usage struct {
	runs, commands, loops []time.Time
}

// reset forgets the counts (the rule was enabled again).
func (u *usage) reset() { *u = usage{} }

// inWindow drops the instants not after now-d and returns what is left.
func inWindow(ts []time.Time, now time.Time, d time.Duration) []time.Time {
	cut := now.Add(-d)
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	return ts[i:]
}

// mark is a command the engine sent: the chain of the run that sent it, and when.
type mark struct {
	at    time.Time
	chain []Hop
}

// runKey carries a run's runInfo in its context, so that the Env charges its commands to it.
type runKey struct{}

type runInfo struct {
	ruleID string
	chain  []Hop // the run's causes and the run itself, newest last
}

// ErrStopped is a run cut short because its rule was stopped as a runaway.
var ErrStopped = errors.New("rules: the rule was stopped")

// effectKey is what an event is the effect of: a device, or the mode or Safety Monitor.
func effectKey(ev hubitat.Event) string {
	switch {
	case !ev.Location():
		return "device " + ev.DeviceID
	case ev.Name == "mode":
		return "mode"
	case ev.Name == "hsmStatus":
		return "hsm"
	}
	return ""
}

// causeLocked is the chain of runs that caused ev: the chain of the last command to its device
// when that was within CauseWindow, nil otherwise.
func (e *Engine) causeLocked(ev hubitat.Event) []Hop {
	k := effectKey(ev)
	m, ok := e.marks[k]
	if !ok {
		return nil
	}
	if e.clock.Now().Sub(m.at) > e.limits.CauseWindow {
		delete(e.marks, k)
		return nil
	}
	return m.chain
}

// chainOf is the chain of a run of ruleID at now caused by cause: the hops still within
// LoopWindow, then the run itself.
func (e *Engine) chainOf(ruleID string, cause []Hop, now time.Time) []Hop {
	cut := now.Add(-e.limits.LoopWindow)
	out := make([]Hop, 0, len(cause)+1)
	for _, h := range cause {
		if h.At.After(cut) {
			out = append(out, h)
		}
	}
	out = append(out, Hop{RuleID: ruleID, At: now})
	if len(out) > maxHops {
		out = out[len(out)-maxHops:]
	}
	return out
}

// admit charges a triggered run to its rule before it acts. It returns the run's context (its
// chain, for the commands it sends) and false when the rule is stopped instead: it ran too often,
// or its own commands ran it again too often (then every rule of the loop is stopped).
func (e *Engine) admit(ctx context.Context, r *Rule, rc Context) (context.Context, bool) {
	now := e.clock.Now()
	e.mu.Lock()
	st, ok := e.rules[r.ID]
	if !ok || !st.rule.Enabled {
		e.mu.Unlock()
		return ctx, false
	}
	chain := e.chainOf(r.ID, rc.Cause, now)
	u := &st.use
	u.runs = inWindow(u.runs, now, time.Minute)
	u.loops = inWindow(u.loops, now, e.limits.LoopWindow)
	var stop []stopped
	if ring := loopOf(chain); ring != nil {
		u.loops = append(u.loops, now)
		if len(u.loops) > e.limits.LoopRuns {
			for _, id := range ring {
				stop = append(stop, stopped{id, e.loopReasonLocked(id, ring, len(u.loops))})
			}
		}
	}
	if stop == nil && len(u.runs) >= e.limits.RunsPerMinute {
		stop = []stopped{{r.ID, fmt.Sprintf("it was triggered more than %d times within a minute (the limit is %d runs a minute)",
			e.limits.RunsPerMinute, e.limits.RunsPerMinute)}}
	}
	if stop == nil {
		u.runs = append(u.runs, now)
	}
	e.mu.Unlock()
	if stop != nil {
		e.trip(stop)
		return ctx, false
	}
	return context.WithValue(ctx, runKey{}, &runInfo{ruleID: r.ID, chain: chain}), true
}

// loopOf reports whether the run that ends chain was caused by its own rule's command (directly
// or through other rules) and, if so, the rules of the loop: that rule first, then the rules that
// ran since its previous run in the chain, each once. nil: not a loop.
func loopOf(chain []Hop) []string {
	if len(chain) == 0 {
		return nil
	}
	self := chain[len(chain)-1].RuleID
	for j := len(chain) - 2; j >= 0; j-- {
		if chain[j].RuleID != self {
			continue
		}
		ring := []string{self}
		for _, h := range chain[j+1 : len(chain)-1] {
			if !slices.Contains(ring, h.RuleID) {
				ring = append(ring, h.RuleID)
			}
		}
		return ring
	}
	return nil
}

// loopReasonLocked says why rule id of a loop was stopped, naming the loop's other rules; runs
// is how often the loop ran the rule that noticed it.
func (e *Engine) loopReasonLocked(id string, ring []string, runs int) string {
	window := e.limits.LoopWindow.Round(time.Second)
	if len(ring) == 1 {
		return fmt.Sprintf("its own commands triggered it again %d times within %s (the limit is %d): its actions fire its own "+
			"triggers, so it would run forever", runs, window, e.limits.LoopRuns)
	}
	names := make([]string, 0, len(ring)-1)
	for _, other := range ring {
		if other == id {
			continue
		}
		names = append(names, fmt.Sprintf("%q (%s)", e.nameLocked(other), clipID(other)))
	}
	return fmt.Sprintf("it and rule %s trigger each other in a loop: their commands triggered %q again %d times within %s "+
		"(the limit is %d), so they would run forever", strings.Join(names, ", "), e.nameLocked(ring[0]), runs, window, e.limits.LoopRuns)
}

func (e *Engine) nameLocked(id string) string {
	if st, ok := e.rules[id]; ok {
		return clipName(st.rule.Name)
	}
	return id
}

func clipName(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// charge counts one command of the run in ctx against its rule's budget and records it as the
// cause of the events of key ("" for an http_request, which no trigger hears) that follow. An
// error stops the run: its rule was stopped, or this command is over the budget (which stops it).
// Commands outside a run (none today) are not charged.
func (e *Engine) charge(ctx context.Context, key string) error {
	ri, _ := ctx.Value(runKey{}).(*runInfo)
	if ri == nil {
		return nil
	}
	now := e.clock.Now()
	e.mu.Lock()
	st, ok := e.rules[ri.ruleID]
	if ok && st.rule.DisabledReason != "" {
		e.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrStopped, st.rule.DisabledReason)
	}
	if ok {
		u := &st.use
		u.commands = inWindow(u.commands, now, time.Minute)
		if len(u.commands) >= e.limits.CommandsPerMinute {
			e.mu.Unlock()
			reason := fmt.Sprintf("it sent more than %d commands within a minute (the limit is %d commands a minute)",
				e.limits.CommandsPerMinute, e.limits.CommandsPerMinute)
			e.trip([]stopped{{ri.ruleID, reason}})
			return fmt.Errorf("%w: %s", ErrStopped, reason)
		}
		u.commands = append(u.commands, now)
	}
	if key != "" {
		e.marks[key] = mark{at: now, chain: ri.chain}
	}
	e.mu.Unlock()
	return nil
}

// stopped is a rule to stop and why.
type stopped struct{ id, reason string }

// trip stops rules as runaways: disabled at once (queued runs dropped, the running one
// cancelled, timers and pending delays cancelled) and in the store with the reason.
func (e *Engine) trip(stops []stopped) {
	now := e.clock.Now().UTC()
	e.mu.Lock()
	var done []stopped
	for _, s := range stops {
		st, ok := e.rules[s.id]
		if !ok || !st.rule.Enabled {
			continue
		}
		at := now
		st.rule.Enabled, st.rule.DisabledReason, st.rule.DisabledAt = false, "stopped by hamcp: "+s.reason, &at
		st.queue = nil
		e.disarmLocked(st, true)
		if st.cancelRun != nil {
			st.cancelRun()
		}
		done = append(done, s)
	}
	e.mu.Unlock()
	ctx := context.WithoutCancel(e.ctx)
	for _, s := range done {
		if err := e.db.disable(ctx, s.id, "stopped by hamcp: "+s.reason, now); err != nil {
			e.log.Error("a runaway rule is stopped but could not be disabled in the store", "rule", s.id, "error", err)
		}
		if err := e.cancelDelays(ctx, s.id, "all"); err != nil {
			e.log.Warn("the pending delays of a stopped rule were not cancelled", "rule", s.id, "error", err)
		}
		e.log.Warn("rule stopped and disabled", "rule", s.id, "reason", s.reason)
		e.logf(ctx, "error", s.id, "Rule stopped and disabled: %s. Fix it, then enable it again.", s.reason)
	}
}

// budgetLocked is a rule's use of its limits now.
func (e *Engine) budgetLocked(st *ruleState) Budget {
	now := e.clock.Now()
	return Budget{
		RunsLastMinute: len(inWindow(st.use.runs, now, time.Minute)), RunsPerMinute: e.limits.RunsPerMinute,
		CommandsLastMinute: len(inWindow(st.use.commands, now, time.Minute)), CommandsPerMinute: e.limits.CommandsPerMinute,
		LoopRuns: len(inWindow(st.use.loops, now, e.limits.LoopWindow)), LoopWindow: int(e.limits.LoopWindow / time.Second),
		MaxLoopRuns: e.limits.LoopRuns,
	}
}
