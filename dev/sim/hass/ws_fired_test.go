package hass_test

import (
	"encoding/json"
	"testing"
)

// A state_changed event fired by a client is not the state machine's. These pin what Home
// Assistant forwards of one (websocket_api/commands.py handle_subscribe_events and
// _forward_entity_changes, messages.py _state_diff_event, api/__init__.py APIEventView) and that
// the state machine itself is untouched.
func TestWSFiredStateChanged(t *testing.T) {
	const garage = "cover.garage_door"
	const sentinel = "input_boolean.guest_mode"
	shade := map[string]any{"entity_id": garage, "state": "open", "attributes": map[string]any{"device_class": "shade", "friendly_name": "Garage Door"},
		"last_changed": "2020-01-01T00:00:00+00:00", "last_updated": "2020-01-01T00:00:00+00:00", "context": map[string]any{"id": "01FORGED00000000000000000"}}
	cases := []struct {
		name string
		via  string // "rest" or "ws"
		data map[string]any
		// what subscribe_entities forwards: "" nothing, "r" a removal, "c" a change
		entities string
	}{
		{"ws plain new_state", "ws", map[string]any{"entity_id": garage, "old_state": nil, "new_state": shade}, ""},
		{"ws new_state null", "ws", map[string]any{"entity_id": garage, "old_state": nil, "new_state": nil}, "r"},
		{"ws no new_state", "ws", map[string]any{"entity_id": garage}, ""},
		{"rest new_state null", "rest", map[string]any{"entity_id": garage, "old_state": nil, "new_state": nil}, "r"},
		// APIEventView turns state dicts into State objects, so this one passes as a change.
		{"rest state dicts", "rest", map[string]any{"entity_id": garage, "old_state": shade, "new_state": shade}, "c"},
		{"rest dict without state", "rest", map[string]any{"entity_id": garage, "old_state": nil, "new_state": map[string]any{"entity_id": garage}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := dialAuthed(t, home.Token())
			w.ok(map[string]any{"id": 1, "type": "subscribe_entities", "entity_ids": []string{garage, sentinel}})
			w.waitEvent(1, func(ev map[string]any) bool { return ev["a"] != nil })
			w.ok(map[string]any{"id": 2, "type": "subscribe_events", "event_type": "state_changed"})

			switch c.via {
			case "ws":
				w.ok(map[string]any{"id": 3, "type": "fire_event", "event_type": "state_changed", "event_data": c.data})
			case "rest":
				body, _ := json.Marshal(c.data)
				if r := api(t, "POST", "/api/events/state_changed", string(body)); r.status != 200 {
					t.Fatalf("POST /api/events/state_changed: %d %s", r.status, r.body)
				}
			}
			// A real change after the fired event: events reach each subscription in bus order,
			// so whatever subscribe_entities forwarded of the fired one comes before this change.
			w.ok(map[string]any{"id": 4, "type": "call_service", "domain": "input_boolean", "service": "toggle", "target": map[string]any{"entity_id": sentinel}})
			fired, entities := readUntilSentinel(t, w, garage, sentinel)
			if fired == nil || fired["origin"] != "REMOTE" {
				t.Errorf("subscribe_events: the fired event is %v, want it with origin REMOTE", fired)
			}
			got := ""
			if len(entities) > 1 {
				t.Errorf("subscribe_entities forwarded more than one message: %v", entities)
			}
			for _, first := range entities {
				switch {
				case first["r"] != nil:
					got = "r"
					if ids := first["r"].([]any); len(ids) != 1 || ids[0] != garage {
						t.Errorf("removal: %v", first)
					}
				case first["c"] != nil:
					got = "c"
				case first["a"] != nil:
					got = "a"
				}
			}
			if got != c.entities {
				t.Errorf("subscribe_entities forwarded %q (%v), want %q", got, entities, c.entities)
			}
			// The state machine never saw it.
			st := api(t, "GET", "/api/states/"+garage, "").json(t).(map[string]any)
			if st["attributes"].(map[string]any)["device_class"] != "garage" || st["state"] == "open" {
				t.Errorf("the fired event changed the state machine: %v", st)
			}
		})
	}
}

