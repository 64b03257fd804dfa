package hatools_test

import (
	"context"
	"testing"

	"github.com/hamcp/hamcp/src/homeassistant"
)

// BenchmarkConfirmDecision is what the confirmation layer costs a call: an ordinary light toggle
// (nothing to ask: the trigger index and the openers are cached), a garage door (resolved from the
// registry and fresh states, and asked about), and a toggle that starts one of the user's
// automations (its configuration read fresh).
func BenchmarkConfirmDecision(b *testing.B) {
	e := admStart(b, admOpts{})
	ctx := context.Background()
	if err := e.ha.SaveConfigItem(ctx, homeassistant.KindAutomation, "1714000009901", map[string]any{"alias": "Bench guests",
		"triggers": []any{map[string]any{"trigger": "state", "entity_id": "input_boolean.guest_mode"}},
		"actions":  []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.porch"}}}}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, domain, service, entity string }{
		{"light toggle", "light", "toggle", "light.kitchen_ceiling"},
		{"garage door", "cover", "open_cover", "cover.garage_door"},
		{"starts a user automation", "input_boolean", "toggle", "input_boolean.guest_mode"},
	} {
		b.Run(c.name, func(b *testing.B) {
			args := map[string]any{"domain": c.domain, "service": c.service, "entity_id": []string{c.entity}, "confirm": true}
			for b.Loop() {
				e.call(b, "ha_call_service", args)
			}
		})
	}
}
