package home_test

import (
	"testing"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// homeassistant/expose_entity/list answers for every registered entity: Assist's decision is the
// user's where they made one, else Home Assistant's default (exposed_entities.py
// _is_default_exposed), which Home Assistant stores the first time Assist asks.
func TestExposedEntitiesFollowHomeAssistantsDefaults(t *testing.T) {
	h, err := home.New(home.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	exposed := h.ExposedEntities()
	for _, tt := range []struct {
		id   string
		want bool
		why  string
	}{
		{"light.kitchen_ceiling", true, "lights are exposed by default"},
		{"cover.garage_door", true, "covers are exposed by default"},
		{"binary_sensor.front_door", true, "door sensors are exposed by default"},
		{"sensor.office_co2", true, "CO2 sensors are exposed by default"},
		{"lock.back_door", false, "locks are not exposed by default (since 2024)"},
		{"camera.front_door", false, "cameras are not exposed by default"},
		{"lock.front_door", false, "the demo household un-exposed it"},
		{"alarm_control_panel.home_alarm", false, "the demo household un-exposed it"},
	} {
		got, ok := exposed[tt.id]["conversation"]
		if !ok || got != tt.want {
			t.Errorf("%s: conversation %v (set %v), want %v: %s", tt.id, got, ok, tt.want, tt.why)
		}
	}
	if err := h.ExposeEntities([]string{"conversation"}, []string{"light.kitchen_ceiling"}, false); err != nil {
		t.Fatal(err)
	}
	if h.ExposedEntities()["light.kitchen_ceiling"]["conversation"] {
		t.Error("the user's decision does not override the default")
	}
}
