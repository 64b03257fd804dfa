package hatools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

type automationItem struct {
	EntityID      string          `json:"entity_id"`
	ID            string          `json:"id,omitempty"`
	Alias         string          `json:"alias"`
	State         string          `json:"state"`
	LastTriggered string          `json:"last_triggered,omitempty"`
	Mode          string          `json:"mode,omitempty"`
	Config        json.RawMessage `json:"config,omitempty"`
	Note          string          `json:"note,omitempty"`
}

type listAutomationsArgs struct {
	Search        string `json:"search,omitempty"`
	State         string `json:"state,omitempty" validate:"omitempty,oneof=on off unavailable"`
	IncludeConfig bool   `json:"include_config,omitempty" jsonschema:"at most 20 per page"`
	toolkit.Page
}

// automationConfigArgs is how a model gives an automation: an object or YAML text.
type automationConfigArgs struct {
	Config         map[string]any `json:"config,omitempty" jsonschema:"as in automations.yaml, without id"`
	AutomationYAML string         `json:"automation_yaml,omitempty" jsonschema:"YAML instead of config"`
}

type createAutomationArgs struct {
	automationConfigArgs
	ID string `json:"id,omitempty" validate:"omitempty,max=255"`
}

type updateAutomationArgs struct {
	AutomationID string `json:"automation_id" jsonschema:"id or entity id" validate:"required" example:"1718000000000"`
	automationConfigArgs
	Merge bool `json:"merge,omitempty" jsonschema:"null removes a key"`
}

type deleteAutomationArgs struct {
	AutomationID string `json:"automation_id" jsonschema:"id or entity id" validate:"required" example:"1718000000000"`
}

type automationSaved struct {
	ID       string `json:"id"`
	EntityID string `json:"entity_id,omitempty"`
	Alias    string `json:"alias,omitempty"`
	Created  bool   `json:"created,omitempty"`
	Deleted  bool   `json:"deleted,omitempty"`
	// Version is the earlier version hamcp kept (ha_config_history restore takes the change back).
	Version int    `json:"version,omitempty"`
	Note    string `json:"note,omitempty"`
}

// maxConfigsPerPage bounds include_config, which costs one request per automation.
const maxConfigsPerPage = 20

// automationTools are the automation tools, in the order tools/list shows them.
func automationTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{listAutomations(d), createAutomation(d), updateAutomation(d), deleteAutomation(d)}
}

// listAutomations is ha_list_automations.
func listAutomations(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listAutomationsArgs, toolkit.List[automationItem]]{
		Name: "ha_list_automations", Toolset: SetAutomations, Title: "List automations",
		Description: "Automations: entity id, id (for update and delete), alias, state (on = enabled), last_triggered, mode; " +
			"include_config adds triggers, conditions and actions (search first). Paged.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listAutomationsArgs) (toolkit.List[automationItem], error) {
			return automationList(ctx, d.HA, a)
		},
	})
}

// automationList lists automations from their states, with their stored configs when asked.
func automationList(ctx context.Context, ha *homeassistant.Client, a listAutomationsArgs) (toolkit.List[automationItem], error) {
	all, err := liveStates(ctx, ha)
	if err != nil {
		return toolkit.List[automationItem]{}, haError(err, false, "")
	}
	search := strings.ToLower(a.Search)
	var items []automationItem
	for _, s := range all {
		if s.Domain() != "automation" || a.State != "" && s.State != a.State {
			continue
		}
		it := automationFromState(s)
		if search != "" && !strings.Contains(strings.ToLower(it.Alias+" "+it.EntityID+" "+it.ID), search) {
			continue
		}
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].EntityID < items[j].EntityID })
	page := a.Page
	if a.IncludeConfig && (page.Limit == 0 || page.Limit > maxConfigsPerPage) {
		page.Limit = maxConfigsPerPage
	}
	out := toolkit.Paginate(items, page)
	if !a.IncludeConfig {
		return out, nil
	}
	for i := range out.Items {
		it := &out.Items[i]
		if it.ID == "" {
			it.Note = "defined in YAML without an id: not editable through the API"
			continue
		}
		raw, err := ha.GetConfigItem(ctx, homeassistant.KindAutomation, it.ID)
		if err != nil {
			return toolkit.List[automationItem]{}, haError(err, false, "")
		}
		it.Config = raw
	}
	return out, nil
}

