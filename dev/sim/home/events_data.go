package home

import "sync"

// A running Home Assistant has bus listeners from its core and default
// integrations long before any client subscribes; GET /api/events shows them
// with their counts. These are the ones a default_config install with the
// demo's integrations carries (counts as seen on such an install).
var coreListeners = []struct {
	event string
	count int
}{
	{"state_changed", 12},
	{"call_service", 1},
	{"homeassistant_stop", 24},
	{"homeassistant_final_write", 4},
	{"homeassistant_close", 3},
	{"homeassistant_started", 2},
	{"core_config_updated", 6},
	{"component_loaded", 3},
	{"service_registered", 2},
	{"service_removed", 1},
	{"entity_registry_updated", 9},
	{"device_registry_updated", 5},
	{"area_registry_updated", 2},
	{"floor_registry_updated", 1},
	{"label_registry_updated", 1},
	{"config_entry_discovered", 1},
	{"logbook_entry", 1},
	{"automation_reloaded", 1},
	{"automation_triggered", 1},
	{"script_started", 1},
	{"scene_reloaded", 1},
	{"persistent_notifications_updated", 1},
	{"shopping_list_updated", 1},
	{"themes_updated", 1},
	{"panels_updated", 1},
	{"lovelace_updated", 1},
	{"user_added", 1},
	{"user_removed", 2},
	{"mobile_app_notification_action", 1},
	{"zha_event", 1},
	{"hue_event", 1},
	{"shelly.click", 1},
}

var coreListening = struct {
	sync.Mutex
	done map[*Home]bool
}{done: map[*Home]bool{}}

// ListenCore registers the core and integration listeners once per home.
// They do nothing: they stand for handlers that live inside HA.
func (h *Home) ListenCore() {
	coreListening.Lock()
	defer coreListening.Unlock()
	if coreListening.done[h] {
		return
	}
	coreListening.done[h] = true
	for _, l := range coreListeners {
		for i := 0; i < l.count; i++ {
			h.bus.subscribe(l.event, func(Event) {})
		}
	}
}
