package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/app"
	hubitatint "github.com/hamcp/hamcp/src/integrations/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

// exampleRules are the demo home's Hubitat rules, over the simulated hub's devices: what an
// assistant would write when asked, created through hubitat_create_rule like one.
var exampleRules = []map[string]any{
	{
		"name":        "Hallway motion light",
		"description": "The hallway light comes on with motion and goes off two minutes after the last motion.",
		"triggers":    []any{map[string]any{"type": "device_event", "deviceId": "13", "attribute": "motion", "value": "active"}},
		"actions": []any{
			// New motion restarts the countdown of the run before.
			map[string]any{"type": "cancel_delayed", "delayId": "hallway-off"},
			map[string]any{"type": "device_command", "deviceId": "7", "command": "on"},
			map[string]any{"type": "delay", "seconds": 120, "delayId": "hallway-off"},
			map[string]any{"type": "device_command", "deviceId": "7", "command": "off"},
		},
	},
	{
		"name":        "Sunset scene",
		"description": "A quarter of an hour before sunset: porch light on, living room lamp and dining chandelier dimmed.",
		"triggers":    []any{map[string]any{"type": "time", "sunset": true, "offset": -15}},
		"actions": []any{
			map[string]any{"type": "device_command", "deviceId": "3", "command": "on"},
			map[string]any{"type": "set_level", "deviceId": "1", "level": 40},
			map[string]any{"type": "set_level", "deviceId": "27", "level": 50},
		},
	},
	{
		"name":        "Front door left open",
		"description": "Says so on the kitchen speaker when the front door has been open for five minutes.",
		"triggers": []any{map[string]any{"type": "device_event", "deviceId": "10", "attribute": "contact", "value": "open",
			"duration": 300}},
		"actions": []any{
			map[string]any{"type": "speak", "deviceId": "23", "message": "The front door has been open for five minutes."},
			map[string]any{"type": "log", "level": "warn", "message": "%device% left open"},
		},
	},
}

// seedRules creates the example rules the demo's hamcp does not have yet (a demo with a data
// directory keeps them across restarts), calling the rule tools through an MCP session as a
// client would. None of them needs a grant or the user's confirmation. A rule names devices
// that must be in hamcp's device cache, so it waits for the hub's live link first.
func (d *Demo) seedRules(ctx context.Context) error {
	a := d.App
	in, ok := a.Integration("hubitat")
	if !ok {
		return errors.New("the demo's rules: the Hubitat integration is not running")
	}
	hub := in.(*hubitatint.Hub).Client()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for !hub.Cache().Live() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the demo's rules: the simulated hub's devices did not arrive: %+v", hub.Status())
		case <-time.After(10 * time.Millisecond):
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "hamcp-demo-seed", Version: app.Version}, nil)
	seeders := []string{"hubitat_list_rules", "hubitat_create_rule"}
	installed := 0
	for _, t := range a.Registry.Select(toolkit.Filter{}) {
		if slices.Contains(seeders, t.Name()) {
			t.Install(s, &toolkit.Env{Logger: a.Logger})
			installed++
		}
	}
	if installed != len(seeders) {
		return fmt.Errorf("the demo's rules: hamcp lacks one of the tools %v", seeders)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hamcp-demo", Version: app.Version}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer cs.Close()

	var have struct {
		Rules []struct {
			Name string `json:"name"`
		} `json:"rules"`
	}
	if err := callTool(ctx, cs, "hubitat_list_rules", map[string]any{}, &have); err != nil {
		return err
	}
	var names []string
	for _, h := range have.Rules {
		names = append(names, h.Name)
	}
	for _, r := range exampleRules {
		if slices.Contains(names, r["name"].(string)) {
			continue
		}
		if err := callTool(ctx, cs, "hubitat_create_rule", r, nil); err != nil {
			return fmt.Errorf("the demo's rule %q: %w", r["name"], err)
		}
	}
	return nil
}

func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any, out any) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return fmt.Errorf("%s: %s", name, text)
	}
	if out == nil {
		return nil
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, out)
	}
	return json.Unmarshal([]byte(text), out)
}