// createAutomation is ha_create_automation.
func createAutomation(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[createAutomationArgs, automationSaved]{
		Name: "ha_create_automation", Toolset: SetAutomations, Title: "Create an automation", Conditional: createAutomationGrant,
		Confirm: automationConfirm(d, "its actions do something in the policy table, directly or through a script or scene",
			func(a createAutomationArgs) automationConfigArgs { return a.automationConfigArgs },
			func(a createAutomationArgs) string { return "Create an automation that runs on its own" }),
		Description: "Create an automation from config or automation_yaml (alias, triggers, actions, optional conditions, mode); " +
			"Home Assistant validates it, then it is stored and active. Returns its id and entity id. " +
			"Actions needing the command permission or the user's confirmation in ha_call_service need them here too.",
		Summary: func(a createAutomationArgs) string { return "create " + a.ID },
		Handler: func(ctx context.Context, c *toolkit.Call, a createAutomationArgs) (automationSaved, error) {
			return newAutomation(ctx, d, c, a)
		},
	})
}

// newAutomation stores a new automation under a free id and waits for its entity.
func newAutomation(ctx context.Context, d Deps, c *toolkit.Call, a createAutomationArgs) (automationSaved, error) {
	ha := d.HA
	cfg, err := a.automationConfigArgs.parse()
	if err != nil {
		return automationSaved{}, err
	}
	id := a.ID
	if given, ok := cfg["id"]; ok && given != nil && id == "" {
		id = fmt.Sprint(given)
	}
	delete(cfg, "id")
	if id == "" {
		id = strconv.FormatInt(time.Now().UnixMilli(), 10)
	}
	if err := checkAutomationID("id", id); err != nil {
		return automationSaved{}, err
	}
	if _, err := ha.GetConfigItem(ctx, homeassistant.KindAutomation, id); err == nil {
		return automationSaved{}, toolkit.InvalidArg("id", "is already used by another automation; pick another id or use ha_update_automation", "")
	} else if !isNotFound(err) {
		return automationSaved{}, haError(err, false, "")
	}
	k, err := d.keep(ctx, c, KindAutomation, id, stringOf(cfg["alias"]), confighistory.Created, nil)
	if err != nil {
		return automationSaved{}, err
	}
	if err := saveAutomation(ctx, ha, id, cfg); err != nil {
		k.undo(ctx)
		return automationSaved{}, err
	}
	out := automationSaved{ID: id, Alias: stringOf(cfg["alias"]), Created: true, EntityID: waitAutomationEntity(ctx, ha, id), Version: k.version()}
	if out.EntityID == "" {
		out.Note = "saved; Home Assistant has not shown its entity yet"
	}
	return out, nil
}

// updateAutomation is ha_update_automation.
func updateAutomation(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[updateAutomationArgs, automationSaved]{
		Name: "ha_update_automation", Toolset: SetAutomations, Title: "Update an automation", Conditional: updateAutomationGrant,
		Confirm: updateAutomationConfirm(d),
		Description: "Replace an automation's configuration, or with merge=true only the keys given; validated, applied at once; the user confirms. " +
			"Read it first with ha_list_automations include_config=true. To switch on or off: ha_call_service automation.turn_on/turn_off.",
		Destructive: true,
		Summary:     func(a updateAutomationArgs) string { return "update " + a.AutomationID },
		Handler: func(ctx context.Context, c *toolkit.Call, a updateAutomationArgs) (automationSaved, error) {
			return changeAutomation(ctx, d, c, a)
		},
	})
}

// changeAutomation replaces (or merges into) a stored automation.
func changeAutomation(ctx context.Context, d Deps, c *toolkit.Call, a updateAutomationArgs) (automationSaved, error) {
	ha := d.HA
	cfg, err := a.automationConfigArgs.parse()
	if err != nil {
		return automationSaved{}, err
	}
	id, entityID, err := resolveAutomation(ctx, ha, a.AutomationID)
	if err != nil {
		return automationSaved{}, err
	}
	raw, err := ha.GetConfigItem(ctx, homeassistant.KindAutomation, id)
	if isNotFound(err) {
		return automationSaved{}, toolkit.NotFound("no automation with id "+id, "ha_list_automations lists the ids")
	}
	if err != nil {
		return automationSaved{}, haError(err, false, "")
	}
	if a.Merge {
		if cfg, err = mergeAutomation(raw, cfg); err != nil {
			return automationSaved{}, err
		}
	}
	delete(cfg, "id")
	k, err := d.keep(ctx, c, KindAutomation, id, aliasOf(raw), confighistory.Updated, raw)
	if err != nil {
		return automationSaved{}, err
	}
	if err := saveAutomation(ctx, ha, id, cfg); err != nil {
		k.undo(ctx)
		return automationSaved{}, err
	}
	if entityID == "" {
		entityID = waitAutomationEntity(ctx, ha, id)
	}
	return automationSaved{ID: id, EntityID: entityID, Alias: stringOf(cfg["alias"]), Version: k.version()}, nil
}

