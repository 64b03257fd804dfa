package hubitattools

import (
	"context"
	"errors"
	"fmt"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

type nativeRulesArgs struct {
	Action string `json:"action" validate:"required,oneof=list run_actions pause resume set_private_boolean" example:"list"`
	RuleID int64  `json:"ruleId,omitempty" jsonschema:"id from list" validate:"omitempty,min=1"`
	Engine string `json:"engine,omitempty" jsonschema:"list: one engine's rules"`
	Value  *bool  `json:"value,omitempty" jsonschema:"set_private_boolean only"`
	toolkit.Page
}

func (a nativeRulesArgs) writes() bool { return a.Action != "list" }

// nativeRule is one native rule as the list shows it.
type nativeRule struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Engine   string `json:"engine"`
	Type     string `json:"type"`
	Status   string `json:"status"` // active, paused, stopped, disabled
	ParentID int64  `json:"parentId"`
}

type nativeRulesResult struct {
	Action string                    `json:"action"`
	List   *toolkit.List[nativeRule] `json:"list,omitempty"`
	Rule   *nativeRule               `json:"rule,omitempty"`
	Done   string                    `json:"done,omitempty"`
	Note   string                    `json:"note,omitempty"`
}

// opaqueRule is why every run, pause and resume is asked: the rule's actions live in its
// engine's own settings, which hamcp does not interpret.
const opaqueRule = "hamcp cannot see inside a native rule: its actions may unlock a door, open a garage or change the alarm."

// noRuleEndpoint is why set_private_boolean is refused without hubitat_rm_endpoint.
const noRuleEndpoint = "Rule Machine takes a private boolean from off the hub only through a rule's Local End Point, and the " +
	"user has not given hamcp one (add-on option hubitat_rm_endpoint; DOCS: Rule Machine's private booleans). Nothing was " +
	"done. Tell the user, or use a hub variable in the rule instead (hubitat_set_variable)."

func manageNativeRules(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[nativeRulesArgs, nativeRulesResult]{
		Name: "hubitat_manage_native_rules", Toolset: SetAdmin, Title: "Hub rules: run, pause, private boolean",
		Description: "The hub's own rules (Rule Machine, Basic Rules, Room Lighting, Simple Automation, Visual): list, " +
			"run_actions (no conditions), pause, resume, set_private_boolean (Rule Machine; needs hubitat_rm_endpoint). " +
			"The user confirms each change. Not hamcp's rules (hubitat_list_rules), apps (hubitat_manage_apps). " +
			"Needs hubitat_admin_read; to change, hubitat_admin_write + hub_admin.",
		Available:   d.availableAdmin,
		Conditional: adminGrant(d, "action run_actions, pause, resume or set_private_boolean", nativeRulesArgs.writes),
		Confirm: &toolkit.Confirm[nativeRulesArgs]{When: "action run_actions, pause, resume or set_private_boolean (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a nativeRulesArgs) (toolkit.Ask, error) {
				if !a.writes() {
					return toolkit.Ask{}, nil
				}
				return d.ruleAsk(ctx, a)
			}},
		Summary: func(a nativeRulesArgs) string {
			if a.Value != nil {
				return fmt.Sprintf("%s rule %d to %t", a.Action, a.RuleID, *a.Value)
			}
			if a.RuleID != 0 {
				return fmt.Sprintf("%s rule %d", a.Action, a.RuleID)
			}
			return a.Action
		},
		Handler: func(ctx context.Context, _ *toolkit.Call, a nativeRulesArgs) (nativeRulesResult, error) {
			if a.Action == "list" {
				return d.listNativeRules(ctx, a)
			}
			return d.driveRule(ctx, a)
		},
	})
}

func ruleOf(x hubitat.InstalledApp) nativeRule {
	status := "active"
	switch {
	case x.Disabled:
		status = "disabled"
	case x.Stopped:
		status = "stopped"
	case x.Paused:
		status = "paused"
	}
	return nativeRule{ID: x.ID, Name: x.Name, Engine: hubitat.RuleEngine(x), Type: x.Type, Status: status, ParentID: x.ParentID}
}