// The state machine's own state_changed is LOCAL, carries the new state's context and is fired
// at the new state's last_updated (core.py StateMachine.async_set_internal, time_fired=timestamp).
func TestWSStateMachineEventBinding(t *testing.T) {
	w := dialAuthed(t, home.Token())
	w.ok(map[string]any{"id": 1, "type": "subscribe_events", "event_type": "state_changed"})
	w.ok(map[string]any{"id": 2, "type": "call_service", "domain": "input_boolean", "service": "toggle", "target": map[string]any{"entity_id": "input_boolean.guest_mode"}})
	ev := w.waitEvent(1, func(ev map[string]any) bool {
		return ev["data"].(map[string]any)["entity_id"] == "input_boolean.guest_mode"
	})
	ns := ev["data"].(map[string]any)["new_state"].(map[string]any)
	if ev["origin"] != "LOCAL" || ev["time_fired"] != ns["last_updated"] ||
		ev["context"].(map[string]any)["id"] != ns["context"].(map[string]any)["id"] {
		t.Errorf("state machine event: origin %v, time_fired %v vs last_updated %v, context %v vs %v",
			ev["origin"], ev["time_fired"], ns["last_updated"], ev["context"], ns["context"])
	}
}

// A script's event action fires LOCAL (helpers/script.py _async_event_step) with plain data, so
// its state_changed reaches subscribe_events but not subscribe_entities.
func TestWSScriptEventActionIsLocal(t *testing.T) {
	const garage = "cover.garage_door"
	body := `{"alias":"Forge","sequence":[{"event":"state_changed","event_data":{"entity_id":"` + garage + `","old_state":null,"new_state":{"entity_id":"` + garage + `","state":"open","attributes":{"device_class":"shade"}}}}]}`
	if r := api(t, "POST", "/api/config/script/config/forge_garage", body); r.status != 200 {
		t.Fatalf("saving the script: %d %s", r.status, r.body)
	}
	t.Cleanup(func() { api(t, "DELETE", "/api/config/script/config/forge_garage", "") })
	w := dialAuthed(t, home.Token())
	w.ok(map[string]any{"id": 1, "type": "subscribe_entities", "entity_ids": []string{garage, "input_boolean.guest_mode"}})
	w.waitEvent(1, func(ev map[string]any) bool { return ev["a"] != nil })
	w.ok(map[string]any{"id": 2, "type": "subscribe_events", "event_type": "state_changed"})
	w.ok(map[string]any{"id": 3, "type": "call_service", "domain": "script", "service": "forge_garage"})
	w.ok(map[string]any{"id": 4, "type": "call_service", "domain": "input_boolean", "service": "toggle", "target": map[string]any{"entity_id": "input_boolean.guest_mode"}})
	ev, entities := readUntilSentinel(t, w, garage, "input_boolean.guest_mode")
	if ev == nil || ev["origin"] != "LOCAL" {
		t.Errorf("subscribe_events: the script's event is %v, want it with origin LOCAL", ev)
	}
	if len(entities) != 0 {
		t.Errorf("subscribe_entities forwarded the script's event: %v", entities)
	}
}

// readUntilSentinel reads subscription 2 (subscribe_events) and 1 (subscribe_entities) until
// the sentinel's change arrives on 1. It returns the state_changed event for entityID seen on 2
// and every message subscription 1 got before the sentinel's change.
func readUntilSentinel(t *testing.T, w *wsClient, entityID, sentinel string) (fired map[string]any, entities []map[string]any) {
	t.Helper()
	for {
		m := w.next()
		ev, _ := m["event"].(map[string]any)
		if m["type"] != "event" || ev == nil {
			continue
		}
		switch m["id"] {
		case 2.0:
			if data, _ := ev["data"].(map[string]any); data["entity_id"] == entityID && fired == nil {
				fired = ev
			}
		case 1.0:
			if c, _ := ev["c"].(map[string]any); c != nil && c[sentinel] != nil {
				if len(c) > 1 {
					entities = append(entities, ev)
				}
				return fired, entities
			}
			entities = append(entities, ev)
		}
	}
}
