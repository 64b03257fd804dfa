package hatools

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/redact"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Entity is the compact view of a state: what a model needs to pick an entity and read it.
type Entity struct {
	EntityID    string         `json:"entity_id"`
	State       string         `json:"state"`
	Name        string         `json:"name,omitempty"`
	Unit        string         `json:"unit,omitempty"`
	DeviceClass string         `json:"device_class,omitempty"`
	LastChanged string         `json:"last_changed,omitempty"`
	LastUpdated string         `json:"last_updated,omitempty"`
	Attributes  map[string]any `json:"attributes,omitempty"`
}

func compact(s homeassistant.State, full bool) Entity {
	e := Entity{EntityID: s.EntityID, State: s.State, LastChanged: isoUTC(s.LastChanged)}
	if n, ok := s.Attributes["friendly_name"].(string); ok {
		e.Name = n
	}
	if u, ok := s.Attributes["unit_of_measurement"].(string); ok {
		e.Unit = u
	}
	if dc, ok := s.Attributes["device_class"].(string); ok {
		e.DeviceClass = dc
	}
	if full {
		e.LastUpdated = isoUTC(s.LastUpdated)
		e.Attributes = redact.Map(s.Attributes) // a lock's user codes, a camera's access token
	}
	return e
}

func isoUTC(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// project keeps only the requested fields of an entity.
func project(e Entity, fields []string) map[string]any {
	all := map[string]any{
		"entity_id": e.EntityID, "state": e.State, "name": e.Name, "unit": e.Unit,
		"device_class": e.DeviceClass, "last_changed": e.LastChanged, "last_updated": e.LastUpdated, "attributes": e.Attributes,
	}
	out := make(map[string]any, len(fields)+1)
	out["entity_id"] = e.EntityID
	for _, f := range fields {
		if v := all[f]; v != nil && v != "" {
			out[f] = v
		}
	}
	return out
}

// states reads all states from the mirror when it is live, and from HA otherwise: those the call's
// expose_scope lets it see (scope.go). Confirmations read readStates, which sees everything.
func states(ctx context.Context, ha *homeassistant.Client) ([]homeassistant.State, error) {
	all, err := readStates(ctx, ha, false)
	return inScope(ctx, all), err
}

// stateOf reads one entity the same way: the live mirror, else Home Assistant. A missing
// entity is a not_found error whose hint is next.
func stateOf(ctx context.Context, ha *homeassistant.Client, id, next string) (homeassistant.State, error) {
	if v := scopeOf(ctx); v != nil && !v.sees(id) {
		return homeassistant.State{}, toolkit.NotFound("no entity "+id+" among those exposed to Assist", next)
	}
	if m := ha.Mirror(); m != nil && m.Ready() && m.Live() {
		if s, ok := m.Get(id); ok {
			return s, nil
		}
		return homeassistant.State{}, toolkit.NotFound("no entity "+id, next)
	}
	s, err := ha.State(ctx, id)
	if err != nil {
		return s, haError(err, false, next)
	}
	return s, nil
}

// readStates serves states from the mirror while it is live (kept current by state_changed
// events), and from Home Assistant otherwise or when fresh is asked for. A mirror that lost its
// connection is not trusted: the caller gets HA's answer, or HA's error.
func readStates(ctx context.Context, ha *homeassistant.Client, fresh bool) ([]homeassistant.State, error) {
	if m := ha.Mirror(); !fresh && m != nil && m.Ready() && m.Live() {
		// Callers filter and sort copies; the shared snapshot is never written to.
		return m.Snapshot(), nil
	}
	return ha.States(ctx)
}

type getStatesArgs struct {
	Domain      string   `json:"domain,omitempty" validate:"omitempty,domain"`
	State       string   `json:"state,omitempty"`
	DeviceClass string   `json:"device_class,omitempty"`
	Search      string   `json:"search,omitempty" jsonschema:"text in id or name"`
	Area        string   `json:"area,omitempty" jsonschema:"area id or name"`
	Label       string   `json:"label,omitempty" jsonschema:"label id or name"`
	EntityIDs   []string `json:"entity_ids,omitempty" validate:"omitempty,max=200,dive,entity_id"`
	Fields      []string `json:"fields,omitempty" validate:"omitempty,dive,oneof=entity_id state name unit device_class last_changed last_updated attributes"`
	Detail      string   `json:"detail,omitempty" jsonschema:"full: all attributes (large)" validate:"omitempty,oneof=summary full"`
	Fresh       bool     `json:"fresh,omitempty" jsonschema:"bypass hamcp's live copy (slower; rarely needed)"`
	toolkit.Page
}

type getEntityArgs struct {
	EntityID string `json:"entity_id" validate:"required,entity_id" example:"light.kitchen"`
}

type callServiceArgs struct {
	Domain         string         `json:"domain" validate:"required,domain" example:"light"`
	Service        string         `json:"service" validate:"required,domain" example:"turn_on"`
	EntityID       []string       `json:"entity_id,omitempty" validate:"omitempty,max=100,dive,entity_id"`
	AreaID         []string       `json:"area_id,omitempty"`
	DeviceID       []string       `json:"device_id,omitempty"`
	LabelID        []string       `json:"label_id,omitempty"`
	Data           map[string]any `json:"data,omitempty" jsonschema:"e.g. {\"brightness_pct\": 50}"`
	ReturnResponse bool           `json:"return_response,omitempty" jsonschema:"for services that return data, e.g. weather.get_forecasts"`
}

type callServiceResult struct {
	// Targets says, for each entity the call targeted, what happened to it, so the outcome of a bulk
	// call is known without a second read.
	Targets  []targetOutcome `json:"targets,omitempty"`
	Outcomes map[string]int  `json:"outcomes,omitempty"` // outcome → count, with more than one target
	Changed  []Entity        `json:"changed"`
	Response any             `json:"response,omitempty"`
	Note     string          `json:"note,omitempty"`
}

// targetOutcome is what a service call did to one entity it targeted.
type targetOutcome struct {
	EntityID string `json:"entity_id"`
	// Outcome: changed (its state changed during the call), already (it was in the state the service
	// sets), unchanged, unavailable (the device is not reachable), not_found (no such entity).
	Outcome string `json:"outcome"`
	State   string `json:"state,omitempty"`
}

// maxTargetsShown bounds the per-entity list; the counts cover every target.
const maxTargetsShown = 50

// stateTools are the state tools, in the order tools/list shows them.
func stateTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{getStates(d), getEntityDetails(d), callService(d)}
}

