package hubitattools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetRules is the toolset of the rule engine: rules hamcp runs itself from the hub's events and
// its own clock (package rules).
const SetRules = "hubitat_rules"

// The rule tools, upstream's 11 and get_rule_diagnostics. A deleted rule goes to the trash:
// hubitat_list_rules trashed=true lists it, hubitat_import_rule trashId brings it back.
func ruleTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{listRules(d), getRule(d), createRule(d), updateRule(d), deleteRule(d), enableRule(d),
		disableRule(d), testRule(d), exportRule(d), importRule(d), cloneRule(d), ruleDiagnostics(d)}
}

type ruleID struct {
	RuleID string `json:"ruleId" jsonschema:"the rule's id, from hubitat_list_rules" validate:"required,max=64"`
}

// engine is the rule engine, or an error the model can act on when this hamcp runs none.
func (d Deps) engine() (*rules.Engine, error) {
	if d.Rules == nil {
		return nil, &toolkit.Error{Code: "unavailable", Message: "the rule engine is not running",
			Hint: "hamcp runs it whenever a Hubitat hub is configured; the add-on log says why it did not start"}
	}
	return d.Rules, nil
}

// ruleError turns an engine error into one the model can act on.
func ruleError(err error, id string) error {
	var te *toolkit.Error
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, rules.ErrNotFound):
		return toolkit.NotFound("no rule (or trashed rule) with id "+id, "hubitat_list_rules lists the rules, with trashed=true the deleted ones")
	case errors.Is(err, rules.ErrClosed):
		return toolkit.Unavailable("the rule engine", err, "hamcp is shutting down: try again when it is back")
	}
	return storeError(err)
}

// problemsError reports every problem of a rule; each path is an argument path of the tool
// (prefix + the path inside the rule), so the model can fix them all in one go.
func problemsError(prefix string, probs []rules.Problem) error {
	lines := make([]string, len(probs))
	for i, p := range probs {
		lines[i] = joinPath(prefix, p.Path) + ": " + p.Message
	}
	return &toolkit.Error{Code: "invalid_argument", Field: joinPath(prefix, probs[0].Path), Message: strings.Join(lines, "; "),
		Hint: "fix every listed field and call again; nothing was saved"}
}

func joinPath(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	case strings.HasPrefix(path, "["):
		return prefix + path
	}
	return prefix + "." + path
}

// byID is the handler of a tool that does one thing to one rule through the engine (an Engine
// method, or a function shaped like one).
func byID[Out any](d Deps, do func(e *rules.Engine, ctx context.Context, id string) (Out, error)) func(context.Context, *toolkit.Call, ruleID) (Out, error) {
	return func(ctx context.Context, c *toolkit.Call, a ruleID) (Out, error) {
		var zero Out
		e, err := d.engine()
		if err != nil {
			return zero, err
		}
		out, err := do(e, ctx, a.RuleID)
		if err != nil {
			return zero, ruleError(err, a.RuleID)
		}
		return out, nil
	}
}

// ruleSummary is one rule in hubitat_list_rules, as upstream lists them.
type ruleSummary struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	Description    string     `json:"description,omitempty"`
	Enabled        bool       `json:"enabled"`
	TriggerCount   int        `json:"triggerCount"`
	ConditionCount int        `json:"conditionCount"`
	ActionCount    int        `json:"actionCount"`
	LastTriggered  *time.Time `json:"lastTriggered,omitempty"`
	ExecutionCount int        `json:"executionCount"`
	ErrorCount     int        `json:"errorCount"`
	// Why hamcp stopped and disabled the rule (a runaway), and when.
	DisabledReason string     `json:"disabledReason,omitempty"`
	DisabledAt     *time.Time `json:"disabledAt,omitempty"`
}

