package hatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

type manageIntegrationsArgs struct {
	Action    string         `json:"action" validate:"required,oneof=list reload enable disable delete flow_start flow_step flow_abort options_start"`
	EntryID   string         `json:"entry_id,omitempty"`
	Domain    string         `json:"domain,omitempty" validate:"omitempty,domain"`
	FlowID    string         `json:"flow_id,omitempty"`
	UserInput map[string]any `json:"user_input,omitempty" jsonschema:"the form's fields"`
	State     string         `json:"state,omitempty" jsonschema:"list: a state, failing, disabled"`
	toolkit.Page
}

// entryStates are the states config_entries/get reports, failing for any error state and
// disabled for entries the user (or an integration) disabled.
var entryStates = []string{"loaded", "setup_error", "setup_retry", "not_loaded", "failed_unload", "migration_error", "setup_in_progress", "failing", "disabled"}

// integrationEntry is one config entry as the list shows it.
type integrationEntry struct {
	integrationItem
	Options bool `json:"supports_options,omitempty"`
}

type integrationsResult struct {
	Action         string                          `json:"action"`
	List           *toolkit.List[integrationEntry] `json:"list,omitempty"`
	Entry          *integrationItem                `json:"entry,omitempty"`
	Flow           *flowView                       `json:"flow,omitempty"`
	RequireRestart bool                            `json:"require_restart,omitempty"`
	Done           string                          `json:"done,omitempty"`
	Note           string                          `json:"note,omitempty"`
}

// flowView is a flow's step in the few words a model needs: the form's fields, the menu, or how
// it ended.
type flowView struct {
	FlowID       string           `json:"flow_id,omitempty"`
	Type         string           `json:"type"`
	Handler      string           `json:"handler,omitempty"`
	Step         string           `json:"step,omitempty"`
	Fields       []flowField      `json:"fields,omitempty"`
	Errors       map[string]any   `json:"errors,omitempty"`
	Placeholders map[string]any   `json:"placeholders,omitempty"`
	Menu         []string         `json:"menu,omitempty"`
	Reason       string           `json:"reason,omitempty"`
	Title        string           `json:"title,omitempty"`
	Entry        *integrationItem `json:"entry,omitempty"`
	URL          string           `json:"url,omitempty"`
	Next         string           `json:"next"`
}

// flowField is one field of a form.
type flowField struct {
	Name     string   `json:"name"`
	Type     string   `json:"type,omitempty"`
	Required bool     `json:"required,omitempty"`
	Default  any      `json:"default,omitempty"`
	Options  []string `json:"options,omitempty"`
	Secret   bool     `json:"secret,omitempty"`
}

// entryIDRe is a config entry id (a ULID, or a uuid hex on older installs) or a flow id: one path
// segment, nothing that could steer the request.
var entryIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// integrationTools are the integration tools.
func integrationTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{manageIntegrations(d)} }

// manageIntegrations is ha_manage_integrations.
func manageIntegrations(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageIntegrationsArgs, integrationsResult]{
		Name: "ha_manage_integrations", Toolset: SetMonitoring, Title: "Manage integrations",
		Confirm: integrationConfirm(d),
		Description: "Integrations (config entries): list, reload, enable, disable, delete (entry_id, or domain if it has one). " +
			"Add one: flow_start domain, then flow_step flow_id user_input until create_entry or abort; options_start entry_id edits its options. " +
			"The user confirms delete and disabling locks, alarms, garage doors.",
		Destructive: true,
		Summary:     integrationSummary,
		Handler: func(ctx context.Context, c *toolkit.Call, a manageIntegrationsArgs) (integrationsResult, error) {
			return d.manageIntegration(ctx, a)
		},
	})
}