func (d Deps) listNativeRules(ctx context.Context, a nativeRulesArgs) (nativeRulesResult, error) {
	if err := d.requireAdminRead(); err != nil {
		return nativeRulesResult{}, err
	}
	apps, err := d.Hub.InstalledApps(ctx)
	if err != nil {
		return nativeRulesResult{}, d.adminFailed(ctx, "Listing native rules", err, false, "")
	}
	var rules []nativeRule
	for _, x := range apps {
		if r := ruleOf(x); r.Engine != "" && (a.Engine == "" || a.Engine == r.Engine) {
			rules = append(rules, r)
		}
	}
	l := toolkit.Paginate(rules, a.Page)
	res := nativeRulesResult{Action: a.Action, List: &l}
	if !d.Hub.HasRuleEndpoint() {
		res.Note = "set_private_boolean is not available: the user has not set hubitat_rm_endpoint"
	}
	return res, nil
}

// needArgs checks what a changing action needs before anything is read or asked: the rule, the
// value and, for a private boolean, the endpoint the user gave.
func (d Deps) needArgs(a nativeRulesArgs) error {
	if a.RuleID <= 0 {
		return toolkit.InvalidArg("ruleId", "is required for action "+a.Action+": the rule's id from action list", `{"action": "`+a.Action+`", "ruleId": 12}`)
	}
	if a.Action != "set_private_boolean" {
		if a.Value != nil {
			return toolkit.InvalidArg("value", "is only for action set_private_boolean", `{"action": "`+a.Action+`", "ruleId": 12}`)
		}
		return nil
	}
	if a.Value == nil {
		return toolkit.InvalidArg("value", "is required for action set_private_boolean: true or false", `{"action": "set_private_boolean", "ruleId": 12, "value": false}`)
	}
	if !d.Hub.HasRuleEndpoint() {
		return &toolkit.Error{Code: "not_configured", Message: "set_private_boolean needs the add-on option hubitat_rm_endpoint", Hint: noRuleEndpoint}
	}
	return nil
}

func (d Deps) ruleAsk(ctx context.Context, a nativeRulesArgs) (toolkit.Ask, error) {
	if err := d.requireAdminWrite(); err != nil {
		return toolkit.Ask{}, err
	}
	if err := d.needArgs(a); err != nil {
		return toolkit.Ask{}, err
	}
	x, err := d.Hub.NativeRule(ctx, a.RuleID)
	if err != nil {
		return toolkit.Ask{}, d.appError(ctx, "Reading rule "+fmt.Sprint(a.RuleID), err, false)
	}
	r := ruleOf(x)
	what := fmt.Sprintf("the Hubitat rule %q (%s, id %d)", r.Name, r.Engine, r.ID)
	var q string
	switch a.Action {
	case "run_actions":
		q = "Run the actions of " + what + " now? " + opaqueRule
	case "pause":
		q = "Pause " + what + "? It stops reacting until resumed; if it locks doors or arms the alarm, that stops too."
	case "set_private_boolean":
		if r.Engine != "Rule Machine" {
			return toolkit.Ask{}, notRuleMachine(r)
		}
		q = fmt.Sprintf("Set the private boolean of %s to %t? Rules that test it will act differently from now on. %s", what, *a.Value, opaqueRule)
	default:
		q = "Resume " + what + "? It reacts to its triggers again. " + opaqueRule
	}
	digest := fmt.Sprintf("rule:%d:%s:%s:%s", r.ID, r.Name, r.Type, r.Status)
	if a.Value != nil {
		digest += fmt.Sprintf(":pb=%t", *a.Value)
	}
	return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: q, Digest: digest}, nil
}