func summaryOf(r rules.Rule) ruleSummary {
	return ruleSummary{ID: r.ID, Name: r.Name, Description: r.Description, Enabled: r.Enabled, TriggerCount: len(r.Triggers),
		ConditionCount: len(r.Conditions), ActionCount: len(r.Actions), LastTriggered: r.LastTriggered,
		ExecutionCount: r.ExecutionCount, ErrorCount: r.ErrorCount, DisabledReason: r.DisabledReason, DisabledAt: r.DisabledAt}
}

type trashRow struct {
	TrashID   string    `json:"trashId"`
	DeletedAt time.Time `json:"deletedAt"`
	RuleID    string    `json:"ruleId"`
	Name      string    `json:"name"`
}

type listRulesArgs struct {
	Trashed bool `json:"trashed,omitempty" jsonschema:"list the deleted rules instead (restore one with hubitat_import_rule trashId)"`
}

type ruleList struct {
	Rules []ruleSummary `json:"rules,omitempty"`
	Trash []trashRow    `json:"trash,omitempty"`
	Count int           `json:"count"`
}

func listRules(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listRulesArgs, ruleList]{
		Name: "hubitat_list_rules", Toolset: SetRules, Title: "List Hubitat rules",
		Description: "List the rules hamcp runs for the Hubitat hub: id, name, enabled, how many triggers, conditions and " +
			"actions, when it last ran, run and error counts. trashed=true lists deleted rules (trashId) instead. " +
			"hubitat_get_rule shows one rule whole.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listRulesArgs) (ruleList, error) {
			e, err := d.engine()
			if err != nil {
				return ruleList{}, err
			}
			if a.Trashed {
				ts, err := e.Trash(ctx)
				if err != nil {
					return ruleList{}, ruleError(err, "")
				}
				out := ruleList{Trash: make([]trashRow, len(ts)), Count: len(ts)}
				for i, t := range ts {
					out.Trash[i] = trashRow{TrashID: t.TrashID, DeletedAt: t.DeletedAt, RuleID: t.Rule.ID, Name: t.Rule.Name}
				}
				return out, nil
			}
			rs, err := e.List(ctx)
			if err != nil {
				return ruleList{}, ruleError(err, "")
			}
			out := ruleList{Rules: make([]ruleSummary, len(rs)), Count: len(rs)}
			for i, r := range rs {
				out.Rules[i] = summaryOf(r)
			}
			return out, nil
		},
	})
}

func getRule(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[ruleID, rules.Rule]{
		Name: "hubitat_get_rule", Toolset: SetRules, Title: "Get a Hubitat rule",
		Description: "One rule whole: triggers, conditions, actions, local variables, enabled, timestamps and counters. " +
			"Read it before hubitat_update_rule.",
		ReadOnly: true,
		Handler:  byID(d, (*rules.Engine).Get),
	})
}

// ruleSaved is what the tools that write a rule answer.
type ruleSaved struct {
	Success        bool   `json:"success"`
	RuleID         string `json:"ruleId"`
	Name           string `json:"name"`
	Enabled        bool   `json:"enabled"`
	TriggerCount   int    `json:"triggerCount"`
	ConditionCount int    `json:"conditionCount"`
	ActionCount    int    `json:"actionCount"`
	Message        string `json:"message,omitempty"`
	// Availability tells the user, where a rule is made, that it does not run while hamcp is down.
	Availability string `json:"availability,omitempty"`
}

// withAvailability adds rules.AvailabilityNote to a saved rule's answer.
func withAvailability(s ruleSaved) ruleSaved {
	s.Availability = rules.AvailabilityNote
	return s
}

func savedOf(r rules.Rule, msg string) ruleSaved {
	return ruleSaved{Success: true, RuleID: r.ID, Name: r.Name, Enabled: r.Enabled, TriggerCount: len(r.Triggers),
		ConditionCount: len(r.Conditions), ActionCount: len(r.Actions), Message: msg}
}