// integrationSummary names what a call acts on and which fields it filled in, never their values:
// a flow's input can hold passwords.
func integrationSummary(a manageIntegrationsArgs) string {
	parts := []string{a.Action}
	for _, s := range []string{a.EntryID, a.Domain, a.FlowID} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(a.UserInput) > 0 {
		keys := make([]string, 0, len(a.UserInput))
		for k := range a.UserInput {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts = append(parts, "fields="+strings.Join(keys, ","))
	}
	return strings.Join(parts, " ")
}

func (d Deps) manageIntegration(ctx context.Context, a manageIntegrationsArgs) (integrationsResult, error) {
	switch a.Action {
	case "list":
		if a.State != "" && !slices.Contains(entryStates, a.State) {
			return integrationsResult{}, toolkit.InvalidArg("state", "must be one of "+strings.Join(entryStates, ", "), `{"action": "list", "state": "failing"}`)
		}
		return listEntries(ctx, d.HA, a)
	case "flow_start":
		if a.Domain == "" {
			return integrationsResult{}, toolkit.InvalidArg("domain", "is required for flow_start: the integration to set up", `{"action": "flow_start", "domain": "hue"}`)
		}
		res, err := d.HA.StartFlow(ctx, a.Domain, false)
		if isNotFound(err) {
			return integrationsResult{}, toolkit.NotFound("Home Assistant has no config flow for "+a.Domain, "check the integration's name (its domain, e.g. hue, shelly, met); YAML-only integrations are set up in configuration.yaml")
		}
		return flowResult(a.Action, res, err)
	case "flow_step", "flow_abort":
		return d.stepFlow(ctx, a)
	}
	entry, err := findEntry(ctx, d.HA, a)
	if err != nil {
		return integrationsResult{}, err
	}
	return d.entryAction(ctx, a.Action, entry)
}

// listEntries is action list: the entries, filtered, domain by domain.
func listEntries(ctx context.Context, ha *homeassistant.Client, a manageIntegrationsArgs) (integrationsResult, error) {
	entries, err := ha.ConfigEntryDetails(ctx, a.Domain)
	if err != nil {
		return integrationsResult{}, haWSError(err, "the integrations list", false, "")
	}
	var picked []integrationEntry
	for _, e := range entries {
		switch a.State {
		case "", e.State:
		case "failing":
			if !failingStates[e.State] {
				continue
			}
		case "disabled":
			if e.DisabledBy == nil {
				continue
			}
		default:
			continue
		}
		picked = append(picked, integrationEntry{integrationItem: compactEntry(e.ConfigEntry), Options: e.SupportsOptions})
	}
	sort.SliceStable(picked, func(i, j int) bool { return picked[i].Domain < picked[j].Domain })
	list := toolkit.Paginate(picked, a.Page)
	return integrationsResult{Action: "list", List: &list}, nil
}

// compactEntry drops what the model can take as said: entries the user set up.
func compactEntry(e homeassistant.ConfigEntry) integrationItem {
	it := integrationItem(e)
	if it.Source == "user" {
		it.Source = ""
	}
	return it
}

// findEntry resolves entry_id, or a domain with exactly one entry.
func findEntry(ctx context.Context, ha *homeassistant.Client, a manageIntegrationsArgs) (homeassistant.EntryDetail, error) {
	example := `{"action": "` + a.Action + `", "entry_id": "01J8Q3ZQ7H5V0T8N2K4M6P8R0S"}`
	if a.EntryID == "" && a.Domain == "" {
		return homeassistant.EntryDetail{}, toolkit.InvalidArg("entry_id", "is required for "+a.Action+" (or domain, when it has one entry); the list action shows the ids", example)
	}
	if a.EntryID != "" && !entryIDRe.MatchString(a.EntryID) {
		return homeassistant.EntryDetail{}, toolkit.InvalidArg("entry_id", "must be a config entry id as the list action shows it", example)
	}
	entries, err := ha.ConfigEntryDetails(ctx, a.Domain)
	if err != nil {
		return homeassistant.EntryDetail{}, haWSError(err, "the integrations list", false, "")
	}
	var match []homeassistant.EntryDetail
	for _, e := range entries {
		if a.EntryID == "" || e.EntryID == a.EntryID {
			match = append(match, e)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) == 0 && a.EntryID != "":
		return homeassistant.EntryDetail{}, toolkit.NotFound("no config entry "+a.EntryID+domainNote(a.Domain), `{"action": "list"} shows the entries`)
	case len(match) == 0:
		return homeassistant.EntryDetail{}, toolkit.NotFound("no integration "+a.Domain+" is set up", `{"action": "flow_start", "domain": "`+a.Domain+`"} sets one up`)
	}
	ids := make([]string, len(match))
	for i, e := range match {
		ids[i] = e.EntryID + " (" + e.Title + ")"
	}
	return homeassistant.EntryDetail{}, toolkit.InvalidArg("entry_id", a.Domain+" has "+fmt.Sprint(len(match))+" entries: give one of "+strings.Join(ids, ", "), example)
}

func domainNote(domain string) string {
	if domain == "" {
		return ""
	}
	return " of " + domain
}

// entryAction runs reload, enable, disable, delete or options_start on one entry.
func (d Deps) entryAction(ctx context.Context, action string, e homeassistant.EntryDetail) (integrationsResult, error) {
	item := compactEntry(e.ConfigEntry)
	out := integrationsResult{Action: action, Entry: &item}
	var err error
	switch action {
	case "options_start":
		if !e.SupportsOptions {
			return integrationsResult{}, &toolkit.Error{Code: "not_supported", Field: "entry_id", Message: e.Domain + " (" + e.Title + ") has no options to change",
				Hint: "reconfigure it by deleting it and setting it up again, or look for its settings on its devices and entities"}
		}
		res, err := d.HA.StartFlow(ctx, e.EntryID, true)
		return flowResult(action, res, err)
	case "reload":
		out.RequireRestart, err = d.HA.ReloadConfigEntry(ctx, e.EntryID)
		out.Done = "reloaded " + e.Domain + " (" + e.Title + ")"
	case "enable", "disable":
		out.RequireRestart, err = d.HA.SetConfigEntryDisabled(ctx, e.EntryID, action == "disable")
		out.Done = action + "d " + e.Domain + " (" + e.Title + ")"
		if action == "disable" {
			out.Note = "its devices and entities are disabled until it is enabled again"
		}
	case "delete":
		out.RequireRestart, err = d.HA.DeleteConfigEntry(ctx, e.EntryID)
		out.Done = "deleted " + e.Domain + " (" + e.Title + ") with its devices and entities"
		out.Note = "hamcp cannot restore it: to use it again set it up with {\"action\": \"flow_start\", \"domain\": \"" + e.Domain + "\"}"
	}
	if err != nil {
		return integrationsResult{}, entryError(err, action)
	}
	if out.RequireRestart {
		out.Note = strings.TrimPrefix(out.Note+"; Home Assistant must restart to finish (ha_restart)", "; ")
	}
	if action != "delete" {
		if fresh, ferr := d.HA.ConfigEntryDetails(ctx, e.Domain); ferr == nil {
			for _, f := range fresh {
				if f.EntryID == e.EntryID {
					item = compactEntry(f.ConfigEntry)
				}
			}
		}
	}
	return out, nil
}

func entryError(err error, action string) error {
	var api *homeassistant.APIError
	switch {
	case errors.As(err, &api) && (api.Status == http.StatusNotFound || api.Code == "not_found"):
		return toolkit.NotFound("Home Assistant has no such config entry (it was removed meanwhile)", `{"action": "list"} shows the entries`)
	case errors.As(err, &api) && api.Status == http.StatusForbidden && action == "reload":
		return &toolkit.Error{Code: "not_supported", Message: "Home Assistant cannot reload this integration: " + api.Message, Hint: "ha_restart restarts Home Assistant instead"}
	}
	return haWSError(err, "config entries", false, "")
}

// stepFlow is flow_step and flow_abort. Config and options flows live apart in Home Assistant;
// a flow id unknown as a config flow is tried as an options flow.
func (d Deps) stepFlow(ctx context.Context, a manageIntegrationsArgs) (integrationsResult, error) {
	if !entryIDRe.MatchString(a.FlowID) {
		return integrationsResult{}, toolkit.InvalidArg("flow_id", "is required for "+a.Action+": the flow_id flow_start or options_start returned", `{"action": "`+a.Action+`", "flow_id": "0a4b1c…"}`)
	}
	var res homeassistant.FlowResult
	var err error
	for _, options := range []bool{false, true} {
		if a.Action == "flow_abort" {
			err = d.HA.AbortFlow(ctx, a.FlowID, options)
		} else {
			input := a.UserInput
			if input == nil {
				input = map[string]any{}
			}
			res, err = d.HA.FlowStep(ctx, a.FlowID, options, input)
		}
		if !isNotFound(err) {
			break
		}
	}
	var bad *homeassistant.FlowInputError
	switch {
	case isNotFound(err):
		return integrationsResult{}, toolkit.NotFound("no flow "+a.FlowID+" in progress: it finished, was aborted, or Home Assistant restarted", "start again with flow_start or options_start")
	case errors.As(err, &bad):
		return integrationsResult{}, toolkit.InvalidArg("user_input", "Home Assistant refused it, nothing was submitted: "+inputErrors(bad.Errors), `{"user_input": {"host": "192.168.1.20"}}`)
	case err != nil:
		return integrationsResult{}, haError(err, false, "")
	case a.Action == "flow_abort":
		return integrationsResult{Action: a.Action, Done: "aborted flow " + a.FlowID}, nil
	}
	return flowResult(a.Action, res, nil)
}

// inputErrors renders a schema error map field by field, in a stable order.
func inputErrors(errs map[string]any) string {
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := errs[k]
		if list, ok := v.([]any); ok {
			strs := make([]string, len(list))
			for j, x := range list {
				strs[j] = fmt.Sprint(x)
			}
			v = strings.Join(strs, "; ")
		}
		parts[i] = k + ": " + fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

func flowResult(action string, res homeassistant.FlowResult, err error) (integrationsResult, error) {
	if err != nil {
		return integrationsResult{}, haError(err, false, "")
	}
	v := viewFlow(res)
	return integrationsResult{Action: action, Flow: &v}, nil
}

// viewFlow turns a flow answer into its compact view. Secret fields keep no default and
// placeholders named like secrets are left out, so nothing a user typed in comes back.
func viewFlow(res homeassistant.FlowResult) flowView {
	v := flowView{FlowID: res.FlowID, Type: res.Type, Handler: res.Handler, Step: res.StepID, Errors: res.Errors, Reason: res.Reason, Title: res.Title, URL: res.URL}
	for k, p := range res.DescriptionPlaceholders {
		if p != nil && !secretName(k) {
			if v.Placeholders == nil {
				v.Placeholders = map[string]any{}
			}
			v.Placeholders[k] = p
		}
	}
	switch res.Type {
	case "form":
		for _, f := range res.DataSchema {
			v.Fields = append(v.Fields, viewField(f))
		}
		v.Next = `flow_step with this flow_id and user_input holding the fields (required ones at least)`
		if len(v.Fields) == 0 {
			v.Next = `flow_step with this flow_id and no user_input when the user has done what the step asks`
		}
	case "menu":
		v.Menu = menuOptions(res.MenuOptions)
		v.Next = `flow_step with user_input {"next_step_id": one of menu}`
	case "create_entry":
		var e homeassistant.ConfigEntry
		if json.Unmarshal(res.Result, &e) == nil && e.EntryID != "" {
			item := compactEntry(e)
			v.Entry = &item
		}
		v.Next = "done: saved"
		if v.Entry != nil {
			v.Next = "done: the integration is set up"
		}
		v.FlowID = ""
	case "abort":
		v.Next = "the flow ended without a change: " + res.Reason
		v.FlowID = ""
	case "external":
		v.Next = "the user must open url in a browser and finish there; then flow_step with this flow_id"
	case "progress":
		v.Next = "Home Assistant is working (" + res.ProgressAction + "): flow_step with this flow_id in a moment"
	default:
		v.Next = "flow_step with this flow_id"
	}
	return v
}

// viewField reads one voluptuous_serialize field: a plain type ("string", "integer", "select"
// with [value, label] options) or a selector ({"selector": {"text": {"type": "password"}}}).
func viewField(f map[string]any) flowField {
	out := flowField{Name: stringOf(f["name"]), Type: stringOf(f["type"])}
	out.Required, _ = f["required"].(bool)
	if opts, ok := f["options"].([]any); ok {
		out.Options = optionValues(opts)
	}
	if sel, ok := f["selector"].(map[string]any); ok {
		for kind, cfg := range sel {
			out.Type = kind
			c, _ := cfg.(map[string]any)
			if t := stringOf(c["type"]); kind == "text" && t != "" {
				out.Type = "text/" + t
			}
			if opts, ok := c["options"].([]any); ok {
				out.Options = optionValues(opts)
			}
			if m, _ := c["multiple"].(bool); m {
				out.Type += " list"
			}
		}
	}
	out.Secret = secretName(out.Name) || out.Type == "text/password"
	if d, ok := f["default"]; ok && !out.Secret {
		out.Default = d
	}
	if s, ok := f["description"].(map[string]any); ok && out.Default == nil && !out.Secret {
		out.Default = s["suggested_value"]
	}
	return out
}

// optionValues are the values of select options given as [value, label], {value, label} or plain.
func optionValues(opts []any) []string {
	out := make([]string, 0, len(opts))
	for _, o := range opts {
		switch x := o.(type) {
		case []any:
			if len(x) > 0 {
				out = append(out, fmt.Sprint(x[0]))
			}
		case map[string]any:
			out = append(out, fmt.Sprint(x["value"]))
		default:
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

// menuOptions reads menu_options: a list of step ids, or step id → label.
func menuOptions(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		for k := range m {
			list = append(list, k)
		}
		slices.Sort(list)
	}
	return list
}

// secretName tells fields and placeholders that carry credentials by their name.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"password", "passwd", "secret", "token", "api_key", "apikey", "pin", "code", "psk", "passphrase"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// integrationConfirm: deleting an entry cannot be undone, and an integration that provides locks,
// alarm panels or garage doors takes them away from the user's safety automations when it is
// disabled or deleted. What an entry provides is read from the entity registry.
func integrationConfirm(d Deps) *toolkit.Confirm[manageIntegrationsArgs] {
	return &toolkit.Confirm[manageIntegrationsArgs]{
		When: "action delete (`delete`); disable or delete of an integration providing locks, alarm panels, garage doors or gates, or entities marked sensitive (their classes)",
		Check: func(ctx context.Context, c *toolkit.Call, a manageIntegrationsArgs) (toolkit.Ask, error) {
			if a.Action == "flow_step" && len(a.UserInput) > 0 {
				// A flow can make entities that run actions or wrap others (template, switch_as_x, group
				// helpers): what its input names or runs counts as when written (§5b rule 2).
				w := newWalk(d)
				w.guarded(ctx, entityIDsIn(a.UserInput, nil), "wrap or run, through a new integration entity,")
				w.config(ctx, a.UserInput)
				if err := w.writable("user_input"); err != nil {
					return toolkit.Ask{}, err
				}
				return w.ask("Submit this step of flow " + a.FlowID)
			}
			if a.Action != "delete" && a.Action != "disable" {
				return toolkit.Ask{}, nil
			}
			e, err := findEntry(ctx, d.HA, a)
			if err != nil {
				if outOfReach(err) {
					return toolkit.Ask{}, err
				}
				return toolkit.Ask{}, nil // the handler refuses the call with the same error
			}
			w := newWalk(d)
			w.entryEffects(ctx, e, a.Action)
			what := "Disable the integration " + e.Domain + " (" + e.Title + ")"
			if a.Action == "delete" {
				return w.ask("Delete the integration "+e.Domain+" ("+e.Title+") with its devices and entities (it must be set up again to come back)", sensitive.Delete)
			}
			return w.ask(what)
		},
	}
}

// entityIDsIn lists the strings shaped as entity ids in a flow's input, at any depth.
func entityIDsIn(v any, out []string) []string {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			out = entityIDsIn(e, out)
		}
	case []any:
		for _, e := range x {
			out = entityIDsIn(e, out)
		}
	case string:
		for _, id := range strings.Split(x, ",") {
			if id = strings.ToLower(strings.TrimSpace(id)); entityShaped(id) && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// entryEffects records what disabling or deleting the entry takes away that the policy table
// protects: its locks, alarm panels, garage doors and gates, and entities the user marked.
func (w *walk) entryEffects(ctx context.Context, e homeassistant.EntryDetail, action string) {
	ids, err := w.d.HA.ConfigEntryEntities(ctx, e.EntryID)
	if err != nil {
		if outOfReach(err) {
			w.fail = err
			return
		}
		w.hits = append(w.hits, sensitive.Unknown("hamcp cannot read which entities "+e.Domain+" provides")...)
		return
	}
	slices.Sort(ids)
	w.fact("entry", e.EntryID, action, strings.Join(ids, ","))
	w.load(ctx)
	w.markedSet(ctx)
	w.classes(ctx, ids)
	for _, id := range ids {
		ent := w.entity(id)
		label := ent.ID
		if ent.Name != "" && ent.Name != ent.ID {
			label += " (" + ent.Name + ")"
		}
		what := action + " " + label + ", which your automations then cannot use"
		domain, _, _ := strings.Cut(id, ".")
		switch {
		case domain == "lock":
			w.hits = append(w.hits, sensitive.Hit{Class: sensitive.Lock, What: what})
		case domain == "alarm_control_panel":
			w.hits = append(w.hits, sensitive.Hit{Class: sensitive.Alarm, What: what})
		case domain == "cover" && (ent.DeviceClass == "garage" || ent.DeviceClass == "gate"), ent.Marked:
			w.hits = append(w.hits, sensitive.Hit{Class: sensitive.Garage, What: what})
		}
	}
}
