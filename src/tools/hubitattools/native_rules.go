package hubitattools

import (
	"context"
	"errors"
	"fmt"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

type nativeRulesArgs struct {
	Action string `json:"action" validate:"required,oneof=list run_actions pause resume" example:"list"`
	RuleID int64  `json:"ruleId,omitempty" jsonschema:"run_actions, pause, resume: id from list" validate:"omitempty,min=1"`
	Engine string `json:"engine,omitempty" jsonschema:"list: one engine, e.g. Rule Machine"`
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

// noPrivateBoolean is why the tool has no private-boolean action.
const noPrivateBoolean = "A rule's private boolean cannot be set from off the hub: Rule Machine takes it only from RMUtils " +
	"(code on the hub) or another rule's action. Use a hub variable in the rule instead (hubitat_set_variable)."

func manageNativeRules(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[nativeRulesArgs, nativeRulesResult]{
		Name: "hubitat_manage_native_rules", Toolset: SetAdmin, Title: "Hub rules: run, pause, resume",
		Description: "The hub's own rules (Rule Machine, Basic Rules, Room Lighting, Simple Automation, Visual): list with " +
			"status, run_actions (its actions now, no triggers or conditions), pause, resume (Rule Machine only). The user " +
			"confirms each run, pause and resume: hamcp cannot see inside them. Not for hamcp's rules (hubitat_list_rules) or " +
			"disabling apps (hubitat_manage_apps). Options: hubitat_admin_read to list; hubitat_admin_write + hub_admin.",
		Available:   d.availableAdmin,
		Conditional: adminGrant(d, "action run_actions, pause or resume", nativeRulesArgs.writes),
		Confirm: &toolkit.Confirm[nativeRulesArgs]{When: "action run_actions, pause or resume (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a nativeRulesArgs) (toolkit.Ask, error) {
				if !a.writes() {
					return toolkit.Ask{}, nil
				}
				return d.ruleAsk(ctx, a)
			}},
		Summary: func(a nativeRulesArgs) string {
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
	return nativeRulesResult{Action: a.Action, List: &l, Note: noPrivateBoolean}, nil
}

func needRuleID(a nativeRulesArgs) error {
	if a.RuleID <= 0 {
		return toolkit.InvalidArg("ruleId", "is required for action "+a.Action+": the rule's id from action list", `{"action": "`+a.Action+`", "ruleId": 12}`)
	}
	return nil
}

func (d Deps) ruleAsk(ctx context.Context, a nativeRulesArgs) (toolkit.Ask, error) {
	if err := d.requireAdminWrite(); err != nil {
		return toolkit.Ask{}, err
	}
	if err := needRuleID(a); err != nil {
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
	default:
		q = "Resume " + what + "? It reacts to its triggers again. " + opaqueRule
	}
	return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: q,
		Digest: fmt.Sprintf("rule:%d:%s:%s:%s", r.ID, r.Name, r.Type, r.Status)}, nil
}

func (d Deps) driveRule(ctx context.Context, a nativeRulesArgs) (nativeRulesResult, error) {
	if err := d.requireAdminWrite(); err != nil {
		return nativeRulesResult{}, err
	}
	if err := needRuleID(a); err != nil {
		return nativeRulesResult{}, err
	}
	what := fmt.Sprintf("%s rule %d", a.Action, a.RuleID)
	d.Log(ctx, "info", CompHubAdmin, what)
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