// ruleBody is a rule as the model writes it, in upstream's field names. The lists stay JSON
// objects here: rules.Decode reads them, folding upstream's other spellings and naming any
// unknown field by its path.
type ruleBody struct {
	Description    *string          `json:"description,omitempty" validate:"omitempty,max=1000"`
	Enabled        *bool            `json:"enabled,omitempty" jsonschema:"default true"`
	ConditionLogic *string          `json:"conditionLogic,omitempty" jsonschema:"default all" validate:"omitempty,oneof=all any"`
	Triggers       []map[string]any `json:"triggers,omitempty" jsonschema:"any one fires it. Each {type,...}: device_event {deviceId|deviceIds, attribute, value?, operator?, duration? s}, button_event {deviceId, action, buttonNumber?}, time {time HH:mm | sunrise|sunset: true, offset?}, periodic {interval, unit}, mode_change, hsm_change" validate:"omitempty,max=20"`
	Conditions     []map[string]any `json:"conditions,omitempty" jsonschema:"each {type,...}: device_state, device_was, time_range {start, end}, mode, variable, days_of_week, sun_position, hsm_status, presence, lock, thermostat_mode, thermostat_state, illuminance, power" validate:"omitempty,max=50"`
	Actions        []map[string]any `json:"actions,omitempty" jsonschema:"each {type,...}: device_command {deviceId, command, parameters?}, set_level, set_color, set_color_temperature, toggle_device, activate_scene, lock, unlock, set_mode, set_hsm, delay {seconds}, if_then_else {condition, thenActions, elseActions}, repeat {times, actions}, stop, set_variable, set_local_variable, variable_math, cancel_delayed, log, capture_state, restore_state, send_notification, speak, set_thermostat, set_valve, set_fan_speed, set_shade, http_request {url}, comment" validate:"omitempty,max=100"`
	LocalVariables map[string]any   `json:"localVariables,omitempty" jsonschema:"name: value"`
}

// fields is the body as JSON fields: only those given (a partial update), or with every field
// present (a whole rule, missing lists empty), so that merging it over a stored rule leaves
// nothing of the stored one.
func (b ruleBody) fields(name *string, whole bool) map[string]any {
	m := map[string]any{}
	set := func(k string, v any, given bool) {
		if given {
			m[k] = v
		}
	}
	set("name", name, name != nil)
	set("description", b.Description, b.Description != nil)
	set("enabled", b.Enabled, b.Enabled != nil)
	set("conditionLogic", b.ConditionLogic, b.ConditionLogic != nil)
	set("triggers", b.Triggers, b.Triggers != nil)
	set("conditions", b.Conditions, b.Conditions != nil)
	set("actions", b.Actions, b.Actions != nil)
	set("localVariables", b.LocalVariables, b.LocalVariables != nil)
	if whole {
		for k, empty := range map[string]any{"triggers": []any{}, "conditions": []any{}, "actions": []any{}} {
			if _, ok := m[k]; !ok {
				m[k] = empty
			}
		}
		if _, ok := m["enabled"]; !ok {
			m["enabled"] = true // upstream's default
		}
	}
	return m
}

// decodeRule reads a rule from JSON fields with the rule decoder.
func decodeRule(fields map[string]any) (rules.Rule, error) {
	raw, err := json.Marshal(fields)
	if err != nil {
		return rules.Rule{}, err
	}
	return rules.Decode(raw)
}

// decodeError is a rule that does not decode, each problem named by its path in the arguments.
func decodeError(prefix string, err error) error {
	var probs rules.Problems
	if errors.As(err, &probs) && len(probs) > 0 {
		return problemsError(prefix, probs)
	}
	return &toolkit.Error{Code: "invalid_argument", Field: prefix, Message: err.Error(),
		Hint: "use the field names hubitat_create_rule lists; nothing was saved"}
}

// editableFields is a stored rule as the fields a user writes (no id, timestamps or counters),
// every one present.
func editableFields(r rules.Rule) (map[string]any, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range rules.RuntimeFields() {
		delete(m, k)
	}
	for k, empty := range map[string]any{"description": "", "conditionLogic": "all", "conditions": []any{}, "localVariables": map[string]any{}} {
		if _, ok := m[k]; !ok {
			m[k] = empty
		}
	}
	return m, nil
}

