package home

import (
	"fmt"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"
)

// Registry administration beyond areas: floors (helpers/floor_registry.py), labels
// (label_registry.py), categories (category_registry.py, scoped), zones (components/zone, a storage
// collection), and the entity registry update in full (components/config/entity_registry.py
// websocket_update_entity). ValueErrors of the registries become InfoError (WS invalid_info), schema
// failures InvalidError (invalid_format), and a KeyError the handler does not catch a plain error
// (unknown_error), as in Home Assistant.

// LabelThemeColors are SUPPORTED_LABEL_THEME_COLORS, the named colours a label takes besides #rrggbb.
var LabelThemeColors = []string{"primary", "accent", "disabled", "red", "pink", "purple", "deep-purple", "indigo", "blue",
	"light-blue", "cyan", "teal", "green", "light-green", "lime", "yellow", "amber", "orange", "deep-orange", "brown",
	"light-grey", "grey", "dark-grey", "blue-grey", "black", "white"}

var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// normalizeName is normalize_name: names compare case- and space-insensitively.
func normalizeName(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "") }

func nameInUse(name string) error {
	return &InfoError{Msg: fmt.Sprintf("The name %s (%s) is already in use", name, normalizeName(name))}
}

// unknownKey is a KeyError an update handler does not catch: websocket_api answers unknown_error.
type unknownKey struct{ key string }

func (e unknownKey) Error() string { return "KeyError: " + e.key }

func optIcon(fields map[string]any, key string) (**string, error) {
	p, err := optString(fields, key)
	if err == nil && p != nil && *p != nil && !strings.Contains(**p, ":") {
		return nil, invalidf("Icons should be specified in the form \"prefix:name\" for dictionary value @ data['%s']. Got '%s'", key, **p)
	}
	return p, err
}

// ---- floors

// CreateFloor is config/floor_registry/create.
func (h *Home) CreateFloor(fields map[string]any) (Floor, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	name, _ := fields["name"].(string)
	id := freeID(slugify(name), func(s string) bool { return h.floors[s] != nil })
	ts := Epoch(h.now())
	f := &Floor{FloorID: id, Aliases: []string{}, CreatedAt: ts, ModifiedAt: ts}
	if err := h.applyFloor(f, fields); err != nil {
		return Floor{}, err
	}
	h.floors[id] = f
	h.fireLocked("floor_registry_updated", map[string]any{"action": "create", "floor_id": id}, "LOCAL", h.newContext("", nil))
	return *f, nil
}

// UpdateFloor is config/floor_registry/update.
func (h *Home) UpdateFloor(id string, fields map[string]any) (Floor, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	f, ok := h.floors[id]
	if !ok {
		return Floor{}, unknownKey{id}
	}
	cp := *f
	if err := h.applyFloor(&cp, fields); err != nil {
		return Floor{}, err
	}
	cp.ModifiedAt = Epoch(h.now())
	*f = cp
	h.fireLocked("floor_registry_updated", map[string]any{"action": "update", "floor_id": id}, "LOCAL", h.newContext("", nil))
	return cp, nil
}

// DeleteFloor is config/floor_registry/delete: the areas on it keep no floor, as the area registry's
// listener does.
func (h *Home) DeleteFloor(id string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	if h.floors[id] == nil {
		return &InfoError{Msg: "Floor ID doesn't exist"}
	}
	delete(h.floors, id)
	ctx := h.newContext("", nil)
	h.fireLocked("floor_registry_updated", map[string]any{"action": "remove", "floor_id": id}, "LOCAL", ctx)
	for _, a := range h.areas {
		if a.FloorID != nil && *a.FloorID == id {
			a.FloorID = nil
			h.fireLocked("area_registry_updated", map[string]any{"action": "update", "area_id": a.AreaID}, "LOCAL", ctx)
		}
	}
	return nil
}

func (h *Home) applyFloor(f *Floor, fields map[string]any) error {
	if name, ok := fields["name"].(string); ok {
		for _, o := range h.floors {
			if o.FloorID != f.FloorID && normalizeName(o.Name) == normalizeName(name) {
				return nameInUse(name)
			}
		}
		f.Name = name
	}
	p, err := optIcon(fields, "icon")
	if err != nil {
		return err
	}
	if p != nil {
		f.Icon = *p
	}
	if v, ok := fields["level"]; ok {
		if v == nil {
			f.Level = nil
		} else if n, isNum := numberOf(v); isNum && n == float64(int(n)) {
			level := int(n)
			f.Level = &level
		} else {
			return invalidf("expected int for dictionary value @ data['level']. Got %s", pyValue(v))
		}
	}
	if l, present, err := stringList(fields, "aliases"); err != nil {
		return err
	} else if present {
		f.Aliases = trimmedSet(l)
	}
	return nil
}

