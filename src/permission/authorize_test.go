package permission

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/store"
)

func TestAskModeRefusedUntilGranted(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		via  string
		// grant makes the grant the user's way, given the refusal of the first call.
		grant func(t *testing.T, f *fixture, first *RequiredError) error
	}{
		{"approval page, from the link in the refusal", ViaApproval, func(t *testing.T, f *fixture, first *RequiredError) error {
			p, err := f.m.ByLink(secretOf(t, first.Link))
			if err != nil || p.ID != first.RequestID {
				t.Fatalf("ByLink: %+v %v", p, err)
			}
			if err := f.m.Approve(ctx, p.ID, admin); err != nil {
				t.Fatalf("Approve: %v", err)
			}
			return f.m.Authorize(ctx, req("s1", Filesystem))
		}},
		{"approval page, from the link in the notification", ViaApproval, func(t *testing.T, f *fixture, first *RequiredError) error {
			p, err := f.m.ByLink(secretOf(t, f.inbox.link(t, first.RequestID)))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.m.Approve(ctx, p.ID, admin); err != nil {
				t.Fatalf("Approve: %v", err)
			}
			return f.m.Authorize(ctx, req("s1", Filesystem))
		}},
		{"panel", ViaApproval, func(t *testing.T, f *fixture, first *RequiredError) error {
			if err := f.m.Approve(ctx, first.RequestID, Approver{Via: ViaPanel, UserID: "u-alex"}); err != nil {
				t.Fatalf("Approve: %v", err)
			}
			return f.m.Authorize(ctx, req("s1", Filesystem))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			first := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
			if first.RequestID == "" || first.Category != Filesystem || first.Warning != f.m.Warning(Filesystem) ||
				first.Link == "" || !strings.Contains(first.HowTo, first.Link) || !strings.Contains(first.Error(), first.Link) {
				t.Fatalf("refusal lacks request id, category, warning or link: %+v", first)
			}
			// Retrying without a grant is refused again with the same request, and the user is not
			// notified twice.
			again := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
			if again.RequestID != first.RequestID || f.inbox.count() != 1 {
				t.Fatalf("retry: request %s (first %s), %d notifications; want the same request, 1 notification",
					again.RequestID, first.RequestID, f.inbox.count())
			}
			if err := tc.grant(t, f, first); err != nil {
				t.Fatalf("call that grants: %v", err)
			}
			if err := f.m.Authorize(ctx, req("s1", Filesystem)); err != nil {
				t.Fatalf("call after the grant: %v", err)
			}
			grants := f.m.Grants("s1")
			if len(grants) != 1 || grants[0].Via != tc.via || grants[0].Category != Filesystem ||
				!grants[0].ExpiresAt.Equal(t0.Add(8*time.Hour)) {
				t.Fatalf("Grants = %+v, want one filesystem grant via %s expiring after 8h", grants, tc.via)
			}
			testkit.Eventually(t, "the notification to be withdrawn", func() bool { return f.inbox.wasWithdrawn(first.RequestID) })
			if len(f.m.Pending()) != 0 {
				t.Fatalf("pending after grant: %+v", f.m.Pending())
			}
			log := f.auditLog(t, store.AuditQuery{SessionID: "s1", Outcome: store.OutcomeGranted})
			if len(log) != 1 || log[0].Tool != "ha_write_file" || log[0].Category != "filesystem" || log[0].Client != "claude-code/1.0" ||
				!strings.Contains(log[0].Detail, "u-alex") {
				t.Fatalf("audit of the grant: %+v", log)
			}
		})
	}
}