// getStates is ha_get_states.
func getStates(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[getStatesArgs, toolkit.List[any]]{
		Name: "ha_get_states", Toolset: SetStates, Title: "List entity states",
		Description: "Entities with their current state, compact (entity_id, state, name, unit). " +
			"Filter rather than page through everything; fields or detail=full add attributes. Paged. " +
			"One entity: ha_get_entity_details; the past: ha_get_history.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a getStatesArgs) (toolkit.List[any], error) {
			return entityStates(ctx, d.HA, a)
		},
	})
}

// entityStates filters, sorts, pages and shapes the states ha_get_states returns.
func entityStates(ctx context.Context, ha *homeassistant.Client, a getStatesArgs) (toolkit.List[any], error) {
	all, err := readStates(ctx, ha, a.Fresh)
	if err != nil {
		return toolkit.List[any]{}, haError(err, false, "")
	}
	all = inScope(ctx, all)
	search := strings.ToLower(a.Search)
	inPlace, err := placeFilter(ctx, ha, a.Area, a.Label)
	if err != nil {
		return toolkit.List[any]{}, err
	}
	var picked []homeassistant.State
	for _, s := range all {
		if a.Domain != "" && s.Domain() != a.Domain ||
			a.State != "" && !strings.EqualFold(s.State, a.State) ||
			a.DeviceClass != "" && s.Attributes["device_class"] != a.DeviceClass ||
			len(a.EntityIDs) > 0 && !slices.Contains(a.EntityIDs, s.EntityID) ||
			search != "" && !strings.Contains(strings.ToLower(s.EntityID), search) && !strings.Contains(strings.ToLower(s.FriendlyName()), search) ||
			inPlace != nil && !inPlace(s.EntityID) {
			continue
		}
		picked = append(picked, s)
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i].EntityID < picked[j].EntityID })
	page := toolkit.Paginate(picked, a.Page)
	items := make([]any, len(page.Items))
	for i, s := range page.Items {
		e := compact(s, a.Detail == "full" || slices.Contains(a.Fields, "attributes"))
		if len(a.Fields) > 0 {
			items[i] = project(e, a.Fields)
		} else {
			items[i] = e
		}
	}
	return toolkit.List[any]{Total: page.Total, Count: page.Count, Offset: page.Offset, NextOffset: page.NextOffset, Items: items}, nil
}

