package home

import (
	"maps"
	"slices"
)

// Voice-assistant exposure (Settings → Voice assistants → Expose), as homeassistant/expose_entity
// and homeassistant/expose_entity/list keep it: per entity, per assistant, a setting only where
// the user made one. Entities without a setting follow Home Assistant's defaults.

// Assistants are the assistant ids HA accepts.
var Assistants = []string{"cloud.alexa", "cloud.google_assistant", "conversation"}

// ExposedEntities returns every explicit setting: entity id → assistant → exposed.
func (h *Home) ExposedEntities() map[string]map[string]bool {
	a := h.admin()
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]map[string]bool, len(a.exposed))
	for id, to := range a.exposed {
		out[id] = maps.Clone(to)
	}
	return out
}

// ExposeEntities records should for each entity and assistant. Assistants outside HA's known
// list fail its schema (invalid_format); entity ids are taken as given, as HA does.
func (h *Home) ExposeEntities(assistants, entityIDs []string, should bool) error {
	for i, as := range assistants {
		if !slices.Contains(Assistants, as) {
			return invalidf("value must be one of %s @ data['assistants'][%d]. Got '%s'", pyList(Assistants), i, as)
		}
	}
	a := h.admin()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range entityIDs {
		if a.exposed[id] == nil {
			a.exposed[id] = map[string]bool{}
		}
		for _, as := range assistants {
			a.exposed[id][as] = should
		}
	}
	return nil
}

// seedExposed is the demo's settings: the front door lock and the alarm are kept from Assist, the
// way many households keep voice away from them.
func seedExposed() map[string]map[string]bool {
	return map[string]map[string]bool{
		"lock.front_door":                {"conversation": false, "cloud.alexa": false},
		"alarm_control_panel.home_alarm": {"conversation": false},
		"light.living_room":              {"conversation": true, "cloud.alexa": true},
	}
}
