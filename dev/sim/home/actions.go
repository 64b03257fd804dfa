package home

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The script engine behind automations, scripts and scenes. Steps run under
// the home lock. A top-level delay really waits: the rest of the sequence is
// scheduled on a timer and the run stays "on" meanwhile. Waits nested inside
// if/choose/repeat, and wait_template / wait_for_trigger, do not wait (the
// simulator has no trigger engine); they are logged.

// Renderer renders a Jinja template against a snapshot of the home. typed
// asks for HA's parse_result (numbers, booleans, lists become values).
// Package hass provides it.
type Renderer func(tpl string, vars map[string]any, snap *Snapshot, typed bool) (any, error)

// SetRenderer installs the template engine scripts use.
func (h *Home) SetRenderer(r Renderer) {
	h.mu.Lock()
	h.renderer = r
	h.mu.Unlock()
}

// scriptRun is one running automation/script.
type scriptRun struct {
	entity  string
	ctx     Context
	timer   *time.Timer
	stopped bool
	tr      *runTrace // nil when HA keeps no trace of the run
	base    int       // index in the sequence of the first step still to run (after a delay)
}

var errStop = errors.New("stop")

// responseVar is where a "stop" with response_variable leaves the script response.
const responseVar = "\x00response"

func (c *call) startRun(entityID string, steps []any, vars map[string]any, tr *runTrace) error {
	_, err := c.runResponse(entityID, steps, vars, tr)
	return err
}

// markTriggered stamps last_triggered and the running count in one write.
func (c *call) markTriggered(entityID string) {
	st := c.h.states[entityID]
	if st == nil {
		return
	}
	a := cloneAttrs(st.Attributes)
	a["last_triggered"] = ISOTime(c.h.now())
	a["current"] = c.h.running[entityID]
	state := st.State
	if strings.HasPrefix(entityID, "script.") {
		state = "on"
	}
	c.set(entityID, state, a)
}

// runResponse starts a run and returns the script response if it finished
// without waiting.
func (c *call) runResponse(entityID string, steps []any, vars map[string]any, tr *runTrace) (any, error) {
	r := &scriptRun{entity: entityID, ctx: c.ctx, tr: tr}
	c.h.runs[r] = true
	c.h.running[entityID]++
	c.markTriggered(entityID)
	done, err := c.execTop(r, steps, vars)
	if done || err != nil {
		r.tr.end(err)
	}
	if errors.Is(err, errStop) {
		done, err = true, nil
	}
	if done || err != nil {
		c.h.finishRun(r, c)
	}
	if err != nil {
		return nil, err
	}
	if resp, ok := vars[responseVar]; ok {
		return resp, nil
	}
	return map[string]any{}, nil
}

func (h *Home) finishRun(r *scriptRun, c *call) {
	if !h.runs[r] {
		return
	}
	delete(h.runs, r)
	if r.timer != nil {
		r.timer.Stop()
	}
	h.running[r.entity]--
	if h.running[r.entity] <= 0 {
		delete(h.running, r.entity)
	}
	st := h.states[r.entity]
	if st == nil {
		return
	}
	a := cloneAttrs(st.Attributes)
	a["current"] = h.running[r.entity]
	state := st.State
	if strings.HasPrefix(r.entity, "script.") && h.running[r.entity] == 0 {
		state = "off"
	}
	c.set(r.entity, state, a)
}

// stopRuns ends every run of an entity (script.turn_off).
func (h *Home) stopRuns(entityID string) {
	for r := range h.runs {
		if r.entity == entityID {
			r.stopped = true
			r.tr.endAs("cancelled")
			c := &call{h: h, ctx: r.ctx, changed: map[string]bool{}}
			h.finishRun(r, c)
		}
	}
}

// Close stops pending script timers.
func (h *Home) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for r := range h.runs {
		r.stopped = true
		if r.timer != nil {
			r.timer.Stop()
		}
	}
}

// continueRun resumes a run after its delay.
func (h *Home) continueRun(r *scriptRun, rest []any, vars map[string]any) {
	h.mu.Lock()
	if h.closed || r.stopped || !h.runs[r] {
		h.mu.Unlock()
		return
	}
	c := &call{h: h, ctx: r.ctx, changed: map[string]bool{}}
	r.tr.delayDone()
	done, err := c.execTop(r, rest, vars)
	if err != nil && !errors.Is(err, errStop) {
		h.Log("error", "homeassistant.components.script", "%s: Error executing script: %v", r.entity, err)
	}
	if done || err != nil {
		r.tr.end(err)
		h.finishRun(r, c)
	}
	h.mu.Unlock()
	h.flushNotes()
	h.bus.flush()
}