// mergeAutomation applies the keys of cfg to the stored automation; a null value removes a key.
func mergeAutomation(stored json.RawMessage, cfg map[string]any) (map[string]any, error) {
	var current map[string]any
	if err := json.Unmarshal(stored, &current); err != nil {
		return nil, toolkit.Backend("Home Assistant", fmt.Errorf("the stored automation is not an object: %w", err), false, "")
	}
	// A config saved before HA 2024.10 has singular keys: both sides plural, so
	// a given "triggers" replaces a stored "trigger".
	if err := pluralKeys(current, "stored config"); err != nil {
		return nil, err
	}
	if err := pluralKeys(cfg, "config"); err != nil {
		return nil, err
	}
	for k, v := range cfg {
		if v == nil {
			delete(current, k)
		} else {
			current[k] = v
		}
	}
	return current, nil
}

// deleteAutomation is ha_delete_automation.
func deleteAutomation(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[deleteAutomationArgs, automationSaved]{
		Name: "ha_delete_automation", Toolset: SetAutomations, Title: "Delete an automation",
		Confirm: &toolkit.Confirm[deleteAutomationArgs]{When: "always (`delete`)",
			Check: func(ctx context.Context, c *toolkit.Call, a deleteAutomationArgs) (toolkit.Ask, error) {
				return plain(sensitive.Delete, "Delete the automation "+a.AutomationID+"? (hamcp keeps its configuration: ha_config_history can restore it)"), nil
			}},
		Description: "Delete an automation and its entity; the user confirms; ha_config_history can restore it. To pause one use ha_call_service automation.turn_off.",
		Destructive: true,
		Summary:     func(a deleteAutomationArgs) string { return "delete " + a.AutomationID },
		Handler: func(ctx context.Context, c *toolkit.Call, a deleteAutomationArgs) (automationSaved, error) {
			id, entityID, err := resolveAutomation(ctx, d.HA, a.AutomationID)
			if err != nil {
				return automationSaved{}, err
			}
			defer invalidateAutomations(d.HA)
			raw, err := d.HA.GetConfigItem(ctx, homeassistant.KindAutomation, id)
			if isNotFound(err) {
				return automationSaved{}, toolkit.NotFound("no automation with id "+id, "ha_list_automations lists the ids")
			}
			if err != nil {
				return automationSaved{}, haError(err, false, "")
			}
			k, err := d.keep(ctx, c, KindAutomation, id, aliasOf(raw), confighistory.Deleted, raw)
			if err != nil {
				return automationSaved{}, err
			}
			if err := d.HA.DeleteConfigItem(ctx, homeassistant.KindAutomation, id); err != nil {
				k.undo(ctx)
				var api *homeassistant.APIError
				if errors.As(err, &api) && api.Status == 400 && strings.Contains(api.Message, "not found") {
					return automationSaved{}, toolkit.NotFound("no automation with id "+id, "ha_list_automations lists the ids")
				}
				return automationSaved{}, haError(err, false, "")
			}
			return automationSaved{ID: id, EntityID: entityID, Deleted: true, Version: k.version()}, nil
		},
	})
}

func automationFromState(s homeassistant.State) automationItem {
	it := automationItem{EntityID: s.EntityID, Alias: s.FriendlyName(), State: s.State}
	it.ID = stringOf(s.Attributes["id"])
	it.Mode = stringOf(s.Attributes["mode"])
	if lt := stringOf(s.Attributes["last_triggered"]); lt != "" {
		if t, err := time.Parse(time.RFC3339Nano, lt); err == nil {
			lt = t.UTC().Format(time.RFC3339)
		}
		it.LastTriggered = lt
	}
	return it
}

