package home

import (
	"sort"
	"strings"
	"time"
)

// Snapshot is a consistent, read-only copy of the home for the template
// engine: states plus the registry facts template functions ask about.
type Snapshot struct {
	states   map[string]*State
	sorted   []*State
	areas    map[string]Area
	floors   map[string]Floor
	labels   map[string]Label
	devices  map[string]Device
	entities map[string]EntityEntry
	now      time.Time
	loc      *time.Location
}

// Snapshot copies what templates read, under the lock.
func (h *Home) Snapshot() *Snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.snapshotLocked()
}

func (h *Home) snapshotLocked() *Snapshot {
	s := &Snapshot{states: make(map[string]*State, len(h.states)), areas: map[string]Area{}, floors: map[string]Floor{},
		labels: map[string]Label{}, devices: map[string]Device{}, entities: map[string]EntityEntry{}, now: h.now(), loc: h.loc}
	for k, v := range h.states {
		s.states[k] = v
	}
	s.sorted = h.statesLocked()
	for k, v := range h.areas {
		s.areas[k] = *v
	}
	for k, v := range h.floors {
		s.floors[k] = *v
	}
	for k, v := range h.labels {
		s.labels[k] = *v
	}
	for k, v := range h.devices {
		s.devices[k] = *v
	}
	for k, v := range h.entities {
		s.entities[k] = *v
	}
	return s
}

// Now is the snapshot's time.
func (s *Snapshot) Now() time.Time { return s.now }

// Location is the home's zone.
func (s *Snapshot) Location() *time.Location { return s.loc }

// State returns one entity's state.
func (s *Snapshot) State(id string) (*State, bool) { st, ok := s.states[id]; return st, ok }

// States returns all states sorted by entity id.
func (s *Snapshot) States() []*State { return s.sorted }

// DomainStates returns the states of one domain, sorted.
func (s *Snapshot) DomainStates(domain string) []*State {
	var out []*State
	for _, st := range s.sorted {
		if strings.HasPrefix(st.EntityID, domain+".") {
			out = append(out, st)
		}
	}
	return out
}

// resolveArea finds an area by id or (case-insensitive) name.
func (s *Snapshot) resolveArea(ref string) (Area, bool) {
	if a, ok := s.areas[ref]; ok {
		return a, true
	}
	for _, a := range s.areas {
		if strings.EqualFold(a.Name, ref) {
			return a, true
		}
	}
	return Area{}, false
}

// entityArea is the entity's own area, else its device's.
func (s *Snapshot) entityArea(eid string) string {
	e, ok := s.entities[eid]
	if !ok {
		return ""
	}
	if e.AreaID != nil {
		return *e.AreaID
	}
	if e.DeviceID != nil {
		if d, ok := s.devices[*e.DeviceID]; ok && d.AreaID != nil {
			return *d.AreaID
		}
	}
	return ""
}

// AreaID is HA's area_id(): from an area name, an entity id or a device id.
func (s *Snapshot) AreaID(ref string) string {
	if a, ok := s.resolveArea(ref); ok {
		return a.AreaID
	}
	if id := s.entityArea(ref); id != "" {
		return id
	}
	if d, ok := s.devices[ref]; ok && d.AreaID != nil {
		return *d.AreaID
	}
	return ""
}

// AreaName is HA's area_name(): from an area id, entity id or device id.
func (s *Snapshot) AreaName(ref string) string {
	if a, ok := s.areas[ref]; ok {
		return a.Name
	}
	if id := s.AreaID(ref); id != "" {
		return s.areas[id].Name
	}
	return ""
}

// AreaEntities is HA's area_entities(): entities in the area directly or via their device.
func (s *Snapshot) AreaEntities(ref string) []string {
	a, ok := s.resolveArea(ref)
	if !ok {
		return []string{}
	}
	out := []string{}
	for id := range s.entities {
		if s.entityArea(id) == a.AreaID {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// AreaDevices is HA's area_devices().
func (s *Snapshot) AreaDevices(ref string) []string {
	a, ok := s.resolveArea(ref)
	if !ok {
		return []string{}
	}
	out := []string{}
	for id, d := range s.devices {
		if d.AreaID != nil && *d.AreaID == a.AreaID {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Areas lists all area ids (HA's areas()).
func (s *Snapshot) Areas() []string {
	out := make([]string, 0, len(s.areas))
	for id := range s.areas {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// FloorAreas is HA's floor_areas(): area ids on a floor given by id or name.
func (s *Snapshot) FloorAreas(ref string) []string {
	fid := ""
	for id, f := range s.floors {
		if id == ref || strings.EqualFold(f.Name, ref) {
			fid = id
		}
	}
	out := []string{}
	for id, a := range s.areas {
		if fid != "" && a.FloorID != nil && *a.FloorID == fid {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// FloorName is HA's floor_name() for a floor id or an area/entity on that floor.
func (s *Snapshot) FloorName(ref string) string {
	if f, ok := s.floors[ref]; ok {
		return f.Name
	}
	if aid := s.AreaID(ref); aid != "" {
		if a := s.areas[aid]; a.FloorID != nil {
			return s.floors[*a.FloorID].Name
		}
	}
	return ""
}

// LabelEntities is HA's label_entities() for a label id or name.
func (s *Snapshot) LabelEntities(ref string) []string {
	lid := ""
	for id, l := range s.labels {
		if id == ref || strings.EqualFold(l.Name, ref) {
			lid = id
		}
	}
	out := []string{}
	for id, e := range s.entities {
		if lid != "" && contains(e.Labels, lid) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// DeviceID is HA's device_id() for an entity id.
func (s *Snapshot) DeviceID(eid string) string {
	if e, ok := s.entities[eid]; ok && e.DeviceID != nil {
		return *e.DeviceID
	}
	return ""
}

// DeviceAttr is HA's device_attr(device_or_entity_id, attr).
func (s *Snapshot) DeviceAttr(ref, attr string) any {
	id := ref
	if d := s.DeviceID(ref); d != "" {
		id = d
	}
	d, ok := s.devices[id]
	if !ok {
		return nil
	}
	switch attr {
	case "name":
		return d.Name
	case "manufacturer":
		return deref(d.Manufacturer)
	case "model":
		return deref(d.Model)
	case "area_id":
		return deref(d.AreaID)
	case "sw_version":
		return deref(d.SWVersion)
	case "id":
		return d.ID
	}
	return nil
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
