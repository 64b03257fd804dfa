package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
)

// Options configures an Engine.
type Options struct {
	Hub           *hubitat.Client
	Store         *hubstore.Store
	Clock         Clock        // RealClock when nil
	Logger        *slog.Logger // slog.Default() when nil
	HTTP          *http.Client // for http_request actions; a client with a timeout when nil
	ServerVersion string
	// Log writes one line of the rule engine's debug log (hubitattools' Deps.Log); nil writes
	// straight to the store's debug log.
	Log func(ctx context.Context, level, component, ruleID, msg string)
	// Limits bounds each rule's runs and commands (limits.go); zero fields take the defaults.
	Limits Limits
	// HomePlace is where the home is when the hub does not say (the add-on's Home Assistant);
	// nil leaves schedules in UTC and sun times off until the hub answers.
	HomePlace func(ctx context.Context) (Place, error)
}

// ErrNotFound is a rule id (or trash id) that does not exist.
var ErrNotFound = errors.New("rules: no such rule")

// ErrClosed is a call after Close.
var ErrClosed = errors.New("rules: the rule engine is closed")

// TrashedRule is a deleted rule kept for Restore.
type TrashedRule struct {
	TrashID   string    `json:"trashId"`
	DeletedAt time.Time `json:"deletedAt"`
	Rule      Rule      `json:"rule"`
}

// TriggerStatus says whether one trigger is armed and, for scheduled ones, when it fires next.
type TriggerStatus struct {
	Index  int        `json:"index"`
	Type   string     `json:"type"`
	Armed  bool       `json:"armed"`
	Next   *time.Time `json:"next,omitempty"`
	Detail string     `json:"detail,omitempty"`
}

// TestReport is a dry run of a rule: nothing reaches the hub.
type TestReport struct {
	RuleID        string            `json:"ruleId"`
	Name          string            `json:"name"`
	Enabled       bool              `json:"enabled"`
	Triggers      []TriggerStatus   `json:"triggers"`
	ConditionsMet bool              `json:"conditionsMet"`
	Conditions    []ConditionResult `json:"conditions,omitempty"`
	WouldDo       []string          `json:"wouldDo"`
	Stopped       bool              `json:"stopped,omitempty"`
	Error         string            `json:"error,omitempty"`
}

// PendingDelay is a run waiting in a delay action; it survives a restart.
type PendingDelay struct {
	ID       string    `json:"id"`
	RuleID   string    `json:"ruleId"`
	DelayID  string    `json:"delayId,omitempty"`
	Position Pending   `json:"position"` // the delay action's place in the rule
	Due      time.Time `json:"due"`
	Context  Context   `json:"context"`
}

// Diagnostics is everything the engine knows about one rule.
type Diagnostics struct {
	Rule          Rule                  `json:"rule"`
	Triggers      []TriggerStatus       `json:"triggers"`
	Running       bool                  `json:"running"`
	Queued        int                   `json:"queued"`
	PendingDelays []PendingDelay        `json:"pendingDelays"`
	HeldDurations int                   `json:"heldDurations"` // duration triggers counting down
	RecentErrors  []string              `json:"recentErrors,omitempty"`
	Notes         []string              `json:"notes,omitempty"` // e.g. delays that fell due while hamcp was down
	RecentLog     []hubstore.DebugEntry `json:"recentLog,omitempty"`
	LocationError string                `json:"locationError,omitempty"`
	// LocationSource says where the time zone and coordinates came from when it is not the hub.
	LocationSource string `json:"locationSource,omitempty"`
	// Availability says when hamcp was running: rules do not run while the add-on is down.
	Availability Availability `json:"availability"`
	// Limits is the rule's use of its run and command limits; a rule that goes over them is
	// stopped and disabled, with the reason in Rule.DisabledReason.
	Limits Budget `json:"limits"`
}

// Engine runs the stored rules against the hub. All methods are safe for concurrent use.
type Engine struct {
	o      Options
	limits Limits
	clock  Clock
	log    *slog.Logger
	db     *ruleStore

	mu        sync.Mutex
	started   bool
	closed    bool
	ctx       context.Context // cancelled by Close; runs use it
	cancel    context.CancelFunc
	rules     map[string]*ruleState
	remove    func() // unsubscribes from hub events
	site      site   // where the hub is: time zone and coordinates
	wg        sync.WaitGroup
	prevMode  string          // the mode before the last mode event (mode_change fromMode)
	siteTimer Timer           // asks the hub for its location again after it did not answer
	marks     map[string]mark // the last command per device (or mode, HSM): what its events are effects of
	down      downtime        // the heartbeat, the last event seen and the fired time triggers
}

