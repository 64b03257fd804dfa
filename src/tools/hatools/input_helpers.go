package hatools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// helperDomains are the helper integrations ha_manage_helpers covers, with the state attributes that
// say how a helper Home Assistant does not store (YAML, or a state posted over REST) can be set.
var helperDomains = map[string][]string{
	"input_boolean":  nil,
	"input_button":   nil,
	"input_number":   {"min", "max", "step", "mode", "unit_of_measurement"},
	"input_select":   {"options"},
	"input_text":     {"min", "max", "pattern", "mode"},
	"input_datetime": {"has_date", "has_time"},
	"counter":        {"minimum", "maximum", "step", "initial"},
	"timer":          {"duration", "remaining", "finishes_at"},
	"schedule":       {"next_event"},
}

type manageHelpersArgs struct {
	Action   string         `json:"action" validate:"required,oneof=list create update delete"`
	Domain   string         `json:"domain,omitempty" jsonschema:"create: required" validate:"omitempty,oneof=input_boolean input_button input_number input_select input_text input_datetime counter timer schedule"`
	HelperID string         `json:"helper_id,omitempty" jsonschema:"entity id" validate:"omitempty,max=255"`
	Config   map[string]any `json:"config,omitempty"`
	Search   string         `json:"search,omitempty"`
	toolkit.Page
}

type helperView struct {
	EntityID string         `json:"entity_id,omitempty"`
	ID       string         `json:"id,omitempty"` // the stored helper's id; absent: not editable here
	Name     string         `json:"name,omitempty"`
	State    string         `json:"state,omitempty"`
	Settings map[string]any `json:"settings,omitempty"`
}

type helpersResult struct {
	Action  string                    `json:"action"`
	Helpers *toolkit.List[helperView] `json:"helpers,omitempty"`
	Helper  *helperView               `json:"helper,omitempty"`
	Deleted bool                      `json:"deleted,omitempty"`
	// Version is the earlier version hamcp kept (ha_config_history restore takes the change back).
	Version int    `json:"version,omitempty"`
	Note    string `json:"note,omitempty"`
}

// helperNotEditable says why a listed helper has no id.
const helperNotEditable = "helpers without an id come from YAML or another integration: Home Assistant's API cannot edit them (their YAML can be, with ha_write_config)"

func inputHelperTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{manageHelpers(d)} }

// manageHelpers is ha_manage_helpers.
func manageHelpers(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageHelpersArgs, helpersResult]{
		Name: "ha_manage_helpers", Toolset: SetHelpers, Title: "Helpers",
		Confirm: helpersConfirm(d),
		Description: "Helpers (input_*, counter, timer, schedule): list (value, settings; paged), create (domain; config: name and fields, " +
			"e.g. min, max, step, options), update (helper_id; config: the changes, null removes), delete. The user confirms delete, and edits of " +
			"helpers their automations trigger on. Set values: ha_call_service.",
		Destructive: true,
		Summary:     func(a manageHelpersArgs) string { return a.Action + " " + a.Domain + a.HelperID },
		Handler: func(ctx context.Context, c *toolkit.Call, a manageHelpersArgs) (helpersResult, error) {
			switch a.Action {
			case "list":
				return listHelpers(ctx, d.HA, a)
			case "create":
				return createHelper(ctx, d, c, a)
			}
			return changeHelper(ctx, d, c, a)
		},
	})
}

// helpersConfirm: deleting is a delete; updating overwrites (a change). Both, and creating one (its
// entity may be what a dangling trigger waits for), count what the user's automations triggered by
// that entity do.
func helpersConfirm(d Deps) *toolkit.Confirm[manageHelpersArgs] {
	return &toolkit.Confirm[manageHelpersArgs]{
		When: "delete (`delete`), update (`change`); with what the automations triggered by the helper do",
		Check: func(ctx context.Context, c *toolkit.Call, a manageHelpersArgs) (toolkit.Ask, error) {
			var eid string
			var always []sensitive.Class
			switch a.Action {
			case "create":
				name, _ := a.Config["name"].(string)
				if a.Domain == "" || name == "" {
					return toolkit.Ask{}, nil // the handler refuses it
				}
				eid = a.Domain + "." + cmp.Or(haSlugify(name), "unknown")
			case "update", "delete":
				eid = strings.ToLower(strings.TrimSpace(a.HelperID))
				always = []sensitive.Class{sensitive.Change}
				if a.Action == "delete" {
					always = []sensitive.Class{sensitive.Delete}
				}
			default:
				return toolkit.Ask{}, nil
			}
			domain, _, _ := strings.Cut(eid, ".")
			w := newWalk(d)
			w.follow(ctx, a.Action+" "+eid, domain, a.Action, sensitive.Target{EntityIDs: []string{eid}})
			what := map[string]string{"create": "Create the helper ", "update": "Change the helper ", "delete": "Delete the helper "}[a.Action] + eid
			if a.Action == "delete" {
				what += " (hamcp keeps its settings: ha_config_history can restore it)"
			}
			return w.ask(what, always...)
		},
	}
}

