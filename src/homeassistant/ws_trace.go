package homeassistant

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// TraceSummary is one run in trace/list (trace/models.py ActionTrace.as_short_dict; automations
// add Trigger, the description of what fired them, null when run by automation.trigger).
type TraceSummary struct {
	Domain          string         `json:"domain"`
	ItemID          string         `json:"item_id"`
	RunID           string         `json:"run_id"`
	State           string         `json:"state"`            // "running" or "stopped"
	ScriptExecution string         `json:"script_execution"` // finished, failed_conditions, error, aborted, cancelled, failed_single…
	Timestamp       TraceTimestamp `json:"timestamp"`
	LastStep        string         `json:"last_step"`
	Error           string         `json:"error,omitempty"`
	Trigger         string         `json:"trigger,omitempty"`
}

// TraceTimestamp holds ISO-8601 times; Finish is empty while the run goes on.
type TraceTimestamp struct {
	Start  string `json:"start"`
	Finish string `json:"finish"`
}

// Trace is trace/get's answer: the summary plus every step the run took.
type Trace struct {
	TraceSummary
	Steps           TracePaths      `json:"trace"`
	Config          json.RawMessage `json:"config"`
	BlueprintInputs json.RawMessage `json:"blueprint_inputs"`
	Context         struct {
		ID       string `json:"id"`
		ParentID string `json:"parent_id"`
		UserID   string `json:"user_id"`
	} `json:"context"`
}

// TraceStep is one helpers/trace.py TraceElement: one visit of a path.
type TraceStep struct {
	Path             string                     `json:"path"`
	Timestamp        string                     `json:"timestamp"`
	ChangedVariables map[string]json.RawMessage `json:"changed_variables,omitempty"`
	Result           map[string]json.RawMessage `json:"result,omitempty"`
	Error            string                     `json:"error,omitempty"`
	ChildID          *TraceChild                `json:"child_id,omitempty"`
}

// TraceChild names the trace of a script or automation a step started.
type TraceChild struct {
	Domain string `json:"domain"`
	ItemID string `json:"item_id"`
	RunID  string `json:"run_id"`
}

// TracePath is one key of the trace dict ("action/0", "condition/1", "action/2/choose/0/sequence/0")
// with its visits.
type TracePath struct {
	Path  string
	Steps []TraceStep
}

// TracePaths keeps the trace dict's order, which is the order the run first reached each path.
type TracePaths []TracePath

func (p *TracePaths) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*p = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("homeassistant: trace: want an object, got %v (%v)", t, err)
	}
	var out TracePaths
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var steps []TraceStep
		if err := dec.Decode(&steps); err != nil {
			return fmt.Errorf("homeassistant: trace path %q: %w", key, err)
		}
		out = append(out, TracePath{Path: key, Steps: steps})
	}
	*p = out
	return nil
}

func checkTraceDomain(domain string) error {
	if domain != "automation" && domain != "script" {
		return fmt.Errorf(`homeassistant: trace domain %q: want "automation" or "script"`, domain)
	}
	return nil
}

// Traces lists the kept runs of one automation (itemID = its config id) or script (its object id),
// oldest first; an empty itemID lists every item of the domain (WebSocket trace/list, admin only).
func (c *Client) Traces(ctx context.Context, domain, itemID string) ([]TraceSummary, error) {
	if err := checkTraceDomain(domain); err != nil {
		return nil, err
	}
	msg := map[string]any{"domain": domain}
	if itemID != "" {
		msg["item_id"] = itemID
	}
	return callAs[[]TraceSummary](ctx, c, "trace/list", msg)
}

// Trace reads one run step by step (WebSocket trace/get). A run HA no longer keeps is an
// APIError with Code "not_found".
func (c *Client) Trace(ctx context.Context, domain, itemID, runID string) (Trace, error) {
	if err := checkTraceDomain(domain); err != nil {
		return Trace{}, err
	}
	if itemID == "" || runID == "" {
		return Trace{}, fmt.Errorf("homeassistant: trace needs an item_id and a run_id")
	}
	return callAs[Trace](ctx, c, "trace/get", map[string]any{"domain": domain, "item_id": itemID, "run_id": runID})
}
