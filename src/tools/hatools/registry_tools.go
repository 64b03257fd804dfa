package hatools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Registry edits (issue 21): areas, floors, zones, labels and categories, and the registry settings
// of entities and devices. Most are bookkeeping and pass without asking; what they decide is what a
// target reaches and what counts as sensitive, so design.md §5b rule 2 applies: moving, relabelling,
// disabling, hiding, renaming or re-classing a lock, an alarm panel, a garage door or gate or an
// opener (or a device or area holding one), exposing one to Assist, and changing a zone the user's
// automations trigger on are confirmed by the user; deletes are deletes.

// registryKinds are ha_manage_registry's kinds, with the fields each takes (create and update) and
// the ones create needs.
var registryKinds = map[string]struct {
	fields, required []string
}{
	"area":     {[]string{"name", "aliases", "floor_id", "icon", "labels", "picture", "humidity_entity_id", "temperature_entity_id"}, []string{"name"}},
	"floor":    {[]string{"name", "aliases", "icon", "level"}, []string{"name"}},
	"label":    {[]string{"name", "color", "description", "icon"}, []string{"name"}},
	"category": {[]string{"name", "icon"}, []string{"name"}},
	"zone":     {[]string{"name", "latitude", "longitude", "radius", "passive", "icon"}, []string{"name", "latitude", "longitude"}},
}

// registryFieldExample is a good fields value per kind, for errors.
var registryFieldExample = map[string]string{
	"area":     `{"name": "Attic", "floor_id": "first_floor", "labels": ["climate"]}`,
	"floor":    `{"name": "Basement", "level": -1}`,
	"label":    `{"name": "Holiday", "color": "red", "icon": "mdi:pine-tree"}`,
	"category": `{"name": "Security", "icon": "mdi:shield"}`,
	"zone":     `{"name": "School", "latitude": 52.37, "longitude": 4.89, "radius": 150}`,
}

type manageRegistryArgs struct {
	Action string         `json:"action" validate:"required,oneof=create update delete"`
	Kind   string         `json:"kind" validate:"required,oneof=area floor zone label category"`
	ID     string         `json:"id,omitempty" jsonschema:"update, delete" validate:"omitempty,max=255"`
	Scope  string         `json:"scope,omitempty" jsonschema:"category: automation, script, helpers…" validate:"omitempty,max=64"`
	Fields map[string]any `json:"fields,omitempty" jsonschema:"create, update"`
}

type registrySaved struct {
	Action string         `json:"action"`
	Kind   string         `json:"kind"`
	ID     string         `json:"id"`
	Item   map[string]any `json:"item,omitempty"`
	// Version is the earlier version hamcp kept (ha_config_history restore takes the change back).
	Version int    `json:"version,omitempty"`
	Note    string `json:"note,omitempty"`
}

func registryTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{manageRegistry(d), updateEntity(d), updateDevice(d)}
}

// manageRegistry is ha_manage_registry.
func manageRegistry(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageRegistryArgs, registrySaved]{
		Name: "ha_manage_registry", Toolset: SetOrganisation, Title: "Manage areas, floors, zones, labels, categories",
		Description: "create (returns the id), update (id; only the fields to change) or delete (id) an item; categories need scope. " +
			"fields: area name aliases floor_id icon labels picture; floor name level icon aliases; label name color icon description; category name icon; zone name latitude longitude radius passive icon. " +
			"The user confirms deletes, an area's labels or floor when it holds a lock, alarm or garage door, and changes to zones their automations use. Entities: ha_update_entity.",
		Destructive: true, Confirm: manageRegistryConfirm(d),
		Summary: func(a manageRegistryArgs) string { return a.Action + " " + a.Kind + " " + a.ID },
		Handler: func(ctx context.Context, c *toolkit.Call, a manageRegistryArgs) (registrySaved, error) {
			fields, err := checkRegistryArgs(a)
			if err != nil {
				return registrySaved{}, err
			}
			if err := checkRegistryRefs(ctx, d, fields); err != nil {
				return registrySaved{}, err
			}
			if a.Action == "create" {
				return createRegistryItem(ctx, d, c, a, fields)
			}
			return changeRegistryItem(ctx, d, c, a, fields)
		},
	})
}