type createRuleArgs struct {
	Name string `json:"name" validate:"required,max=200"`
	ruleBody
}

func createRule(d Deps) *toolkit.Tool {
	g := ruleGuard[createRuleArgs]{d: d, verb: "Create", prefix: "",
		build: func(ctx context.Context, e *rules.Engine, a createRuleArgs) (rules.Rule, error) {
			r, err := decodeRule(a.ruleBody.fields(&a.Name, true))
			if err != nil {
				return rules.Rule{}, decodeError("", err)
			}
			return r, nil
		},
		commit: func(ctx context.Context, e *rules.Engine, a createRuleArgs, r rules.Rule) (ruleSaved, []rules.Problem, error) {
			saved, probs, err := e.Create(ctx, r)
			return withAvailability(savedOf(saved, "created; try it with hubitat_test_rule")), probs, err
		},
	}
	return toolkit.Define(toolkit.Spec[createRuleArgs, ruleSaved]{
		Name: "hubitat_create_rule", Toolset: SetRules, Title: "Create a Hubitat rule",
		Description: "Create a rule hamcp runs on its own: when a trigger fires and the conditions " +
			"hold, the actions run in order; %device%, %value%, %now%, %mode% and variables fill texts. A mistake is refused " +
			"naming its path. Dry run: hubitat_test_rule. Runs in the add-on, not the hub: nothing fires while it is down. " + guardNote,
		Confirm: g.confirm(), Conditional: g.grant(), Handler: g.handler,
		Summary: func(a createRuleArgs) string { return "create rule " + fmt.Sprintf("%q", a.Name) },
	})
}

// guardNote is what every tool that writes a rule says about the guard.
const guardNote = "Actions that unlock, disarm, open a garage door or set the mode need the user's confirmation; " +
	"http_request needs the command permission."

type updateRuleArgs struct {
	ruleID
	Name *string `json:"name,omitempty" validate:"omitempty,max=200"`
	updateBody
}

// updateBody is ruleBody described in short: hubitat_create_rule describes the fields.
type updateBody struct {
	Description    *string          `json:"description,omitempty" validate:"omitempty,max=1000"`
	Enabled        *bool            `json:"enabled,omitempty"`
	ConditionLogic *string          `json:"conditionLogic,omitempty" validate:"omitempty,oneof=all any"`
	Triggers       []map[string]any `json:"triggers,omitempty" jsonschema:"the whole new list" validate:"omitempty,max=20"`
	Conditions     []map[string]any `json:"conditions,omitempty" jsonschema:"the whole new list ([] for none)" validate:"omitempty,max=50"`
	Actions        []map[string]any `json:"actions,omitempty" jsonschema:"the whole new list" validate:"omitempty,max=100"`
	LocalVariables map[string]any   `json:"localVariables,omitempty"`
}

