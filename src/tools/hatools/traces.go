package hatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Limits that keep one run's steps near 8 KB: a loop can leave hundreds of visits.
const (
	traceMaxSteps = 60  // steps shown: the first ones, then the last few where the run ended
	traceTailKept = 10  // of those, how many come from the end
	traceTextMax  = 240 // characters of one step's result or variables
)

type tracesArgs struct {
	EntityID string `json:"entity_id" jsonschema:"automation.* or script.*" validate:"required,entity_id"`
	RunID    string `json:"run_id,omitempty" jsonschema:"a run from the list: show its steps" validate:"omitempty,max=64,printascii"`
}

// traceRun is one run in a line.
type traceRun struct {
	RunID    string   `json:"run_id"`
	Start    string   `json:"start"`
	Duration *float64 `json:"duration_s,omitempty"`
	Trigger  string   `json:"trigger,omitempty"`
	Result   string   `json:"result"` // script_execution, or "running"
	Error    string   `json:"error,omitempty"`
	LastStep string   `json:"last_step,omitempty"`
}

type traceStepView struct {
	Path    string `json:"path"`
	Result  string `json:"result,omitempty"`
	Changed string `json:"changed,omitempty"`
	Error   string `json:"error,omitempty"`
	Child   string `json:"child,omitempty"`
}

type tracesResult struct {
	EntityID string          `json:"entity_id"`
	ItemID   string          `json:"item_id"`
	Runs     []traceRun      `json:"runs,omitempty"`
	Run      *traceRun       `json:"run,omitempty"`
	Steps    []traceStepView `json:"steps,omitempty"`
	Note     string          `json:"note,omitempty"`
}

func traceTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{getTraces(d)} }

// getTraces is ha_get_traces.
func getTraces(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[tracesArgs, tracesResult]{
		Name: "ha_get_traces", Toolset: SetAutomations, Title: "Automation and script traces",
		Description: "Why an automation or script did not run, stopped or failed: its recent runs (Home Assistant keeps the last 5), " +
			"newest first, each with trigger, result (finished, failed_conditions, aborted, error…), error and last step. " +
			"With run_id: that run step by step (path like action/1/choose/0/sequence/0, result, changed variables, " +
			"the error where it stopped). Use this, not ha_get_logbook, for \"why did my automation not run / fail\". " +
			"No runs means it never triggered: check its triggers and that it is on.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a tracesArgs) (tracesResult, error) {
			return d.traces(ctx, a)
		},
	})
}

func (d Deps) traces(ctx context.Context, a tracesArgs) (tracesResult, error) {
	domain, item, err := d.traceItem(ctx, a.EntityID)
	if err != nil {
		return tracesResult{}, err
	}
	out := tracesResult{EntityID: a.EntityID, ItemID: item}
	if a.RunID != "" {
		tr, err := d.HA.Trace(ctx, domain, item, a.RunID)
		var api *homeassistant.APIError
		if errors.As(err, &api) && api.Code == "not_found" {
			return out, toolkit.NotFound("no run "+a.RunID+" of "+a.EntityID+": Home Assistant keeps only its last runs",
				"call ha_get_traces without run_id to list the runs it keeps")
		}
		if err != nil {
			return out, haError(err, false, "list the runs without run_id")
		}
		run := traceRunOf(tr.TraceSummary)
		out.Run = &run
		out.Steps, out.Note = traceSteps(tr.Steps)
		return out, nil
	}
	runs, err := d.HA.Traces(ctx, domain, item)
	if err != nil {
		return out, haError(err, false, "try again; traces need an administrator's token")
	}
	for i := len(runs) - 1; i >= 0; i-- {
		out.Runs = append(out.Runs, traceRunOf(runs[i]))
	}
	if len(runs) == 0 {
		out.Note = "no runs kept since Home Assistant started: " + a.EntityID + " has not run (check its triggers, conditions and that it is on)"
	}
	return out, nil
}

// traceItem maps an entity to the trace key: an automation's config id (the "id" attribute on its
// state), a script's object id.
func (d Deps) traceItem(ctx context.Context, entityID string) (domain, item string, err error) {
	domain, object, _ := strings.Cut(entityID, ".")
	if domain != "automation" && domain != "script" {
		return "", "", toolkit.InvalidArg("entity_id", "must be an automation or a script", `"automation.hallway_light_on_motion"`)
	}
	st, err := d.HA.State(ctx, entityID)
	if err != nil {
		return "", "", haError(err, false, "find the entity with ha_search_entities or ha_list_automations")
	}
	if domain == "script" {
		return domain, object, nil
	}
	id, _ := st.Attributes["id"].(string)
	if id == "" {
		return "", "", toolkit.NotFound(entityID+" has no id, so Home Assistant keeps no traces of it",
			"give the automation an id: in automations.yaml (the automation editor always does)")
	}
	return domain, id, nil
}

