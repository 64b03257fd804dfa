package homeassistant

import (
	"context"
	"testing"
)

// TestWSExposedEntities reads the voice-assistant settings: only explicit ones are listed, per
// assistant, as homeassistant/expose_entity/list answers.
func TestWSExposedEntities(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	got, err := c.ExposedEntities(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		entity, assistant string
		set, exposed      bool
	}{
		{"lock.front_door", "conversation", true, false},
		{"lock.front_door", "cloud.alexa", true, false},
		{"alarm_control_panel.home_alarm", "conversation", true, false},
		{"light.living_room_lamp", "conversation", true, true},
		{"light.living_room_lamp", "cloud.alexa", true, true},
		{"light.kitchen_ceiling", "conversation", true, true}, // Home Assistant's default, stored once Assist asked
		{"light.kitchen_ceiling", "cloud.alexa", false, false},
		{"lock.back_door", "conversation", true, false}, // locks are not exposed by default
		{"light.kitchen", "conversation", false, false}, // no such entity
	}
	for _, tt := range tests {
		v, ok := got[tt.entity][tt.assistant]
		if ok != tt.set || v != tt.exposed {
			t.Errorf("%s to %s: set %v exposed %v, want %v %v", tt.entity, tt.assistant, ok, v, tt.set, tt.exposed)
		}
	}
}