func updateRule(d Deps) *toolkit.Tool {
	g := ruleGuard[updateRuleArgs]{d: d, verb: "Change", prefix: "",
		build: func(ctx context.Context, e *rules.Engine, a updateRuleArgs) (rules.Rule, error) {
			cur, err := e.Get(ctx, a.RuleID)
			if err != nil {
				return rules.Rule{}, ruleError(err, a.RuleID)
			}
			m, err := editableFields(cur)
			if err != nil {
				return rules.Rule{}, storeError(err)
			}
			for k, v := range ruleBody(a.updateBody).fields(a.Name, false) {
				m[k] = v
			}
			r, err := decodeRule(m)
			if err != nil {
				return rules.Rule{}, decodeError("", err)
			}
			r.ID = cur.ID
			return r, nil
		},
		commit: func(ctx context.Context, e *rules.Engine, a updateRuleArgs, r rules.Rule) (ruleSaved, []rules.Problem, error) {
			saved, probs, err := replaceRule(ctx, e, r)
			return withAvailability(savedOf(saved, "updated; its pending delays were cancelled")), probs, err
		},
		enables: true,
		// Renaming, describing or disabling a rule changes nothing it does.
		exemptWhen: "; not when only its name or description change, or it is disabled",
		exempt: func(a updateRuleArgs) bool {
			b := a.updateBody
			return b.Triggers == nil && b.Conditions == nil && b.Actions == nil && b.LocalVariables == nil &&
				b.ConditionLogic == nil && (b.Enabled == nil || !*b.Enabled)
		},
	}
	return toolkit.Define(toolkit.Spec[updateRuleArgs, ruleSaved]{
		Name: "hubitat_update_rule", Toolset: SetRules, Title: "Update a Hubitat rule",
		Description: "Change a rule: the fields given (those of hubitat_create_rule) replace the stored ones, lists whole; " +
			"the result is validated as a new rule, and its pending delays are cancelled. Read it first with hubitat_get_rule. " +
			guardNote,
		Confirm: g.confirm(), Conditional: g.grant(), Handler: g.handler,
		Summary: func(a updateRuleArgs) string { return "update rule " + a.RuleID },
	})
}

// replaceRule stores r whole over the rule of its id, so that what is saved is exactly what the
// confirmation and the permission check looked at, whatever changed the rule meanwhile.
func replaceRule(ctx context.Context, e *rules.Engine, r rules.Rule) (rules.Rule, []rules.Problem, error) {
	m, err := editableFields(r)
	if err != nil {
		return rules.Rule{}, nil, err
	}
	patch, err := json.Marshal(m)
	if err != nil {
		return rules.Rule{}, nil, err
	}
	return e.Update(ctx, r.ID, patch)
}

type trashResult struct {
	Success bool   `json:"success"`
	RuleID  string `json:"ruleId"`
	TrashID string `json:"trashId"`
	Message string `json:"message"`
}

func deleteRule(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[ruleID, trashResult]{
		Name: "hubitat_delete_rule", Toolset: SetRules, Title: "Delete a Hubitat rule",
		Description: "Delete a rule: it stops at once (its pending delays are cancelled) and goes to the trash. Answers a " +
			"trashId: hubitat_import_rule trashId brings the rule back (disabled); hubitat_list_rules trashed=true lists the trash.",
		Destructive: true,
		Handler: byID(d, func(e *rules.Engine, ctx context.Context, id string) (trashResult, error) {
			tid, err := e.Delete(ctx, id)
			return trashResult{Success: true, RuleID: id, TrashID: tid,
				Message: "moved to the trash; restore it with hubitat_import_rule {\"trashId\": \"" + tid + "\"}"}, err
		}),
	})
}

func enableRule(d Deps) *toolkit.Tool {
	g := enableGuard(d)
	return toolkit.Define(toolkit.Spec[ruleID, ruleSaved]{
		Name: "hubitat_enable_rule", Toolset: SetRules, Title: "Enable a Hubitat rule",
		Description: "Enable a rule: its triggers are armed and it runs on its own from now on. " + guardNote,
		Confirm:     g.confirm(), Conditional: g.grant(), Handler: g.handler, Idempotent: true,
	})
}

func enableGuard(d Deps) *ruleGuard[ruleID] {
	return &ruleGuard[ruleID]{d: d, verb: "Enable", prefix: "", enables: true,
		build: func(ctx context.Context, e *rules.Engine, a ruleID) (rules.Rule, error) {
			r, err := e.Get(ctx, a.RuleID)
			if err != nil {
				return rules.Rule{}, ruleError(err, a.RuleID)
			}
			r.Enabled = true
			return r, nil
		},
		commit: func(ctx context.Context, e *rules.Engine, a ruleID, r rules.Rule) (ruleSaved, []rules.Problem, error) {
			cur, err := e.Get(ctx, a.RuleID)
			if err == nil && cur.Enabled && cur.UpdatedAt.Equal(r.UpdatedAt) {
				return savedOf(cur, "already enabled"), nil, nil
			}
			saved, probs, err := replaceRule(ctx, e, r)
			return savedOf(saved, "enabled"), probs, err
		},
	}
}

