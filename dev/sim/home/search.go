package home

import (
	"sort"
	"strings"
)

// refs is what one config item points at.
type refs struct {
	entities, devices, areas, floors, labels map[string]bool
}

func newRefs() refs {
	return refs{map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}}
}

// collectRefs walks a config value: known entity ids anywhere, and the
// device_id / area_id / floor_id / label_id keys.
func (h *Home) collectRefs(v any, r refs, key string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if ValidEntityID(k) && h.states[k] != nil {
				r.entities[k] = true
			}
			h.collectRefs(e, r, k)
		}
	case []any:
		for _, e := range x {
			h.collectRefs(e, r, key)
		}
	case string:
		switch key {
		case "device_id":
			r.devices[x] = true
		case "area_id":
			r.areas[x] = true
		case "floor_id":
			r.floors[x] = true
		case "label_id":
			r.labels[x] = true
		default:
			if h.states[x] != nil {
				r.entities[x] = true
			}
		}
	}
}

func (h *Home) configRefs(id string) refs {
	r := newRefs()
	if ce, ok := h.configEnt[id]; ok {
		h.collectRefs(nodeValue(ce.node), r, "")
	}
	if d, ok := h.dynScenes[id]; ok {
		h.collectRefs(d, r, "")
	}
	delete(r.entities, id)
	return r
}

func (h *Home) entityAreaLocked(eid string) string {
	e := h.entities[eid]
	if e == nil {
		return ""
	}
	if e.AreaID != nil {
		return *e.AreaID
	}
	if e.DeviceID != nil {
		if d := h.devices[*e.DeviceID]; d != nil && d.AreaID != nil {
			return *d.AreaID
		}
	}
	return ""
}

