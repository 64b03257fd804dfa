package toolkit

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// categoryGate grants only the categories in granted and remembers what it was asked and recorded.
type categoryGate struct {
	mu       sync.Mutex
	granted  []Category
	asked    []Category
	recorded []Category
}

func (g *categoryGate) Authorize(ctx context.Context, c *Call, summary string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, c.Category)
	if slices.Contains(g.granted, c.Category) {
		return nil
	}
	return &Error{Code: "permission_required", Message: "ask the user for " + string(c.Category)}
}

func (g *categoryGate) Record(ctx context.Context, c *Call, summary, outcome string, took time.Duration, detail string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.recorded = append(g.recorded, c.Category)
}

type actionArgs struct {
	Action  string `json:"action"`
	Secret  bool   `json:"secret,omitempty"`
	Confirm bool   `json:"confirm,omitempty"`
}

// The category a call needs comes from its arguments, before the handler runs: list needs nothing,
// install needs command whatever confirm says, and a tool's own category and its conditional one are
// both asked for.
func TestConditionalCategory(t *testing.T) {
	t.Parallel()
	ran := 0
	var mu sync.Mutex
	handler := func(ctx context.Context, c *Call, a actionArgs) (map[string]string, error) {
		mu.Lock()
		ran++
		mu.Unlock()
		return map[string]string{"done": a.Action}, nil
	}
	manage := Define(Spec[actionArgs, map[string]string]{
		Name: "t_manage", Toolset: "test", Description: "manage",
		Conditional: &Condition[actionArgs]{Category: Command, When: "action install",
			Applies: func(a actionArgs) bool { return a.Action == "install" }},
		Handler: handler,
	})
	run := Define(Spec[actionArgs, map[string]string]{
		Name: "t_run", Toolset: "test", Description: "run", Category: Command,
		Conditional: &Condition[actionArgs]{Category: SupervisorToken, When: "secret is true",
			Applies: func(a actionArgs) bool { return a.Secret }},
		Handler: handler,
	})
	if g := manage.Grants(); len(g) != 1 || g[0] != (Grant{Category: Command, When: "action install"}) {
		t.Errorf("t_manage grants %v", g)
	}
	if g := run.Grants(); len(g) != 2 || g[0] != (Grant{Category: Command}) || g[1].Category != SupervisorToken {
		t.Errorf("t_run grants %v", g)
	}
	tests := []struct {
		name    string
		granted []Category
		tool    string
		args    map[string]any
		asked   []Category
		ok      bool
	}{
		{"open action", nil, "t_manage", map[string]any{"action": "list"}, nil, true},
		{"confirm is no grant", nil, "t_manage", map[string]any{"action": "install", "confirm": true}, []Category{Command}, false},
		{"granted", []Category{Command}, "t_manage", map[string]any{"action": "install"}, []Category{Command}, true},
		{"own category only", []Category{Command}, "t_run", map[string]any{"action": "x"}, []Category{Command}, true},
		{"both needed, one granted", []Category{Command}, "t_run", map[string]any{"action": "x", "secret": true}, []Category{Command, SupervisorToken}, false},
		{"the extra one alone is not enough", []Category{SupervisorToken}, "t_run", map[string]any{"action": "x", "secret": true}, []Category{Command}, false},
		{"both granted", []Category{Command, SupervisorToken}, "t_run", map[string]any{"action": "x", "secret": true}, []Category{Command, SupervisorToken}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gate := &categoryGate{granted: tt.granted}
			cs := testServer(t, &Env{Gate: gate}, manage, run)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if res.IsError == tt.ok {
				t.Fatalf("isError=%v: %s", res.IsError, text)
			}
			if !tt.ok && !strings.Contains(text, "permission_required") {
				t.Fatalf("refusal is not permission_required: %s", text)
			}
			if !slices.Equal(gate.asked, tt.asked) {
				t.Errorf("asked for %v, want %v", gate.asked, tt.asked)
			}
			// Every call of a tool that changes something is audited once, under the last category asked for ("" for none).
			if len(tt.asked) == 0 && (len(gate.recorded) != 1 || gate.recorded[0] != "") || len(tt.asked) > 0 && (len(gate.recorded) != 1 || gate.recorded[0] != tt.asked[len(tt.asked)-1]) {
				t.Errorf("recorded %v", gate.recorded)
			}
		})
	}
}
