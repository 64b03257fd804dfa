package toolkit

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type doorArgs struct {
	Door string `json:"door" validate:"required"`
}

// confirmGate records the approvals it was asked for and answers with approve.
type confirmGate struct {
	categoryGate
	approve bool
	mu      sync.Mutex
	actions []Action
}

func (g *confirmGate) ConfirmAction(ctx context.Context, c *Call, a Action) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.actions = append(g.actions, a)
	if g.approve {
		return nil
	}
	return &Error{Code: "confirmation_required", Message: "waiting for the user in the panel"}
}

func doorTool(opened *[]string, mu *sync.Mutex) *Tool {
	return Define(Spec[doorArgs, map[string]string]{
		Name: "t_door", Toolset: "test", Description: "open a door",
		Confirm: &Confirm[doorArgs]{When: "door front",
			Check: func(ctx context.Context, c *Call, a doorArgs) (Ask, error) {
				if a.Door != "front" {
					return Ask{}, nil
				}
				return Ask{Classes: []string{"lock"}, Question: "Unlock the front door?"}, nil
			}},
		Handler: func(ctx context.Context, c *Call, a doorArgs) (map[string]string, error) {
			mu.Lock()
			*opened = append(*opened, a.Door)
			mu.Unlock()
			return map[string]string{"opened": a.Door}, nil
		},
	})
}

// elicitingClient connects a client that answers elicitations with answer (protocol 2025-11-25, where
// a server may ask during a call).
func elicitingClient(t *testing.T, env *Env, tool *Tool, answer func(*mcp.ElicitRequest) *mcp.ElicitResult) *mcp.ClientSession {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	tool.Install(s, env)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return answer(req), nil }}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callDoor(t *testing.T, cs *mcp.ClientSession, args map[string]any) (*Error, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t_door", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError {
		return nil, text
	}
	var e Error
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		t.Fatal(err)
	}
	return &e, text
}

func TestConfirmDeclaration(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var opened []string
	tool := doorTool(&opened, &mu)
	raw, _ := json.Marshal(tool.Definition().InputSchema)
	if !strings.Contains(string(raw), `"confirm":{"type":"boolean"`) || tool.ConfirmWhen() != "door front" {
		t.Errorf("the confirm argument is not in the schema: %s", raw)
	}
	for _, c := range []struct {
		name    string
		env     *Env
		args    map[string]any
		code    string // "" = runs
		inError string
	}{
		{"trusted class with confirm", &Env{ConfirmTrusted: []string{"lock"}}, map[string]any{"door": "front", "confirm": true}, "", ""},
		{"trusted class without confirm", &Env{ConfirmTrusted: []string{"lock"}}, map[string]any{"door": "front"}, "confirmation_required", `repeat the call with \"confirm\": true`},
		{"untrusted, nobody to ask", &Env{ConfirmTrusted: []string{"change"}}, map[string]any{"door": "front", "confirm": true}, "confirmation_required", "confirm=true is not enough"},
		{"untrusted, approval pending", &Env{Gate: &confirmGate{}}, map[string]any{"door": "front", "confirm": true}, "confirmation_required", "waiting for the user"},
		{"untrusted, approved", &Env{Gate: &confirmGate{approve: true}}, map[string]any{"door": "front", "confirm": true}, "", ""},
		{"nothing to confirm", &Env{}, map[string]any{"door": "back"}, "", ""},
		{"confirm not a boolean", &Env{ConfirmTrusted: []string{"lock"}}, map[string]any{"door": "front", "confirm": "yes"}, "invalid_argument", "boolean"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := testServer(t, c.env, tool)
			e, text := callDoor(t, cs, c.args)
			switch {
			case c.code == "" && e != nil:
				t.Fatalf("refused: %s", text)
			case c.code != "" && (e == nil || e.Code != c.code || !strings.Contains(text, c.inError)):
				t.Fatalf("got %s, want %s containing %q", text, c.code, c.inError)
			}
		})
	}
	// The gate is asked for this exact call, without the confirm argument.
	g := &confirmGate{approve: true}
	callDoor(t, testServer(t, &Env{Gate: g}, tool), map[string]any{"confirm": true, "door": "front"})
	if len(g.actions) != 1 || g.actions[0].Key != `t_door {"door":"front"}` || g.actions[0].Question != "Unlock the front door?" {
		t.Errorf("the gate was asked %+v", g.actions)
	}
}

func TestConfirmAsksTheUser(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var opened []string
	tool := doorTool(&opened, &mu)
	var asked []string
	accept := false
	cs := elicitingClient(t, &Env{ConfirmTrusted: []string{"change"}}, tool, func(req *mcp.ElicitRequest) *mcp.ElicitResult {
		asked = append(asked, req.Params.Message)
		if !accept {
			return &mcp.ElicitResult{Action: "decline"}
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}
	})
	if e, text := callDoor(t, cs, map[string]any{"door": "front", "confirm": true}); e == nil || e.Code != "confirmation_declined" {
		t.Fatalf("declined, yet: %s", text)
	}
	accept = true
	if e, text := callDoor(t, cs, map[string]any{"door": "front"}); e != nil {
		t.Fatalf("accepted, yet: %s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(opened) != 1 || len(asked) != 2 || asked[0] != "Unlock the front door? "+OnceNote {
		t.Errorf("opened %v after asking %q", opened, asked)
	}
}

func TestConfirmFieldClashPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("a tool with Confirm and its own confirm field was accepted")
		}
	}()
	type withConfirm struct {
		Confirm bool `json:"confirm"`
	}
	// The schema is built on first use; listing the tool is such a use.
	Define(Spec[withConfirm, string]{Name: "t_x", Toolset: "test", Description: "x",
		Confirm: &Confirm[withConfirm]{When: "always", Check: func(context.Context, *Call, withConfirm) (Ask, error) { return Ask{}, nil }},
		Handler: func(context.Context, *Call, withConfirm) (string, error) { return "", nil }}).Definition()
}