// trimmedSet is how registries keep aliases: a set, without blanks.
func trimmedSet(l []string) []string {
	out := []string{}
	for _, s := range l {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ---- labels

// CreateLabel is config/label_registry/create.
func (h *Home) CreateLabel(fields map[string]any) (Label, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	name, _ := fields["name"].(string)
	id := freeID(slugify(name), func(s string) bool { return h.labels[s] != nil })
	ts := Epoch(h.now())
	l := &Label{LabelID: id, CreatedAt: ts, ModifiedAt: ts}
	if err := h.applyLabel(l, fields); err != nil {
		return Label{}, err
	}
	h.labels[id] = l
	h.fireLocked("label_registry_updated", map[string]any{"action": "create", "label_id": id}, "LOCAL", h.newContext("", nil))
	return *l, nil
}

// UpdateLabel is config/label_registry/update.
func (h *Home) UpdateLabel(id string, fields map[string]any) (Label, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	l, ok := h.labels[id]
	if !ok {
		return Label{}, unknownKey{id}
	}
	cp := *l
	if err := h.applyLabel(&cp, fields); err != nil {
		return Label{}, err
	}
	cp.ModifiedAt = Epoch(h.now())
	*l = cp
	h.fireLocked("label_registry_updated", map[string]any{"action": "update", "label_id": id}, "LOCAL", h.newContext("", nil))
	return cp, nil
}

// DeleteLabel is config/label_registry/delete: areas, devices and entities lose the label, as their
// registries' listeners do.
func (h *Home) DeleteLabel(id string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	if h.labels[id] == nil {
		return &InfoError{Msg: "Label ID doesn't exist"}
	}
	delete(h.labels, id)
	ctx := h.newContext("", nil)
	h.fireLocked("label_registry_updated", map[string]any{"action": "remove", "label_id": id}, "LOCAL", ctx)
	drop := func(l []string) ([]string, bool) {
		i := slices.Index(l, id)
		if i < 0 {
			return l, false
		}
		return slices.Delete(slices.Clone(l), i, i+1), true
	}
	for _, a := range h.areas {
		if l, ok := drop(a.Labels); ok {
			a.Labels = l
			h.fireLocked("area_registry_updated", map[string]any{"action": "update", "area_id": a.AreaID}, "LOCAL", ctx)
		}
	}
	for _, d := range h.devices {
		if l, ok := drop(d.Labels); ok {
			d.Labels = l
			h.fireLocked("device_registry_updated", map[string]any{"action": "update", "device_id": d.ID, "changes": map[string]any{"labels": d.Labels}}, "LOCAL", ctx)
		}
	}
	for _, e := range h.entities {
		if l, ok := drop(e.Labels); ok {
			e.Labels = l
			h.fireLocked("entity_registry_updated", map[string]any{"action": "update", "entity_id": e.EntityID, "changes": []string{"labels"}}, "LOCAL", ctx)
		}
	}
	return nil
}

func (h *Home) applyLabel(l *Label, fields map[string]any) error {
	if name, ok := fields["name"].(string); ok {
		for _, o := range h.labels {
			if o.LabelID != l.LabelID && normalizeName(o.Name) == normalizeName(name) {
				return nameInUse(name)
			}
		}
		l.Name = name
	}
	p, err := optString(fields, "color")
	if err != nil {
		return err
	}
	if p != nil {
		if c := *p; c != nil && !hexColor.MatchString(*c) && !slices.Contains(LabelThemeColors, *c) {
			return invalidf("value must be one of %s for dictionary value @ data['color']. Got '%s'", pyList(LabelThemeColors), *c)
		}
		l.Color = *p
	}
	if p, err = optString(fields, "description"); err != nil {
		return err
	} else if p != nil {
		l.Description = *p
	}
	if p, err = optIcon(fields, "icon"); err != nil {
		return err
	} else if p != nil {
		l.Icon = *p
	}
	return nil
}

// ---- categories, zones: kept beside the home, as the helpers' collections are

// Category is a category registry entry (config/category_registry/list's item).
type Category struct {
	CategoryID string  `json:"category_id"`
	Name       string  `json:"name"`
	Icon       *string `json:"icon"`
	CreatedAt  float64 `json:"created_at"`
	ModifiedAt float64 `json:"modified_at"`
}

type registryExtras struct {
	categories map[string][]*Category // scope → categories in creation order
	zones      []map[string]any       // the zone storage collection's items
}

var (
	extrasMu    sync.Mutex
	extrasHomes = map[weak.Pointer[Home]]*registryExtras{}
)

// extras returns the home's categories and zones (h.mu held), seeding the zones from the demo's
// editable zone entities.
func (h *Home) extras() *registryExtras {
	key := weak.Make(h)
	extrasMu.Lock()
	defer extrasMu.Unlock()
	if x, ok := extrasHomes[key]; ok {
		return x
	}
	x := &registryExtras{categories: map[string][]*Category{}}
	for _, eid := range slices.Sorted(maps.Keys(h.entities)) {
		e, st := h.entities[eid], h.states[eid]
		if e.Platform != "zone" || eid == "zone.home" || st == nil || st.Attributes["editable"] != true {
			continue
		}
		item := map[string]any{"id": e.UniqueID, "name": st.Name()}
		for _, k := range []string{"latitude", "longitude", "radius", "passive", "icon"} {
			if v, ok := st.Attributes[k]; ok {
				item[k] = v
			}
		}
		x.zones = append(x.zones, item)
	}
	ts := Epoch(h.now())
	x.categories["automation"] = []*Category{{CategoryID: h.ulid(), Name: "Security", Icon: strp("mdi:shield-home"), CreatedAt: ts, ModifiedAt: ts},
		{CategoryID: h.ulid(), Name: "Lighting", Icon: strp("mdi:lightbulb-group"), CreatedAt: ts, ModifiedAt: ts}}
	extrasHomes[key] = x
	runtime.AddCleanup(h, func(k weak.Pointer[Home]) {
		extrasMu.Lock()
		delete(extrasHomes, k)
		extrasMu.Unlock()
	}, key)
	return x
}

// Categories is config/category_registry/list for one scope.
func (h *Home) Categories(scope string) []Category {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []Category{}
	for _, c := range h.extras().categories[scope] {
		out = append(out, *c)
	}
	return out
}

// CreateCategory is config/category_registry/create: ids are ULIDs, names unique per scope.
func (h *Home) CreateCategory(scope string, fields map[string]any) (Category, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	x := h.extras()
	ts := Epoch(h.now())
	c := &Category{CategoryID: h.ulid(), CreatedAt: ts, ModifiedAt: ts}
	if err := applyCategory(x.categories[scope], c, fields); err != nil {
		return Category{}, err
	}
	x.categories[scope] = append(x.categories[scope], c)
	h.fireLocked("category_registry_updated", map[string]any{"action": "create", "scope": scope, "category_id": c.CategoryID}, "LOCAL", h.newContext("", nil))
	return *c, nil
}

// UpdateCategory is config/category_registry/update.
func (h *Home) UpdateCategory(scope, id string, fields map[string]any) (Category, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	list := h.extras().categories[scope]
	i := slices.IndexFunc(list, func(c *Category) bool { return c.CategoryID == id })
	if i < 0 {
		return Category{}, unknownKey{id}
	}
	cp := *list[i]
	if err := applyCategory(list, &cp, fields); err != nil {
		return Category{}, err
	}
	cp.ModifiedAt = Epoch(h.now())
	*list[i] = cp
	h.fireLocked("category_registry_updated", map[string]any{"action": "update", "scope": scope, "category_id": id}, "LOCAL", h.newContext("", nil))
	return cp, nil
}

// DeleteCategory is config/category_registry/delete: entities lose the category of that scope.
func (h *Home) DeleteCategory(scope, id string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	x := h.extras()
	i := slices.IndexFunc(x.categories[scope], func(c *Category) bool { return c.CategoryID == id })
	if i < 0 {
		return &InfoError{Msg: "Category ID doesn't exist"}
	}
	x.categories[scope] = slices.Delete(x.categories[scope], i, i+1)
	h.fireLocked("category_registry_updated", map[string]any{"action": "remove", "scope": scope, "category_id": id}, "LOCAL", h.newContext("", nil))
	return nil
}

func applyCategory(list []*Category, c *Category, fields map[string]any) error {
	if name, ok := fields["name"].(string); ok {
		for _, o := range list {
			if o.CategoryID != c.CategoryID && normalizeName(o.Name) == normalizeName(name) {
				return &InfoError{Msg: fmt.Sprintf("The name '%s' is already in use", name)}
			}
		}
		c.Name = name
	}
	p, err := optIcon(fields, "icon")
	if err != nil {
		return err
	}
	if p != nil {
		c.Icon = *p
	}
	return nil
}

// ---- zones

// zoneFields are CREATE_FIELDS (name, latitude, longitude required on create; UPDATE_FIELDS all optional).
var zoneFields = []string{"name", "latitude", "longitude", "radius", "passive", "icon"}

// ZoneFieldNames lists the zone fields, for the WebSocket schema.
func ZoneFieldNames() []string { return slices.Clone(zoneFields) }

// Zones is zone/list.
func (h *Home) Zones() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []map[string]any{}
	for _, z := range h.extras().zones {
		out = append(out, maps.Clone(z))
	}
	return out
}

// validateZone is the collection's schema; create fills the defaults (radius 100, not passive).
func validateZone(data map[string]any, create bool) (map[string]any, error) {
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if !slices.Contains(zoneFields, k) {
			return nil, invalidf("extra keys not allowed @ data['%s']. Got %s", k, pyValue(data[k]))
		}
	}
	out := map[string]any{}
	if create {
		for _, k := range []string{"name", "latitude", "longitude"} {
			if _, ok := data[k]; !ok {
				return nil, invalidf("required key not provided @ data['%s']. Got None", k)
			}
		}
		out["radius"], out["passive"] = 100.0, false
	}
	bad := func(k, msg string) error {
		return invalidf("%s for dictionary value @ data['%s']. Got %s", msg, k, pyValue(data[k]))
	}
	for _, k := range zoneFields {
		v, ok := data[k]
		if !ok {
			continue
		}
		switch k {
		case "name":
			s, isStr := v.(string)
			if !isStr {
				return nil, bad(k, "expected str")
			}
			out[k] = s
		case "icon":
			s, isStr := v.(string)
			if !isStr || !strings.Contains(s, ":") {
				return nil, bad(k, "Icons should be specified in the form \"prefix:name\"")
			}
			out[k] = s
		case "latitude", "longitude":
			n, isNum := numberOf(v)
			limit := map[string]float64{"latitude": 90, "longitude": 180}[k]
			if !isNum || n < -limit || n > limit {
				return nil, bad(k, "invalid "+k)
			}
			out[k] = n
		case "radius":
			n, isNum := numberOf(v)
			if !isNum {
				return nil, bad(k, "expected float")
			}
			out[k] = n
		case "passive":
			b, isBool := boolOf(v)
			if !isBool {
				return nil, bad(k, "expected boolean")
			}
			out[k] = b
		}
	}
	return out, nil
}

