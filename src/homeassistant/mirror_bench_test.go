package homeassistant

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkMirrorApplyEvent folds one ordinary state_changed event, as HA's state machine sends
// it, into a primed mirror of 2,000 entities: the per-event cost on a busy home.
func BenchmarkMirrorApplyEvent(b *testing.B) {
	m := newStateMirror()
	defer m.close()
	t0 := time.Now().UTC()
	states := make([]State, 2000)
	for i := range states {
		states[i] = st(fmt.Sprintf("sensor.s%04d", i), "1", t0)
		states[i].Attributes = map[string]any{"unit_of_measurement": "W", "device_class": "power"}
	}
	m.replace(states)
	events := make([]json.RawMessage, 64)
	for i := range events {
		at := t0.Add(time.Duration(i+1) * time.Millisecond)
		id := fmt.Sprintf("sensor.s%04d", i)
		ctx := fmt.Sprintf("01J%023d", i)
		raw, err := json.Marshal(map[string]any{"event_type": "state_changed", "origin": "LOCAL", "time_fired": at,
			"context": map[string]any{"id": ctx, "parent_id": nil, "user_id": nil},
			"data": map[string]any{"entity_id": id, "old_state": states[i], "new_state": map[string]any{
				"entity_id": id, "state": fmt.Sprint(i), "attributes": map[string]any{"unit_of_measurement": "W", "device_class": "power"},
				"last_changed": at, "last_updated": at, "last_reported": at,
				"context": map[string]any{"id": ctx, "parent_id": nil, "user_id": nil}}}})
		if err != nil {
			b.Fatal(err)
		}
		events[i] = raw
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if id, err := m.applyEvent(events[i%len(events)]); err != nil || id != "" {
			b.Fatal(id, err)
		}
		i++
	}
}
