package permission

import (
	"context"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

func TestTokenGrantsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	token := Scope{Grant: "grant-42"}.Key()
	for _, key := range []string{token, "mcp-session-1"} {
		re := asRequired(t, f.m.Authorize(ctx, req(key, Filesystem)))
		if err := f.m.Approve(ctx, re.RequestID, admin); err != nil {
			t.Fatal(err)
		}
	}
	f.m.Close()

	restart := func(at time.Time) *Manager {
		t.Helper()
		m, err := New(Options{Store: f.store, Notifier: f.inbox, Clock: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	m := restart(t0.Add(time.Hour))
	if err := m.Authorize(ctx, req(token, Filesystem)); err != nil {
		t.Fatalf("token grant after restart: %v", err)
	}
	if g := m.Grants(token); len(g) != 1 || g[0].Via != ViaApproval || !g[0].ExpiresAt.Equal(t0.Add(8*time.Hour)) {
		t.Fatalf("reloaded grant: %+v, want the original expiry", g)
	}
	// A session's grant ends with the process, and a token's grant does not widen to other categories.
	asRequired(t, m.Authorize(ctx, req("mcp-session-1", Filesystem)))
	asRequired(t, m.Authorize(ctx, req(token, Database)))

	if err := m.Authorize(ctx, req(token, Filesystem)); err != nil {
		t.Fatal(err)
	}
	expired := restart(t0.Add(8 * time.Hour))
	asRequired(t, expired.Authorize(ctx, req(token, Filesystem)))

	// Revoking the token ends its grants on disk too.
	m.EndSession(token)
	m.Close()
	recs, err := f.store.LoadGrants(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Key == token {
			t.Fatalf("grant left on disk after EndSession: %+v", r)
		}
	}
}

func TestTokenGrantRenewalReplacesTheStoredOne(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{GrantTTL: time.Hour})
	token := Scope{Grant: "g"}.Key()
	re := asRequired(t, f.m.Authorize(ctx, req(token, Database)))
	f.m.Approve(ctx, re.RequestID, admin)
	f.clock.Advance(time.Hour)
	re = asRequired(t, f.m.Authorize(ctx, req(token, Database)))
	if err := f.m.Approve(ctx, re.RequestID, admin); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Authorize(ctx, req(token, Database)); err != nil {
		t.Fatal(err)
	}
	f.m.Close()
	recs, _ := f.store.LoadGrants(ctx, t0)
	want := store.GrantRecord{Key: token, Category: "database", Via: ViaApproval, GrantedAt: t0.Add(time.Hour), ExpiresAt: t0.Add(2 * time.Hour)}
	if len(recs) != 1 || recs[0] != want {
		t.Fatalf("stored grants %+v, want just %+v", recs, want)
	}
}
