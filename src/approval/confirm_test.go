package approval

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/permission"
)

// A request to confirm one action reads as that on the page, and approving it lets that call run once.
func TestConfirmRequestOnThePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := permission.Action{SessionKey: "mcp:s1", Client: "claude-code/2.1", Tool: "ha_call_service", ArgsSummary: "lock.unlock [lock.front_door]",
		Question: "Call lock.unlock — it would unlock lock.front_door (Front Door). Allow it?", Key: `ha_call_service {"domain":"lock"}`}
	var re *permission.ConfirmRequiredError
	if err := e.m.ConfirmAction(ctx, a); !errors.As(err, &re) || re.Link == "" {
		t.Fatalf("want a confirmation request with a link, got %v", err)
	}
	b := newBrowser(t)
	shown := e.open(b, re.Link, 0)
	if shown.status != 200 {
		t.Fatalf("request page: %d %s", shown.status, shown.body)
	}
	for _, want := range []string{"Confirm this action, once?", "this one action, once", "Approve once", "unlock lock.front_door (Front Door)", "ha_call_service"} {
		if !strings.Contains(shown.body, want) {
			t.Errorf("the page does not show %q:\n%s", want, shown.body)
		}
	}
	if strings.Contains(shown.body, "permission?") || strings.Contains(shown.body, "for this session only") {
		t.Errorf("the page presents a one-off confirmation as a session permission:\n%s", shown.body)
	}
	done := e.answer(b, shown, "approve")
	if done.status != 200 {
		t.Fatalf("answer: %d %s", done.status, done.body)
	}
	// The answer says what it did: one action, once — not "this permission in that session".
	for _, want := range []string{"Approved once", "one time", "grants nothing else"} {
		if !strings.Contains(done.body, want) {
			t.Errorf("the answer page does not say %q:\n%s", want, done.body)
		}
	}
	if strings.Contains(done.body, "permission") {
		t.Errorf("the answer page calls a one-off confirmation a permission:\n%s", done.body)
	}
	if err := e.m.ConfirmAction(ctx, a); err != nil {
		t.Fatalf("approved on the page, yet: %v", err)
	}
	if err := e.m.ConfirmAction(ctx, a); !errors.As(err, &re) {
		t.Fatalf("the approval was used twice: %v", err)
	}
}
