package hubitattools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Creating and deleting a hub variable rewrites the hub (its Hub Variables app), so both take
// every admin write gate; the history is a read of the hub's own location events.

type variablesArgs struct {
	Action string `json:"action" validate:"required,oneof=create delete history" example:"history"`
	Name   string `json:"name" validate:"required,max=100"`
	Type   string `json:"type,omitempty" jsonschema:"create" validate:"omitempty,oneof=Number Decimal String Boolean DateTime"`
	Value  string `json:"value,omitempty" jsonschema:"create; DateTime: hub-local 2026-05-06T18:30" validate:"max=1000"`
	toolkit.Page
}

func (a variablesArgs) writes() bool { return a.Action != "history" }

type variablesResult struct {
	Action   string                               `json:"action"`
	Variable *hubitat.Variable                    `json:"variable,omitempty"`
	Previous *hubitat.Variable                    `json:"previous,omitempty"`
	History  *toolkit.List[hubitat.LocationEvent] `json:"history,omitempty"`
	// BrokenRules are hamcp's rules that used a deleted variable.
	BrokenRules []string `json:"brokenRules,omitempty"`
	Done        string   `json:"done,omitempty"`
	Note        string   `json:"note,omitempty"`
}

const historySource = "from the hub's own location events (the hub's Logs page keeps a limited number, newest first); " +
	"changes older than those are gone"

func manageVariables(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[variablesArgs, variablesResult]{
		Name: "hubitat_manage_variables", Toolset: SetAdmin, Title: "Hub variables: create, delete, history",
		Description: "Create a hub variable (Number, Decimal, String, Boolean, DateTime), delete one (names hamcp rules using it), " +
			"or read its change history. Values: hubitat_list_variables, hubitat_set_variable. The user confirms create and " +
			"delete; both need hubitat_create_hub_backup within the hour, hubitat_admin_write and hub_admin; history needs " +
			"hubitat_admin_read.",
		Available:   d.availableAdmin,
		Conditional: adminGrant(d, "action create or delete", variablesArgs.writes),
		Confirm: &toolkit.Confirm[variablesArgs]{When: "action create or delete (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a variablesArgs) (toolkit.Ask, error) {
				if !a.writes() {
					return toolkit.Ask{}, nil
				}
				return d.variableAsk(ctx, a)
			}},
		Destructive: true,
		Summary:     func(a variablesArgs) string { return a.Action + " " + a.Name },
		Handler: func(ctx context.Context, _ *toolkit.Call, a variablesArgs) (variablesResult, error) {
			if !a.writes() {
				return d.variableHistory(ctx, a)
			}
			if err := d.requireAdminWrite(); err != nil {
				return variablesResult{}, err
			}
			if _, err := d.backupGate(ctx, "hubitat_manage_variables"); err != nil {
				return variablesResult{}, err
			}
			if a.Action == "create" {
				return d.createVariable(ctx, a)
			}
			return d.deleteVariable(ctx, a)
		},
	})
}

func (d Deps) variableHistory(ctx context.Context, a variablesArgs) (variablesResult, error) {
	if err := d.requireAdminRead(); err != nil {
		return variablesResult{}, err
	}
	evs, err := d.Hub.VariableHistory(ctx, a.Name)
	if err != nil {
		return variablesResult{}, d.adminFailed(ctx, "Reading the hub's location events", err, false, "")
	}
	l := toolkit.Paginate(evs, a.Page)
	note := historySource
	if len(evs) == 0 {
		note = "no changes of " + a.Name + " " + historySource
	}
	return variablesResult{Action: a.Action, History: &l, Note: note}, nil
}

func (d Deps) variableError(ctx context.Context, what string, err error) error {
	switch {
	case errors.Is(err, hubitat.ErrVariableExists):
		return toolkit.InvalidArg("name", err.Error(), `{"action": "create", "name": "PartyMode", "type": "Boolean", "value": "false"}`)
	case errors.Is(err, hubitat.ErrVariableNotFound):
		return toolkit.NotFound(err.Error(), "hubitat_list_variables lists the hub's variables; never use a similar name")
	}
	return d.adminFailed(ctx, what, err, errors.Is(err, hubitat.ErrNotConfirmed), "hubitat_list_variables shows what the hub has now")
}

