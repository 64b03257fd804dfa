package home

import "encoding/json"

// The demo home's dashboards, as a user builds them in the UI: the Overview (migrated to the
// dashboard entry "lovelace") with a home view, the living room, and security with the locks, the
// alarm and the garage door; a Garden dashboard; and the Mushroom cards installed from HACS as a
// resource.

const demoOverview = `{
  "title": "Home",
  "views": [
    {
      "title": "Home",
      "path": "home",
      "icon": "mdi:home",
      "cards": [
        {"type": "custom:mushroom-chips-card", "chips": [
          {"type": "weather", "entity": "weather.forecast_home"},
          {"type": "entity", "entity": "person.alex"},
          {"type": "entity", "entity": "person.sam"}
        ]},
        {"type": "weather-forecast", "entity": "weather.forecast_home", "forecast_type": "daily"},
        {"type": "tile", "entity": "alarm_control_panel.home_alarm"},
        {"type": "entities", "title": "Inside", "entities": [
          "sensor.living_room_temperature", "sensor.kitchen_temperature", "sensor.bedroom_temperature", "sensor.office_co2"
        ]},
        {"type": "button", "name": "Movie time", "icon": "mdi:movie-open",
          "tap_action": {"action": "perform-action", "perform_action": "script.movie_time"}},
        {"type": "todo-list", "entity": "todo.shopping_list"}
      ]
    },
    {
      "title": "Living room",
      "path": "living-room",
      "icon": "mdi:sofa",
      "cards": [
        {"type": "tile", "entity": "light.living_room_lamp", "features": [{"type": "light-brightness"}]},
        {"type": "tile", "entity": "light.living_room_ceiling"},
        {"type": "tile", "entity": "cover.living_room_blinds", "features": [{"type": "cover-open-close"}]},
        {"type": "thermostat", "entity": "climate.living_room"},
        {"type": "media-control", "entity": "media_player.living_room_tv"},
        {"type": "button", "name": "Relax", "icon": "mdi:sofa-single",
          "tap_action": {"action": "perform-action", "perform_action": "scene.turn_on", "target": {"entity_id": "scene.relax"}}},
        {"type": "history-graph", "hours_to_show": 24, "entities": ["sensor.living_room_temperature", "sensor.living_room_humidity"]}
      ]
    },
    {
      "title": "Security",
      "path": "security",
      "icon": "mdi:shield-home",
      "cards": [
        {"type": "alarm-panel", "entity": "alarm_control_panel.home_alarm", "states": ["arm_home", "arm_away"]},
        {"type": "tile", "entity": "lock.front_door"},
        {"type": "tile", "entity": "lock.back_door"},
        {"type": "tile", "entity": "cover.garage_door"},
        {"type": "button", "name": "Lock all doors", "icon": "mdi:lock",
          "tap_action": {"action": "perform-action", "perform_action": "lock.lock",
            "target": {"entity_id": ["lock.front_door", "lock.back_door"]}, "confirmation": true}},
        {"type": "picture-entity", "entity": "camera.front_door", "camera_view": "auto"},
        {"type": "entities", "title": "Doors and motion", "entities": [
          "binary_sensor.front_door", "binary_sensor.back_door", "binary_sensor.hallway_motion",
          "binary_sensor.garage_motion", "binary_sensor.hallway_smoke"
        ]}
      ]
    }
  ]
}`

const demoGarden = `{
  "views": [
    {
      "title": "Garden",
      "path": "garden",
      "cards": [
        {"type": "picture-entity", "entity": "camera.garden"},
        {"type": "tile", "entity": "switch.garden_irrigation"},
        {"type": "tile", "entity": "input_number.irrigation_minutes"},
        {"type": "tile", "entity": "light.garden_path"},
        {"type": "button", "name": "Water now", "icon": "mdi:sprinkler",
          "tap_action": {"action": "perform-action", "perform_action": "switch.turn_on", "target": {"entity_id": "switch.garden_irrigation"}}},
        {"type": "sensor", "entity": "sensor.garden_illuminance", "graph": "line"},
        {"type": "entity", "entity": "binary_sensor.garden_motion"}
      ]
    }
  ]
}`

// seedDemo fills a new home's dashboards.
func (s *lovelaceStore) seedDemo() {
	s.items = []map[string]any{
		{"id": "lovelace", "require_admin": false, "icon": defaultDashIcon, "title": "Overview",
			"show_in_sidebar": true, "url_path": "lovelace", "mode": "storage"},
		{"id": "dashboard_garden", "require_admin": false, "icon": "mdi:flower", "title": "Garden",
			"show_in_sidebar": true, "url_path": "dashboard-garden", "mode": "storage"},
	}
	s.configs = map[string]any{"lovelace.lovelace": demoJSON(demoOverview), "lovelace.dashboard_garden": demoJSON(demoGarden)}
	s.resources = []map[string]any{{"id": "4c1b5f0e9a7d4e2fb8c36d1a0e5f7b92", "type": "module",
		"url": "/hacsfiles/lovelace-mushroom/mushroom.js?hacstag=444350375500"}}
}

func demoJSON(text string) any {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		panic("demo dashboard: " + err.Error())
	}
	return cloneJSON(v)
}
