package homeassistant

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
)

// A model with an admin token fires state_changed for the garage door the ways its tools can —
// ha_fire_event (REST POST /api/events/state_changed), a WS fire_event, a script's event action —
// against the simulated Home Assistant over real sockets. hamcp's mirror must keep the garage as
// the state machine has it, and still follow a real removal.
func TestMirrorIgnoresFiredStateChanged(t *testing.T) {
	const sentinel = "input_boolean.guest_mode"
	h := ownHome(t)
	c := fastClient(t, h.URL(), h.Token())
	waitConnected(t, c)
	testkit.Eventually(t, "mirror ready", c.Mirror().Ready)
	ctx := context.Background()

	var mu sync.Mutex
	var garageChanges []string
	c.Mirror().OnStateChanged(func(old, new *State) {
		if (old != nil && old.EntityID == garageID) || (new != nil && new.EntityID == garageID) {
			mu.Lock()
			garageChanges = append(garageChanges, describe(old)+" -> "+describe(new))
			mu.Unlock()
		}
	})
	before, ok := c.Mirror().Get(garageID)
	if !ok || deviceClass(before) != "garage" {
		t.Fatalf("the simulated home's garage: %+v", before)
	}

	shade := map[string]any{"entity_id": garageID, "state": "open", "attributes": map[string]any{"device_class": "shade", "friendly_name": "Garage Door"},
		"last_changed": "2030-01-01T00:00:00+00:00", "last_updated": "2030-01-01T00:00:00+00:00", "context": map[string]any{"id": "01FORGED0000000000000000000"}}
	attacks := []struct {
		name string
		fire func(t *testing.T)
	}{
		{"ha_fire_event: shade state", func(t *testing.T) {
			if err := c.FireEvent(ctx, "state_changed", map[string]any{"entity_id": garageID, "old_state": before, "new_state": shade}); err != nil {
				t.Fatal(err)
			}
		}},
		{"ha_fire_event: removal", func(t *testing.T) {
			if err := c.FireEvent(ctx, "state_changed", map[string]any{"entity_id": garageID, "old_state": before, "new_state": nil}); err != nil {
				t.Fatal(err)
			}
		}},
		{"ws fire_event: shade state", func(t *testing.T) {
			if err := c.Call(ctx, "fire_event", map[string]any{"event_type": "state_changed", "event_data": map[string]any{"entity_id": garageID, "old_state": before, "new_state": shade}}, nil); err != nil {
				t.Fatal(err)
			}
		}},
		{"ws fire_event: removal", func(t *testing.T) {
			if err := c.Call(ctx, "fire_event", map[string]any{"event_type": "state_changed", "event_data": map[string]any{"entity_id": garageID, "new_state": nil}}, nil); err != nil {
				t.Fatal(err)
			}
		}},
		// A user's script that fires state_changed (LOCAL, with a state templated to look
		// like the state machine's).
		{"script event action: shade state and removal", func(t *testing.T) {
			body := map[string]any{"alias": "Forge", "sequence": []any{
				map[string]any{"event": "state_changed", "event_data": map[string]any{"entity_id": garageID, "old_state": nil, "new_state": map[string]any{
					"entity_id": garageID, "state": "open", "attributes": map[string]any{"device_class": "shade"},
					"last_changed": "{{ now().isoformat() }}", "last_updated": "{{ now().isoformat() }}", "context": map[string]any{"id": "01FORGED0000000000000000000"}}}},
				map[string]any{"event": "state_changed", "event_data": map[string]any{"entity_id": garageID, "new_state": nil}},
			}}
			if err := c.SaveConfigItem(ctx, KindScript, "forge_garage", body); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.CallService(ctx, "script", "forge_garage", nil, false); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			a.fire(t)
			// A real change after the attack: the mirror gets events in bus order, so once it
			// shows this, it has seen the fired events; then every check they asked for is answered.
			want := "on"
			if s, _ := c.Mirror().Get(sentinel); s.State == "on" {
				want = "off"
			}
			if _, _, err := c.CallService(ctx, "input_boolean", "toggle", map[string]any{"entity_id": sentinel}, false); err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, "the real change after the attack", func() bool { s, _ := c.Mirror().Get(sentinel); return s.State == want })
			testkit.Eventually(t, "checks answered", c.Mirror().checks.idle)

			got, ok := c.Mirror().Get(garageID)
			if !ok {
				t.Fatal("a fired state_changed removed the garage door from the mirror")
			}
			if deviceClass(got) != "garage" || got.State != before.State || !got.LastUpdated.Equal(before.LastUpdated) {
				t.Fatalf("the mirror believed a fired event: %s device_class %q, want %s %q", got.State, deviceClass(got), before.State, "garage")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(garageChanges) != 0 {
				t.Fatalf("listeners were told of fired changes: %v", garageChanges)
			}
		})
	}

	t.Run("a real removal still removes", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodDelete, h.URL()+"/api/states/"+garageID, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+h.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("DELETE /api/states/%s: %d", garageID, resp.StatusCode)
		}
		testkit.Eventually(t, "the real removal", func() bool { _, ok := c.Mirror().Get(garageID); return !ok })
		mu.Lock()
		defer mu.Unlock()
		if len(garageChanges) != 1 || !strings.HasSuffix(garageChanges[0], " -> ") {
			t.Fatalf("listeners: %v, want one removal", garageChanges)
		}
	})
}

// idle reports that no check is queued or running.
func (q *mirrorChecks) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending) == 0 && !q.resync && !q.running
}