// storedHelpers reads the collections of the given domains and the registry entries of their
// entities: entity id → stored item, and the items no entity shows.
func storedHelpers(ctx context.Context, ha *homeassistant.Client, domains []string, all []homeassistant.State) (map[string]homeassistant.HelperItem, []homeassistant.HelperItem, error) {
	byID := map[string]homeassistant.HelperItem{} // domain/id → item
	for _, dom := range domains {
		items, err := ha.Helpers(ctx, dom)
		var api *homeassistant.APIError
		if errors.As(err, &api) && api.Code == "unknown_command" {
			continue // the integration is not loaded: nothing of it is stored
		}
		if err != nil {
			return nil, nil, err
		}
		for _, it := range items {
			byID[dom+"/"+it.ID()] = it
		}
	}
	var ids []string
	for _, s := range all {
		if slices.Contains(domains, s.Domain()) {
			ids = append(ids, s.EntityID)
		}
	}
	out := map[string]homeassistant.HelperItem{}
	entries := map[string]homeassistant.EntityEntry{}
	if len(ids) > 0 {
		var err error
		if entries, err = ha.EntityEntries(ctx, ids); err != nil {
			return nil, nil, err
		}
	}
	for eid, e := range entries {
		if it, ok := byID[e.Platform+"/"+e.UniqueID]; ok && e.UniqueID != "" {
			out[eid] = it
			delete(byID, e.Platform+"/"+e.UniqueID)
		}
	}
	rest := slices.Collect(maps.Values(byID))
	slices.SortFunc(rest, func(a, b homeassistant.HelperItem) int { return strings.Compare(a.ID(), b.ID()) })
	return out, rest, nil
}

func listHelpers(ctx context.Context, ha *homeassistant.Client, a manageHelpersArgs) (helpersResult, error) {
	out := helpersResult{Action: a.Action}
	all, err := states(ctx, ha)
	if err != nil {
		return out, haError(err, false, "")
	}
	domains := slices.Sorted(maps.Keys(helperDomains))
	if a.Domain != "" {
		domains = []string{a.Domain}
	}
	stored, orphans, err := storedHelpers(ctx, ha, domains, all)
	if err != nil {
		return out, haWSError(err, "helper lists", false, "")
	}
	var views []helperView
	for _, s := range all {
		if !slices.Contains(domains, s.Domain()) {
			continue
		}
		v := helperView{EntityID: s.EntityID, Name: s.FriendlyName(), State: s.State}
		if it, ok := stored[s.EntityID]; ok {
			v.ID, v.Settings = it.ID(), settingsOf(it)
		} else {
			v.Settings = attributeSettings(s)
			out.Note = helperNotEditable
		}
		if v.Name == s.EntityID {
			v.Name = ""
		}
		views = append(views, v)
	}
	slices.SortFunc(views, func(x, y helperView) int { return strings.Compare(x.EntityID, y.EntityID) })
	for _, it := range orphans { // stored, but no entity (disabled, or not loaded yet)
		views = append(views, helperView{ID: it.ID(), Name: it.Name(), Settings: settingsOf(it)})
	}
	if a.Search != "" {
		views = slices.DeleteFunc(views, func(v helperView) bool { return !hasFold(v.EntityID+" "+v.Name+" "+v.ID, a.Search) })
	}
	page := toolkit.Paginate(views, a.Page)
	out.Helpers = &page
	return out, nil
}

