package permission

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// TestOnlyTheUserApproves: an approval must name the user on the page or in the panel; the credential
// that made a request may only deny it, and no other credential may touch it.
func TestOnlyTheUserApproves(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	mine := req("s1", Command)
	mine.Owner = "ha-token:alice-assistant"
	re := asRequired(t, f.m.Authorize(ctx, mine))
	other := req("s2", Filesystem)
	other.Owner = "ha-token:script"
	reOther := asRequired(t, f.m.Authorize(ctx, other))

	for _, by := range []Approver{{}, {Via: ViaOwner, UserID: mine.Owner}, {Via: ViaPage}, {Via: ViaPanel}, {Via: "model", UserID: "x"}} {
		if err := f.m.Approve(ctx, re.RequestID, by); err == nil {
			t.Fatalf("Approve accepted approver %+v", by)
		}
		if err := f.m.Deny(ctx, re.RequestID, by); err == nil {
			t.Fatalf("Deny accepted approver %+v", by)
		}
	}
	for _, owner := range []string{"", "ha-token:script", "ha-token:alice-assistan", "ha-token:alice-assistant "} {
		if err := f.m.DenyAsOwner(ctx, re.RequestID, owner); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("DenyAsOwner by %q: %v, want ErrNotOwner", owner, err)
		}
	}
	if got := f.m.PendingFor(mine.Owner); len(got) != 1 || got[0].ID != re.RequestID {
		t.Fatalf("PendingFor(owner) = %+v, want only its own request", got)
	}
	if got := f.m.PendingFor(""); len(got) != 0 {
		t.Fatalf("PendingFor(\"\") = %+v, want none", got)
	}
	if err := f.m.DenyAsOwner(ctx, re.RequestID, mine.Owner); err != nil {
		t.Fatalf("the owner denying its own request: %v", err)
	}
	asDenied(t, f.m.Authorize(ctx, mine))
	if err := f.m.DenyAsOwner(ctx, "req_nothing", mine.Owner); !errors.Is(err, ErrUnknownRequest) {
		t.Fatalf("unknown request: %v", err)
	}
	// The other session's request is untouched.
	if p, err := f.m.Request(reOther.RequestID); err != nil || p.ID != reOther.RequestID {
		t.Fatalf("other request after the denial: %+v %v", p, err)
	}
	log := f.auditLog(t, store.AuditQuery{SessionID: "s1", Outcome: store.OutcomeDenied})
	if len(log) != 1 || !strings.Contains(log[0].Detail, "owner") {
		t.Fatalf("audit of the owner's denial: %+v", log)
	}
}

func TestByLink(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{RequestTTL: 5 * time.Minute})
	re := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	secret := secretOf(t, re.Link)
	if len(secret) < 43 { // 256 bits in base64url
		t.Fatalf("link secret %q is shorter than 256 bits", secret)
	}
	// One character off: a different last character (replacing it with a fixed "A" was the same
	// link whenever the random secret already ended in A, one run in 64).
	off := "A"
	if strings.HasSuffix(secret, off) {
		off = "B"
	}
	tests := []struct {
		name    string
		secret  string
		advance time.Duration
		want    error
	}{
		{"the link", secret, 0, nil},
		{"empty", "", 0, ErrUnknownRequest},
		{"one character off", secret[:len(secret)-1] + off, 0, ErrUnknownRequest},
		{"prefix", secret[:20], 0, ErrUnknownRequest},
		{"the request id is not the link", re.RequestID, 0, ErrUnknownRequest},
		{"very long", strings.Repeat(secret, 10), 0, ErrUnknownRequest},
		{"just before expiry", secret, 5*time.Minute - time.Nanosecond, nil},
		{"expired", secret, time.Nanosecond, ErrRequestExpired},
	}
	for _, tc := range tests {
		f.clock.Advance(tc.advance)
		p, err := f.m.ByLink(tc.secret)
		if !errors.Is(err, tc.want) || (tc.want == nil && p.ID != re.RequestID) {
			t.Errorf("%s: ByLink = %+v, %v; want %v", tc.name, p.ID, err, tc.want)
		}
	}
	if err := f.m.Approve(ctx, re.RequestID, admin); !errors.Is(err, ErrRequestExpired) {
		t.Fatalf("approving an expired request: %v", err)
	}
	// An answered (here: expired and dropped) request's link finds nothing.
	if _, err := f.m.ByLink(secret); !errors.Is(err, ErrUnknownRequest) {
		t.Fatalf("link after the request was dropped: %v", err)
	}
	asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
}