// checkRegistryArgs checks the arguments as far as they can be checked without Home Assistant and
// returns the fields to send (a single label or alias given as a string becomes a list).
func checkRegistryArgs(a manageRegistryArgs) (map[string]any, error) {
	spec, ok := registryKinds[a.Kind]
	if !ok {
		return nil, toolkit.InvalidArg("kind", "must be one of area, floor, zone, label, category", `"area"`)
	}
	if a.Kind == "category" && strings.TrimSpace(a.Scope) == "" {
		return nil, toolkit.InvalidArg("scope", "is required for categories: the list they belong to (automation, script, helpers, …)", `{"kind": "category", "scope": "automation"}`)
	}
	switch a.Action {
	case "create":
		if a.ID != "" {
			return nil, toolkit.InvalidArg("id", "is chosen by Home Assistant on create (from the name); leave it out", "")
		}
	case "update", "delete":
		if strings.TrimSpace(a.ID) == "" {
			return nil, toolkit.InvalidArg("id", "is required for "+a.Action+": the "+a.Kind+"'s id (ha_list_areas and ha_list_labels list areas and labels)", `{"id": "kitchen"}`)
		}
	default:
		return nil, toolkit.InvalidArg("action", "must be create, update or delete", `"create"`)
	}
	if a.Action == "delete" {
		if len(a.Fields) > 0 {
			return nil, toolkit.InvalidArg("fields", "are not taken by delete", "")
		}
		return nil, nil
	}
	if len(a.Fields) == 0 {
		return nil, toolkit.InvalidArg("fields", "is required for "+a.Action+": the "+a.Kind+"'s "+strings.Join(spec.fields, ", "), registryFieldExample[a.Kind])
	}
	return registryFields(a.Kind, a.Action == "create", a.Fields)
}

// registryFields validates fields for kind: only the kind's keys, the ones create needs, and the
// type of each, with errors that name the key.
func registryFields(kind string, create bool, fields map[string]any) (map[string]any, error) {
	spec := registryKinds[kind]
	bad := func(key, rule string) error {
		return toolkit.InvalidArg("fields."+key, rule, registryFieldExample[kind])
	}
	out := make(map[string]any, len(fields))
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(spec.fields, k) {
			return nil, bad(k, "is not a field of a "+kind+"; its fields are "+strings.Join(spec.fields, ", "))
		}
		v, err := registryValue(k, fields[k])
		if err != "" {
			return nil, bad(k, err)
		}
		out[k] = v
	}
	if create {
		for _, k := range spec.required {
			if out[k] == nil {
				return nil, bad(k, "is required to create a "+kind)
			}
		}
	} else if v, ok := fields["name"]; ok && v == nil {
		return nil, bad("name", "cannot be removed, only changed")
	}
	return out, nil
}

// registryValue checks one field's value; the text says what is wrong.
func registryValue(key string, v any) (any, string) {
	switch key {
	case "aliases", "labels":
		return stringList(v)
	case "latitude", "longitude":
		n, ok := v.(float64)
		limit := map[string]float64{"latitude": 90, "longitude": 180}[key]
		if !ok || math.Abs(n) > limit {
			return nil, fmt.Sprintf("must be a number from -%v to %v", limit, limit)
		}
		return n, ""
	case "radius":
		if n, ok := v.(float64); !ok || n <= 0 || n > 1e7 {
			return nil, "must be a positive number of metres"
		}
		return v, ""
	case "level":
		if n, ok := v.(float64); v != nil && (!ok || n != math.Trunc(n) || math.Abs(n) > 1000) {
			return nil, "must be a whole number (0 = ground floor) or null"
		}
		return v, ""
	case "passive":
		if _, ok := v.(bool); !ok {
			return nil, "must be true or false"
		}
		return v, ""
	case "name":
		if s, ok := v.(string); !ok || strings.TrimSpace(s) == "" || len(s) > 255 {
			return nil, "must be a non-empty text"
		}
		return v, ""
	case "icon":
		if s, ok := v.(string); v != nil && (!ok || !strings.Contains(s, ":")) {
			return nil, `must be an icon as "prefix:name", e.g. "mdi:sofa", or null`
		}
		return v, ""
	}
	if _, ok := v.(string); v != nil && !ok {
		return nil, "must be a text or null"
	}
	return v, ""
}

// stringList takes a list of texts, or one text.
func stringList(v any) (any, string) {
	switch x := v.(type) {
	case string:
		return []string{x}, ""
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, "must be a list of texts"
			}
			out = append(out, s)
		}
		return out, ""
	case []string:
		return x, ""
	}
	return nil, "must be a list of texts"
}