// settingsOf is a stored helper's fields but its id and name: what update takes.
func settingsOf(it homeassistant.HelperItem) map[string]any {
	m := maps.Clone(map[string]any(it))
	delete(m, "id")
	delete(m, "name")
	if len(m) == 0 {
		return nil
	}
	return m
}

func attributeSettings(s homeassistant.State) map[string]any {
	var m map[string]any
	for _, k := range helperDomains[s.Domain()] {
		if val, ok := s.Attributes[k]; ok && val != nil {
			if m == nil {
				m = map[string]any{}
			}
			m[k] = val
		}
	}
	return m
}

func createHelper(ctx context.Context, d Deps, c *toolkit.Call, a manageHelpersArgs) (helpersResult, error) {
	out := helpersResult{Action: a.Action}
	if a.Domain == "" {
		return out, toolkit.InvalidArg("domain", "is required to create a helper", `{"action": "create", "domain": "input_boolean", "config": {"name": "Guest mode"}}`)
	}
	name, _ := a.Config["name"].(string)
	if strings.TrimSpace(name) == "" {
		return out, toolkit.InvalidArg("config.name", "is required to create a helper", `{"config": {"name": "Night temperature", "min": 12, "max": 24, "step": 0.5}}`)
	}
	guess := a.Domain + "." + cmp.Or(haSlugify(name), "unknown")
	k, err := d.keep(ctx, c, KindHelper, guess, name, confighistory.Created, nil)
	if err != nil {
		return out, err
	}
	item, err := d.HA.CreateHelper(ctx, a.Domain, a.Config)
	if err != nil {
		k.undo(ctx)
		return out, helperRefusal(err, "config", a.Domain)
	}
	eid := waitHelperEntity(ctx, d.HA, a.Domain, item.ID())
	if eid != "" && eid != guess { // kept under the entity id Home Assistant chose
		k.undo(ctx)
		if k, err = d.keep(ctx, c, KindHelper, eid, name, confighistory.Created, nil); err != nil {
			return out, err
		}
	}
	out.Helper = &helperView{EntityID: eid, ID: item.ID(), Name: item.Name(), Settings: settingsOf(item)}
	if eid != "" {
		if st, ok := d.HA.Mirror().Get(eid); ok {
			out.Helper.State = st.State
		}
	} else {
		out.Note = "created; Home Assistant has not shown its entity yet"
	}
	out.Version = k.version()
	return out, nil
}

// resolveHelper finds the stored helper behind an entity id: its domain and its item.
func resolveHelper(ctx context.Context, ha *homeassistant.Client, ref string) (string, homeassistant.HelperItem, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	domain, _, ok := strings.Cut(ref, ".")
	if _, known := helperDomains[domain]; !ok || !known {
		return "", nil, toolkit.InvalidArg("helper_id", "must be a helper's entity id (list shows them)", `{"helper_id": "input_boolean.guest_mode"}`)
	}
	items, err := ha.Helpers(ctx, domain)
	if err != nil {
		return "", nil, haWSError(err, domain+" helpers", false, "")
	}
	entries, err := ha.EntityEntries(ctx, []string{ref})
	if err != nil {
		return "", nil, haError(err, false, "")
	}
	e, registered := entries[ref]
	for _, it := range items {
		if registered && e.Platform == domain && e.UniqueID == it.ID() {
			return domain, it, nil
		}
	}
	if _, ok := helperState(ctx, ha, ref); ok {
		return "", nil, &toolkit.Error{Code: "not_editable", Field: "helper_id", Message: ref + " is not a helper stored by Home Assistant (" + helperNotEditable + ")"}
	}
	return "", nil, toolkit.NotFound("no helper "+ref, "ha_manage_helpers action list shows them")
}

// helperState reads one state fresh: whether the entity exists at all.
func helperState(ctx context.Context, ha *homeassistant.Client, eid string) (homeassistant.State, bool) {
	all, err := liveStates(ctx, ha)
	if err != nil {
		return homeassistant.State{}, false
	}
	for _, s := range all {
		if s.EntityID == eid {
			return s, true
		}
	}
	return homeassistant.State{}, false
}