// checkAutomationID refuses ids that cannot be one segment of the editor API's path.
func checkAutomationID(field, id string) error {
	if id == "" || len(id) > 255 || strings.ContainsAny(id, "/?#\\%") || strings.IndexFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return toolkit.InvalidArg(field, "must be an automation id (letters, digits, _ and -, as listed by ha_list_automations) or its entity id", `{"`+field+`": "1718000000000"}`)
	}
	return nil
}

// aliasOf is a stored configuration's alias (or name), for the history's list.
func aliasOf(raw json.RawMessage) string {
	var cfg struct {
		Alias string `json:"alias"`
		Name  string `json:"name"`
	}
	_ = json.Unmarshal(raw, &cfg)
	return cmp.Or(cfg.Alias, cfg.Name)
}

// automationVersions is how ha_config_history restores an automation: saved back through the
// editor API (validated by Home Assistant), or deleted when it did not exist.
func automationVersions() versionKind {
	return versionKind{kind: KindAutomation,
		read: func(ctx context.Context, d Deps, id string) (json.RawMessage, string, error) {
			raw, err := d.HA.GetConfigItem(ctx, homeassistant.KindAutomation, id)
			if isNotFound(err) {
				return nil, "", nil
			}
			return raw, aliasOf(raw), err
		},
		check: func(ctx context.Context, d Deps, w *walk, id string, cfg json.RawMessage) {
			var v any
			if json.Unmarshal(cfg, &v) == nil {
				w.config(ctx, v)
			}
		},
		write: func(ctx context.Context, d Deps, id string, cfg json.RawMessage) error {
			defer invalidateAutomations(d.HA)
			if cfg == nil {
				// Home Assistant answers a delete of an unknown key 400 "Resource not found": gone already.
				err := editorDelete(ctx, d.HA, homeassistant.KindAutomation, id)
				if te := (*toolkit.Error)(nil); errors.As(err, &te) && te.Code == "not_found" {
					return nil
				}
				return err
			}
			var m map[string]any
			if err := json.Unmarshal(cfg, &m); err != nil {
				return err
			}
			delete(m, "id")
			return saveAutomation(ctx, d.HA, id, m)
		},
	}
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

func isNotFound(err error) bool {
	var api *homeassistant.APIError
	return errors.As(err, &api) && api.Status == 404
}

// resolveAutomation accepts an automation's id or entity id and returns both (the entity id
// may be "" when the mirror has not seen it).
func resolveAutomation(ctx context.Context, ha *homeassistant.Client, ref string) (id, entityID string, err error) {
	ref = strings.TrimSpace(ref)
	if err := checkAutomationID("automation_id", ref); err != nil {
		return "", "", err
	}
	all, serr := liveStates(ctx, ha)
	if serr != nil {
		return "", "", haError(serr, false, "")
	}
	if strings.HasPrefix(ref, "automation.") {
		for _, s := range all {
			if s.EntityID == ref {
				if id := stringOf(s.Attributes["id"]); id != "" {
					return id, ref, nil
				}
				return "", "", &toolkit.Error{Code: "not_editable", Field: "automation_id",
					Message: ref + " is defined in YAML without an id, so Home Assistant's editor API cannot change it",
					Hint:    "edit its YAML with ha_read_config / ha_write_config"}
			}
		}
		return "", "", toolkit.NotFound("no automation "+ref, "ha_list_automations lists them")
	}
	for _, s := range all {
		if s.Domain() == "automation" && stringOf(s.Attributes["id"]) == ref {
			return ref, s.EntityID, nil
		}
	}
	return ref, "", nil
}

// parse returns the automation as a JSON-ready object from config or automation_yaml.
func (a automationConfigArgs) parse() (map[string]any, error) {
	switch {
	case a.Config != nil && a.AutomationYAML != "":
		return nil, toolkit.InvalidArg("config", "give either config or automation_yaml, not both", "")
	case a.Config != nil:
		return maps.Clone(a.Config), nil
	case strings.TrimSpace(a.AutomationYAML) == "":
		return nil, toolkit.InvalidArg("config", "is required (or automation_yaml)", `{"config": {"alias": "Porch light at sunset", "triggers": [{"trigger": "sun", "event": "sunset"}], "actions": [{"action": "light.turn_on", "target": {"entity_id": "light.porch"}}]}}`)
	}
	cfg, err := parseAutomationYAML(a.AutomationYAML)
	if err != nil {
		return nil, toolkit.InvalidArg("automation_yaml", err.Error(), "")
	}
	return cfg, nil
}

// parseAutomationYAML reads one automation from YAML: a mapping, or a one-item list as
// copied from automations.yaml. Values become JSON-ready (string keys, times as text).
func parseAutomationYAML(text string) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("is not valid YAML: %v", err)
	}
	if list, ok := v.([]any); ok {
		if len(list) != 1 {
			return nil, fmt.Errorf("holds %d items; give one automation", len(list))
		}
		v = list[0]
	}
	m, ok := jsonReady(v, 0).(map[string]any)
	if !ok {
		return nil, errors.New("must be a mapping with alias, triggers and actions")
	}
	return m, nil
}

