package permission

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/store"
)

// TestPanelRevokesGrants: the panel lists each session's grants and denials by label only, and
// revoking one makes the session's next call of that category ask again, audited with the user.
func TestPanelRevokesGrants(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := context.Background()
	panel := Approver{Via: ViaPanel, UserID: "u-1", Name: "Alice"}
	// Session A is granted filesystem and denied database; session B holds nothing.
	id := asRequired(t, f.m.Authorize(ctx, req("mcp:session-a", Filesystem))).RequestID
	if err := f.m.Approve(ctx, id, panel); err != nil {
		t.Fatal(err)
	}
	id = asRequired(t, f.m.Authorize(ctx, req("mcp:session-a", Database))).RequestID
	if err := f.m.Deny(ctx, id, panel); err != nil {
		t.Fatal(err)
	}
	asRequired(t, f.m.Authorize(ctx, req("mcp:session-b", Command))) // pending only

	sessions := f.m.SessionGrants()
	if len(sessions) != 1 {
		t.Fatalf("SessionGrants: %+v, want only session A", sessions)
	}
	a := sessions[0]
	if a.Session != f.m.SessionLabel("mcp:session-a") || strings.Contains(a.Session, "session-a") ||
		len(a.Grants) != 1 || a.Grants[0].Category != Filesystem || len(a.Denied) != 1 || a.Denied[0].Category != Database {
		t.Fatalf("session A: %+v", a)
	}

	for _, tt := range []struct {
		name  string
		label string
		c     Category
		by    Approver
	}{
		{"by the session's owner", a.Session, Filesystem, Approver{Via: ViaOwner}},
		{"without a user", a.Session, Filesystem, Approver{Via: ViaPanel}},
		{"by raw session key", "mcp:session-a", Filesystem, panel},
		{"a category not granted", a.Session, Command, panel},
	} {
		if err := f.m.RevokeGrant(tt.label, tt.c, tt.by); err == nil {
			t.Errorf("RevokeGrant %s: allowed", tt.name)
		}
	}
	if err := f.m.Authorize(ctx, req("mcp:session-a", Filesystem)); err != nil {
		t.Fatalf("refused revocations took the grant: %v", err)
	}
	if err := f.m.RevokeGrant(a.Session, Filesystem, panel); err != nil {
		t.Fatal(err)
	}
	if err := f.m.RevokeGrant(a.Session, Filesystem, panel); !errors.Is(err, ErrUnknownGrant) {
		t.Errorf("revoking twice: %v", err)
	}
	asRequired(t, f.m.Authorize(ctx, req("mcp:session-a", Filesystem)))
	log := f.auditLog(t, store.AuditQuery{Outcome: OutcomeRevoked})
	if len(log) != 1 || log[0].SessionID != "mcp:session-a" || log[0].Category != "filesystem" ||
		!strings.Contains(log[0].Detail, "Alice (Home Assistant user u-1) in the hamcp panel") {
		t.Fatalf("audit: %+v", log)
	}
}

// TestPanelRevokesPersistedTokenGrants: a sessionless token's grant, which survives restarts, is
// gone for good once revoked in the panel.
func TestPanelRevokesPersistedTokenGrants(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := context.Background()
	key := Scope{Grant: "oauth:family-1"}.Key()
	id := asRequired(t, f.m.Authorize(ctx, req(key, Command))).RequestID
	if err := f.m.Approve(ctx, id, Approver{Via: ViaPanel, UserID: "u-1"}); err != nil {
		t.Fatal(err)
	}
	s := f.m.SessionGrants()
	if len(s) != 1 || !s[0].Token {
		t.Fatalf("SessionGrants: %+v", s)
	}
	if err := f.m.RevokeGrant(s[0].Session, Command, Approver{Via: ViaPanel, UserID: "u-1"}); err != nil {
		t.Fatal(err)
	}
	f.m.Close() // writes the revocation
	m2, err := New(Options{Store: f.store, Clock: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	asRequired(t, m2.Authorize(ctx, req(key, Command)))
}