// CreateZone is zone/create: the item gets the slug of its name, and a zone entity appears.
func (h *Home) CreateZone(data map[string]any) (map[string]any, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	valid, err := validateZone(data, true)
	if err != nil {
		return nil, err
	}
	x := h.extras()
	id := freeID(slugify(valid["name"].(string)), func(s string) bool {
		return slices.ContainsFunc(x.zones, func(z map[string]any) bool { return z["id"] == s })
	})
	item := map[string]any{"id": id}
	maps.Copy(item, valid)
	x.zones = append(x.zones, item)
	eid := "zone." + freeID(slugify(valid["name"].(string)), func(s string) bool {
		_, taken := h.entities["zone."+s]
		_, has := h.states["zone."+s]
		return taken || has
	})
	ts := Epoch(h.now())
	h.entities[eid] = &EntityEntry{ID: h.hexID(), EntityID: eid, UniqueID: id, Platform: "zone", Labels: []string{}, Aliases: []string{}, CreatedAt: ts, ModifiedAt: ts}
	ctx := h.newContext("", nil)
	h.fireLocked("entity_registry_updated", map[string]any{"action": "create", "entity_id": eid}, "LOCAL", ctx)
	h.writeZone(eid, item, ctx)
	return maps.Clone(item), nil
}

// UpdateZone is zone/update: the given fields merge into the item.
func (h *Home) UpdateZone(id string, data map[string]any) (map[string]any, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	x := h.extras()
	i := slices.IndexFunc(x.zones, func(z map[string]any) bool { return z["id"] == id })
	if i < 0 {
		return nil, &NotFoundError{Msg: "Unable to find zone_id " + id}
	}
	valid, err := validateZone(data, false)
	if err != nil {
		return nil, err
	}
	item := maps.Clone(x.zones[i])
	maps.Copy(item, valid)
	x.zones[i] = item
	if eid := h.helperEntity("zone", id); eid != "" {
		h.writeZone(eid, item, h.newContext("", nil))
	}
	return maps.Clone(item), nil
}