// changeHelper is update and delete: the stored helper is kept, then replaced or removed.
func changeHelper(ctx context.Context, d Deps, c *toolkit.Call, a manageHelpersArgs) (helpersResult, error) {
	out := helpersResult{Action: a.Action}
	if a.HelperID == "" {
		return out, toolkit.InvalidArg("helper_id", "is required for action "+a.Action, `{"action": "`+a.Action+`", "helper_id": "input_boolean.guest_mode"}`)
	}
	if a.Action == "update" && len(a.Config) == 0 {
		return out, toolkit.InvalidArg("config", "is required for update: the fields to change", `{"config": {"max": 30}}`)
	}
	domain, item, err := resolveHelper(ctx, d.HA, a.HelperID)
	if err != nil {
		return out, err
	}
	eid := strings.ToLower(strings.TrimSpace(a.HelperID))
	before := settingsOf(item)
	if before == nil {
		before = map[string]any{}
	}
	before["name"] = item.Name()
	change := confighistory.Updated
	if a.Action == "delete" {
		change = confighistory.Deleted
	}
	k, err := d.keep(ctx, c, KindHelper, eid, item.Name(), change, before)
	if err != nil {
		return out, err
	}
	if a.Action == "delete" {
		if err := d.HA.DeleteHelper(ctx, domain, item.ID()); err != nil {
			k.undo(ctx)
			return out, helperRefusal(err, "helper_id", domain)
		}
		return helpersResult{Action: a.Action, Deleted: true, Version: k.version(),
			Helper: &helperView{EntityID: eid, ID: item.ID(), Name: item.Name(), Settings: settingsOf(item)}}, nil
	}
	cfg := maps.Clone(before)
	for key, v := range a.Config {
		if v == nil {
			delete(cfg, key)
		} else {
			cfg[key] = v
		}
	}
	saved, err := d.HA.UpdateHelper(ctx, domain, item.ID(), cfg)
	if err != nil {
		k.undo(ctx)
		return out, helperRefusal(err, "config", domain)
	}
	out.Helper = &helperView{EntityID: eid, ID: saved.ID(), Name: saved.Name(), Settings: settingsOf(saved)}
	if st, ok := helperState(ctx, d.HA, eid); ok {
		out.Helper.State = st.State
	}
	out.Version = k.version()
	return out, nil
}

// helperRefusal turns Home Assistant's refusal of a helper's config into an argument error naming
// the field when voluptuous named one (… @ data['max']).
func helperRefusal(err error, field, domain string) error {
	var api *homeassistant.APIError
	if !errors.As(err, &api) {
		return haError(err, false, "")
	}
	switch api.Code {
	case "invalid_format", "home_assistant_error":
		if _, key, ok := strings.Cut(api.Message, "@ data['"); ok && field == "config" {
			if k, _, ok := strings.Cut(key, "'"); ok {
				field += "." + k
			}
		}
		return toolkit.InvalidArg(field, "was refused by Home Assistant: "+api.Message+"; nothing was saved", helperExample[domain])
	case "not_found":
		return toolkit.NotFound("Home Assistant has no such "+domain+" helper: "+api.Message, "ha_manage_helpers action list shows them")
	case "unknown_command":
		return haWSError(err, domain+" helpers", false, "")
	}
	return haError(err, false, "")
}

// helperExample is a valid config per domain, for refusals.
var helperExample = map[string]string{
	"input_boolean":  `{"name": "Guest mode", "icon": "mdi:account"}`,
	"input_button":   `{"name": "Doorbell test"}`,
	"input_number":   `{"name": "Night temperature", "min": 12, "max": 24, "step": 0.5, "unit_of_measurement": "°C", "mode": "slider"}`,
	"input_select":   `{"name": "House mode", "options": ["Home", "Away", "Night"]}`,
	"input_text":     `{"name": "Welcome message", "min": 0, "max": 100, "mode": "text"}`,
	"input_datetime": `{"name": "Wake-up time", "has_date": false, "has_time": true}`,
	"counter":        `{"name": "Coffee cups", "initial": 0, "step": 1, "minimum": 0}`,
	"timer":          `{"name": "Laundry", "duration": "0:45:00", "restore": true}`,
	"schedule":       `{"name": "Heating", "monday": [{"from": "06:30:00", "to": "22:00:00"}]}`,
}

