package home

import (
	"fmt"
	"sort"
	"strings"
)

// InfoError is a registry request HA refuses (WS code invalid_info).
type InfoError struct{ Msg string }

func (e *InfoError) Error() string { return e.Msg }

// Floors lists the floor registry (by level, then name).
func (h *Home) Floors() []Floor {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Floor, 0, len(h.floors))
	for _, f := range h.floors {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		li, lj := levelOf(out[i]), levelOf(out[j])
		if li != lj {
			return li < lj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func levelOf(f Floor) int {
	if f.Level == nil {
		return 1 << 20
	}
	return *f.Level
}

// Areas lists the area registry in creation order.
func (h *Home) Areas() []Area {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Area, 0, len(h.areas))
	for _, a := range h.areas {
		cp := *a
		cp.Aliases, cp.Labels = nonNil(cloneStrings(a.Aliases)), nonNil(cloneStrings(a.Labels))
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return areaOrder(out[i].AreaID) < areaOrder(out[j].AreaID)
	})
	return out
}

func areaOrder(id string) int {
	for i, a := range demoAreas {
		if a.id == id {
			return i
		}
	}
	return len(demoAreas)
}

// Labels lists the label registry by name.
func (h *Home) Labels() []Label {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Label, 0, len(h.labels))
	for _, l := range h.labels {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Devices lists the device registry by name.
func (h *Home) Devices() []Device {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Device, 0, len(h.devices))
	for _, d := range h.devices {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// EntityEntries lists the entity registry sorted by entity id.
func (h *Home) EntityEntries() []EntityEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]EntityEntry, 0, len(h.entities))
	for _, e := range h.entities {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EntityID < out[j].EntityID })
	return out
}

// EntityEntry returns one registry entry.
func (h *Home) EntityEntry(entityID string) (EntityEntry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entities[entityID]
	if !ok {
		return EntityEntry{}, false
	}
	return *e, true
}

// ConfigEntries lists config entries by domain.
func (h *Home) ConfigEntries() []ConfigEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ConfigEntry, 0, len(h.configEntries))
	for _, e := range h.configEntries {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Domain+out[i].Title < out[j].Domain+out[j].Title })
	return out
}

func optString(fields map[string]any, key string) (**string, error) {
	v, ok := fields[key]
	if !ok {
		return nil, nil
	}
	if v == nil {
		var p *string
		return &p, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, &InvalidError{Msg: fmt.Sprintf("expected str for dictionary value @ data['%s']", key)}
	}
	p := &s
	return &p, nil
}

func stringList(fields map[string]any, key string) ([]string, bool, error) {
	v, ok := fields[key]
	if !ok {
		return nil, false, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, true, &InvalidError{Msg: fmt.Sprintf("expected list for dictionary value @ data['%s']", key)}
	}
	out := []string{}
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, true, &InvalidError{Msg: fmt.Sprintf("expected str @ data['%s']", key)}
		}
		out = append(out, s)
	}
	return out, true, nil
}

// applyArea sets the optional area fields present in the request.
func (h *Home) applyArea(a *Area, fields map[string]any) error {
	if v, ok := fields["name"]; ok {
		name, _ := v.(string)
		if strings.TrimSpace(name) == "" {
			return &InvalidError{Msg: "expected str for dictionary value @ data['name']"}
		}
		for _, o := range h.areas {
			if o.AreaID != a.AreaID && strings.EqualFold(o.Name, name) {
				return &InfoError{Msg: fmt.Sprintf("The name %s (%s) is already in use", name, strings.ToLower(name))}
			}
		}
		a.Name = name
	}
	for key, dst := range map[string]**string{"floor_id": &a.FloorID, "icon": &a.Icon, "picture": &a.Picture,
		"humidity_entity_id": &a.HumidityEntityID, "temperature_entity_id": &a.TemperatureEntityID} {
		p, err := optString(fields, key)
		if err != nil {
			return err
		}
		if p != nil {
			*dst = *p
		}
	}
	if a.FloorID != nil {
		if _, ok := h.floors[*a.FloorID]; !ok {
			return &InfoError{Msg: fmt.Sprintf("Floor %s does not exist", *a.FloorID)}
		}
	}
	for key, dst := range map[string]*[]string{"aliases": &a.Aliases, "labels": &a.Labels} {
		l, present, err := stringList(fields, key)
		if err != nil {
			return err
		}
		if present {
			*dst = l
		}
	}
	return nil
}

