package home

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Traces of automation and script runs, shaped like Home Assistant's trace
// integration (components/trace/models.py ActionTrace, helpers/trace.py
// TraceElement): a dict of path → list of steps, where the paths are the ones
// helpers/script.py pushes ("action/0", "action/1/choose/0/sequence/0", …).
// The engine in actions.go calls the hooks below; every hook is nil-safe so a
// run that is not traced (an automation without an id) costs nothing.

// defaultStoredTraces is HA's DEFAULT_STORED_TRACES: runs kept per item unless
// its config says trace: {stored_traces: N}.
const defaultStoredTraces = 5

// actionNodeMaxLen is helpers/script.py's ACTION_TRACE_NODE_MAX_LEN: a loop
// keeps only the last 20 visits of one step.
const actionNodeMaxLen = 20

// traceStep is one TraceElement.
type traceStep struct {
	path    string
	at      string
	changed map[string]any
	result  map[string]any
	err     string
	child   map[string]any
}

func (s *traceStep) asDict() map[string]any {
	d := map[string]any{"path": s.path, "timestamp": s.at}
	if s.child != nil {
		d["child_id"] = s.child
	}
	if len(s.changed) > 0 {
		d["changed_variables"] = s.changed
	}
	if s.err != "" {
		d["error"] = s.err
	}
	if s.result != nil {
		d["result"] = s.result
	}
	return d
}

// runTrace is one ActionTrace (AutomationTrace or ScriptTrace).
type runTrace struct {
	h                     *Home
	domain, itemID, runID string
	config, bpInputs      any
	ctx                   Context
	start, finish         string
	execution             string // script_execution; "" while running
	err                   string
	trigger               any // automation only: the trigger's description or nil

	steps map[string][]*traceStep
	order []string // paths in first-seen order: last_step is the newest path
	path  []string
	stack []*traceStep
	last  map[string]any // variables_cv: what the previous step saw
	// halt is how a run that ended with errStop stopped: "aborted" after a
	// failed condition step, "finished" after stop.
	halt string
	// aborted marks a stop with error: true (HA's _AbortScript).
	aborted bool
	// delay is the top-level delay step the run is waiting on.
	delay *traceStep
}

type traceStore struct {
	keys  []string // "automation.<id>" / "script.<object id>", first run first
	byKey map[string][]*runTrace
}

// beginTrace starts the trace of a run of entityID, or returns nil when HA would not
// keep one (an automation without an id has no trace key).
func (c *call) beginTrace(entityID string, cfg map[string]any) *runTrace {
	h := c.h
	ce, ok := h.configEnt[entityID]
	if !ok || ce.key == "" {
		return nil
	}
	domain, _, _ := strings.Cut(entityID, ".")
	tr := &runTrace{h: h, domain: domain, itemID: ce.key, runID: h.hexID(), config: cfg, ctx: c.ctx,
		start: ISOTime(h.now()), steps: map[string][]*traceStep{}}
	if raw, _ := nodeValue(ce.node).(map[string]any); raw != nil && raw["use_blueprint"] != nil {
		tr.bpInputs = raw
	}
	// A run started from another traced run's step is that step's child (trace_set_child_id).
	if n := len(h.traceActive); n > 0 {
		if parent := h.traceActive[n-1]; len(parent.stack) > 0 {
			parent.stack[len(parent.stack)-1].child = map[string]any{"domain": domain, "item_id": ce.key, "run_id": tr.runID}
		}
	}
	h.storeTrace(tr, storedTracesOf(cfg))
	return tr
}

func storedTracesOf(cfg map[string]any) int {
	t, _ := cfg["trace"].(map[string]any)
	if n, ok := toFloat(t["stored_traces"]); ok && n >= 0 {
		return int(n)
	}
	return defaultStoredTraces
}

// storeTrace is trace/util.py async_store_trace: a LimitedSizeDict per key, oldest evicted.
func (h *Home) storeTrace(tr *runTrace, limit int) {
	if h.traces == nil {
		h.traces = &traceStore{byKey: map[string][]*runTrace{}}
	}
	key := tr.domain + "." + tr.itemID
	list, seen := h.traces.byKey[key]
	if !seen {
		h.traces.keys = append(h.traces.keys, key)
	}
	list = append(list, tr)
	if len(list) > limit {
		list = append([]*runTrace(nil), list[len(list)-limit:]...)
	}
	h.traces.byKey[key] = list
}

// activate makes tr the trace that nested runs report to while its steps execute.
func (tr *runTrace) activate() func() {
	if tr == nil {
		return func() {}
	}
	h := tr.h
	h.traceActive = append(h.traceActive, tr)
	return func() { h.traceActive = h.traceActive[:len(h.traceActive)-1] }
}

func (tr *runTrace) push(segs ...string) func() {
	if tr == nil {
		return func() {}
	}
	tr.path = append(tr.path, segs...)
	return func() { tr.path = tr.path[:len(tr.path)-len(segs)] }
}

