package hatools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/homeassistant"
)

func TestCardActions(t *testing.T) {
	cfg := `{"views": [{"cards": [
		{"type": "button", "entity": "lock.front_door", "tap_action": {"action": "toggle"}},
		{"type": "vertical-stack", "cards": [{"type": "button", "hold_action": {"action": "perform-action", "perform_action": "cover.open_cover", "target": {"area_id": "garage"}}}]},
		{"type": "entities", "entities": ["light.a", {"entity": "script.x", "double_tap_action": {"action": "call-service", "service": "script.turn_on", "service_data": {"entity_id": "script.x"}}}]},
		{"type": "tile", "entity": "light.b", "icon_tap_action": {"action": "perform-action", "perform_action": "light.turn_on", "target": "{{ x }}"}},
		{"type": "tile", "entity": "light.c", "tap_action": {"action": "navigate", "navigation_path": "/x"}},
		{"type": "button", "tap_action": {"action": "perform-action"}}
	]}]}`
	var v any
	if err := json.Unmarshal([]byte(cfg), &v); err != nil {
		t.Fatal(err)
	}
	got := cardActions(v)
	var names []string
	for _, a := range got {
		names = append(names, a.Service)
	}
	slices.Sort(names)
	// The explicit actions, and the toggles the frontend runs by default: the lock's button, the rows'
	// toggle and Run controls (light.a, script.x) and the tiles' icons (light.b, light.c).
	want := []string{"cover.open_cover", "homeassistant.toggle", "homeassistant.toggle", "homeassistant.toggle",
		"homeassistant.toggle", "homeassistant.toggle", "light.turn_on", "script.turn_on"}
	if !slices.Equal(names, want) {
		t.Fatalf("actions %v, want %v", names, want)
	}
	var toggled []string
	for _, a := range got {
		switch a.Service {
		case "homeassistant.toggle":
			toggled = append(toggled, a.Target.EntityIDs...)
		case "cover.open_cover":
			if !slices.Equal(a.Target.AreaIDs, []string{"garage"}) {
				t.Errorf("hold action targets %v", a.Target)
			}
		case "script.turn_on":
			if !slices.Equal(a.Target.EntityIDs, []string{"script.x"}) {
				t.Errorf("service_data target %v", a.Target)
			}
		case "light.turn_on":
			if !a.Target.Templated {
				t.Errorf("a templated target reads as known: %v", a.Target)
			}
		}
	}
	slices.Sort(toggled)
	if want := []string{"light.a", "light.b", "light.c", "lock.front_door", "script.x"}; !slices.Equal(toggled, want) {
		t.Errorf("toggles reach %v, want %v", toggled, want)
	}
}

// FuzzDashboardConfig feeds what a model may send as a dashboard config or view through every
// reader of it: none may panic, and an accepted config has views that are objects.
func FuzzDashboardConfig(f *testing.F) {
	for _, s := range []string{
		`{"views": [{"cards": [{"type": "button", "tap_action": {"action": "toggle"}, "entity": "lock.x"}]}]}`,
		`{"views": "x"}`, `{"strategy": {"type": "map"}}`, `{"views": [1, {"path": "a"}]}`, `[]`, `"text"`, `null`,
		`{"views": [{"cards": [{"tap_action": {"action": "perform-action", "perform_action": 3, "target": [1]}}]}]}`,
		`{"a_action": {"action": "call-service", "service": "lock.unlock", "service_data": {"entity_id": {"x": 1}}}}`,
	} {
		f.Add(s, "0")
	}
	f.Fuzz(func(t *testing.T, text, sel string) {
		var v any
		if json.Unmarshal([]byte(text), &v) != nil {
			return
		}
		for _, a := range cardActions(v) {
			if a.Service == "" {
				t.Fatalf("an action without a service from %s", text)
			}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if checkDashboardConfig(m) == nil {
			if views, has := m["views"]; has {
				for _, view := range views.([]any) {
					if _, ok := view.(map[string]any); !ok {
						t.Fatalf("accepted a view that is not an object: %s", text)
					}
				}
			}
		}
		views, _ := m["views"].([]any)
		if i, err := pickView(views, sel); err == nil && (i < 0 || i >= len(views)) {
			t.Fatalf("view %q picked %d of %d", sel, i, len(views))
		}
		if out, err := withView(json.RawMessage(text), sel, map[string]any{"title": "new"}); err == nil {
			if _, ok := out["views"].([]any); !ok {
				t.Fatalf("withView gave no views list for %s", text)
			}
		}
	})
}

// TestDashboardVersionsRestore takes a dashboard through delete and back with the version kind
// ha_config_history restores it with.
func TestDashboardVersionsRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := sim.Start(ctx, sim.Options{HistoryDays: -1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ha, err := homeassistant.New(homeassistant.Config{BaseURL: h.URL(), Token: h.Token()})
	if err != nil {
		t.Fatal(err)
	}
	ha.Start(ctx)
	t.Cleanup(func() { ha.Close() })
	d := Deps{HA: ha}
	k := dashboardVersions()
	var garden json.RawMessage
	deadline := time.Now().Add(10 * time.Second)
	for garden == nil {
		garden, _, err = k.read(ctx, d, "dashboard-garden")
		if err != nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil || garden == nil {
			t.Fatalf("read: %s, %v", garden, err)
		}
	}
	if !strings.Contains(string(garden), `"title":"Garden"`) || !strings.Contains(string(garden), "switch.garden_irrigation") {
		t.Fatalf("kept form: %s", garden)
	}
	// Gone, then back with its entry and config.
	if err := k.write(ctx, d, "dashboard-garden", nil); err != nil {
		t.Fatal(err)
	}
	if gone, _, err := k.read(ctx, d, "dashboard-garden"); err != nil || gone != nil {
		t.Fatalf("after delete: %s, %v", gone, err)
	}
	if err := k.write(ctx, d, "dashboard-garden", garden); err != nil {
		t.Fatal(err)
	}
	back, _, err := k.read(ctx, d, "dashboard-garden")
	if err != nil || string(back) != string(garden) {
		t.Fatalf("restored:\n%s\nwant\n%s (%v)", back, garden, err)
	}
	// The default dashboard, its entry deleted: Home Assistant then serves its own panel at
	// "lovelace", and the config goes back to the default at url_path null.
	overview, _, err := k.read(ctx, d, homeassistant.DefaultDashboard)
	if err != nil || overview == nil {
		t.Fatal(err)
	}
	if err := k.write(ctx, d, homeassistant.DefaultDashboard, nil); err != nil {
		t.Fatal(err)
	}
	if err := k.write(ctx, d, homeassistant.DefaultDashboard, overview); err != nil {
		t.Fatal(err)
	}
	again, _, err := k.read(ctx, d, homeassistant.DefaultDashboard)
	if err != nil || configPart(t, again) != configPart(t, overview) || !strings.Contains(string(again), `"dashboard":null`) {
		t.Fatalf("default restored:\n%s\nwant the config of\n%s (%v)", again, overview, err)
	}
	// What a restore checks: the config's card actions.
	w := newWalk(d)
	k.check(ctx, d, w, "dashboard-garden", json.RawMessage(`{"config": {"views": [{"cards": [{"type": "button", "tap_action": {"action": "perform-action", "perform_action": "lock.unlock", "target": {"entity_id": "lock.front_door"}}}]}]}}`))
	if ask, err := w.ask("Restore"); err != nil || !slices.Contains(ask.Classes, "lock") {
		t.Errorf("restoring an unlock button: %+v, %v", ask, err)
	}
}

func configPart(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return string(v.Config)
}
