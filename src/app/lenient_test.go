package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/dbtools"
	"github.com/hamcp/hamcp/src/tools/hatools"
	"github.com/hamcp/hamcp/src/tools/systools"
)

// TestLoneStringIsAList: wherever a tool takes a list of strings, one string is one item, as Home
// Assistant takes entity_id "light.kitchen"; a list of entity ids also takes them comma-separated.
// Real tools over a real session against the simulated home.
func TestLoneStringIsAList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := sim.Start(ctx, sim.Options{HistoryDays: -1, Seed: 11})
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
	for deadline := time.Now().Add(10 * time.Second); !ha.Mirror().Live(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the state mirror did not go live")
		}
	}
	reg := registry(hatools.Deps{HA: ha, Scope: hatools.NewScope(ha, "all")}, nil, nil, nil, dbtools.Deps{}, systools.Deps{})
	s := connect(t, mcpserver.Options{Registry: reg, ToolMode: toolkit.ModeAll}, false, nil)

	const lamp, path = "light.living_room_lamp", "light.garden_path"
	for _, tt := range []struct {
		tool string
		args map[string]any
		want []string // in the answer
		code string   // the error code, "" for success
	}{
		{"ha_get_states", map[string]any{"entity_ids": lamp}, []string{lamp}, ""},
		{"ha_get_states", map[string]any{"entity_ids": lamp + ", " + path}, []string{lamp, path}, ""},
		{"ha_get_states", map[string]any{"entity_ids": []any{lamp}}, []string{lamp}, ""},
		{"ha_get_history", map[string]any{"entity_ids": lamp, "hours": 1}, []string{lamp}, ""},
		{"ha_get_logbook", map[string]any{"entity_ids": lamp, "hours": 1}, nil, ""},
		{"ha_get_states", map[string]any{"fields": "state", "entity_ids": lamp}, []string{`"state"`}, ""},
		{"ha_call_service", map[string]any{"domain": "light", "service": "turn_on", "entity_id": lamp}, []string{lamp}, ""},
		// Each item still meets the item's rules.
		{"ha_get_states", map[string]any{"entity_ids": "Living Room Lamp"}, []string{"entity_ids"}, "invalid_argument"},
		{"ha_get_states", map[string]any{"fields": "colour"}, []string{"fields"}, "invalid_argument"},
		// A string where no list is asked for stays a type error.
		{"ha_get_history", map[string]any{"entity_ids": lamp, "hours": "one"}, []string{"hours"}, "invalid_argument"},
	} {
		code, text := s.call(t, false, tt.tool, tt.args)
		if code != tt.code {
			t.Errorf("%s %v: got %s, want code %q", tt.tool, tt.args, text, tt.code)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %v: %s does not mention %s", tt.tool, tt.args, text, w)
			}
		}
	}
}