// waitHelperEntity waits briefly for the entity of a new stored helper.
func waitHelperEntity(ctx context.Context, ha *homeassistant.Client, domain, id string) string {
	deadline := time.Now().Add(3 * time.Second)
	for {
		if all, err := liveStates(ctx, ha); err == nil {
			var ids []string
			for _, s := range all {
				if s.Domain() == domain {
					ids = append(ids, s.EntityID)
				}
			}
			if entries, err := ha.EntityEntries(ctx, ids); err == nil && len(ids) > 0 {
				for eid, e := range entries {
					if e.Platform == domain && e.UniqueID == id {
						return eid
					}
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

// helperVersions is how ha_config_history restores a helper (id: its entity id; config: its fields
// with name, as update takes them): replaced, created again, or deleted.
func helperVersions() versionKind {
	read := func(ctx context.Context, d Deps, id string) (string, homeassistant.HelperItem, error) {
		domain, item, err := resolveHelper(ctx, d.HA, id)
		var te *toolkit.Error
		if errors.As(err, &te) && (te.Code == "not_found" || te.Code == "not_editable") {
			return domain, nil, nil
		}
		return domain, item, err
	}
	return versionKind{kind: KindHelper,
		read: func(ctx context.Context, d Deps, id string) (json.RawMessage, string, error) {
			_, item, err := read(ctx, d, id)
			if err != nil || item == nil {
				return nil, "", err
			}
			cfg := settingsOf(item)
			if cfg == nil {
				cfg = map[string]any{}
			}
			cfg["name"] = item.Name()
			raw, err := json.Marshal(cfg)
			return raw, item.Name(), err
		},
		check: func(ctx context.Context, d Deps, w *walk, id string, cfg json.RawMessage) {
			domain, _, _ := strings.Cut(id, ".")
			w.follow(ctx, "restore "+id, domain, "restore", sensitive.Target{EntityIDs: []string{id}})
		},
		write: func(ctx context.Context, d Deps, id string, cfg json.RawMessage) error {
			domain, item, err := read(ctx, d, id)
			if err != nil {
				return err
			}
			if domain == "" {
				domain, _, _ = strings.Cut(id, ".")
			}
			if cfg == nil {
				if item == nil {
					return nil
				}
				return d.HA.DeleteHelper(ctx, domain, item.ID())
			}
			var m map[string]any
			if err := json.Unmarshal(cfg, &m); err != nil {
				return err
			}
			if item == nil {
				return recreateHelper(ctx, d, domain, id, m)
			}
			_, err = d.HA.UpdateHelper(ctx, domain, item.ID(), m)
			return err
		},
	}
}

// recreateHelper brings a deleted helper back under its entity id. Home Assistant makes a new
// helper's id from its name, so one renamed before it was deleted would come back as another entity
// and every automation naming the old id would point at nothing: it is renamed to the old id, and
// taken out again if that fails, so a restore never leaves a stray copy behind.
func recreateHelper(ctx context.Context, d Deps, domain, entityID string, cfg map[string]any) error {
	if _, err := d.HA.EntityRegistryEntry(ctx, entityID); err == nil {
		return fmt.Errorf("%s belongs to another entity now; rename or remove that one first", entityID)
	}
	if _, taken := helperState(ctx, d.HA, entityID); taken {
		return fmt.Errorf("%s belongs to another entity now; rename or remove that one first", entityID)
	}
	item, err := d.HA.CreateHelper(ctx, domain, cfg)
	if err != nil {
		return err
	}
	made, ok, err := d.HA.FindEntity(ctx, func(r homeassistant.RegistryRow) bool { return r.Platform == domain && r.UniqueID == item.ID() })
	if err == nil && (!ok || made == entityID) {
		return nil // already under its id (or not in the registry, so named by its id)
	}
	if err == nil {
		_, err = d.HA.UpdateEntityRegistry(ctx, made, map[string]any{"new_entity_id": entityID})
	}
	if err != nil {
		if derr := d.HA.DeleteHelper(context.WithoutCancel(ctx), domain, item.ID()); derr != nil {
			return fmt.Errorf("the helper came back as %s but could not take its id %s (%v), and removing it failed: %w", made, entityID, err, derr)
		}
		return fmt.Errorf("the helper could not take its id %s back: %w", entityID, err)
	}
	return nil
}