// element appends a TraceElement at the current path; changed_variables are the
// variables that differ from what the previous element saw.
func (tr *runTrace) element(vars map[string]any, capped bool) *traceStep {
	if tr == nil {
		return nil
	}
	s := &traceStep{path: strings.Join(tr.path, "/"), at: ISOTime(tr.h.now()), changed: tr.diff(vars)}
	list, seen := tr.steps[s.path]
	if !seen {
		tr.order = append(tr.order, s.path)
	}
	list = append(list, s)
	if capped && len(list) > actionNodeMaxLen {
		list = list[len(list)-actionNodeMaxLen:]
	}
	tr.steps[s.path] = list
	return s
}

func (tr *runTrace) diff(vars map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range vars {
		if k == responseVar {
			continue
		}
		if old, ok := tr.last[k]; !ok || !reflect.DeepEqual(old, v) {
			out[k] = v
		}
	}
	tr.last = maps.Clone(vars)
	return out
}

// enterStep opens the trace of action idx at the current path (trace_action).
func (tr *runTrace) enterStep(idx int, vars map[string]any) (*traceStep, func()) {
	if tr == nil {
		return nil, func() {}
	}
	pop := tr.push(strconv.Itoa(idx))
	s := tr.element(vars, true)
	tr.stack = append(tr.stack, s)
	return s, func() { tr.stack = tr.stack[:len(tr.stack)-1]; pop() }
}

// leaveStep records what the step did to the variables and the error it stopped on.
// errStop is not an error: a failed condition and a plain stop end the run cleanly.
func (tr *runTrace) leaveStep(s *traceStep, m map[string]any, err error, vars map[string]any) {
	if tr == nil || s == nil {
		return
	}
	maps.Copy(s.changed, tr.diff(vars))
	var w *waitFor
	switch {
	case err == nil, errors.As(err, &w):
	case errors.Is(err, errStop):
		if tr.halt == "" {
			tr.halt = "finished"
			if m["condition"] != nil {
				tr.halt = "aborted"
			}
		}
	default:
		s.err = err.Error()
		if e, _ := m["error"].(bool); e && m["stop"] != nil {
			tr.aborted = true
		}
	}
}

// setResult is trace_set_result on the innermost open step.
func (tr *runTrace) setResult(kv ...any) {
	if tr == nil || len(tr.stack) == 0 {
		return
	}
	s := tr.stack[len(tr.stack)-1]
	s.result = map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		s.result[kv[i].(string)] = kv[i+1]
	}
}

// stepResult records a step's result the way its _async_<action>_step does.
func (tr *runTrace) stepResult(m map[string]any, err error) {
	if tr == nil {
		return
	}
	switch {
	case m["condition"] != nil:
		tr.setResult("result", err == nil)
	case m["stop"] != nil:
		e, _ := m["error"].(bool)
		tr.setResult("stop", m["stop"], "error", e)
	case m["scene"] != nil:
		tr.setResult("scene", m["scene"])
	}
}

// serviceResult is _async_call_service_step's trace: the prepared call.
func (tr *runTrace) serviceResult(domain, service string, data, target map[string]any) {
	running := domain == "automation" && service == "trigger" || domain == "python_script" || domain == "script"
	tr.setResult("params", map[string]any{"domain": domain, "service": service, "service_data": data, "target": target},
		"running_script", running)
}

// end marks the run stopped (ActionTrace.finished) with HA's script_execution.
func (tr *runTrace) end(err error) {
	if tr == nil || tr.finish != "" {
		return
	}
	switch {
	case err == nil:
		tr.execution = "finished"
	case errors.Is(err, errStop):
		tr.execution = tr.halt
	case tr.aborted:
		tr.execution = "aborted"
	default:
		tr.execution, tr.err = "error", err.Error()
	}
	tr.finish = ISOTime(tr.h.now())
}

// endAs stops the run for a reason decided outside the steps (failed_conditions,
// failed_single, cancelled).
func (tr *runTrace) endAs(execution string) {
	if tr == nil || tr.finish != "" {
		return
	}
	tr.execution, tr.finish = execution, ISOTime(tr.h.now())
}