// exec runs steps in order; done=false means a delay took over the rest.
func (c *call) exec(steps []any, vars map[string]any, r *scriptRun, top bool) (bool, error) {
	for i, raw := range steps {
		if r.stopped {
			return true, nil
		}
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		idx := i
		if top {
			idx += r.base
		}
		s, leave := r.tr.enterStep(idx, vars)
		if en, ok := m["enabled"].(bool); ok && !en {
			r.tr.setResult("enabled", false)
			leave()
			continue
		}
		err := c.step(m, vars, r)
		r.tr.stepResult(m, err)
		r.tr.leaveStep(s, m, err, vars)
		leave()
		var w *waitFor
		if errors.As(err, &w) {
			r.tr.delayResult(s, w.d, top && w.d > 0)
			if top && w.d > 0 {
				rest := steps[i+1:]
				r.base = idx + 1
				h := c.h
				r.timer = time.AfterFunc(w.d, func() { h.continueRun(r, rest, vars) })
				return false, nil
			}
			c.h.Log("warning", "homeassistant.helpers.script", "%s: the simulator does not wait inside nested blocks; %s skipped", r.entity, w.d)
			continue
		}
		if err != nil {
			if coe, _ := m["continue_on_error"].(bool); coe && !errors.Is(err, errStop) {
				continue
			}
			return true, err
		}
	}
	return true, nil
}

// waitFor asks exec to pause the sequence.
type waitFor struct{ d time.Duration }

func (w *waitFor) Error() string { return "wait " + w.d.String() }

func (c *call) step(m map[string]any, vars map[string]any, r *scriptRun) error {
	switch {
	case m["action"] != nil || m["service"] != nil:
		return c.serviceStep(m, vars, r)
	case m["delay"] != nil:
		v, err := c.render(m["delay"], vars)
		if err != nil {
			return err
		}
		return &waitFor{d: parseDelay(v)}
	case m["wait_template"] != nil, m["wait_for_trigger"] != nil:
		c.h.Log("warning", "homeassistant.helpers.script", "%s: wait steps do not wait in the simulator", r.entity)
		return nil
	case m["scene"] != nil:
		_, err := c.callNested("scene", "turn_on", map[string]any{"entity_id": m["scene"]})
		return err
	case m["event"] != nil:
		data, err := c.render(m["event_data"], vars)
		if err != nil {
			return err
		}
		dm, _ := data.(map[string]any)
		r.tr.eventResult(m["event"], dm)
		c.h.fireLocked(fmt.Sprint(m["event"]), dm, "LOCAL", c.ctx)
		return nil
	case m["condition"] != nil:
		ok, err := c.condition(m, vars)
		if err != nil {
			return err
		}
		if !ok {
			return errStop
		}
		return nil
	case m["choose"] != nil:
		for i, opt := range asList(m["choose"]) {
			om, _ := opt.(map[string]any)
			n := strconv.Itoa(i)
			ok, err := c.traceConditions(r.tr, om["conditions"], vars, "choose", n, "conditions")
			if err != nil {
				return err
			}
			if ok {
				r.tr.setResult("choice", i)
				return c.execIn(r, asList(om["sequence"]), vars, "choose", n, "sequence")
			}
		}
		if d, ok := m["default"]; ok {
			r.tr.setResult("choice", "default")
			return c.execIn(r, asList(d), vars, "default")
		}
		return nil
	case m["if"] != nil:
		ok, err := c.traceConditions(r.tr, m["if"], vars, "if", "condition")
		if err != nil {
			return err
		}
		if ok {
			r.tr.setResult("choice", "then")
			return c.execIn(r, asList(m["then"]), vars, "then")
		}
		if m["else"] != nil {
			r.tr.setResult("choice", "else")
		}
		return c.execIn(r, asList(m["else"]), vars, "else")
	case m["repeat"] != nil:
		return c.repeat(m["repeat"], vars, r)
	case m["variables"] != nil:
		v, err := c.render(m["variables"], vars)
		if err != nil {
			return err
		}
		if vm, ok := v.(map[string]any); ok {
			for k, x := range vm {
				vars[k] = x
			}
		}
		return nil
	case m["stop"] != nil:
		if e, _ := m["error"].(bool); e {
			return &HAError{Msg: fmt.Sprint(m["stop"])}
		}
		if rv, ok := m["response_variable"].(string); ok {
			vars[responseVar] = vars[rv]
		}
		return errStop
	case m["sequence"] != nil:
		return c.execIn(r, asList(m["sequence"]), vars, "sequence")
	case m["parallel"] != nil:
		// parallel branches run one after the other: the simulator is single-threaded per home.
		for i, b := range asList(m["parallel"]) {
			steps := asList(b)
			if bm, ok := b.(map[string]any); ok && bm["sequence"] != nil {
				steps = asList(bm["sequence"])
			}
			if err := c.execIn(r, steps, vars, "parallel", strconv.Itoa(i), "sequence"); err != nil {
				return err
			}
		}
		return nil
	case m["device_id"] != nil:
		c.h.Log("warning", "homeassistant.helpers.script", "%s: device actions are not supported by the simulator", r.entity)
		return nil
	}
	return nil
}