// variableAsk checks the call fully before the user is asked, and tells them which rules a
// delete breaks.
func (d Deps) variableAsk(ctx context.Context, a variablesArgs) (toolkit.Ask, error) {
	if err := d.requireAdminWrite(); err != nil {
		return toolkit.Ask{}, err
	}
	if _, err := d.backupGate(ctx, "hubitat_manage_variables"); err != nil {
		return toolkit.Ask{}, err
	}
	if a.Action == "create" {
		if err := hubitat.CheckHubVariable(a.Name, a.Type, a.Value); err != nil {
			field := strings.TrimSuffix(strings.Fields(err.Error())[0], ":")
			return toolkit.Ask{}, toolkit.InvalidArg(field, err.Error(), `{"action": "create", "name": "PartyMode", "type": "Boolean", "value": "false"}`)
		}
		return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: fmt.Sprintf("Create the hub variable %q (%s) with the value %q?", a.Name, a.Type, a.Value),
			Digest: "variable:create:" + a.Name + ":" + a.Type + ":" + a.Value}, nil
	}
	vs, err := d.Hub.Variables(ctx)
	if err != nil {
		return toolkit.Ask{}, d.variableError(ctx, "Reading the hub variables", err)
	}
	i := -1
	for j, v := range vs {
		if v.Name == a.Name {
			i = j
		}
	}
	if i < 0 {
		return toolkit.Ask{}, d.variableError(ctx, "", fmt.Errorf("%q: %w", a.Name, hubitat.ErrVariableNotFound))
	}
	users, err := d.rulesUsing(ctx, a.Name)
	if err != nil {
		return toolkit.Ask{}, err
	}
	q := fmt.Sprintf("Delete the hub variable %q (%s, now %q)?", a.Name, vs[i].Type, vs[i].Value)
	if len(users) > 0 {
		q += " hamcp rules that use it will break: " + strings.Join(users, ", ") + "."
	}
	q += " hamcp cannot see whether the hub's own rules use it."
	return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: q,
		Digest: fmt.Sprintf("variable:delete:%s:%v", a.Name, users)}, nil
}

// rulesUsing names hamcp's rules whose triggers, conditions or actions use the variable.
func (d Deps) rulesUsing(ctx context.Context, name string) ([]string, error) {
	if d.Rules == nil {
		return nil, nil
	}
	rs, err := d.Rules.List(ctx)
	if err != nil {
		return nil, toolkit.Backend("hamcp's rule store", err, false, "try again")
	}
	quoted, _ := json.Marshal(name)
	var out []string
	for _, r := range rs {
		body, _ := json.Marshal([]any{r.Triggers, r.Conditions, r.Actions})
		if strings.Contains(string(body), `"variableName":`+string(quoted)) || strings.Contains(string(body), "%"+name+"%") {
			out = append(out, fmt.Sprintf("%q (%s)", r.Name, r.ID))
		}
	}
	return out, nil
}

func (d Deps) createVariable(ctx context.Context, a variablesArgs) (variablesResult, error) {
	d.Log(ctx, "info", CompHubAdmin, "Creating hub variable "+a.Name)
	v, err := d.Hub.CreateHubVariable(ctx, a.Name, a.Type, a.Value)
	if err != nil {
		return variablesResult{}, d.variableError(ctx, "Creating hub variable "+a.Name, err)
	}
	return variablesResult{Action: a.Action, Variable: &v, Done: "hub variable " + a.Name + " created"}, nil
}

func (d Deps) deleteVariable(ctx context.Context, a variablesArgs) (variablesResult, error) {
	users, err := d.rulesUsing(ctx, a.Name)
	if err != nil {
		return variablesResult{}, err
	}
	d.Log(ctx, "warn", CompHubAdmin, "Deleting hub variable "+a.Name)
	prev, err := d.Hub.DeleteHubVariable(ctx, a.Name)
	if err != nil {
		return variablesResult{}, d.variableError(ctx, "Deleting hub variable "+a.Name, err)
	}
	out := variablesResult{Action: a.Action, Previous: &prev, BrokenRules: users, Done: "hub variable " + a.Name + " deleted",
		Note: "previous is what it was: create can make it again (a connector device it had is gone)"}
	if len(users) > 0 {
		out.Note += "; the hamcp rules in brokenRules now read it as missing: fix them with hubitat_update_rule"
	}
	return out, nil
}
