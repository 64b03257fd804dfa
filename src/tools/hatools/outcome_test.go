package hatools_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
)

// ha_call_service says what happened to each entity it targeted, however the targets were given, so
// a model knows the outcome of a bulk call without reading the states again.
func TestCallServiceReportsEachTarget(t *testing.T) {
	e := admStart(t, admOpts{})
	// A known starting point: one lamp on, one off.
	e.ok(t, "ha_call_service", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []string{"light.kitchen_ceiling"}})
	e.ok(t, "ha_call_service", map[string]any{"domain": "light", "service": "turn_off", "entity_id": []string{"light.kitchen_island"}})

	for _, tt := range []struct {
		name string
		args map[string]any
		want map[string]string // entity → outcome
	}{
		{"named entities", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []string{"light.kitchen_ceiling", "light.kitchen_island", "light.attic"}},
			map[string]string{"light.kitchen_ceiling": "already", "light.kitchen_island": "changed", "light.attic": "not_found"}},
		{"an area, its lights only", map[string]any{"domain": "light", "service": "turn_off", "area_id": []string{"kitchen"}},
			map[string]string{"light.kitchen_ceiling": "changed", "light.kitchen_island": "changed"}},
		{"a toggle", map[string]any{"domain": "light", "service": "toggle", "entity_id": []string{"light.kitchen_island"}},
			map[string]string{"light.kitchen_island": "changed"}},
		{"a lamp whose device is off the network", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []string{"light.kitchen_ceiling", "light.kitchen_island"}},
			map[string]string{"light.kitchen_ceiling": "unavailable", "light.kitchen_island": "changed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.name, "off the network") {
				e.ok(t, "ha_call_service", map[string]any{"domain": "light", "service": "turn_off", "entity_id": []string{"light.kitchen_island"}})
				if !e.home.Model().SetAvailable("light.kitchen_ceiling", false) {
					t.Fatal("no light.kitchen_ceiling")
				}
				waitState(t, e, "light.kitchen_ceiling", "unavailable")
			}
			r := e.ok(t, "ha_call_service", tt.args)
			got := map[string]string{}
			for _, o := range admItems(t, r, "targets") {
				id := o["entity_id"].(string)
				got[id] = o["outcome"].(string)
				if !strings.HasPrefix(id, "light.") {
					t.Errorf("%s is not a light, yet a light service reports it", id)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("outcomes %v, want %v (result %v)", got, tt.want, r)
			}
		})
	}
}

// waitState waits until the state mirror has seen an entity's new state.
func waitState(t *testing.T, e *admEnv, id, state string) {
	t.Helper()
	testkit.Eventually(t, id+" to become "+state, func() bool {
		s, ok := e.ha.Mirror().Get(id)
		return ok && s.State == state
	})
}