// New makes an Engine; Start loads the rules and arms them.
func New(o Options) *Engine {
	if o.Clock == nil {
		o.Clock = RealClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: httpTimeout}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{o: o, limits: o.Limits.withDefaults(), clock: o.Clock, log: o.Logger.With("component", "rules"), ctx: ctx,
		cancel: cancel, rules: map[string]*ruleState{}, site: site{loc: time.UTC}, marks: map[string]mark{},
		down: downtime{fired: map[string]time.Time{}}}
	if o.Store != nil {
		e.db = &ruleStore{db: o.Store.DB()}
	}
	return e
}

// httpTimeout bounds one http_request action.
const httpTimeout = 15 * time.Second

// Start loads the rules, resumes or runs the delays that are due, subscribes to the hub's events
// and schedules the time triggers. The hub's location (for time zone and sun times) is read
// first; when the hub does not answer, the engine schedules in UTC without sun times, says so
// in Diagnostics, and asks again every few minutes.
func (e *Engine) Start(ctx context.Context) error {
	if e.db == nil {
		return errors.New("rules: Options.Store is required")
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	if e.started {
		e.mu.Unlock()
		return errors.New("rules: the engine is already started")
	}
	e.started = true
	e.mu.Unlock()

	e.loadSite(ctx)
	down, err := e.loadDowntime(ctx)
	if err != nil {
		return err
	}
	rules, err := e.db.list(ctx)
	if err != nil {
		return err
	}
	delays, err := e.db.delays(ctx, "")
	if err != nil {
		return err
	}
	// The current mode is the "from" of the first mode_change; the cache knows it only after a
	// mode event, so the hub is asked.
	mode := ""
	if e.o.Hub != nil {
		mctx, cancel := context.WithTimeout(ctx, siteTimeout)
		mode, _ = e.env().Mode(mctx)
		cancel()
	}
	e.mu.Lock()
	e.prevMode = mode
	e.down = down
	for _, r := range rules {
		st := e.stateLocked(r.ID)
		st.rule = r
		if r.Enabled {
			e.armLocked(st)
			e.catchUpLocked(st)
		}
	}
	e.mu.Unlock()
	e.heartbeat()
	for _, d := range delays {
		e.resumeDelay(d, true)
	}
	if e.o.Hub != nil {
		remove := e.o.Hub.Cache().OnEvent(e.onEvent)
		e.mu.Lock()
		if e.closed { // Close ran meanwhile
			remove()
		}
		e.remove = remove
		e.mu.Unlock()
	}
	return nil
}

// Close stops every timer and subscription and waits for running rules to finish (cancelling
// them after closeGrace). Queued runs are dropped; pending delays stay in the store and the next
// Start resumes them.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	if e.remove != nil {
		e.remove()
	}
	for _, st := range e.rules {
		e.disarmLocked(st, true) // the delays stay stored for the next Start
	}
	if e.siteTimer != nil {
		e.siteTimer.Stop()
	}
	started, lastEvent := e.started, e.down.lastEvent
	if e.down.beat != nil {
		e.down.beat.Stop()
	}
	e.mu.Unlock()
	if started {
		e.writeBeat(e.clock.Now(), lastEvent) // the downtime starts now, not at the last beat
	}
	// Runs in progress finish their current segment (up to a delay) for a while, so that
	// closing does not cut a run between two commands; then they are cancelled.
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	grace := time.NewTimer(closeGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		e.cancel()
		<-done
	}
	e.cancel()
	return nil
}

// closeGrace is how long Close lets running rules finish before cancelling them.
const closeGrace = 5 * time.Second

// List returns every rule, by name.
func (e *Engine) List(ctx context.Context) ([]Rule, error) {
	if e.db == nil {
		return nil, errors.New("rules: Options.Store is required")
	}
	return e.db.list(ctx)
}

// Get returns one rule (ErrNotFound when there is none).
func (e *Engine) Get(ctx context.Context, id string) (Rule, error) {
	return e.db.get(ctx, id)
}

