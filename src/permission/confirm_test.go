package permission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

var panelUser = Approver{Via: ViaPanel, UserID: "u1", Name: "Alex"}

func unlock(session string) Action {
	return Action{SessionKey: session, Tool: "ha_call_service", Question: "Unlock lock.front_door?", ArgsSummary: "lock.unlock",
		Key: `ha_call_service {"domain":"lock","service":"unlock"}`}
}

func asConfirmRequired(t *testing.T, err error) *ConfirmRequiredError {
	t.Helper()
	var e *ConfirmRequiredError
	if !errors.As(err, &e) {
		t.Fatalf("want a confirmation request, got %v", err)
	}
	return e
}

// An approval lets exactly the call it was made for run, once; it grants the session nothing.
func TestConfirmActionApprovedOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := context.Background()
	req := asConfirmRequired(t, f.m.ConfirmAction(ctx, unlock("s1")))
	if req.Link == "" || !strings.Contains(req.HowTo, req.Link) || !strings.Contains(req.Error(), "confirm=true from you is not enough") {
		t.Errorf("the refusal does not tell the model what the user must do: %v", req)
	}
	p, err := f.m.Request(req.RequestID)
	if err != nil || p.Category != ConfirmKind || !strings.Contains(p.Warning, "Unlock lock.front_door?") || !strings.Contains(p.Message(), "asks you to confirm") {
		t.Fatalf("the request the user sees: %+v %v", p, err)
	}
	// Asking again before the user answers reuses the request.
	if again := asConfirmRequired(t, f.m.ConfirmAction(ctx, unlock("s1"))); again.RequestID != req.RequestID || f.inbox.count() != 1 {
		t.Errorf("a second request %s was posted (inbox %d)", again.RequestID, f.inbox.count())
	}
	if err := f.m.Approve(ctx, req.RequestID, panelUser); err != nil {
		t.Fatal(err)
	}
	other := unlock("s1")
	other.Key += " other"
	asConfirmRequired(t, f.m.ConfirmAction(ctx, other))
	asConfirmRequired(t, f.m.ConfirmAction(ctx, unlock("s2")))
	if err := f.m.ConfirmAction(ctx, unlock("s1")); err != nil {
		t.Fatalf("approved, yet: %v", err)
	}
	asConfirmRequired(t, f.m.ConfirmAction(ctx, unlock("s1")))
	for _, sg := range f.m.SessionGrants() {
		if sg.Session == f.m.SessionLabel("s1") && (len(sg.Grants) > 0 || len(sg.Denied) > 0) {
			t.Errorf("a confirmation granted or denied the session a category: %+v", sg)
		}
	}
	entries := f.auditLog(t, store.AuditQuery{SessionID: "s1"})
	if !strings.Contains(fmt.Sprint(entries), "confirmed once by Alex") {
		t.Errorf("the audit log does not show who confirmed: %+v", entries)
	}
}

// A denial sticks to that call; expiry, the end of the session and the per-session cap are honoured.
func TestConfirmActionDeniedExpiredCapped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := context.Background()
	req := asConfirmRequired(t, f.m.ConfirmAction(ctx, unlock("s1")))
	if err := f.m.Deny(ctx, req.RequestID, panelUser); err != nil {
		t.Fatal(err)
	}
	var denied *ConfirmDeniedError
	if err := f.m.ConfirmAction(ctx, unlock("s1")); !errors.As(err, &denied) {
		t.Fatalf("denied, yet: %v", err)
	}
	// An expired request cannot be approved, and the call asks anew.
	other := unlock("s1")
	other.Key = "k2"
	req = asConfirmRequired(t, f.m.ConfirmAction(ctx, other))
	f.clock.Advance(11 * time.Minute)
	if err := f.m.Approve(ctx, req.RequestID, panelUser); !errors.Is(err, ErrRequestExpired) && !errors.Is(err, ErrUnknownRequest) {
		t.Errorf("an expired request was approved: %v", err)
	}
	if again := asConfirmRequired(t, f.m.ConfirmAction(ctx, other)); again.RequestID == req.RequestID {
		t.Error("the expired request was reused")
	}
	// At most maxActionsPerSession wait at once.
	for i := range maxActionsPerSession + 2 {
		a := unlock("s3")
		a.Key = fmt.Sprint("k", i)
		asConfirmRequired(t, f.m.ConfirmAction(ctx, a))
	}
	n := 0
	for _, p := range f.m.Pending() {
		if p.Category == ConfirmKind && p.Session == f.m.SessionLabel("s3") {
			n++
		}
	}
	if n != maxActionsPerSession {
		t.Errorf("%d confirmations wait for s3, want %d", n, maxActionsPerSession)
	}
	f.m.EndSession("s3")
	for _, p := range f.m.Pending() {
		if p.Session == f.m.SessionLabel("s3") {
			t.Errorf("request %s outlived its session", p.ID)
		}
	}
}

// A client that opens the approval page waits for the user's answer there and runs when approved.
func TestConfirmActionWaitsOnThePage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := context.Background()
	a := unlock("s1")
	opened := make(chan string, 1)
	a.OpenURL = func(ctx context.Context, message, url, id string) (bool, error) {
		opened <- id
		return true, nil
	}
	done := make(chan error, 1)
	go func() { done <- f.m.ConfirmAction(ctx, a) }()
	id := <-opened
	if err := f.m.Approve(ctx, id, Approver{Via: ViaPage, UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("approved on the page, yet: %v", err)
	}
}