func disableRule(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[ruleID, ruleSaved]{
		Name: "hubitat_disable_rule", Toolset: SetRules, Title: "Disable a Hubitat rule",
		Description: "Disable a rule: its triggers stop, its pending delays and held durations are cancelled. It stays " +
			"stored; hubitat_enable_rule turns it back on.",
		Idempotent: true,
		Handler: byID(d, func(e *rules.Engine, ctx context.Context, id string) (ruleSaved, error) {
			r, err := e.SetEnabled(ctx, id, false)
			return savedOf(r, "disabled"), err
		}),
	})
}

func testRule(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[ruleID, rules.TestReport]{
		Name: "hubitat_test_rule", Toolset: SetRules, Title: "Test a Hubitat rule (dry run)",
		Description: "Dry-run a rule now without acting: whether each trigger is armed (and when a scheduled one fires next), " +
			"each condition's result against the current state, and the actions it would take, in words. Nothing reaches " +
			"the hub, the variables or the captured states.",
		ReadOnly: true,
		Handler:  byID(d, (*rules.Engine).Test),
	})
}

func ruleDiagnostics(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[ruleID, rules.Diagnostics]{
		Name: "hubitat_get_rule_diagnostics", Toolset: SetRules, Title: "Hubitat rule diagnostics",
		Description: "Why a rule did or did not run: the rule with its counters and last error, each trigger armed or not " +
			"(next time for scheduled ones), whether it is running, pending delays (with due times; delays that fell due " +
			"while hamcp was down are noted), and its recent debug-log lines. availability: since when hamcp runs, how long " +
			"it was down before, the last hub event it saw; time triggers missed while down are noted (run once, or skipped " +
			"when over 15 minutes late).",
		ReadOnly: true,
		Handler:  byID(d, (*rules.Engine).Diagnostics),
	})
}

func exportRule(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[ruleID, rules.Export]{
		Name: "hubitat_export_rule", Toolset: SetRules, Title: "Export a Hubitat rule",
		Description: "Export a rule for hubitat_import_rule (here or on another hub): the rule without its id and counters, and " +
			"a device manifest (every device it uses, where, its label and capabilities) to build a deviceMapping from.",
		ReadOnly: true,
		Handler: byID(d, func(e *rules.Engine, ctx context.Context, id string) (rules.Export, error) {
			r, err := e.Get(ctx, id)
			return rules.ExportRule(r, e.Devices(), d.Version, d.now()), err
		}),
	})
}

type importRuleArgs struct {
	ExportData    map[string]any    `json:"exportData,omitempty" jsonschema:"what hubitat_export_rule answered"`
	Name          string            `json:"name,omitempty" jsonschema:"a new name (default: the exported one)" validate:"omitempty,max=200"`
	DeviceMapping map[string]string `json:"deviceMapping,omitempty" jsonschema:"old device id → new, for every device of the manifest that differs here"`
	TrashID       string            `json:"trashId,omitempty" jsonschema:"instead of exportData: restore this deleted rule (disabled) from the trash" validate:"omitempty,max=64"`
}