// getEntityDetails is ha_get_entity_details.
func getEntityDetails(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[getEntityArgs, Entity]{
		Name: "ha_get_entity_details", Toolset: SetStates, Title: "Get one entity",
		Description: "One entity's full state: all attributes (supported features, options, units) and times. " +
			"Read it before controlling an unfamiliar entity; for many entities use ha_get_states, not a loop.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a getEntityArgs) (Entity, error) {
			s, err := stateOf(ctx, d.HA, a.EntityID, "find entity ids with ha_get_states (search, domain)")
			if err != nil {
				return Entity{}, err
			}
			return compact(s, true), nil
		},
	})
}

// callService is ha_call_service.
func callService(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[callServiceArgs, callServiceResult]{
		Name: "ha_call_service", Toolset: SetStates, Title: "Call a service", Conditional: serviceGrant, Confirm: callServiceConfirm(d),
		Description: "Call a service (action) to control devices, e.g. light.turn_on, climate.set_temperature. " +
			"Target with entity_id (preferred), area_id, device_id or label_id; parameters in data. Returns each target's outcome (changed, already, unchanged, unavailable) and the changed states. " +
			"Unsure what an entity supports: ha_get_entity_details. " +
			"The user confirms unlock, disarm, garage door open, restart and delete, also via scripts, scenes or automations. " +
			"Services that run code or change the system (hassio.*, shell_command.*, python_script.*, update.install…) need the user's command permission. " +
			"Not for reading state.",
		Destructive: true,
		Summary: func(a callServiceArgs) string {
			// Never the data: it carries the alarm or lock code of a disarm or an unlock.
			return fmt.Sprintf("%s.%s %v", a.Domain, a.Service, a.EntityID)
		},
		Handler: func(ctx context.Context, c *toolkit.Call, a callServiceArgs) (callServiceResult, error) {
			return runService(ctx, d, c, a)
		},
	})
}

// runService calls the service over REST, which reports the states the call changed.
func runService(ctx context.Context, d Deps, c *toolkit.Call, a callServiceArgs) (callServiceResult, error) {
	ha := d.HA
	data := maps.Clone(a.Data)
	if data == nil {
		data = map[string]any{}
	}
	for key, ids := range map[string][]string{"entity_id": a.EntityID, "area_id": a.AreaID, "device_id": a.DeviceID, "label_id": a.LabelID} {
		if len(ids) > 0 {
			data[key] = ids
		}
	}
	targets := serviceTargets(ctx, d, a)
	before, read := statesOf(ctx, ha, targets)
	changed, resp, err := ha.CallService(ctx, a.Domain, a.Service, data, a.ReturnResponse)
	if err != nil {
		return callServiceResult{}, haError(err, false, "check the service name with the entity's domain and the data it accepts; ha_get_entity_details shows supported features")
	}
	out := callServiceResult{Changed: make([]Entity, 0, len(changed))}
	for _, s := range changed {
		out.Changed = append(out.Changed, compact(s, false))
	}
	if len(resp) > 0 {
		out.Response = redact.Value(resp) // a service's answer can carry codes (a lock's user codes)
	}
	out.Targets, out.Outcomes = outcomes(a.Service, targets, before, read, changed)
	registerServiceUndo(c, a, targets, before, read)
	if len(changed) == 0 && !a.ReturnResponse {
		out.Note = "the call succeeded but no state changed (the target may already be in that state, or the device reports later)"
	}
	return out, nil
}

