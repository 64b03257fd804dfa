package sensitive

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzTriggers: any automation configuration is read without panicking, and an event trigger on a
// plain event type is always found (the index of what the model can start relies on it).
func FuzzTriggers(f *testing.F) {
	f.Add(`{"triggers":[{"trigger":"state","entity_id":["input_boolean.guest_mode"]}]}`, "rt_event")
	f.Add(`{"trigger":[{"platform":"template","value_template":"{{ states.light | list }}"}]}`, "tag_scanned")
	f.Add(`{"triggers":[{"trigger":"device","device_id":"abc","entity_id":"x"},{"trigger":"time","at":["input_datetime.wake",3]}]}`, "x")
	f.Add(`{"triggers":{"triggers":[{"trigger":"event","event_type":["a","{{ b }}"]}]}}`, "a")
	f.Fuzz(func(t *testing.T, cfg, event string) {
		var v any
		if json.Unmarshal([]byte(cfg), &v) != nil {
			return
		}
		Triggers(v)
		if event == "" || IsTemplate(event) {
			return
		}
		m, _ := v.(map[string]any)
		if m == nil {
			return
		}
		m["triggers"] = []any{m["triggers"], map[string]any{"trigger": "event", "event_type": event}}
		if got := Triggers(m); !slices.Contains(got.Events, strings.ToLower(event)) {
			t.Fatalf("event trigger on %q not found in %+v", event, got)
		}
	})
}

// FuzzReservedEvent: Home Assistant's own events stay reserved however they are cased or padded.
func FuzzReservedEvent(f *testing.F) {
	for _, s := range []string{"state_changed", " Call_Service", "homeassistant_stop", "entity_registry_updated", "my_event"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := ReservedEvent(s)
		t2 := strings.ToLower(strings.TrimSpace(s))
		if (t2 == "state_changed" || strings.HasPrefix(t2, "homeassistant_") || strings.HasSuffix(t2, "_registry_updated")) && !r {
			t.Fatalf("%q is Home Assistant's own event but not reserved", s)
		}
	})
}