func TestElicitation(t *testing.T) {
	ctx := context.Background()
	t.Run("accept grants; nothing is granted before the user answers", func(t *testing.T) {
		f := newFixture(t, Options{})
		r := req("s1", Filesystem)
		r.Elicit = func(context.Context, string) (bool, error) {
			if g := f.m.Grants("s1"); len(g) != 0 {
				t.Errorf("granted before the user answered: %+v", g)
			}
			return true, nil
		}
		if err := f.m.Authorize(ctx, r); err != nil {
			t.Fatalf("accepted elicitation: %v", err)
		}
		r.Elicit = nil
		if err := f.m.Authorize(ctx, r); err != nil {
			t.Fatalf("call after the grant: %v", err)
		}
		if g := f.m.Grants("s1"); len(g) != 1 || g[0].Via != ViaElicitation {
			t.Fatalf("Grants = %+v, want one via elicitation", g)
		}
		if f.inbox.count() != 0 || len(f.m.Pending()) != 0 {
			t.Fatalf("elicitation also posted a request: %d notifications, pending %+v", f.inbox.count(), f.m.Pending())
		}
		log := f.auditLog(t, store.AuditQuery{SessionID: "s1"})
		if len(log) != 1 || log[0].Outcome != store.OutcomeGranted || !strings.Contains(log[0].Detail, "accepted") {
			t.Fatalf("audit: %+v, want one grant entry", log)
		}
	})
	t.Run("decline denies for the rest of the session", func(t *testing.T) {
		f := newFixture(t, Options{})
		r := req("s1", Database)
		r.Elicit = decline
		de := asDenied(t, f.m.Authorize(ctx, r))
		if de.ByPolicy || !strings.Contains(de.Error(), "declined") {
			t.Fatalf("decline: %v", de)
		}
		asked := 0
		r.Elicit = func(context.Context, string) (bool, error) { asked++; return true, nil }
		for range 3 {
			asDenied(t, f.m.Authorize(ctx, r))
		}
		if asked != 0 {
			t.Fatalf("the user was asked %d more times after declining", asked)
		}
		// Other categories and other sessions are untouched.
		other := req("s1", Filesystem)
		other.Elicit = accept
		if err := f.m.Authorize(ctx, other); err != nil {
			t.Fatalf("other category after a decline: %v", err)
		}
		asRequired(t, f.m.Authorize(ctx, req("s2", Database)))
	})
	t.Run("the prompt says what the category allows", func(t *testing.T) {
		f := newFixture(t, Options{})
		var msg string
		r := req("s1", Command)
		r.Elicit = func(_ context.Context, m string) (bool, error) { msg = m; return true, nil }
		if err := f.m.Authorize(ctx, r); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"command", f.m.Warning(Command), "ha_execute_command", r.ArgsSummary, "8h0m0s"} {
			if !strings.Contains(msg, want) {
				t.Errorf("elicitation message %q lacks %q", msg, want)
			}
		}
	})
	t.Run("a client error falls back to a posted request", func(t *testing.T) {
		f := newFixture(t, Options{})
		asked := 0
		r := req("s1", Filesystem)
		r.Elicit = func(context.Context, string) (bool, error) { asked++; return false, errors.New("client timed out") }
		re := asRequired(t, f.m.Authorize(ctx, r))
		if f.inbox.count() != 1 {
			t.Fatalf("%d notifications, want 1", f.inbox.count())
		}
		// While that request is pending the client is not asked again.
		asRequired(t, f.m.Authorize(ctx, r))
		if asked != 1 {
			t.Fatalf("asked %d times, want 1", asked)
		}
		if err := f.m.Approve(ctx, re.RequestID, admin); err != nil {
			t.Fatal(err)
		}
		if err := f.m.Authorize(ctx, r); err != nil {
			t.Fatalf("approved after failed elicitation: %v", err)
		}
	})
	t.Run("the session ends while the user is asked", func(t *testing.T) {
		f := newFixture(t, Options{})
		r := req("s1", Filesystem)
		r.Elicit = func(context.Context, string) (bool, error) { f.m.EndSession("s1"); return true, nil }
		if err := f.m.Authorize(ctx, r); !errors.Is(err, errSessionEnded) {
			t.Fatalf("got %v, want errSessionEnded", err)
		}
		if g := f.m.Grants("s1"); len(g) != 0 {
			t.Fatalf("a grant outlived its session: %+v", g)
		}
	})
}

func TestGrantDoesNotLeak(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	a := asRequired(t, f.m.Authorize(ctx, req("A", Filesystem)))
	b := asRequired(t, f.m.Authorize(ctx, req("B", Filesystem)))
	aDB := asRequired(t, f.m.Authorize(ctx, req("A", Database)))
	if a.Link == b.Link || a.Link == aDB.Link {
		t.Fatalf("two requests share a link: %s %s %s", a.Link, b.Link, aDB.Link)
	}
	// A's link names A's filesystem request only.
	if p, err := f.m.ByLink(secretOf(t, a.Link)); err != nil || p.ID != a.RequestID {
		t.Fatalf("A's link: %+v %v", p, err)
	}
	if err := f.m.Approve(ctx, a.RequestID, admin); err != nil {
		t.Fatal(err)
	}
	for _, r := range []Request{req("B", Filesystem), req("A", Database), req("C", Filesystem)} {
		if err := f.m.Authorize(ctx, r); err == nil {
			t.Fatalf("%s/%s allowed by A's filesystem grant", r.SessionKey, r.Category)
		}
	}
	if err := f.m.Approve(ctx, aDB.RequestID, admin); err != nil {
		t.Fatal(err)
	}
	asRequired(t, f.m.Authorize(ctx, req("B", Database)))
	if err := f.m.Authorize(ctx, req("A", Database)); err != nil {
		t.Fatal(err)
	}
}