// notRuleMachine refuses a private boolean for a rule of another engine: only Rule Machine has them.
func notRuleMachine(r nativeRule) error {
	return &toolkit.Error{Code: "refused", Message: fmt.Sprintf("rule %d (%s) is a %s rule: only Rule Machine rules have a private boolean", r.ID, r.Name, r.Engine),
		Hint: "nothing was done; list the Rule Machine rules with action list, engine \"Rule Machine\""}
}

func (d Deps) driveRule(ctx context.Context, a nativeRulesArgs) (nativeRulesResult, error) {
	if err := d.requireAdminWrite(); err != nil {
		return nativeRulesResult{}, err
	}
	if err := d.needArgs(a); err != nil {
		return nativeRulesResult{}, err
	}
	what := fmt.Sprintf("%s rule %d", a.Action, a.RuleID)
	d.Log(ctx, "info", CompHubAdmin, what)
	if a.Action == "set_private_boolean" {
		return d.setPrivateBoolean(ctx, a, what)
	}
	if a.Action == "run_actions" {
		x, err := d.Hub.NativeRule(ctx, a.RuleID)
		if err != nil {
			return nativeRulesResult{}, d.appError(ctx, what, err, false)
		}
		if x.Disabled {
			return nativeRulesResult{}, &toolkit.Error{Code: "refused", Message: fmt.Sprintf("rule %d (%s) is disabled: its actions do not run", x.ID, x.Name),
				Hint: "nothing was done; the user can enable it (hubitat_manage_apps action enable) first"}
		}
		if err := d.Hub.RunRuleActions(ctx, a.RuleID); err != nil {
			return nativeRulesResult{}, d.appError(ctx, what, err, false)
		}
		r := ruleOf(x)
		return nativeRulesResult{Action: a.Action, Rule: &r, Done: "the rule's actions were started on the hub",
			Note: "the hub runs them in the background; read the devices to see the outcome"}, nil
	}
	clicked, err := d.Hub.SetRulePaused(ctx, a.RuleID, a.Action == "pause")
	if err != nil {
		return nativeRulesResult{}, d.appError(ctx, what, err, clicked || errors.Is(err, hubitat.ErrNotConfirmed))
	}
	x, err := d.Hub.NativeRule(ctx, a.RuleID)
	if err != nil {
		return nativeRulesResult{}, d.appError(ctx, what, err, clicked)
	}
	r := ruleOf(x)
	done := "rule " + a.Action + "d"
	if !clicked {
		done = "nothing to do: the rule was already " + a.Action + "d"
	}
	return nativeRulesResult{Action: a.Action, Rule: &r, Done: done}, nil
}

func (d Deps) setPrivateBoolean(ctx context.Context, a nativeRulesArgs, what string) (nativeRulesResult, error) {
	x, err := d.Hub.NativeRule(ctx, a.RuleID)
	if err != nil {
		return nativeRulesResult{}, d.appError(ctx, what, err, false)
	}
	r := ruleOf(x)
	if r.Engine != "Rule Machine" {
		return nativeRulesResult{}, notRuleMachine(r)
	}
	if err := d.Hub.SetRuleBoolean(ctx, a.RuleID, *a.Value); err != nil {
		if errors.Is(err, hubitat.ErrRuleEndpointRefused) {
			return nativeRulesResult{}, &toolkit.Error{Code: "not_configured", Message: err.Error(),
				Hint: "nothing was done; tell the user hubitat_rm_endpoint needs the URL again"}
		}
		// An answer from the hub changed nothing; a request lost on the way may have arrived.
		var apiErr *hubitat.APIError
		return nativeRulesResult{}, d.appError(ctx, what, err, !errors.As(err, &apiErr))
	}
	return nativeRulesResult{Action: a.Action, Rule: &r, Done: fmt.Sprintf("private boolean set to %t", *a.Value),
		Note: "Rule Machine accepted the change; it does not report a private boolean back, so hamcp cannot read it. " +
			"Stopping and starting the rule sets it to true again."}, nil
}