// traceConditions evaluates a condition list under the given path, one element per
// condition with its result, stopping at the first that fails (HA's implicit "and").
func (c *call) traceConditions(tr *runTrace, v any, vars map[string]any, segs ...string) (bool, error) {
	if tr == nil {
		return c.conditions(v, vars)
	}
	defer tr.push(segs...)()
	for i, cond := range asList(v) {
		pop := tr.push(strconv.Itoa(i))
		s := tr.element(vars, false)
		ok, err := c.condition(cond, vars)
		s.result = map[string]any{"result": ok && err == nil}
		if err != nil {
			s.err = err.Error()
		}
		pop()
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// execIn runs a nested sequence under the given path (choose/0/sequence, then, …).
func (c *call) execIn(r *scriptRun, steps []any, vars map[string]any, segs ...string) error {
	defer r.tr.push(segs...)()
	_, err := c.exec(steps, vars, r, false)
	return err
}

func (tr *runTrace) shortDict() map[string]any {
	d := map[string]any{
		"last_step": nil, "run_id": tr.runID, "state": "running", "script_execution": nil,
		"timestamp": map[string]any{"start": tr.start, "finish": nil},
		"domain":    tr.domain, "item_id": tr.itemID,
	}
	if n := len(tr.order); n > 0 {
		d["last_step"] = tr.order[n-1]
	}
	if tr.finish != "" {
		d["state"], d["script_execution"] = "stopped", tr.execution
		d["timestamp"] = map[string]any{"start": tr.start, "finish": tr.finish}
	}
	if tr.err != "" {
		d["error"] = tr.err
	}
	if tr.domain == "automation" {
		d["trigger"] = tr.trigger
	}
	return d
}

func (tr *runTrace) extendedDict() map[string]any {
	d := tr.shortDict()
	steps := orderedSteps{order: tr.order, steps: make(map[string][]any, len(tr.steps))}
	for p, list := range tr.steps {
		out := make([]any, len(list))
		for i, s := range list {
			out[i] = s.asDict()
		}
		steps.steps[p] = out
	}
	d["trace"], d["config"], d["blueprint_inputs"], d["context"] = steps, tr.config, tr.bpInputs, tr.ctx
	return d
}

// orderedSteps writes the trace dict in insertion order, as Python's dict does:
// clients read the paths in the order the run first reached them.
type orderedSteps struct {
	order []string
	steps map[string][]any
}

func (o orderedSteps) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, p := range o.order {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(p)
		v, err := json.Marshal(o.steps[p])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// TraceDomains are the domains trace/* accepts (trace/websocket_api.py TRACE_DOMAINS).
var TraceDomains = []string{"automation", "script"}

// TraceList is trace/list: the summaries of one item's kept runs (oldest first), or
// of every item of the domain when itemID is nil.
func (h *Home) TraceList(domain string, itemID *string) json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []any{}
	for _, key := range h.traceKeys() {
		d, item, _ := strings.Cut(key, ".")
		if d != domain || itemID != nil && *itemID != item {
			continue
		}
		for _, tr := range h.traces.byKey[key] {
			out = append(out, tr.shortDict())
		}
	}
	return mustJSON(out)
}

// TraceGet is trace/get: one run step by step; ok is false when it is not kept.
func (h *Home) TraceGet(domain, itemID, runID string) (json.RawMessage, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.traces == nil {
		return nil, false
	}
	for _, tr := range h.traces.byKey[domain+"."+itemID] {
		if tr.runID == runID {
			return mustJSON(tr.extendedDict()), true
		}
	}
	return nil, false
}

// TraceContexts is trace/contexts: context id → {run_id, domain, item_id}, for one
// item or all of them when key is "".
func (h *Home) TraceContexts(key string) json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]any{}
	for _, k := range h.traceKeys() {
		if key != "" && k != key {
			continue
		}
		for _, tr := range h.traces.byKey[k] {
			out[tr.ctx.ID] = map[string]any{"run_id": tr.runID, "domain": tr.domain, "item_id": tr.itemID}
		}
	}
	return mustJSON(out)
}

func (h *Home) traceKeys() []string {
	if h.traces == nil {
		return nil
	}
	return h.traces.keys
}

// mustJSON serialises under the home lock: the run goes on mutating its trace.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": err.Error()})
	}
	return b
}

// execTop runs a run's top-level steps under "action" (automations) or "sequence"
// (scripts), with the run's trace active for nested runs.
func (c *call) execTop(r *scriptRun, steps []any, vars map[string]any) (bool, error) {
	if r.tr != nil {
		base := "sequence"
		if r.tr.domain == "automation" {
			base = "action"
		}
		defer r.tr.activate()()
		defer r.tr.push(base)()
	}
	return c.exec(steps, vars, r, true)
}

// eventResult is _async_event_step's trace.
func (tr *runTrace) eventResult(event any, data map[string]any) {
	if data == nil {
		data = map[string]any{}
	}
	tr.setResult("event", event, "event_data", data)
}

// delayResult is _async_delay_step's trace: done turns true when the wait ends.
// A nested delay, which the simulator does not wait for, stays not done.
func (tr *runTrace) delayResult(s *traceStep, d time.Duration, waiting bool) {
	if tr == nil || s == nil {
		return
	}
	s.result = map[string]any{"delay": d.Seconds(), "done": d == 0}
	if waiting {
		tr.delay = s
	}
}

func (tr *runTrace) delayDone() {
	if tr == nil || tr.delay == nil {
		return
	}
	tr.delay.result["done"] = true
	tr.delay = nil
}

// triggerStep is the automation's first element: its variables at path "trigger"
// ("trigger/<idx>" when a trigger fired), and the trigger's description as the
// summary's trigger (null for automation.trigger, whose trigger is {platform: None}).
func (tr *runTrace) triggerStep(vars map[string]any) {
	if tr == nil {
		return
	}
	trig, _ := vars["trigger"].(map[string]any)
	tr.trigger = trig["description"]
	pop := tr.push("trigger")
	if idx, ok := trig["idx"]; ok {
		defer tr.push(fmt.Sprint(idx))()
	}
	defer pop()
	tr.element(vars, false)
}
