package hatools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/permission"
)

// restarts counts the restarts the simulated Home Assistant logged (through the Supervisor or the
// homeassistant.restart service).
func (e *admEnv) restarts() int { return strings.Count(e.home.Model().LogText(0), "estart requested") }

// A restart is the user's yes to that restart, never a root-equivalent grant: with no category granted
// at all, each restart path asks only the restart confirmation; the model's confirm=true alone restarts
// nothing, and the user's approval restarts Home Assistant once.
func TestRestartAsksOnlyTheRestartConfirmation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name, tool string
		args       map[string]any
	}{
		{"ha_restart", "ha_restart", map[string]any{"confirm": true}},
		{"ha_call_service homeassistant.restart", "ha_call_service", svc("homeassistant.restart", nil)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := admStart(t, admOpts{noGrants: true, defaultTrust: true})
			before := e.restarts()
			r := e.call(t, c.tool, c.args)
			if r.err == nil || r.err.Code != "confirmation_required" {
				t.Fatalf("with the model's confirm=true and no grant: %s", r.raw)
			}
			id, _ := r.err.Details["request_id"].(string)
			p, err := e.pm.Request(id)
			if err != nil || p.Category != permission.ConfirmKind || !strings.Contains(strings.ToLower(p.Warning), "restart") {
				t.Fatalf("the request is not the restart confirmation: %+v %v", p, err)
			}
			if n := e.restarts(); n != before {
				t.Fatalf("Home Assistant restarted on the model's word alone")
			}
			if err := e.pm.Approve(ctx, id, permission.Approver{Via: permission.ViaPanel, UserID: "owner", Name: "Alex"}); err != nil {
				t.Fatal(err)
			}
			e.ok(t, c.tool, c.args)
			if n := e.restarts(); n != before+1 {
				t.Fatalf("%d restarts after the user's yes, want 1", n-before)
			}
		})
	}
}

// A client that can ask its user is asked one question, the restart, and no permission category.
func TestRestartElicitsOnlyTheRestart(t *testing.T) {
	t.Parallel()
	var asked []string
	e := admStart(t, admOpts{noGrants: true, defaultTrust: true, elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
	}})
	before := e.restarts()
	e.ok(t, "ha_restart", nil)
	if len(asked) != 1 || !strings.Contains(asked[0], "Restart Home Assistant?") || strings.Contains(asked[0], "permission") {
		t.Fatalf("the user was asked %q, want only the restart", asked)
	}
	if n := e.restarts(); n != before+1 {
		t.Fatalf("%d restarts after the user's yes, want 1", n-before)
	}
}