// maxYAMLDepth bounds nesting so a hostile document cannot exhaust the stack.
const maxYAMLDepth = 64

func jsonReady(v any, depth int) any {
	if depth > maxYAMLDepth {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonReady(e, depth+1)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonReady(e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonReady(e, depth+1)
		}
		return out
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case float64:
		if x != x || x > 1e308 || x < -1e308 { // NaN and infinities have no JSON form
			return fmt.Sprint(x)
		}
	}
	return v
}

// validated are the parts of an automation Home Assistant's validate_config checks, plural
// (the only form that command accepts) then the singular form HA still reads from files.
var validated = [][2]string{{"triggers", "trigger"}, {"conditions", "condition"}, {"actions", "action"}}

// pluralKeys renames an automation's top-level trigger/condition/action to triggers/conditions/
// actions in place, as Home Assistant's own backward-compatibility step does when it loads one
// (only the top level: "condition" inside a trigger or action item is that item's type).
// Giving both forms of one key is an error there too.
func pluralKeys(cfg map[string]any, field string) error {
	for _, names := range validated {
		plural, singular := names[0], names[1]
		v, ok := cfg[singular]
		if !ok {
			continue
		}
		if _, both := cfg[plural]; both {
			return toolkit.InvalidArg(field+"."+singular, "and "+field+"."+plural+" are both given: keep only "+plural, "")
		}
		cfg[plural] = v
		delete(cfg, singular)
	}
	return nil
}

// saveAutomation validates the automation with Home Assistant, then stores it under id. Keys
// are stored plural so that old configs converge on the form validate_config accepts.
func saveAutomation(ctx context.Context, ha *homeassistant.Client, id string, cfg map[string]any) error {
	if err := pluralKeys(cfg, "config"); err != nil {
		return err
	}
	if _, blueprint := cfg["use_blueprint"]; !blueprint {
		parts := map[string]any{}
		for _, names := range validated {
			if v, ok := cfg[names[0]]; ok {
				parts[names[0]] = v
			}
		}
		for _, need := range []string{"triggers", "actions"} {
			if parts[need] == nil {
				return toolkit.InvalidArg("config."+need, "is required", `{"config": {"triggers": [{"trigger": "state", "entity_id": "binary_sensor.door", "to": "on"}], "actions": [{"action": "light.turn_on", "target": {"entity_id": "light.hall"}}]}}`)
			}
		}
		res, err := ha.ValidateConfig(ctx, parts)
		if err != nil {
			return haWSError(err, "configuration validation", false, "")
		}
		keys := make([]string, 0, len(res))
		for k := range res {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if r := res[k]; !r.Valid && r.Error != "" {
				return toolkit.InvalidArg("config."+k, "Home Assistant rejected it: "+r.Error+"; nothing was saved", "")
			}
		}
	}
	defer invalidateAutomations(ha)
	if err := ha.SaveConfigItem(ctx, homeassistant.KindAutomation, id, cfg); err != nil {
		var api *homeassistant.APIError
		if errors.As(err, &api) && api.Status == 400 {
			return toolkit.InvalidArg("config", "Home Assistant rejected it: "+api.Message+"; nothing was saved", "")
		}
		return haError(err, false, "")
	}
	return nil
}

// waitAutomationEntity waits briefly for Home Assistant to load the automation and returns
// its entity id ("" if it has not appeared).
func waitAutomationEntity(ctx context.Context, ha *homeassistant.Client, id string) string {
	deadline := time.Now().Add(3 * time.Second)
	for {
		if all, err := liveStates(ctx, ha); err == nil {
			for _, s := range all {
				if s.Domain() == "automation" && stringOf(s.Attributes["id"]) == id {
					return s.EntityID
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return ""
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(50 * time.Millisecond):
		}
	}
}
