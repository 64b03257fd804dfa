package home

import (
	"maps"
	"slices"
	"strings"
)

// Voice-assistant exposure (Settings → Voice assistants → Expose), as homeassistant/expose_entity
// and homeassistant/expose_entity/list keep it: per entity, per assistant, a setting only where
// the user made one. Entities without a setting follow Home Assistant's defaults.

// Assistants are the assistant ids HA accepts.
var Assistants = []string{"cloud.alexa", "cloud.google_assistant", "conversation"}

// ExposedEntities is homeassistant/expose_entity/list: entity id → assistant → exposed, for every
// entity of the registry. Assist's conversation agent asks async_should_expose about every entity when
// it starts, and Home Assistant stores the default it decides for an entity without a setting
// (exposed_entities.py, _is_default_exposed), so in a running home each registered entity carries a
// "conversation" decision; the cloud assistants' only where the user made one.
func (h *Home) ExposedEntities() map[string]map[string]bool {
	defaults := h.defaultExposure()
	a := h.admin()
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]map[string]bool, len(a.exposed)+len(defaults))
	for id, exposed := range defaults {
		out[id] = map[string]bool{"conversation": exposed}
	}
	for id, to := range a.exposed {
		if out[id] == nil {
			out[id] = map[string]bool{}
		}
		maps.Copy(out[id], to)
	}
	return out
}

// Home Assistant's defaults for an entity nobody decided about (exposed_entities.py).
var (
	defaultExposedDomains = map[string]bool{"climate": true, "cover": true, "fan": true, "humidifier": true, "light": true,
		"media_player": true, "scene": true, "switch": true, "todo": true, "vacuum": true, "water_heater": true}
	defaultExposedBinarySensors = map[string]bool{"door": true, "garage_door": true, "lock": true, "motion": true,
		"opening": true, "presence": true, "window": true}
	defaultExposedSensors = map[string]bool{"aqi": true, "carbon_monoxide": true, "carbon_dioxide": true, "humidity": true,
		"pm10": true, "pm25": true, "temperature": true, "volatile_organic_compounds": true}
	neverExposed = map[string]bool{"group.all_locks": true} // CLOUD_NEVER_EXPOSED_ENTITIES
)

// defaultExposure decides, for every registered entity, what _is_default_exposed would.
func (h *Home) defaultExposure() map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]bool, len(h.entities))
	for _, e := range h.entities {
		if neverExposed[e.EntityID] {
			out[e.EntityID] = false
			continue
		}
		if e.EntityCategory != nil || e.HiddenBy != nil {
			out[e.EntityID] = false
			continue
		}
		domain, _, _ := strings.Cut(e.EntityID, ".")
		class := ""
		switch {
		case e.DeviceClass != nil:
			class = *e.DeviceClass
		case e.OriginalDeviceClass != nil:
			class = *e.OriginalDeviceClass
		default:
			if st := h.states[e.EntityID]; st != nil {
				class, _ = st.Attributes["device_class"].(string)
			}
		}
		out[e.EntityID] = defaultExposedDomains[domain] || domain == "binary_sensor" && defaultExposedBinarySensors[class] ||
			domain == "sensor" && defaultExposedSensors[class]
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

// seedExposed is the demo's own settings on top of Home Assistant's defaults: the front door lock and
// the alarm are kept from Assist, the way many households keep voice away from them.
func seedExposed() map[string]map[string]bool {
	return map[string]map[string]bool{
		"lock.front_door":                {"conversation": false, "cloud.alexa": false},
		"alarm_control_panel.home_alarm": {"conversation": false},
		"light.living_room_lamp":         {"conversation": true, "cloud.alexa": true},
	}
}