// Devices looks devices up in the hub's cache (for validation and export).
func (e *Engine) Devices() DeviceLookup {
	return func(id string) (hubitat.Device, bool) {
		if e.o.Hub == nil {
			return hubitat.Device{}, false
		}
		return e.o.Hub.Cache().Get(id)
	}
}

// Create validates r, stores it under a new id and arms it when it is enabled. Problems are the
// rule's faults (nothing stored); err is the engine's.
func (e *Engine) Create(ctx context.Context, r Rule) (Rule, []Problem, error) {
	if probs := Validate(&r, e.Devices()); len(probs) > 0 {
		return Rule{}, probs, nil
	}
	now := e.clock.Now().UTC()
	r.ID = newID()
	r.CreatedAt, r.UpdatedAt = now, now
	r.LastTriggered, r.ExecutionCount, r.ErrorCount, r.LastError = nil, 0, 0, ""
	r.DisabledReason, r.DisabledAt = "", nil
	if err := e.db.insert(ctx, r); err != nil {
		return Rule{}, nil, err
	}
	e.install(r)
	return r, nil, nil
}

// Update applies a partial change: the patch's top-level fields replace the rule's (triggers,
// conditions and actions as whole lists), the result is decoded and validated as a new rule
// would be, and the rule is re-armed. Runtime fields cannot be patched.
func (e *Engine) Update(ctx context.Context, id string, patch json.RawMessage) (Rule, []Problem, error) {
	cur, err := e.db.get(ctx, id)
	if err != nil {
		return Rule{}, nil, err
	}
	next, probs, err := applyPatch(cur, patch)
	if err != nil || len(probs) > 0 {
		return Rule{}, probs, err
	}
	if probs := Validate(&next, e.Devices()); len(probs) > 0 {
		return Rule{}, probs, nil
	}
	next.ID, next.CreatedAt = cur.ID, cur.CreatedAt
	next.LastTriggered, next.ExecutionCount, next.ErrorCount, next.LastError = cur.LastTriggered, cur.ExecutionCount, cur.ErrorCount, cur.LastError
	next.UpdatedAt = e.clock.Now().UTC()
	// Why hamcp stopped the rule stays until it is enabled again: an edit alone does not run it.
	if !next.Enabled {
		next.DisabledReason, next.DisabledAt = cur.DisabledReason, cur.DisabledAt
	}
	if err := e.db.update(ctx, next); err != nil {
		return Rule{}, nil, err
	}
	// A changed rule starts afresh: its delays and held durations belonged to the old version.
	if err := e.cancelDelays(ctx, id, "all"); err != nil {
		return Rule{}, nil, err
	}
	e.install(next)
	return next, nil, nil
}

// Delete moves a rule to the trash (recoverable with Restore), cancels its timers and delays.
func (e *Engine) Delete(ctx context.Context, id string) (string, error) {
	trashID := newID()
	if err := e.db.trash(ctx, id, trashID, e.clock.Now().UTC()); err != nil {
		return "", err
	}
	e.mu.Lock()
	if st, ok := e.rules[id]; ok {
		e.disarmLocked(st, true)
		delete(e.rules, id)
	}
	e.mu.Unlock()
	return trashID, nil
}

// Restore brings a trashed rule back under its old id, disabled: the user re-enables it.
func (e *Engine) Restore(ctx context.Context, trashID string) (Rule, error) {
	r, err := e.db.restore(ctx, trashID, e.clock.Now().UTC())
	if err != nil {
		return Rule{}, err
	}
	e.install(r)
	return r, nil
}

// Trash lists deleted rules, newest first.
func (e *Engine) Trash(ctx context.Context) ([]TrashedRule, error) {
	return e.db.trashed(ctx)
}

// SetEnabled turns a rule on or off. Disabling cancels its pending delays and duration timers.
func (e *Engine) SetEnabled(ctx context.Context, id string, on bool) (Rule, error) {
	r, err := e.db.setEnabled(ctx, id, on, e.clock.Now().UTC())
	if err != nil {
		return Rule{}, err
	}
	if !on {
		if err := e.cancelDelays(ctx, id, "all"); err != nil {
			return Rule{}, err
		}
	}
	e.install(r)
	return r, nil
}

