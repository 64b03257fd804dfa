package hubitattools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetSystem is the toolset of the Hubitat hub-wide tools: hub info, modes, variables, HSM.
const SetSystem = "hubitat_system"

func systemTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{getHubInfo(d), getModes(d), setMode(d), listVariables(d), getVariable(d), setVariable(d),
		getHSMStatus(d), setHSM(d), checkForUpdate(d)}
}

type noArgs struct{}

type hubInfo struct {
	hubitat.HubInfo
	Mode string `json:"mode,omitempty"`
	HSM  string `json:"hsmStatus,omitempty"`
}

func getHubInfo(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, hubInfo]{
		Name: "hubitat_get_hub_info", Toolset: SetSystem, Title: "Hubitat hub info",
		Description: "The Hubitat hub's name, address, model, firmware, uptime, time zone, temperature scale, location " +
			"(latitude/longitude), Zigbee channel and Z-Wave version, and the current mode and HSM status as last seen. " +
			"Not for device states (hubitat_list_devices) or the hub's health (the admin tools).",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (hubInfo, error) {
			info, err := d.Hub.HubInfo(ctx)
			if err != nil {
				return hubInfo{}, hubError(err, false, "")
			}
			return hubInfo{HubInfo: info, Mode: d.Hub.Cache().Mode(), HSM: d.Hub.Cache().HSM()}, nil
		},
	})
}

type modeRow struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type modes struct {
	CurrentMode string    `json:"currentMode"`
	Modes       []modeRow `json:"modes"`
}

func modesOf(ms []hubitat.Mode) modes {
	out := modes{Modes: make([]modeRow, len(ms))}
	for i, m := range ms {
		out.Modes[i] = modeRow{ID: m.ID, Name: m.Name}
		if m.Active {
			out.CurrentMode = m.Name
		}
	}
	return out
}

func getModes(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, modes]{
		Name: "hubitat_get_modes", Toolset: SetSystem, Title: "Hubitat modes",
		Description: "The Hubitat hub's current mode (e.g. Day, Evening, Night, Away) and every mode it has, with ids. " +
			"Call it before hubitat_set_mode to learn the exact names.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (modes, error) {
			ms, err := d.Hub.Modes(ctx)
			if err != nil {
				return modes{}, hubError(err, false, "")
			}
			return modesOf(ms), nil
		},
	})
}

type setModeArgs struct {
	Mode string `json:"mode" jsonschema:"the mode's name as hubitat_get_modes lists it (any case), e.g. \"Night\"" validate:"required,max=100"`
}

type modeChange struct {
	Success      bool   `json:"success"`
	PreviousMode string `json:"previousMode"`
	NewMode      string `json:"newMode"`
}

// modeHit is what a mode change may do: the Safety Monitor can arm or disarm with the mode (its
// "arm/disarm by mode" setting, which Maker API does not show), so setting the mode is an
// alarm-class action, whether the model asks for it directly or writes a rule that does.
func modeHit(mode string) sensitive.Hit {
	return sensitive.Hit{Class: sensitive.Alarm, What: "set the mode to " + mode + " (the Safety Monitor may arm or disarm with it)"}
}