// checkRegistryRefs refuses floors, areas and labels that do not exist: Home Assistant stores an
// unknown id without a word, and the target then reaches nothing.
func checkRegistryRefs(ctx context.Context, d Deps, fields map[string]any) error {
	floor, hasFloor := fields["floor_id"].(string)
	area, hasArea := fields["area_id"].(string)
	labels, _ := fields["labels"].([]string)
	if !hasFloor && !hasArea && len(labels) == 0 {
		return nil
	}
	reg, err := fetchRegistry(ctx, d.HA) // fresh: an item made a moment ago counts
	if err != nil {
		return haError(err, false, "")
	}
	if _, ok := reg.floors[floor]; hasFloor && !ok {
		names := slices.Sorted(maps.Keys(reg.floors))
		return toolkit.InvalidArg("floor_id", "is not a floor of this home (got "+floor+"); floors: "+strings.Join(names, ", "), "")
	}
	if hasArea && reg.area(area) == nil {
		return reg.areaNotFound("area_id", area)
	}
	for _, l := range labels {
		if !slices.ContainsFunc(reg.labels, func(x *homeassistant.Label) bool { return x.ID == l }) {
			return reg.labelNotFound("labels", l)
		}
	}
	return nil
}

// registryTitle is an item's name, for the history's list.
func registryTitle(item map[string]any) string { s, _ := item["name"].(string); return s }

// historyID is the id the history keeps an item under: categories are scope/category_id.
func historyID(kind, scope, id string) string {
	if kind == "category" {
		return scope + "/" + id
	}
	return id
}

func registryNotFound(a manageRegistryArgs) error {
	hint := map[string]string{"area": "ha_list_areas lists the areas", "label": "ha_list_labels lists the labels"}[a.Kind]
	return toolkit.NotFound("no "+a.Kind+" with id "+a.ID, cmp.Or(hint, "ha_config_history lists what assistants changed"))
}

func createRegistryItem(ctx context.Context, d Deps, c *toolkit.Call, a manageRegistryArgs, fields map[string]any) (registrySaved, error) {
	kind := homeassistant.RegistryKind(a.Kind)
	item, err := d.HA.CreateRegistryItem(ctx, kind, a.Scope, fields)
	if err != nil {
		return registrySaved{}, registryWriteError(err, a)
	}
	registryChanged(d)
	id := itemID(kind, item)
	k, err := d.keep(ctx, c, a.Kind, historyID(a.Kind, a.Scope, id), registryTitle(item), confighistory.Created, nil)
	if err != nil {
		// Nothing is made that hamcp cannot take back: the new item goes again.
		if derr := d.HA.DeleteRegistryItem(ctx, kind, a.Scope, id); derr != nil {
			return registrySaved{}, alsoTry(err, "the new "+a.Kind+" "+id+" stays: delete it with action delete")
		}
		return registrySaved{}, err
	}
	return registrySaved{Action: a.Action, Kind: a.Kind, ID: id, Item: compactItem(item), Version: k.version()}, nil
}

func changeRegistryItem(ctx context.Context, d Deps, c *toolkit.Call, a manageRegistryArgs, fields map[string]any) (registrySaved, error) {
	kind := homeassistant.RegistryKind(a.Kind)
	before, ok, err := d.HA.RegistryItem(ctx, kind, a.Scope, a.ID)
	if err != nil {
		return registrySaved{}, haWSError(err, a.Kind+"s", false, "")
	}
	if !ok {
		return registrySaved{}, registryNotFound(a)
	}
	change := map[string]string{"update": confighistory.Updated, "delete": confighistory.Deleted}[a.Action]
	k, err := d.keep(ctx, c, a.Kind, historyID(a.Kind, a.Scope, a.ID), registryTitle(before), change, compactItem(before))
	if err != nil {
		return registrySaved{}, err
	}
	out := registrySaved{Action: a.Action, Kind: a.Kind, ID: a.ID}
	if a.Action == "delete" {
		err = d.HA.DeleteRegistryItem(ctx, kind, a.Scope, a.ID)
	} else {
		var item map[string]any
		item, err = d.HA.UpdateRegistryItem(ctx, kind, a.Scope, a.ID, fields)
		out.Item = compactItem(item)
	}
	if err != nil {
		k.undo(ctx)
		return registrySaved{}, registryWriteError(err, a)
	}
	registryChanged(d)
	out.Version = k.version()
	return out, nil
}

// itemID is a created item's id: under the kind's id key, "id" for a zone.
func itemID(kind homeassistant.RegistryKind, item map[string]any) string {
	if kind == homeassistant.RegistryZone {
		return fmt.Sprint(item["id"])
	}
	return fmt.Sprint(item[kind.IDKey()])
}

// compactItem drops what the model does not need: timestamps and empty members.
func compactItem(item map[string]any) map[string]any {
	if item == nil {
		return nil
	}
	out := make(map[string]any, len(item))
	for k, v := range item {
		if k == "created_at" || k == "modified_at" || v == nil {
			continue
		}
		if l, ok := v.([]any); ok && len(l) == 0 {
			continue
		}
		out[k] = v
	}
	return out
}

