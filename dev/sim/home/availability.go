package home

import "sync"

// Device availability. A device that drops off its network makes its entities "unavailable" in
// Home Assistant, and core's service helper (helpers/service.py, entity_service_call) then skips
// them: a service call targeting one succeeds without touching it. SetAvailable lets tests and the
// demo take an entity's device off and bring it back with the state it had.

var availability = struct {
	sync.Mutex
	off map[*Home]map[string]*State // entity id → the state it had before it went unavailable
}{off: map[*Home]map[string]*State{}}

// SetAvailable takes an entity off (its state becomes "unavailable") or brings it back to the state it
// had. It reports false for an unknown entity.
func (h *Home) SetAvailable(entityID string, available bool) bool {
	h.mu.Lock() // always before availability's lock: unavailable is called with h.mu held
	availability.Lock()
	st, ok := h.states[entityID]
	if !ok {
		availability.Unlock()
		h.mu.Unlock()
		return false
	}
	off := availability.off[h]
	if off == nil {
		off = map[string]*State{}
		availability.off[h] = off
	}
	ctx := h.newContext("", nil)
	switch was, isOff := off[entityID]; {
	case !available && !isOff:
		off[entityID] = st
		h.writeState(entityID, "unavailable", st.Attributes, false, ctx)
	case available && isOff:
		delete(off, entityID)
		h.writeState(entityID, was.State, was.Attributes, false, ctx)
	}
	availability.Unlock()
	h.mu.Unlock()
	h.bus.flush()
	return true
}

// unavailable reports whether an entity's device is off; called with h.mu held.
func (h *Home) unavailable(entityID string) bool {
	availability.Lock()
	defer availability.Unlock()
	_, off := availability.off[h][entityID]
	return off
}