func setMode(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[setModeArgs, modeChange]{
		Name: "hubitat_set_mode", Toolset: SetSystem, Title: "Set the Hubitat mode",
		Description: "Set the Hubitat hub's mode by name (case-insensitive), e.g. Night or Away; answers the previous and the " +
			"new mode. Modes drive the hub's own automations and may arm or disarm the Safety Monitor, so the user confirms it; " +
			"set one only when they ask. A name the hub does not have is refused with the list: do not pick the nearest one.",
		Idempotent: true,
		Confirm: &toolkit.Confirm[setModeArgs]{
			When: "always (`alarm`: the Safety Monitor may arm or disarm with the mode)",
			Check: func(ctx context.Context, c *toolkit.Call, a setModeArgs) (toolkit.Ask, error) {
				// The question names the hub's own mode, never the model's text: a name the hub
				// does not have asks nothing and is refused by the handler.
				ms, err := d.Hub.Modes(ctx)
				if err != nil {
					return toolkit.Ask{}, hubError(err, false, "")
				}
				i := slices.IndexFunc(ms, func(m hubitat.Mode) bool { return strings.EqualFold(m.Name, strings.TrimSpace(a.Mode)) })
				if i < 0 {
					return toolkit.Ask{}, nil
				}
				name := ms[i].Name
				return askFor([]sensitive.Hit{modeHit(name)}, fmt.Sprintf("Set the Hubitat mode to %s? The Safety Monitor may arm or disarm with it.", name)), nil
			},
		},
		Handler: func(ctx context.Context, c *toolkit.Call, a setModeArgs) (modeChange, error) {
			ms, err := d.Hub.Modes(ctx)
			if err != nil {
				return modeChange{}, hubError(err, false, "")
			}
			i := slices.IndexFunc(ms, func(m hubitat.Mode) bool { return strings.EqualFold(m.Name, strings.TrimSpace(a.Mode)) })
			if i < 0 {
				names := make([]string, len(ms))
				for j, m := range ms {
					names[j] = m.Name
				}
				return modeChange{}, toolkit.InvalidArg("mode", fmt.Sprintf("the hub has no mode %q; it has: %s", a.Mode, strings.Join(names, ", ")), "")
			}
			prev, now, err := d.Hub.SetMode(ctx, ms[i].Name)
			if err != nil {
				return modeChange{}, hubError(err, true, "read the mode with hubitat_get_modes before trying again")
			}
			return modeChange{Success: true, PreviousMode: prev.Name, NewMode: now.Name}, nil
		},
	})
}

// Where a variable lives: the hub's own (connector) variables, or the rule engine's store in hamcp.
const (
	sourceHub        = "hub"
	sourceRuleEngine = "rule_engine"
)

type variableRow struct {
	Name   string `json:"name"`
	Value  any    `json:"value"`
	Type   string `json:"type,omitempty"`
	Source string `json:"source"`
}

type variables struct {
	Count     int           `json:"count"`
	Variables []variableRow `json:"variables"`
}

func hubVariableRow(v hubitat.Variable) variableRow {
	return variableRow{Name: v.Name, Value: v.Value, Type: v.Type, Source: sourceHub}
}

func ruleVariableRow(v hubstore.RuleVariable) variableRow {
	return variableRow{Name: v.Name, Value: v.Value, Type: "string", Source: sourceRuleEngine}
}

func listVariables(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, variables]{
		Name: "hubitat_list_variables", Toolset: SetSystem, Title: "Hubitat variables",
		Description: "Every variable: the hub variables Maker API shares (source \"hub\", with their type) and those of " +
			"hamcp's Hubitat rule engine (source \"rule_engine\"). For one value use hubitat_get_variable.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (variables, error) {
			hv, err := d.Hub.Variables(ctx)
			if err != nil {
				return variables{}, hubError(err, false, "")
			}
			rv, err := d.Store.RuleVariables(ctx)
			if err != nil {
				return variables{}, err
			}
			out := variables{Variables: make([]variableRow, 0, len(hv)+len(rv))}
			for _, v := range hv {
				out.Variables = append(out.Variables, hubVariableRow(v))
			}
			for _, v := range rv {
				out.Variables = append(out.Variables, ruleVariableRow(v))
			}
			out.Count = len(out.Variables)
			return out, nil
		},
	})
}

type variableArgs struct {
	Name string `json:"name" jsonschema:"the variable's name, exactly (case-sensitive)" validate:"required,max=100"`
}

// findHubVariable looks a name up among the hub variables Maker API shares.
func (d Deps) findHubVariable(ctx context.Context, name string) (hubitat.Variable, bool, error) {
	vs, err := d.Hub.Variables(ctx)
	if err != nil {
		return hubitat.Variable{}, false, hubError(err, false, "")
	}
	i := slices.IndexFunc(vs, func(v hubitat.Variable) bool { return v.Name == name })
	if i < 0 {
		return hubitat.Variable{}, false, nil
	}
	return vs[i], true, nil
}