func importRule(d Deps) *toolkit.Tool {
	g := ruleGuard[importRuleArgs]{d: d, verb: "Import", prefix: "exportData.rule",
		build: func(ctx context.Context, e *rules.Engine, a importRuleArgs) (rules.Rule, error) {
			switch {
			case a.TrashID != "" && a.ExportData != nil:
				return rules.Rule{}, toolkit.InvalidArg("trashId", "give exportData or trashId, not both", "")
			case a.TrashID != "":
				return rules.Rule{}, errRestore // restored disabled: enabling it later asks what enabling asks
			case a.ExportData == nil:
				return rules.Rule{}, toolkit.InvalidArg("exportData", "is required (or trashId to restore a deleted rule)", "")
			}
			raw, err := json.Marshal(a.ExportData)
			if err != nil {
				return rules.Rule{}, decodeError("exportData", err)
			}
			exp, err := rules.DecodeExport(raw)
			if err != nil {
				return rules.Rule{}, decodeError("exportData", err)
			}
			r, probs := rules.ImportRule(exp, a.Name, a.DeviceMapping)
			if len(probs) > 0 {
				for i, p := range probs { // the export's own fields, or an argument (deviceMapping)
					if !strings.HasPrefix(p.Path, "deviceMapping") {
						probs[i].Path = joinPath("exportData", p.Path)
					}
				}
				return rules.Rule{}, problemsError("", probs)
			}
			return r, nil
		},
		commit: func(ctx context.Context, e *rules.Engine, a importRuleArgs, r rules.Rule) (ruleSaved, []rules.Problem, error) {
			saved, probs, err := e.Create(ctx, r)
			return savedOf(saved, "imported"), probs, err
		},
		exemptWhen: "; not when it restores from the trash (the rule comes back disabled)",
		exempt:     func(a importRuleArgs) bool { return a.TrashID != "" && a.ExportData == nil },
		restore: func(ctx context.Context, e *rules.Engine, a importRuleArgs) (ruleSaved, error) {
			r, err := e.Restore(ctx, a.TrashID)
			if err != nil {
				return ruleSaved{}, ruleError(err, a.TrashID)
			}
			return savedOf(r, "restored from the trash, disabled: hubitat_enable_rule turns it on"), nil
		},
	}
	return toolkit.Define(toolkit.Spec[importRuleArgs, ruleSaved]{
		Name: "hubitat_import_rule", Toolset: SetRules, Title: "Import a Hubitat rule",
		Description: "Create a rule from hubitat_export_rule's answer (exportData), optionally renamed, with deviceMapping " +
			"rewriting every device id it uses (lists and nested actions too); a device missing here is refused by path. " +
			"Or restore a deleted rule: trashId (from hubitat_delete_rule). " + guardNote,
		Confirm: g.confirm(), Conditional: g.grant(), Handler: g.handler,
		Summary: func(a importRuleArgs) string {
			if a.TrashID != "" {
				return "restore rule from trash " + a.TrashID
			}
			return fmt.Sprintf("import rule, %d device mappings", len(a.DeviceMapping))
		},
	})
}

type cloneRuleArgs struct {
	ruleID
	Name string `json:"name,omitempty" jsonschema:"the copy's name (default \"Copy of <name>\")" validate:"omitempty,max=200"`
}

func cloneRule(d Deps) *toolkit.Tool {
	g := ruleGuard[cloneRuleArgs]{d: d, verb: "Copy", prefix: "",
		build: func(ctx context.Context, e *rules.Engine, a cloneRuleArgs) (rules.Rule, error) {
			r, err := e.Get(ctx, a.RuleID)
			if err != nil {
				return rules.Rule{}, ruleError(err, a.RuleID)
			}
			return rules.Clone(r, a.Name), nil
		},
		commit: func(ctx context.Context, e *rules.Engine, a cloneRuleArgs, r rules.Rule) (ruleSaved, []rules.Problem, error) {
			saved, probs, err := e.Create(ctx, r)
			return savedOf(saved, "copied, disabled: change it with hubitat_update_rule, then hubitat_enable_rule"), probs, err
		},
	}
	return toolkit.Define(toolkit.Spec[cloneRuleArgs, ruleSaved]{
		Name: "hubitat_clone_rule", Toolset: SetRules, Title: "Copy a Hubitat rule",
		Description: "Copy a rule under a new id; the copy starts disabled. " + guardNote,
		Confirm:     g.confirm(), Conditional: g.grant(), Handler: g.handler,
	})
}