// registryWriteError words Home Assistant's refusals: invalid_info (a name in use, a missing id) and
// invalid_format (a field it does not take) are the model's to fix; nothing was changed.
func registryWriteError(err error, a manageRegistryArgs) error {
	var api *homeassistant.APIError
	if errors.As(err, &api) {
		switch api.Code {
		case "invalid_info", "invalid_format":
			return toolkit.InvalidArg("fields", "Home Assistant refused it: "+api.Message+"; nothing was changed", registryFieldExample[a.Kind])
		case "not_found", "unknown_error":
			if a.Action != "create" {
				return registryNotFound(a)
			}
		}
	}
	return haWSError(err, a.Kind+"s", false, "nothing was changed; read the error, then try again")
}

// registryChanged drops what hamcp knows of the registries after it changed one, so the next
// decision sees the change before Home Assistant's event arrives.
func registryChanged(d Deps) {
	registryOf(d.HA).invalidate()
	if a, ok := authorities.Load(d.HA); ok {
		a.(*authority).marked.invalidate()
		a.(*authority).triggers.invalidate()
	}
}

// manageRegistryConfirm: deletes are deletes; an area's labels and floor decide what label and floor
// targets reach, so changing them for an area holding something sensitive is confirmed; a zone's
// place and size decide when the user's zone automations run.
func manageRegistryConfirm(d Deps) *toolkit.Confirm[manageRegistryArgs] {
	return &toolkit.Confirm[manageRegistryArgs]{
		When: "delete (`delete`); an area's labels or floor when it holds a lock, alarm panel, garage door or opener; a zone your automations trigger on when they do something sensitive",
		Check: func(ctx context.Context, c *toolkit.Call, a manageRegistryArgs) (toolkit.Ask, error) {
			if _, err := checkRegistryArgs(a); err != nil {
				return toolkit.Ask{}, nil // the handler refuses it with the reason
			}
			w := newWalk(d)
			what := fmt.Sprintf("%s the %s %s", titleCase(a.Action), a.Kind, cmp.Or(a.ID, registryTitle(a.Fields)))
			var always []sensitive.Class
			if a.Action == "delete" {
				always = append(always, sensitive.Delete)
				what += " (hamcp keeps it: ha_config_history can restore it)"
			}
			switch a.Kind {
			case "zone":
				w.zoneTriggers(ctx, a)
			case "area":
				_, labels := a.Fields["labels"]
				_, floor := a.Fields["floor_id"]
				if a.Action == "update" && (labels || floor) {
					if reg := w.registry(ctx); reg == nil {
						w.hits = append(w.hits, sensitive.Unknown("change what label and floor targets reach: hamcp cannot read the registries")...)
					} else {
						w.guarded(ctx, reg.reached(sensitive.Target{AreaIDs: []string{a.ID}}), "relabel or move to another floor the area "+a.ID+", which holds")
					}
				}
			}
			return w.ask(what, always...)
		},
	}
}