func TestPolicies(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{Policies: map[Category]Policy{Filesystem: PolicyAllow, Command: PolicyDeny}})
	tests := []struct {
		c        Category
		elicit   bool
		want     string // "ok", "required", "denied"
		byPolicy bool
	}{
		{Filesystem, false, "ok", false},
		{Command, false, "denied", true},
		{Command, true, "denied", true}, // accepting in the client cannot override deny
		{Database, false, "required", false},
		{HubAdmin, false, "required", false},
	}
	for _, tc := range tests {
		r := req("s1", tc.c)
		if tc.elicit {
			r.Elicit = accept
		}
		err := f.m.Authorize(ctx, r)
		switch tc.want {
		case "ok":
			if err != nil {
				t.Errorf("%s: %v, want allowed", tc.c, err)
			}
		case "required":
			asRequired(t, err)
		case "denied":
			de := asDenied(t, err)
			if de.ByPolicy != tc.byPolicy || !strings.Contains(de.Error(), "HAMCP_PERMISSION_COMMAND") {
				t.Errorf("%s: %v, want a policy denial naming the option", tc.c, de)
			}
		}
	}
	if n := f.inbox.count(); n != 2 {
		t.Errorf("%d notifications, want 2 (database, hub_admin): allow and deny never ask", n)
	}
	g := f.m.Grants("anyone")
	if len(g) != 1 || g[0].Category != Filesystem || g[0].Via != ViaPolicy {
		t.Errorf("Grants under allow policy = %+v", g)
	}
}

func TestGrantExpiresAtTTL(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{GrantTTL: time.Hour})
	re := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	if err := f.m.Approve(ctx, re.RequestID, admin); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour - time.Nanosecond)
	if err := f.m.Authorize(ctx, req("s1", Filesystem)); err != nil {
		t.Fatalf("just before the TTL: %v", err)
	}
	f.clock.Advance(time.Nanosecond)
	next := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	if next.RequestID == re.RequestID || f.inbox.count() != 2 {
		t.Fatalf("after the TTL: request %s, %d notifications; want a new request and notification", next.RequestID, f.inbox.count())
	}
	if g := f.m.Grants("s1"); len(g) != 0 {
		t.Fatalf("expired grant still listed: %+v", g)
	}
}

func TestEndSessionClears(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	fs := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	f.m.Approve(ctx, fs.RequestID, admin)
	db := asRequired(t, f.m.Authorize(ctx, req("s1", Database)))
	cmd := asRequired(t, f.m.Authorize(ctx, req("s1", Command)))
	f.m.Deny(ctx, cmd.RequestID, admin)
	other := asRequired(t, f.m.Authorize(ctx, req("s2", Filesystem)))

	f.m.EndSession("s1")
	if g := f.m.Grants("s1"); len(g) != 0 {
		t.Fatalf("grants after EndSession: %+v", g)
	}
	if p := f.m.Pending(); len(p) != 1 || p[0].ID != other.RequestID {
		t.Fatalf("pending after EndSession: %+v, want only s2's", p)
	}
	if err := f.m.Approve(ctx, db.RequestID, admin); !errors.Is(err, ErrUnknownRequest) {
		t.Fatalf("approving an ended session's request: %v", err)
	}
	testkit.Eventually(t, "the ended session's notification to be withdrawn", func() bool { return f.inbox.wasWithdrawn(db.RequestID) })
	// A key reused after the end starts fresh: no grant, and the denial is gone too.
	asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	asRequired(t, f.m.Authorize(ctx, req("s1", Command)))
}

func TestAuthorizeRejectsMalformedRequests(t *testing.T) {
	f := newFixture(t, Options{})
	tests := []struct {
		r    Request
		want string
	}{
		{Request{Category: Filesystem}, "SessionKey is empty"},
		{Request{SessionKey: "s", Category: "files"}, `"files" is not a category`},
		{Request{SessionKey: "s"}, "is not a category"},
	}
	for _, tc := range tests {
		err := f.m.Authorize(context.Background(), tc.r)
		var re *RequiredError
		var de *DeniedError
		if err == nil || errors.As(err, &re) || errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Authorize(%+v) = %v, want a plain error containing %q", tc.r, err, tc.want)
		}
	}
}

func TestNotifyFailureLeavesThePageAndPanel(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	f.inbox.fail = errors.New("home assistant unreachable")
	re := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	if !strings.Contains(re.HowTo, re.Link) || !strings.Contains(re.HowTo, "panel") || !strings.Contains(re.HowTo, re.RequestID) {
		t.Fatalf("HowTo without a posted notification: %q; want the link and the panel", re.HowTo)
	}
	if err := f.m.Approve(ctx, re.RequestID, admin); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Authorize(ctx, req("s1", Filesystem)); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"unknown category policy", Options{Policies: map[Category]Policy{"disk": PolicyAllow}}, `unknown category "disk"`},
		{"unknown policy", Options{Policies: map[Category]Policy{Filesystem: "maybe"}}, `Policies[filesystem] = "maybe"`},
		{"upper-case policy", Options{Policies: map[Category]Policy{Filesystem: "ALLOW"}}, "use ask, allow or deny"},
		{"padded policy", Options{Policies: map[Category]Policy{Filesystem: " allow"}}, "use ask, allow or deny"},
		{"negative grant ttl", Options{GrantTTL: -time.Second}, "GrantTTL -1s is negative"},
		{"negative request ttl", Options{RequestTTL: -time.Second}, "RequestTTL -1s is negative"},
		{"unknown listed category", Options{Categories: []Category{"x"}}, `Categories has unknown category "x"`},
		{"empty warning", Options{Warnings: map[Category]string{Database: " "}}, "Warnings"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.o)
			if err == nil {
				m.Close()
				t.Fatalf("New accepted %+v", tc.o)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}