func (c *call) serviceStep(m map[string]any, vars map[string]any, r *scriptRun) error {
	name := m["action"]
	if name == nil {
		name = m["service"]
	}
	nv, err := c.render(name, vars)
	if err != nil {
		return err
	}
	domain, svc, ok := strings.Cut(fmt.Sprint(nv), ".")
	if !ok {
		return invalidf("Service %v does not match format <domain>.<name>", nv)
	}
	data := map[string]any{}
	// the trace shows the call as HA prepares it: service_data and target apart
	svcData, target := map[string]any{}, map[string]any{}
	for _, k := range []string{"data", "service_data", "target"} {
		v, err := c.render(m[k], vars)
		if err != nil {
			return err
		}
		if vm, ok := v.(map[string]any); ok {
			for kk, x := range vm {
				data[kk] = x
				if k == "target" {
					target[kk] = x
				} else {
					svcData[kk] = x
				}
			}
		}
	}
	if eid, ok := m["entity_id"]; ok {
		data["entity_id"] = eid
		target["entity_id"] = eid
	}
	r.tr.serviceResult(domain, svc, svcData, target)
	resp, err := c.callNested(domain, svc, data)
	if err != nil {
		return err
	}
	if rv, ok := m["response_variable"].(string); ok {
		vars[rv] = resp
	}
	return nil
}

func (c *call) repeat(spec any, vars map[string]any, r *scriptRun) error {
	m, _ := spec.(map[string]any)
	seq := asList(m["sequence"])
	const maxLoops = 1000
	iter := func(i int, item any, last bool) error {
		rep := map[string]any{"index": i + 1, "first": i == 0, "last": last}
		if item != nil {
			rep["item"] = item
		}
		vars["repeat"] = rep
		return c.execIn(r, seq, vars, "repeat", "sequence")
	}
	switch {
	case m["count"] != nil:
		v, err := c.render(m["count"], vars)
		if err != nil {
			return err
		}
		n, _ := toFloat(v)
		for i := 0; i < int(n) && i < maxLoops; i++ {
			if err := iter(i, nil, i == int(n)-1); err != nil {
				return err
			}
		}
	case m["for_each"] != nil:
		v, err := c.render(m["for_each"], vars)
		if err != nil {
			return err
		}
		items := asList(v)
		for i, it := range items {
			if err := iter(i, it, i == len(items)-1); err != nil {
				return err
			}
		}
	case m["while"] != nil:
		for i := 0; i < maxLoops; i++ {
			ok, err := c.traceConditions(r.tr, m["while"], vars, "repeat", "while")
			if err != nil || !ok {
				return err
			}
			if err := iter(i, nil, false); err != nil {
				return err
			}
		}
	case m["until"] != nil:
		for i := 0; i < maxLoops; i++ {
			if err := iter(i, nil, false); err != nil {
				return err
			}
			ok, err := c.traceConditions(r.tr, m["until"], vars, "repeat", "until")
			if err != nil || ok {
				return err
			}
		}
	}
	return nil
}

// parseDelay accepts seconds, "HH:MM[:SS[.fff]]" or {days,hours,minutes,seconds,milliseconds}.
func parseDelay(v any) time.Duration {
	switch x := v.(type) {
	case map[string]any:
		d := durationOf(x)
		if ms, ok := toFloat(x["milliseconds"]); ok {
			d += time.Duration(ms * float64(time.Millisecond))
		}
		return d
	case string:
		parts := strings.Split(x, ":")
		if len(parts) == 1 {
			f, _ := strconv.ParseFloat(x, 64)
			return time.Duration(f * float64(time.Second))
		}
		var total float64
		for _, p := range parts {
			f, _ := strconv.ParseFloat(p, 64)
			total = total*60 + f
		}
		if len(parts) == 2 {
			total *= 60
		}
		return time.Duration(total * float64(time.Second))
	}
	f, _ := toFloat(v)
	return time.Duration(f * float64(time.Second))
}

// render renders every template string inside v (typed, as HA does for action data).
func (c *call) render(v any, vars map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		if !isTemplate(x) {
			return x, nil
		}
		if c.h.renderer == nil {
			return nil, &HAError{Msg: "templates are not available in this simulator build"}
		}
		return c.h.renderer(x, vars, c.h.snapshotLocked(), true)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := c.render(e, vars)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := c.render(e, vars)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}