// CreateArea is config/area_registry/create.
func (h *Home) CreateArea(fields map[string]any) (Area, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	name, _ := fields["name"].(string)
	if strings.TrimSpace(name) == "" {
		return Area{}, &InvalidError{Msg: "required key not provided @ data['name']"}
	}
	id := slugify(name)
	for n := 2; h.areas[id] != nil; n++ {
		id = fmt.Sprintf("%s_%d", slugify(name), n)
	}
	ts := Epoch(h.now())
	a := &Area{AreaID: id, Aliases: []string{}, Labels: []string{}, CreatedAt: ts, ModifiedAt: ts}
	if err := h.applyArea(a, fields); err != nil {
		return Area{}, err
	}
	h.areas[id] = a
	h.fireLocked("area_registry_updated", map[string]any{"action": "create", "area_id": id}, "LOCAL", h.newContext("", nil))
	return *a, nil
}

// UpdateArea is config/area_registry/update.
func (h *Home) UpdateArea(areaID string, fields map[string]any) (Area, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	a, ok := h.areas[areaID]
	if !ok {
		return Area{}, &NotFoundError{Msg: "Area ID doesn't exist"}
	}
	cp := *a
	if err := h.applyArea(&cp, fields); err != nil {
		return Area{}, err
	}
	cp.ModifiedAt = Epoch(h.now())
	*a = cp
	h.fireLocked("area_registry_updated", map[string]any{"action": "update", "area_id": areaID}, "LOCAL", h.newContext("", nil))
	return cp, nil
}

// DeleteArea is config/area_registry/delete: devices and entities in the
// area lose their area, as in HA.
func (h *Home) DeleteArea(areaID string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	if _, ok := h.areas[areaID]; !ok {
		return &NotFoundError{Msg: "Area ID doesn't exist"}
	}
	delete(h.areas, areaID)
	for _, d := range h.devices {
		if d.AreaID != nil && *d.AreaID == areaID {
			d.AreaID = nil
		}
	}
	for _, e := range h.entities {
		if e.AreaID != nil && *e.AreaID == areaID {
			e.AreaID = nil
		}
	}
	h.fireLocked("area_registry_updated", map[string]any{"action": "remove", "area_id": areaID}, "LOCAL", h.newContext("", nil))
	return nil
}

// UpdateDevice is config/device_registry/update for area_id, labels,
// name_by_user and disabled_by.
func (h *Home) UpdateDevice(deviceID string, fields map[string]any) (Device, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	d, ok := h.devices[deviceID]
	if !ok {
		return Device{}, &NotFoundError{Msg: "Device not found"}
	}
	cp := *d
	for key, dst := range map[string]**string{"area_id": &cp.AreaID, "name_by_user": &cp.NameByUser, "disabled_by": &cp.DisabledBy} {
		p, err := optString(fields, key)
		if err != nil {
			return Device{}, err
		}
		if p != nil {
			*dst = *p
		}
	}
	if cp.AreaID != nil && h.areas[*cp.AreaID] == nil {
		return Device{}, &InfoError{Msg: fmt.Sprintf("Area %s does not exist", *cp.AreaID)}
	}
	if l, present, err := stringList(fields, "labels"); err != nil {
		return Device{}, err
	} else if present {
		cp.Labels = l
	}
	cp.ModifiedAt = Epoch(h.now())
	*d = cp
	h.fireLocked("device_registry_updated", map[string]any{"action": "update", "device_id": deviceID}, "LOCAL", h.newContext("", nil))
	return cp, nil
}