// DeleteZone is zone/delete: the item, its entity and its registry entry go.
func (h *Home) DeleteZone(id string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	x := h.extras()
	i := slices.IndexFunc(x.zones, func(z map[string]any) bool { return z["id"] == id })
	if i < 0 {
		return &NotFoundError{Msg: "Unable to find zone_id " + id}
	}
	x.zones = slices.Delete(x.zones, i, i+1)
	if eid := h.helperEntity("zone", id); eid != "" {
		ctx := h.newContext("", nil)
		delete(h.entities, eid)
		h.fireLocked("entity_registry_updated", map[string]any{"action": "remove", "entity_id": eid}, "LOCAL", ctx)
		h.removeStateLocked(eid, ctx)
	}
	return nil
}

// writeZone is the zone entity's state: the number of persons in it, and its settings.
func (h *Home) writeZone(eid string, item map[string]any, ctx Context) {
	old := h.states[eid]
	persons := []any{}
	if old != nil {
		if p, ok := old.Attributes["persons"].([]any); ok {
			persons = p
		}
	}
	attrs := map[string]any{"latitude": item["latitude"], "longitude": item["longitude"], "radius": item["radius"],
		"passive": item["passive"], "persons": persons, "editable": true, "friendly_name": item["name"]}
	if icon, ok := item["icon"]; ok {
		attrs["icon"] = icon
	}
	state := fmt.Sprint(len(persons))
	if item["passive"] == true {
		state = "0"
	}
	h.writeState(eid, state, attrs, false, ctx)
}

