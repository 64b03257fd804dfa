package demo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/config"
)

// defaultCallLimit is the size every tool's default call must stay under: a model pays
// for every byte of a result.
const defaultCallLimit = 20 << 10

// TestResponseSizes measures what a model pays on a 3,000-entity home: the whole tools/list, and
// ha_get_states with its defaults. The figures go to docs/performance.md (run with -v).
func TestResponseSizes(t *testing.T) {
	t.Parallel()
	// The root categories are granted so their list tools answer rather than ask.
	e := startDemoWith(t, sim.Options{HistoryDays: -1, ExtraSensors: 2900}, func(c *config.Config) {
		c.PermissionFilesystem, c.PermissionDatabase = "allow", "allow"
	})
	cs := e.client(t, nil)
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tools)
	t.Logf("tools/list: %d tools, %d bytes", len(tools.Tools), len(b))

	var states struct {
		Total int `json:"total"`
		Count int `json:"count"`
	}
	res := callJSON(t, cs, "ha_get_states", nil, &states)
	size := len(text(res))
	t.Logf("ha_get_states defaults: %d of %d entities, %d bytes", states.Count, states.Total, size)
	if states.Total < 3000 {
		t.Fatalf("home has %d entities, want ≥ 3000", states.Total)
	}
	if size > defaultCallLimit {
		t.Errorf("ha_get_states default call is %d bytes, over %d", size, defaultCallLimit)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ha_get_states", Arguments: map[string]any{"limit": 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("ha_get_states limit=1000: %s", text(res))
	}
	t.Logf("ha_get_states limit=1000: %d bytes", len(text(res)))
	for _, tool := range tools.Tools {
		tb, _ := json.Marshal(tool)
		t.Logf("  %-32s %5d bytes", tool.Name, len(tb))
	}
	// Every tool that reads and can be called with no arguments (every list tool among them)
	// answers its default call within the limit on this home.
	for _, tool := range tools.Tools {
		schema, _ := tool.InputSchema.(map[string]any)
		if required, _ := schema["required"].([]any); len(required) > 0 || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			continue
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: map[string]any{}})
		if err != nil {
			t.Errorf("%s: %v", tool.Name, err)
			continue
		}
		b, _ := json.Marshal(res.Content)
		t.Logf("  default call %-32s %6d bytes%s", tool.Name, len(b), map[bool]string{true: " (error)"}[res.IsError])
		if len(b) > defaultCallLimit {
			t.Errorf("%s's default call answered %d bytes on a 3,000-entity home, over %d", tool.Name, len(b), defaultCallLimit)
		}
	}
}