// TestURLElicitation is a client that can open pages: the call shows the approval page in the client
// and waits for the answer there.
func TestURLElicitation(t *testing.T) {
	ctx := context.Background()
	t.Run("the waiting call goes ahead once the user approves", func(t *testing.T) {
		f := newFixture(t, Options{})
		var opened atomic.Value
		var done atomic.Int32
		r := req("s1", Filesystem)
		r.OpenURL = func(_ context.Context, msg, url, id string) (bool, error) {
			opened.Store(url)
			go func() {
				// The user follows the link and approves on the page.
				p, err := f.m.ByLink(secretOf(t, url))
				if err != nil || p.ID != id {
					t.Errorf("the opened link: %+v %v", p, err)
					return
				}
				f.m.Approve(ctx, p.ID, admin)
			}()
			return true, nil
		}
		r.URLDone = func(context.Context, string) { done.Add(1) }
		if err := f.m.Authorize(ctx, r); err != nil {
			t.Fatalf("the waiting call: %v", err)
		}
		if opened.Load() == nil || done.Load() != 1 {
			t.Fatalf("opened %v, completion sent %d times", opened.Load(), done.Load())
		}
	})
	t.Run("deny on the page reaches the waiting call", func(t *testing.T) {
		f := newFixture(t, Options{})
		r := req("s1", Command)
		r.OpenURL = func(_ context.Context, _, _, id string) (bool, error) {
			go f.m.Deny(ctx, id, admin)
			return true, nil
		}
		asDenied(t, f.m.Authorize(ctx, r))
	})
	t.Run("declining to open the page leaves the request and its link", func(t *testing.T) {
		f := newFixture(t, Options{})
		asked := 0
		r := req("s1", Database)
		r.OpenURL = func(context.Context, string, string, string) (bool, error) { asked++; return false, nil }
		re := asRequired(t, f.m.Authorize(ctx, r))
		if re.Link == "" || len(f.m.Pending()) != 1 {
			t.Fatalf("after a decline: %+v, pending %d", re, len(f.m.Pending()))
		}
		asRequired(t, f.m.Authorize(ctx, r))
		if asked != 2 {
			t.Fatalf("asked %d times, want each call to offer the page again", asked)
		}
	})
	t.Run("a client error falls back to the refusal with the link", func(t *testing.T) {
		f := newFixture(t, Options{})
		r := req("s1", Database)
		r.OpenURL = func(context.Context, string, string, string) (bool, error) { return false, errors.New("client gone") }
		if re := asRequired(t, f.m.Authorize(ctx, r)); re.Link == "" {
			t.Fatalf("no link: %+v", re)
		}
	})
	t.Run("the request expires while the call waits", func(t *testing.T) {
		f := newFixture(t, Options{RequestTTL: 20 * time.Millisecond})
		r := req("s1", Filesystem)
		r.OpenURL = func(context.Context, string, string, string) (bool, error) { return true, nil }
		re := asRequired(t, f.m.Authorize(ctx, r))
		if !strings.Contains(re.Detail, "expired") {
			t.Fatalf("after expiry: %+v", re)
		}
	})
	t.Run("the call's context ends the wait", func(t *testing.T) {
		f := newFixture(t, Options{})
		cctx, cancel := context.WithCancel(ctx)
		r := req("s1", Filesystem)
		r.OpenURL = func(context.Context, string, string, string) (bool, error) { cancel(); return true, nil }
		if err := f.m.Authorize(cctx, r); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		// The request stays for the page and the panel.
		if len(f.m.Pending()) != 1 {
			t.Fatalf("pending %+v", f.m.Pending())
		}
	})
	t.Run("the session ends while the call waits", func(t *testing.T) {
		f := newFixture(t, Options{})
		r := req("s1", Filesystem)
		r.OpenURL = func(context.Context, string, string, string) (bool, error) {
			go f.m.EndSession("s1")
			return true, nil
		}
		if err := f.m.Authorize(ctx, r); !errors.Is(err, errSessionEnded) {
			t.Fatalf("got %v, want errSessionEnded", err)
		}
	})
}

func TestRecordView(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	re := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	f.m.RecordView(re.RequestID, admin, "")
	f.m.RecordView(re.RequestID, Approver{Via: ViaPage, UserID: "u-sam", Name: "Sam"}, "not a Home Assistant administrator")
	f.m.RecordView("req_gone", admin, "") // nothing to record
	log := f.auditLog(t, store.AuditQuery{SessionID: "s1"})
	var viewed, refused bool
	for _, e := range log {
		viewed = viewed || (e.Outcome == outcomeViewed && strings.Contains(e.Detail, "Alex") && strings.Contains(e.Detail, "u-alex"))
		refused = refused || (e.Outcome == outcomeRefused && strings.Contains(e.Detail, "Sam") && strings.Contains(e.Detail, "administrator"))
	}
	if !viewed || !refused || len(log) != 3 {
		t.Fatalf("audit: %+v", log)
	}
}

// FuzzByLink: no string but the link's own secret finds a request.
func FuzzByLink(f *testing.F) {
	fx := newFixture(f, Options{})
	var re *RequiredError
	if err := fx.m.Authorize(context.Background(), req("s1", Filesystem)); !errors.As(err, &re) {
		f.Fatalf("got %v, want a request", err)
	}
	secret := secretOf(f, re.Link)
	for _, s := range []string{"", "x", secret[:10], secret + "A", re.RequestID, strings.ToUpper(secret)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := fx.m.ByLink(s)
		if (err == nil) != (s == secret) || (err == nil && p.ID != re.RequestID) {
			t.Fatalf("ByLink(%q) = %+v, %v", s, p, err)
		}
	})
}