// ---- the entity registry update, as websocket_update_entity does it

// EntityUpdate is config/entity_registry/update's answer: the entry, and what enabling needs.
type EntityUpdate struct {
	Entry          EntityEntry
	RequireRestart bool
	ReloadDelay    int
}

// UpdateEntityEntry applies name, icon, area_id, device_class, labels, aliases, hidden_by,
// disabled_by, categories, new_entity_id and options as Home Assistant does: a disabled device's
// entity cannot be enabled, an entity id changes only within its domain to a free valid id, and the
// state follows what the entity shows.
func (h *Home) UpdateEntityEntry(entityID string, fields map[string]any) (EntityUpdate, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	e, ok := h.entities[entityID]
	if !ok {
		return EntityUpdate{}, &NotFoundError{Msg: "Entity not found"}
	}
	for _, k := range []string{"disabled_by", "hidden_by"} {
		if v, given := fields[k]; given && v != nil && v != "user" {
			return EntityUpdate{}, invalidf("not a valid value for dictionary value @ data['%s']. Got %s", k, pyValue(v))
		}
	}
	if v, given := fields["disabled_by"]; given && v == nil && e.DeviceID != nil {
		if d := h.devices[*e.DeviceID]; d != nil && d.DisabledBy != nil {
			return EntityUpdate{}, &InfoError{Msg: "Device is disabled"}
		}
	}
	cp := *e
	changes := map[string]any{}
	for key, dst := range map[string]**string{"name": &cp.Name, "icon": &cp.Icon, "area_id": &cp.AreaID, "device_class": &cp.DeviceClass,
		"hidden_by": &cp.HiddenBy, "disabled_by": &cp.DisabledBy} {
		p, err := optString(fields, key)
		if err != nil {
			return EntityUpdate{}, err
		}
		if p != nil && deref(*p) != deref(*dst) {
			changes[key] = deref(*dst)
			*dst = *p
		}
	}
	for key, dst := range map[string]*[]string{"aliases": &cp.Aliases, "labels": &cp.Labels} {
		l, present, err := stringList(fields, key)
		if err != nil {
			return EntityUpdate{}, err
		}
		if present {
			if key == "aliases" {
				l = trimmedSet(l)
			}
			changes[key] = *dst
			*dst = l
		}
	}
	newID, renaming := fields["new_entity_id"].(string)
	renaming = renaming && newID != entityID
	if renaming {
		if err := h.checkNewEntityID(entityID, newID); err != nil {
			return EntityUpdate{}, err
		}
		cp.EntityID = newID
		changes["entity_id"] = entityID
	}
	if len(changes) > 0 || fields["options_domain"] != nil {
		cp.ModifiedAt = Epoch(h.now())
	}
	ctx := h.newContext("", nil)
	if renaming {
		delete(h.entities, entityID)
		h.entities[newID] = e
	}
	*e = cp
	h.followEntry(entityID, &cp, changes, ctx)
	if len(changes) > 0 {
		data := map[string]any{"action": "update", "entity_id": cp.EntityID, "changes": slices.Sorted(maps.Keys(changes))}
		if renaming {
			data["old_entity_id"] = entityID
		}
		h.fireLocked("entity_registry_updated", data, "LOCAL", ctx)
	}
	out := EntityUpdate{Entry: cp}
	if v, given := fields["disabled_by"]; given && v == nil && changes["disabled_by"] != nil {
		if cp.ConfigEntryID == nil {
			out.RequireRestart = true
		} else {
			out.ReloadDelay = 30
		}
	}
	return out, nil
}