func getVariable(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[variableArgs, variableRow]{
		Name: "hubitat_get_variable", Toolset: SetSystem, Title: "Get a Hubitat variable",
		Description: "One variable's value: a hub variable Maker API shares first, else one of hamcp's Hubitat rule engine. " +
			"Names are exact: hubitat_list_variables lists them.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a variableArgs) (variableRow, error) {
			hv, ok, err := d.findHubVariable(ctx, a.Name)
			if err != nil {
				return variableRow{}, err
			}
			if ok {
				return hubVariableRow(hv), nil
			}
			rv, ok, err := d.Store.RuleVariable(ctx, a.Name)
			if err != nil {
				return variableRow{}, err
			}
			if !ok {
				return variableRow{}, toolkit.NotFound(fmt.Sprintf("Variable %q not found", a.Name), "hubitat_list_variables lists the variables")
			}
			return ruleVariableRow(rv), nil
		},
	})
}

type setVariableArgs struct {
	Name  string `json:"name" jsonschema:"the variable's name, exactly (case-sensitive)" validate:"required,max=100,excludesall=/"`
	Value string `json:"value" jsonschema:"the new value, as text (a hub variable of type integer, decimal or boolean must get one)" validate:"max=4000"`
}

type variableSet struct {
	Success bool   `json:"success"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	Source  string `json:"source"`
}

func setVariable(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[setVariableArgs, variableSet]{
		Name: "hubitat_set_variable", Toolset: SetSystem, Title: "Set a Hubitat variable",
		Description: "Set a variable: a hub variable Maker API shares when there is one of that name (its type must fit), " +
			"else a variable of hamcp's Hubitat rule engine, created when new. Hub variables drive the hub's own rules: " +
			"change one only when the user asks.",
		Idempotent: true,
		Summary:    func(a setVariableArgs) string { return "name=" + a.Name },
		Handler: func(ctx context.Context, c *toolkit.Call, a setVariableArgs) (variableSet, error) {
			_, onHub, err := d.findHubVariable(ctx, a.Name)
			if err != nil {
				return variableSet{}, err
			}
			if onHub {
				if err := d.Hub.SetVariable(ctx, a.Name, a.Value); err != nil {
					var api *hubitat.APIError
					if errors.As(err, &api) && api.Status == 400 {
						return variableSet{}, toolkit.InvalidArg("value", "the hub refused it: "+api.Message, "")
					}
					return variableSet{}, hubError(err, true, "read it with hubitat_get_variable before trying again")
				}
				return variableSet{Success: true, Name: a.Name, Value: a.Value, Source: sourceHub}, nil
			}
			if err := d.Store.SetRuleVariable(ctx, a.Name, a.Value, d.now()); err != nil {
				if errors.Is(err, hubstore.ErrTooManyRuleVariables) {
					return variableSet{}, &toolkit.Error{Code: "limit_reached", Field: "name", Message: err.Error(),
						Hint: "reuse an existing variable (hubitat_list_variables)"}
				}
				return variableSet{}, err
			}
			return variableSet{Success: true, Name: a.Name, Value: a.Value, Source: sourceRuleEngine}, nil
		},
	})
}

// hsmArmModes are the values hubitat_set_hsm takes, as upstream.
var hsmArmModes = []string{"armAway", "armHome", "armNight", "disarm"}

type hsmStatus struct {
	HSMStatus string   `json:"hsmStatus"`
	ArmModes  []string `json:"armModes"`
}

func getHSMStatus(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, hsmStatus]{
		Name: "hubitat_get_hsm_status", Toolset: SetSystem, Title: "Hubitat Safety Monitor status",
		Description: "The Hubitat Safety Monitor (the hub's alarm) status, e.g. disarmed, armedAway, armingHome, and the " +
			"modes hubitat_set_hsm accepts.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (hsmStatus, error) {
			st, err := d.Hub.HSM(ctx)
			if err != nil {
				return hsmStatus{}, hubError(err, false, "")
			}
			return hsmStatus{HSMStatus: st, ArmModes: hsmArmModes}, nil
		},
	})
}

type setHSMArgs struct {
	Mode string `json:"mode" jsonschema:"what to do with the alarm" validate:"required,oneof=armAway armHome armNight disarm"`
}

type hsmChange struct {
	Success   bool   `json:"success"`
	Mode      string `json:"mode"`
	HSMStatus string `json:"hsmStatus"`
}

// hsmServices map each HSM value to the alarm panel service it amounts to, so that the one
// policy table decides what the user confirms (disarming, as for any alarm panel).
var hsmServices = map[string]string{"armAway": "alarm_arm_away", "armHome": "alarm_arm_home", "armNight": "alarm_arm_night", "disarm": "alarm_disarm"}

func setHSM(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[setHSMArgs, hsmChange]{
		Name: "hubitat_set_hsm", Toolset: SetSystem, Title: "Arm or disarm the Hubitat Safety Monitor",
		Description: "Arm (armAway, armHome, armNight) or disarm the Hubitat Safety Monitor, the hub's alarm. Disarming " +
			"needs the user's own confirmation. Arming may pass through an exit delay (status arming…): read it back with " +
			"hubitat_get_hsm_status. Only when the user asks.",
		Confirm: &toolkit.Confirm[setHSMArgs]{
			When: "mode disarm",
			Check: func(ctx context.Context, c *toolkit.Call, a setHSMArgs) (toolkit.Ask, error) {
				ent := sensitive.Entity{ID: "alarm_control_panel.hubitat_hsm", Name: "Hubitat Safety Monitor"}
				hits := sensitive.Service("alarm_control_panel", hsmServices[a.Mode], []sensitive.Entity{ent}, true)
				return askFor(hits, fmt.Sprintf("Set the Hubitat Safety Monitor to %s?", a.Mode)), nil
			},
		},
		Handler: func(ctx context.Context, c *toolkit.Call, a setHSMArgs) (hsmChange, error) {
			if err := d.Hub.SetHSM(ctx, a.Mode); err != nil {
				return hsmChange{}, hubError(err, true, "read the status with hubitat_get_hsm_status before trying again")
			}
			st, err := d.Hub.HSM(ctx)
			if err != nil {
				st = "" // it was set; only reading it back failed
			}
			return hsmChange{Success: true, Mode: a.Mode, HSMStatus: st}, nil
		},
	})
}

type updateInfo struct {
	CurrentVersion  string `json:"currentVersion"`
	LatestVersion   string `json:"latestVersion,omitempty"`
	UpdateAvailable bool   `json:"updateAvailable"`
	Source          string `json:"source"`
	Note            string `json:"note,omitempty"`
}

func checkForUpdate(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, updateInfo]{
		Name: "hubitat_check_for_update", Toolset: SetSystem, Title: "Check for a hamcp update",
		Description: "hamcp's version (it serves these Hubitat tools) and the latest version Home Assistant's Supervisor knows " +
			"of, without going to the internet. Updating is the user's step, in Home Assistant's add-on page.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (updateInfo, error) {
			out := updateInfo{CurrentVersion: d.Version, Source: "supervisor"}
			if d.Supervisor == nil {
				out.Source = "none"
				out.Note = "hamcp is not running as a Home Assistant add-on, so nothing here knows the latest version"
				return out, nil
			}
			info, err := d.Supervisor.AddonInfo(ctx, "self")
			if err != nil {
				return updateInfo{}, toolkit.Unavailable("Home Assistant Supervisor", err, "try again later")
			}
			out.LatestVersion, out.UpdateAvailable = info.VersionLatest, info.UpdateAvailable
			if info.Version != "" {
				out.CurrentVersion = info.Version
			}
			if out.UpdateAvailable {
				out.Note = "update hamcp from Home Assistant's add-on page (Settings → Add-ons → hamcp)"
			}
			return out, nil
		},
	})
}