// zoneTriggers adds what the user's automations triggered by the zone do: moving, resizing, making
// passive or deleting a zone starts or stops them.
func (w *walk) zoneTriggers(ctx context.Context, a manageRegistryArgs) {
	name := registryTitle(a.Fields)
	var ids []string
	for _, s := range []string{a.ID, haSlugify(name)} {
		if s != "" && !slices.Contains(ids, "zone."+s) {
			ids = append(ids, "zone."+s)
		}
	}
	if a.ID != "" { // a renamed zone keeps its first entity id: find it by the name it shows
		if item, ok, err := w.d.HA.RegistryItem(ctx, homeassistant.RegistryZone, "", a.ID); err == nil && ok {
			w.load(ctx)
			for id, s := range w.states {
				if strings.HasPrefix(id, "zone.") && s.FriendlyName() == registryTitle(item) && !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	ix := w.triggers(ctx)
	if ix == nil {
		w.unreadable("a change to the zone " + cmp.Or(a.ID, name))
		return
	}
	slices.Sort(ids)
	for _, id := range ids {
		w.fact("zone", id)
		for _, auto := range ix.byEntity[id] {
			w.startedBy(ctx, ix, auto, "a change to "+id)
		}
	}
}

// guarded adds, for each of ids that is sensitive (a lock, an alarm panel, a garage door or gate by
// the registry's device class, or an entity the user marked or an opener beside one), that change
// affects it.
func (w *walk) guarded(ctx context.Context, ids []string, change string) {
	w.load(ctx)
	w.markedSet(ctx)
	slices.Sort(ids)
	w.classes(ctx, ids)
	for _, id := range ids {
		e := w.entity(id)
		var hits []sensitive.Hit
		if guardedEntity(id, e.DeviceClass) {
			hits = sensitive.Service("homeassistant", "toggle", []sensitive.Entity{e}, true)
		}
		hits = append(hits, sensitive.Marked(e, "use")...)
		seen := map[sensitive.Class]bool{}
		for _, h := range hits {
			if !seen[h.Class] {
				seen[h.Class] = true
				w.hits = append(w.hits, sensitive.Hit{Class: h.Class, What: change + " " + entityLabel(e)})
			}
		}
	}
}

func entityLabel(e sensitive.Entity) string {
	if e.Name != "" && e.Name != e.ID {
		return e.ID + " (" + e.Name + ")"
	}
	return e.ID
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ---- ha_update_entity

type updateEntityArgs struct {
	EntityID    string   `json:"entity_id" validate:"required,entity_id"`
	Name        *string  `json:"name,omitempty"`
	Icon        *string  `json:"icon,omitempty"`
	AreaID      *string  `json:"area_id,omitempty" jsonschema:"\"\" = the device's"`
	Labels      []string `json:"labels,omitempty" jsonschema:"label ids"`
	Aliases     []string `json:"aliases,omitempty"`
	Enabled     *bool    `json:"enabled,omitempty"`
	Hidden      *bool    `json:"hidden,omitempty"`
	DeviceClass *string  `json:"device_class,omitempty" jsonschema:"show as; \"\" resets"`
	NewEntityID string   `json:"new_entity_id,omitempty" jsonschema:"rename" validate:"omitempty,entity_id"`
	Expose      *bool    `json:"expose,omitempty" jsonschema:"to Assist"`
}

type entityView struct {
	EntityID    string   `json:"entity_id"`
	Name        string   `json:"name,omitempty"`
	Icon        string   `json:"icon,omitempty"`
	AreaID      string   `json:"area_id,omitempty"`
	Labels      []string `json:"labels,omitempty"`
	Aliases     []string `json:"aliases,omitempty"`
	DeviceClass string   `json:"device_class,omitempty"`
	DisabledBy  string   `json:"disabled_by,omitempty"`
	HiddenBy    string   `json:"hidden_by,omitempty"`
	Exposed     *bool    `json:"exposed_to_assist,omitempty"`
	Version     int      `json:"version,omitempty"`
	Note        string   `json:"note,omitempty"`
}

// updateEntity is ha_update_entity.
func updateEntity(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[updateEntityArgs, entityView]{
		Name: "ha_update_entity", Toolset: SetOrganisation, Title: "Change an entity's settings",
		Description: "Change an entity's registry settings; give only what changes. The user confirms, for a lock, alarm, garage door or opener: area, labels, device_class, " +
			"disable, hide, rename, expose (also exposing scripts or scenes reaching one). Lists replace; \"\" resets a text. Devices: ha_update_device.",
		Destructive: true, Idempotent: true, Confirm: updateEntityConfirm(d),
		Summary: func(a updateEntityArgs) string { return a.EntityID },
		Handler: func(ctx context.Context, c *toolkit.Call, a updateEntityArgs) (entityView, error) {
			return changeEntity(ctx, d, c, a)
		},
	})
}

// entityFields is the update to send; empty when only the exposure changes.
func entityFields(a updateEntityArgs) map[string]any {
	f := map[string]any{}
	nullable := func(key string, p *string) {
		if p != nil {
			if *p == "" {
				f[key] = nil
			} else {
				f[key] = *p
			}
		}
	}
	nullable("name", a.Name)
	nullable("icon", a.Icon)
	nullable("area_id", a.AreaID)
	nullable("device_class", a.DeviceClass)
	if a.Labels != nil {
		f["labels"] = a.Labels
	}
	if a.Aliases != nil {
		f["aliases"] = a.Aliases
	}
	userOr := func(key string, set *bool, on bool) {
		if set != nil {
			if *set == on {
				f[key] = "user"
			} else {
				f[key] = nil
			}
		}
	}
	userOr("disabled_by", a.Enabled, false)
	userOr("hidden_by", a.Hidden, true)
	if a.NewEntityID != "" && a.NewEntityID != a.EntityID {
		f["new_entity_id"] = a.NewEntityID
	}
	return f
}

// entityKept is what the history keeps of an entity: the settings this tool changes.
var entityKept = []string{"entity_id", "name", "icon", "area_id", "labels", "aliases", "device_class", "disabled_by", "hidden_by"}

func keptOf(entry map[string]any, keys []string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := entry[k]; ok {
			out[k] = v
		}
	}
	return out
}

func changeEntity(ctx context.Context, d Deps, c *toolkit.Call, a updateEntityArgs) (entityView, error) {
	fields := entityFields(a)
	if len(fields) == 0 && a.Expose == nil {
		return entityView{}, toolkit.InvalidArg("name", "give at least one setting to change (name, icon, area_id, labels, aliases, enabled, hidden, device_class, new_entity_id, expose)", `{"entity_id": "light.kitchen", "name": "Kitchen ceiling"}`)
	}
	if nid := a.NewEntityID; nid != "" && !strings.HasPrefix(nid, strings.SplitN(a.EntityID, ".", 2)[0]+".") {
		return entityView{}, toolkit.InvalidArg("new_entity_id", "must keep the domain of "+a.EntityID, `{"new_entity_id": "`+strings.SplitN(a.EntityID, ".", 2)[0]+`.new_name"}`)
	}
	if err := checkRegistryRefs(ctx, d, fields); err != nil {
		return entityView{}, err
	}
	before, err := d.HA.EntityRegistryEntry(ctx, a.EntityID)
	if err != nil {
		return entityView{}, entityError(err, a.EntityID)
	}
	kept := keptOf(before, entityKept)
	kept["registry_id"] = before["id"]
	if a.Expose != nil {
		kept["exposed_to_assist"] = exposedToAssist(ctx, d, a.EntityID)
	}
	// A renamed entity's history goes on under its new id, where the user and the model will look
	// for it; the kept entity_id is the old one, so restoring it renames the entity back.
	item := a.EntityID
	if nid, ok := fields["new_entity_id"].(string); ok {
		item = nid
	}
	k, err := d.keep(ctx, c, KindEntity, item, cmp.Or(stringOf(before["name"]), stringOf(before["original_name"]), a.EntityID), confighistory.Updated, kept)
	if err != nil {
		return entityView{}, err
	}
	entry, res := before, homeassistant.EntityUpdateResult{}
	if len(fields) > 0 {
		if res, err = d.HA.UpdateEntityRegistry(ctx, a.EntityID, fields); err != nil {
			k.undo(ctx)
			return entityView{}, entityError(err, a.EntityID)
		}
		entry = res.Entry
		registryChanged(d)
	}
	out := viewOf(entry)
	if a.Expose != nil {
		if err := d.HA.ExposeEntities(ctx, []string{"conversation"}, []string{out.EntityID}, *a.Expose); err != nil {
			return entityView{}, haWSError(err, "voice assistant exposure", len(fields) > 0, "the other settings were saved; try the exposure again")
		}
		out.Exposed = a.Expose
	}
	out.Version = k.version()
	switch {
	case res.RequireRestart:
		out.Note = "enabled: it appears after Home Assistant restarts"
	case res.ReloadDelay > 0:
		out.Note = fmt.Sprintf("enabled: it appears in about %d s, when its integration reloads", res.ReloadDelay)
	}
	return out, nil
}

func viewOf(e map[string]any) entityView {
	list := func(k string) []string {
		l, _ := stringList(e[k])
		s, _ := l.([]string)
		return s
	}
	return entityView{EntityID: stringOf(e["entity_id"]), Name: stringOf(e["name"]), Icon: stringOf(e["icon"]), AreaID: stringOf(e["area_id"]),
		Labels: list("labels"), Aliases: list("aliases"), DeviceClass: stringOf(e["device_class"]),
		DisabledBy: stringOf(e["disabled_by"]), HiddenBy: stringOf(e["hidden_by"])}
}

// exposedToAssist is the entity's Assist setting: nil when the user set none (HA's default applies).
func exposedToAssist(ctx context.Context, d Deps, id string) *bool {
	all, err := d.HA.ExposedEntities(ctx)
	if err != nil {
		return nil
	}
	if v, ok := all[id]["conversation"]; ok {
		return &v
	}
	return nil
}

func entityError(err error, id string) error {
	var api *homeassistant.APIError
	if errors.As(err, &api) {
		switch api.Code {
		case "not_found":
			return toolkit.NotFound(id+" has no registry entry (its integration gives it no unique id, or it does not exist), so its settings cannot be changed",
				"ha_search_entities finds entities")
		case "invalid_info", "invalid_format":
			return toolkit.InvalidArg("entity_id", "Home Assistant refused the change: "+api.Message+"; nothing was changed", "")
		}
	}
	return haWSError(err, "the entity registry", false, "")
}

// updateEntityConfirm: the settings that decide what reaches a sensitive entity, or whether hamcp
// sees it as one, are the user's to change; exposing one to Assist widens what a sentence reaches.
func updateEntityConfirm(d Deps) *toolkit.Confirm[updateEntityArgs] {
	return &toolkit.Confirm[updateEntityArgs]{
		When: "a lock, alarm panel, garage door or gate, or an entity marked sensitive, gets a new area, labels, device class or entity id, or is disabled, hidden or exposed to Assist; exposing a script or scene that reaches one",
		Check: func(ctx context.Context, c *toolkit.Call, a updateEntityArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			if what := entityReachChanges(a); what != "" {
				w.guarded(ctx, []string{a.EntityID}, what)
			}
			if a.Expose != nil && *a.Expose {
				w.exposure(ctx, a.EntityID)
			}
			// A new entity id makes the state vanish under the old id and appear under the new one, and
			// enabling or disabling makes it appear or vanish: the user's automations triggered by
			// either id start (§5b rule 2, as creating or deleting a helper).
			ids := []string{strings.ToLower(a.EntityID)}
			if a.NewEntityID != "" && a.NewEntityID != a.EntityID {
				ids = append(ids, strings.ToLower(a.NewEntityID))
			}
			if len(ids) > 1 || a.Enabled != nil {
				domain, _, _ := strings.Cut(ids[0], ".")
				w.follow(ctx, "change the entity id or enable "+a.EntityID, domain, "rename", sensitive.Target{EntityIDs: ids})
			}
			return w.ask("Change the settings of " + a.EntityID)
		},
	}
}

// entityReachChanges names the settings a call changes that decide what reaches the entity or how
// hamcp classes it ("" for none).
func entityReachChanges(a updateEntityArgs) string {
	var what []string
	if a.AreaID != nil {
		what = append(what, "move")
	}
	if a.Labels != nil {
		what = append(what, "relabel")
	}
	if a.DeviceClass != nil {
		what = append(what, "change what it shows as")
	}
	if a.Enabled != nil && !*a.Enabled {
		what = append(what, "disable")
	}
	if a.Hidden != nil && *a.Hidden {
		what = append(what, "hide")
	}
	if a.NewEntityID != "" && a.NewEntityID != a.EntityID {
		what = append(what, "give a new entity id to")
	}
	return strings.Join(what, ", ")
}

// exposure adds what Assist reaches once the entity is exposed to it: the entity if sensitive, and
// what a script or scene does.
func (w *walk) exposure(ctx context.Context, id string) {
	before := len(w.hits)
	w.guarded(ctx, []string{id}, "expose to Assist")
	switch domain, _, _ := strings.Cut(id, "."); domain {
	case "script":
		w.script(ctx, w.entity(id))
	case "scene":
		w.scene(ctx, w.entity(id))
	default:
		return
	}
	for i := before; i < len(w.hits); i++ {
		if !strings.HasPrefix(w.hits[i].What, "expose ") {
			w.hits[i].What = "expose " + id + " to Assist, which can then " + w.hits[i].What
		}
	}
}

// ---- ha_update_device

type updateDeviceArgs struct {
	DeviceID string   `json:"device_id" validate:"required,max=64" example:"8f9c2e0d6b1a4f3e9d7c5b3a1f2e4d6c"`
	Name     *string  `json:"name,omitempty" jsonschema:"\"\" resets to the integration's"`
	AreaID   *string  `json:"area_id,omitempty" jsonschema:"\"\" = no area"`
	Labels   []string `json:"labels,omitempty" jsonschema:"label ids, replaces the list"`
	Enabled  *bool    `json:"enabled,omitempty" jsonschema:"false disables it and its entities"`
}

type deviceSaved struct {
	DeviceID   string   `json:"device_id"`
	Name       string   `json:"name,omitempty"`
	AreaID     string   `json:"area_id,omitempty"`
	Labels     []string `json:"labels,omitempty"`
	DisabledBy string   `json:"disabled_by,omitempty"`
	Version    int      `json:"version,omitempty"`
}

// updateDevice is ha_update_device.
func updateDevice(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[updateDeviceArgs, deviceSaved]{
		Name: "ha_update_device", Toolset: SetOrganisation, Title: "Change a device's settings",
		Description: "Change a device's name, area, labels or enabled (from ha_list_devices); give only what changes. Its entities follow the device's area unless they have their own. " +
			"For a device with a lock, alarm panel, garage door or opener the user confirms area, labels and disabling. Entities: ha_update_entity.",
		Destructive: true, Idempotent: true, Confirm: updateDeviceConfirm(d),
		Summary: func(a updateDeviceArgs) string { return a.DeviceID },
		Handler: func(ctx context.Context, c *toolkit.Call, a updateDeviceArgs) (deviceSaved, error) {
			return changeDevice(ctx, d, c, a)
		},
	})
}

var deviceKept = []string{"name_by_user", "area_id", "labels", "disabled_by"}

func deviceFields(a updateDeviceArgs) map[string]any {
	f := map[string]any{}
	for key, p := range map[string]*string{"name_by_user": a.Name, "area_id": a.AreaID} {
		if p != nil {
			f[key] = *p
			if *p == "" {
				f[key] = nil
			}
		}
	}
	if a.Labels != nil {
		f["labels"] = a.Labels
	}
	if a.Enabled != nil {
		f["disabled_by"] = nil
		if !*a.Enabled {
			f["disabled_by"] = "user"
		}
	}
	return f
}

func changeDevice(ctx context.Context, d Deps, c *toolkit.Call, a updateDeviceArgs) (deviceSaved, error) {
	fields := deviceFields(a)
	if len(fields) == 0 {
		return deviceSaved{}, toolkit.InvalidArg("name", "give at least one setting to change (name, area_id, labels, enabled)", `{"device_id": "…", "area_id": "kitchen"}`)
	}
	if err := checkRegistryRefs(ctx, d, fields); err != nil {
		return deviceSaved{}, err
	}
	before, ok, err := d.HA.DeviceEntry(ctx, a.DeviceID)
	if err != nil {
		return deviceSaved{}, haError(err, false, "")
	}
	if !ok {
		return deviceSaved{}, toolkit.NotFound("no device with id "+a.DeviceID, "ha_list_devices lists the devices and their ids")
	}
	k, err := d.keep(ctx, c, KindDevice, a.DeviceID, cmp.Or(stringOf(before["name_by_user"]), stringOf(before["name"])), confighistory.Updated, keptOf(before, deviceKept))
	if err != nil {
		return deviceSaved{}, err
	}
	dev, err := d.HA.UpdateDeviceRegistry(ctx, a.DeviceID, fields)
	if err != nil {
		k.undo(ctx)
		var api *homeassistant.APIError
		if errors.As(err, &api) && (api.Code == "invalid_info" || api.Code == "invalid_format") {
			return deviceSaved{}, toolkit.InvalidArg("device_id", "Home Assistant refused the change: "+api.Message+"; nothing was changed", "")
		}
		return deviceSaved{}, haWSError(err, "the device registry", false, "")
	}
	registryChanged(d)
	labels, _ := stringList(dev["labels"])
	ls, _ := labels.([]string)
	return deviceSaved{DeviceID: a.DeviceID, Name: cmp.Or(stringOf(dev["name_by_user"]), stringOf(dev["name"])), AreaID: stringOf(dev["area_id"]),
		Labels: ls, DisabledBy: stringOf(dev["disabled_by"]), Version: k.version()}, nil
}

// updateDeviceConfirm: a device's area and labels are what area and label targets reach through it,
// and disabling it takes its lock or garage door out of hamcp's view.
func updateDeviceConfirm(d Deps) *toolkit.Confirm[updateDeviceArgs] {
	return &toolkit.Confirm[updateDeviceArgs]{
		When: "the device holds a lock, alarm panel, garage door or gate, or an entity marked sensitive, and gets a new area or labels, or is disabled",
		Check: func(ctx context.Context, c *toolkit.Call, a updateDeviceArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			var what []string
			if a.AreaID != nil {
				what = append(what, "move")
			}
			if a.Labels != nil {
				what = append(what, "relabel")
			}
			if a.Enabled != nil && !*a.Enabled {
				what = append(what, "disable")
			}
			if len(what) > 0 {
				w.deviceEntities(ctx, a.DeviceID, strings.Join(what, ", ")+" the device "+a.DeviceID+", which holds")
			}
			return w.ask("Change the settings of the device " + a.DeviceID)
		},
	}
}

// deviceEntities adds the sensitive entities on a device.
func (w *walk) deviceEntities(ctx context.Context, deviceID, change string) {
	reg := w.registry(ctx)
	if reg == nil {
		w.hits = append(w.hits, sensitive.Unknown(change+" entities hamcp cannot read")...)
		return
	}
	var ids []string
	for id, e := range reg.entities {
		if e.DeviceID == deviceID {
			ids = append(ids, id)
		}
	}
	w.fact("device", deviceID, strings.Join(slices.Sorted(slices.Values(ids)), ","))
	w.guarded(ctx, ids, change)
}

// ---- history: ha_config_history restores registry items through these