// checkNewEntityID is async_update_entity's test of a new entity id.
func (h *Home) checkNewEntityID(old, newID string) error {
	if _, taken := h.entities[newID]; taken || h.states[newID] != nil {
		return &InfoError{Msg: "Entity with this ID is already registered"}
	}
	if !validEntityID(newID) {
		return &InfoError{Msg: "Invalid entity ID"}
	}
	if od, _, _ := strings.Cut(old, "."); !strings.HasPrefix(newID, od+".") {
		return &InfoError{Msg: "New entity ID should be same domain"}
	}
	return nil
}

var entityIDRe = regexp.MustCompile(`^(?:[a-z0-9]+_?)*[a-z0-9]\.(?:[a-z0-9]+_?)*[a-z0-9]$`)

func validEntityID(id string) bool { return entityIDRe.MatchString(id) && !strings.Contains(id, "__") }

// followEntry makes the state machine show what the registry now says: a renamed entity's state
// moves, a disabled one's goes, a name, icon or device class the user set shows in its attributes.
func (h *Home) followEntry(oldID string, e *EntityEntry, changes map[string]any, ctx Context) {
	st := h.states[oldID]
	if st == nil {
		return
	}
	if e.DisabledBy != nil {
		h.removeStateLocked(oldID, ctx)
		return
	}
	attrs := cloneAttrs(st.Attributes)
	if _, ok := changes["name"]; ok {
		attrs["friendly_name"] = deref(e.Name)
		if e.Name == nil {
			attrs["friendly_name"] = deref(e.OriginalName)
		}
	}
	if _, ok := changes["icon"]; ok {
		delete(attrs, "icon")
		if icon := cmpOr(e.Icon, e.OriginalIcon); icon != nil {
			attrs["icon"] = *icon
		}
	}
	if _, ok := changes["device_class"]; ok {
		delete(attrs, "device_class")
		if dc := cmpOr(e.DeviceClass, e.OriginalDeviceClass); dc != nil {
			attrs["device_class"] = *dc
		}
	}
	if e.EntityID != oldID {
		h.removeStateLocked(oldID, ctx)
		h.writeState(e.EntityID, st.State, attrs, true, ctx)
		return
	}
	h.writeState(oldID, st.State, attrs, false, ctx)
}

func cmpOr(a, b *string) *string {
	if a != nil {
		return a
	}
	return b
}

// FollowDevice is the entity registry's listener on device updates: disabling a device disables
// its enabled entities (disabled_by "device") and removes their states; enabling it enables the
// ones the device disabled (their states come back when the integration reloads, as in HA).
func (h *Home) FollowDevice(deviceID string) {
	h.mu.Lock()
	defer h.flushAfter()()
	d := h.devices[deviceID]
	if d == nil {
		return
	}
	ctx := h.newContext("", nil)
	for _, eid := range slices.Sorted(maps.Keys(h.entities)) {
		e := h.entities[eid]
		if e.DeviceID == nil || *e.DeviceID != deviceID {
			continue
		}
		switch {
		case d.DisabledBy != nil && e.DisabledBy == nil:
			e.DisabledBy = strp("device")
			h.removeStateLocked(eid, ctx)
		case d.DisabledBy == nil && deref(e.DisabledBy) == "device":
			e.DisabledBy = nil
		default:
			continue
		}
		e.ModifiedAt = Epoch(h.now())
		h.fireLocked("entity_registry_updated", map[string]any{"action": "update", "entity_id": eid, "changes": []string{"disabled_by"}}, "LOCAL", ctx)
	}
}