// SearchRelated is WS search/related: ids related to an item, by type;
// only non-empty kinds are returned.
func (h *Home) SearchRelated(itemType, itemID string) (map[string][]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]map[string]bool{}
	add := func(kind, id string) {
		if id == "" {
			return
		}
		if out[kind] == nil {
			out[kind] = map[string]bool{}
		}
		out[kind][id] = true
	}
	// configs that reference something matching pred
	referencing := func(match func(r refs) bool) {
		for id, ce := range h.configEnt {
			if match(h.configRefs(id)) {
				add(ce.kind, id)
			}
		}
		for id := range h.dynScenes {
			if match(h.configRefs(id)) {
				add("scene", id)
			}
		}
	}
	entityRel := func(eid string) {
		add("entity", eid)
		if e := h.entities[eid]; e != nil {
			if e.DeviceID != nil {
				add("device", *e.DeviceID)
			}
			if e.ConfigEntryID != nil {
				add("config_entry", *e.ConfigEntryID)
			}
			add("integration", e.Platform)
			for _, l := range e.Labels {
				add("label", l)
			}
		}
		if a := h.entityAreaLocked(eid); a != "" {
			add("area", a)
			if ar := h.areas[a]; ar != nil && ar.FloorID != nil {
				add("floor", *ar.FloorID)
			}
		}
	}
	switch itemType {
	case "entity":
		if h.states[itemID] == nil && h.entities[itemID] == nil {
			break
		}
		entityRel(itemID)
		delete(out["entity"], itemID)
		referencing(func(r refs) bool { return r.entities[itemID] })
		if _, isCfg := h.configEnt[itemID]; isCfg || h.dynScenes[itemID] != nil {
			r := h.configRefs(itemID)
			for e := range r.entities {
				add("entity", e)
			}
			for d := range r.devices {
				add("device", d)
			}
			for a := range r.areas {
				add("area", a)
			}
			for f := range r.floors {
				add("floor", f)
			}
			for l := range r.labels {
				add("label", l)
			}
		}
	case "automation", "script", "scene":
		return h.searchConfigItem(itemType, itemID)
	case "device":
		d := h.devices[itemID]
		if d == nil {
			break
		}
		if d.AreaID != nil {
			add("area", *d.AreaID)
		}
		for _, ce := range d.ConfigEntries {
			add("config_entry", ce)
			if e := h.configEntries[ce]; e != nil {
				add("integration", e.Domain)
			}
		}
		for _, e := range h.entities {
			if e.DeviceID != nil && *e.DeviceID == itemID {
				add("entity", e.EntityID)
				eid := e.EntityID
				referencing(func(r refs) bool { return r.entities[eid] })
			}
		}
		referencing(func(r refs) bool { return r.devices[itemID] })
	case "area":
		a := h.areas[itemID]
		if a == nil {
			break
		}
		if a.FloorID != nil {
			add("floor", *a.FloorID)
		}
		for _, d := range h.devices {
			if d.AreaID != nil && *d.AreaID == itemID {
				add("device", d.ID)
			}
		}
		for eid := range h.entities {
			if h.entityAreaLocked(eid) == itemID {
				add("entity", eid)
				id := eid
				referencing(func(r refs) bool { return r.entities[id] })
			}
		}
		referencing(func(r refs) bool { return r.areas[itemID] })
	case "floor":
		if h.floors[itemID] == nil {
			break
		}
		for _, a := range h.areas {
			if a.FloorID != nil && *a.FloorID == itemID {
				add("area", a.AreaID)
			}
		}
		referencing(func(r refs) bool { return r.floors[itemID] })
	case "label":
		if h.labels[itemID] == nil {
			break
		}
		for _, a := range h.areas {
			if contains(a.Labels, itemID) {
				add("area", a.AreaID)
			}
		}
		for _, d := range h.devices {
			if contains(d.Labels, itemID) {
				add("device", d.ID)
			}
		}
		for _, e := range h.entities {
			if contains(e.Labels, itemID) {
				add("entity", e.EntityID)
			}
		}
		referencing(func(r refs) bool { return r.labels[itemID] })
	case "config_entry", "integration":
		for _, e := range h.entities {
			if e.ConfigEntryID != nil && (itemType == "config_entry" && *e.ConfigEntryID == itemID || itemType == "integration" && e.Platform == itemID) {
				add("entity", e.EntityID)
				if e.DeviceID != nil {
					add("device", *e.DeviceID)
				}
				add("config_entry", *e.ConfigEntryID)
			}
		}
		if itemType == "config_entry" {
			delete(out["config_entry"], itemID)
		}
	default:
		return nil, &InvalidError{Msg: "value must be one of ['area', 'automation', 'config_entry', 'device', 'entity', 'floor', 'integration', 'label', 'scene', 'script'] for dictionary value @ data['item_type']"}
	}
	return flatten(out), nil
}

// searchConfigItem answers for automation/script/scene by entity id.
func (h *Home) searchConfigItem(kind, id string) (map[string][]string, error) {
	out := map[string]map[string]bool{}
	if !strings.HasPrefix(id, kind+".") {
		id = kind + "." + id
	}
	if _, ok := h.configEnt[id]; !ok && h.dynScenes[id] == nil {
		return map[string][]string{}, nil
	}
	r := h.configRefs(id)
	set := func(kind string, m map[string]bool) {
		if len(m) > 0 {
			out[kind] = m
		}
	}
	for e := range r.entities {
		if ce, ok := h.configEnt[e]; ok {
			if out[ce.kind] == nil {
				out[ce.kind] = map[string]bool{}
			}
			out[ce.kind][e] = true
		}
		if dev := h.entities[e]; dev != nil && dev.DeviceID != nil {
			r.devices[*dev.DeviceID] = true
		}
		if a := h.entityAreaLocked(e); a != "" {
			r.areas[a] = true
		}
	}
	set("entity", r.entities)
	set("device", r.devices)
	set("area", r.areas)
	set("floor", r.floors)
	set("label", r.labels)
	return flatten(out), nil
}

func flatten(in map[string]map[string]bool) map[string][]string {
	res := map[string][]string{}
	for k, set := range in {
		if len(set) == 0 {
			continue
		}
		l := make([]string, 0, len(set))
		for id := range set {
			l = append(l, id)
		}
		sort.Strings(l)
		res[k] = l
	}
	return res
}