func traceRunOf(s homeassistant.TraceSummary) traceRun {
	r := traceRun{RunID: s.RunID, Start: utcSecond(s.Timestamp.Start), Trigger: s.Trigger, Result: s.ScriptExecution,
		Error: s.Error, LastStep: s.LastStep}
	if s.State == "running" || r.Result == "" {
		r.Result = s.State
	}
	start, err1 := time.Parse(time.RFC3339Nano, s.Timestamp.Start)
	end, err2 := time.Parse(time.RFC3339Nano, s.Timestamp.Finish)
	if err1 == nil && err2 == nil {
		sec := float64(end.Sub(start).Milliseconds()) / 1000
		r.Duration = &sec
	}
	return r
}

func utcSecond(ts string) string {
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		return t.UTC().Format(time.RFC3339)
	}
	return ts
}

// traceSteps flattens the path → visits dict into the order things happened: the dict's order is
// the order paths were first reached, and a loop's later visits go back by timestamp.
func traceSteps(paths homeassistant.TracePaths) ([]traceStepView, string) {
	type visit struct {
		at   time.Time
		seq  int
		step homeassistant.TraceStep
	}
	var all []visit
	for _, p := range paths {
		for _, s := range p.Steps {
			at, _ := time.Parse(time.RFC3339Nano, s.Timestamp)
			if s.Path == "" {
				s.Path = p.Path
			}
			all = append(all, visit{at, len(all), s})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	note := ""
	if len(all) > traceMaxSteps {
		head := traceMaxSteps - traceTailKept
		note = fmt.Sprintf("%d steps: shown the first %d and the last %d (where the run ended)", len(all), head, traceTailKept)
		all = append(all[:head:head], all[len(all)-traceTailKept:]...)
	}
	out := make([]traceStepView, 0, len(all))
	for _, v := range all {
		out = append(out, stepView(v.step))
	}
	return out, note
}

func stepView(s homeassistant.TraceStep) traceStepView {
	v := traceStepView{Path: s.Path, Error: s.Error, Result: clip(resultSummary(s.Result)), Changed: clip(varsSummary(s.ChangedVariables))}
	if s.ChildID != nil {
		v.Child = s.ChildID.Domain + " " + s.ChildID.ItemID + " run " + s.ChildID.RunID
	}
	return v
}

// resultSummary reads a step's result: a service call as "light.turn_on target … data …", a
// condition as true/false (with the state it saw), anything else as compact JSON.
func resultSummary(r map[string]json.RawMessage) string {
	if len(r) == 0 {
		return ""
	}
	if raw, ok := r["params"]; ok {
		var p struct {
			Domain  string         `json:"domain"`
			Service string         `json:"service"`
			Data    map[string]any `json:"service_data"`
			Target  map[string]any `json:"target"`
		}
		if json.Unmarshal(raw, &p) == nil && p.Domain != "" {
			s := p.Domain + "." + p.Service
			if len(p.Target) > 0 {
				s += " target " + compactJSON(p.Target)
			}
			if len(p.Data) > 0 {
				s += " data " + compactJSON(p.Data)
			}
			return s
		}
	}
	if raw, ok := r["result"]; ok && len(r) <= 3 {
		s := string(raw)
		if st, ok := r["state"]; ok {
			s += " (state " + string(st)
			if w, ok := r["wanted_state"]; ok {
				s += ", wanted " + string(w)
			}
			s += ")"
		}
		return s
	}
	return compactJSON(r)
}

// varsSummary drops what is in every trigger step and says little ("this": the whole state of
// the automation, "context") and shortens the trigger to what tells which one fired.
func varsSummary(vars map[string]json.RawMessage) string {
	out := map[string]any{}
	for k, raw := range vars {
		switch k {
		case "this", "context":
			continue
		case "trigger":
			var t map[string]any
			if json.Unmarshal(raw, &t) == nil {
				out[k] = triggerSummary(t)
				continue
			}
		}
		out[k] = raw
	}
	if len(out) == 0 {
		return ""
	}
	return compactJSON(out)
}

func triggerSummary(t map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"id", "idx", "platform", "description", "entity_id", "event"} {
		if v, ok := t[k]; ok && v != nil {
			out[k] = v
		}
	}
	for _, k := range []string{"from_state", "to_state"} {
		if st, ok := t[k].(map[string]any); ok {
			out[k] = st["state"]
		}
	}
	if len(out) == 0 {
		return map[string]any{"platform": nil}
	}
	return out
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func clip(s string) string {
	if len(s) <= traceTextMax {
		return s
	}
	cut := traceTextMax
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…(truncated)"
}