// serviceTargets are the entities a call acts on, as Home Assistant's service helper picks them:
// the entity ids given (in the arguments or the data), and the entities of the service's domain in
// the areas, devices and labels given (any domain for homeassistant.*). Templated targets are not
// resolved here: those calls report their changed states only.
func serviceTargets(ctx context.Context, d Deps, a callServiceArgs) []string {
	t := serviceTarget(a)
	if t.Templated {
		return nil
	}
	ids, all := newWalk(d).reach(ctx, t)
	if all {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		named := slices.Contains(t.EntityIDs, id)
		if seen[id] || !named && a.Domain != "homeassistant" && !strings.HasPrefix(id, a.Domain+".") {
			continue // an area's other entities: the service acts on its own domain's
		}
		seen[id] = true
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// UndoState is the type of the undo ha_call_service registers: put the targets back (StateUndo).
const UndoState = "state"

// StateUndo is the reference of a UndoState undo: the targets as they were before the call.
type StateUndo struct {
	Entities []EarlierState `json:"entities"`
}

// EarlierState is one target before the call: its state and the attributes a restore sets.
type EarlierState struct {
	EntityID   string         `json:"entity_id"`
	State      string         `json:"state"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// undoableServices are, per domain, the services whose effect is taken back by putting the targets'
// earlier state back ("*": all of the domain's). Whatever else a call does (a notification sent, a
// lock opened, a script run, media played) cannot be taken back.
var undoableServices = map[string][]string{
	"light":         {"*"},
	"switch":        {"*"},
	"input_boolean": {"*"},
	"fan":           {"turn_on", "turn_off", "toggle", "set_percentage", "increase_speed", "decrease_speed"},
	"cover":         {"open_cover", "close_cover", "set_cover_position", "stop_cover", "toggle"},
	"climate":       {"set_temperature", "set_hvac_mode", "turn_on", "turn_off", "toggle"},
	"media_player":  {"volume_set", "volume_up", "volume_down", "volume_mute"},
}

// restoredAttributes are the attributes a restore sets again; the others (pictures with access
// tokens among them) are not kept.
var restoredAttributes = []string{"brightness", "color_mode", "hs_color", "xy_color", "rgb_color", "rgbw_color",
	"rgbww_color", "color_temp_kelvin", "current_position", "supported_features", "temperature", "target_temp_low",
	"target_temp_high", "percentage", "volume_level", "is_volume_muted"}

// EarlierStateOf keeps of s what putting it back needs.
func EarlierStateOf(s homeassistant.State) EarlierState {
	e := EarlierState{EntityID: s.EntityID, State: s.State}
	for _, k := range restoredAttributes {
		if v, ok := s.Attributes[k]; ok {
			if e.Attributes == nil {
				e.Attributes = map[string]any{}
			}
			e.Attributes[k] = v
		}
	}
	return e
}

func undoableService(entityDomain, domain, service string) bool {
	if domain == "homeassistant" {
		switch service {
		case "turn_on", "turn_off", "toggle":
			domain = entityDomain
			service = "turn_on"
		default:
			return false
		}
	}
	if entityDomain != domain {
		return false
	}
	list := undoableServices[domain]
	return slices.Contains(list, "*") || slices.Contains(list, service)
}

// registerServiceUndo tells the audit log how to take the call back: the targets' earlier states,
// for the domains whose state can be put back, or why it cannot be.
func registerServiceUndo(c *toolkit.Call, a callServiceArgs, targets []string, before map[string]homeassistant.State, read bool) {
	if c == nil {
		return
	}
	service := a.Domain + "." + a.Service
	var ref StateUndo
	for _, id := range targets {
		domain, _, _ := strings.Cut(id, ".")
		s, ok := before[id]
		if !ok || s.State == "unavailable" || s.State == "unknown" || !undoableService(domain, a.Domain, a.Service) {
			continue
		}
		ref.Entities = append(ref.Entities, EarlierStateOf(s))
	}
	switch {
	case len(ref.Entities) > 0:
		ids := make([]string, len(ref.Entities))
		for i, e := range ref.Entities {
			ids[i] = e.EntityID
		}
		note := "Undo puts " + strings.Join(ids, ", ") + " back as before " + service + "."
		if n := len(targets) - len(ids); n > 0 {
			note += fmt.Sprintf(" %d other target(s) cannot be put back.", n)
		}
		c.Undoable(toolkit.UndoOf(UndoState, ref, note))
	case len(undoableServices[a.Domain]) == 0 && a.Domain != "homeassistant":
		c.NotUndoable(service + " cannot be taken back: hamcp restores only lights, switches, fans, covers, climate and media volume.")
	case len(targets) == 0 || !read:
		c.NotUndoable("hamcp could not tell which entities " + service + " acted on, or read them before the call, so it cannot put them back.")
	default:
		c.NotUndoable("hamcp cannot put back what " + service + " did to " + strings.Join(targets, ", ") + ".")
	}
}

// statesOf reads the targets' states before the call: from the mirror, one lookup each, when it is
// live (the common case: no copy of the whole home on every call), else from Home Assistant. read
// is false when neither could be read.
func statesOf(ctx context.Context, ha *homeassistant.Client, ids []string) (states map[string]homeassistant.State, read bool) {
	states = make(map[string]homeassistant.State, len(ids))
	if len(ids) == 0 {
		return states, false
	}
	if m := ha.Mirror(); m != nil && m.Live() {
		for _, id := range ids {
			if s, ok := m.Get(id); ok {
				states[id] = s
			}
		}
		return states, true
	}
	all, err := ha.States(ctx)
	if err != nil {
		return states, false
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for _, s := range all {
		if want[s.EntityID] {
			states[s.EntityID] = s
		}
	}
	return states, true
}

// settles are the states common services set, so that a target already there reads "already".
var settles = map[string]string{
	"turn_on": "on", "turn_off": "off", "lock": "locked", "unlock": "unlocked", "open_cover": "open",
	"close_cover": "closed", "alarm_disarm": "disarmed", "alarm_arm_away": "armed_away", "alarm_arm_home": "armed_home",
	"alarm_arm_night": "armed_night", "open_valve": "open", "close_valve": "closed", "media_pause": "paused",
	"media_play": "playing", "media_stop": "idle",
}

// outcomes compares each target's state before the call with the states the call changed.
func outcomes(service string, targets []string, before map[string]homeassistant.State, read bool, changed []homeassistant.State) ([]targetOutcome, map[string]int) {
	if len(targets) == 0 {
		return nil, nil
	}
	after := make(map[string]string, len(changed))
	for _, s := range changed {
		after[s.EntityID] = s.State
	}
	list := make([]targetOutcome, 0, len(targets))
	counts := map[string]int{}
	for _, id := range targets {
		o := targetOutcome{EntityID: id}
		was, known := before[id]
		now, didChange := after[id]
		switch {
		case didChange:
			o.Outcome, o.State = "changed", now
		case !known && read:
			o.Outcome = "not_found"
		case !known:
			o.Outcome = "unchanged" // the states could not be read before the call
		case was.State == "unavailable" || was.State == "unknown":
			o.Outcome, o.State = "unavailable", was.State
		case settles[service] != "" && was.State == settles[service]:
			o.Outcome, o.State = "already", was.State
		default:
			o.Outcome, o.State = "unchanged", was.State
		}
		counts[o.Outcome]++
		list = append(list, o)
	}
	if len(list) > maxTargetsShown {
		return list[:maxTargetsShown], counts
	}
	if len(list) == 1 {
		counts = nil
	}
	return list, counts
}