// Test dry-runs a rule now: which triggers are armed, what the conditions say, and what the
// actions would do. Nothing reaches the hub, the variables or the captures.
func (e *Engine) Test(ctx context.Context, id string) (TestReport, error) {
	r, err := e.db.get(ctx, id)
	if err != nil {
		return TestReport{}, err
	}
	rep := TestReport{RuleID: r.ID, Name: r.Name, Enabled: r.Enabled, Triggers: e.triggerStatus(r)}
	env, journal := DryRunEnv(e.env())
	rc := Context{RuleID: r.ID, Trigger: "manual", At: env.Now()}
	ok, results := EvaluateAll(ctx, env, &r, rc)
	rep.ConditionsMet, rep.Conditions = ok, results
	out := Run(ctx, env, &r, r.Actions, rc, 0)
	rep.Stopped = out.Stopped
	if out.Err != nil {
		rep.Error = out.Err.Error()
	}
	rep.WouldDo = journal.Lines()
	if rep.WouldDo == nil {
		rep.WouldDo = []string{}
	}
	return rep, nil
}

// Diagnostics reports a rule's counters, armed triggers, pending delays and recent log lines.
func (e *Engine) Diagnostics(ctx context.Context, id string) (Diagnostics, error) {
	// The live state first, then the store: a run writes its counters before it stops running,
	// so a rule seen idle here has its counters in what is read next.
	var d Diagnostics
	e.mu.Lock()
	if st, ok := e.rules[id]; ok {
		d.Running, d.Queued = st.running, len(st.queue)
		for _, h := range st.held {
			if h.timer != nil {
				d.HeldDurations++
			}
		}
		d.RecentErrors = append([]string(nil), st.errors...)
		d.Limits = e.budgetLocked(st)
		d.Notes = append([]string(nil), st.notes...)
	}
	d.LocationError, d.LocationSource = e.site.err, e.site.source
	e.mu.Unlock()
	r, err := e.db.get(ctx, id)
	if err != nil {
		return Diagnostics{}, err
	}
	d.Rule, d.Triggers, d.Availability = r, e.triggerStatus(r), e.Availability()
	if d.PendingDelays, err = e.db.delays(ctx, id); err != nil {
		return Diagnostics{}, err
	}
	if e.o.Store != nil {
		logs, err := e.o.Store.DebugLogs(ctx, hubstore.DebugQuery{RuleID: id, Limit: 20})
		if err == nil {
			d.RecentLog = logs
		}
	}
	return d, nil
}

// applyPatch merges a JSON object's top-level fields into cur and decodes the result with the
// rule decoder (so upstream's spellings are folded and unknown fields reported).
func applyPatch(cur Rule, patch json.RawMessage) (Rule, []Problem, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return Rule{}, []Problem{{Path: "", Message: "the update must be a JSON object of the fields to change"}}, nil
	}
	for _, k := range runtimeFields {
		if _, ok := p[k]; ok {
			return Rule{}, []Problem{{Path: k, Message: fmt.Sprintf("%s is kept by the rule engine and cannot be changed", k)}}, nil
		}
	}
	base, err := json.Marshal(editable(cur))
	if err != nil {
		return Rule{}, nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(base, &m); err != nil {
		return Rule{}, nil, err
	}
	for k, v := range p {
		m[k] = v
	}
	merged, err := json.Marshal(m)
	if err != nil {
		return Rule{}, nil, err
	}
	r, err := Decode(merged)
	var probs Problems
	switch {
	case errors.As(err, &probs):
		return Rule{}, probs, nil
	case err != nil:
		return Rule{}, []Problem{{Path: "", Message: err.Error()}}, nil
	}
	return r, nil, nil
}

// runtimeFields are the Rule JSON fields the engine owns.
var runtimeFields = []string{"id", "createdAt", "updatedAt", "lastTriggered", "executionCount", "errorCount", "lastError",
	"disabledReason", "disabledAt"}

// RuntimeFields are the Rule JSON fields the engine owns, which no write may set.
func RuntimeFields() []string { return slices.Clone(runtimeFields) }

// editable is the part of a rule a user writes, as JSON without the runtime fields.
func editable(r Rule) map[string]any {
	b, _ := json.Marshal(r)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range runtimeFields {
		delete(m, k)
	}
	return m
}
