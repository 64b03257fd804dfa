package oauth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestPanelListsAndRevokesGrants is the panel's view of sign-ins: each live grant once, with its
// client and user and no secret; revoking one by its reference stops its tokens and leaves the others.
func TestPanelListsAndRevokesGrants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	claude := e.register("http://127.0.0.1:33418/callback", "Claude")
	inspector := e.register("http://127.0.0.1:33419/callback", "Inspector")
	tokClaude, tokInspector := e.grant(claude), e.grant(inspector)

	grants, err := e.srv.Grants(ctx)
	if err != nil || len(grants) != 2 {
		t.Fatalf("Grants: %v %+v", err, grants)
	}
	byName := map[string]GrantInfo{}
	for _, g := range grants {
		byName[g.ClientName] = g
		if g.UserID == "" || g.Scope == "" || g.Created.IsZero() || g.LastUsed.Before(g.Created) || !g.Ends.After(g.Created) || len(g.Ref) != 16 {
			t.Errorf("grant %+v lacks a field", g)
		}
		for _, secret := range []string{tokClaude.AccessToken, tokClaude.RefreshToken, tokInspector.AccessToken} {
			if strings.Contains(g.Ref, secret) || strings.Contains(g.ClientID, secret) {
				t.Errorf("grant %+v carries a token", g)
			}
		}
	}
	clients, err := e.srv.Clients(ctx)
	if err != nil || len(clients) != 2 || clients[0].Grants != 1 || clients[1].Grants != 1 {
		t.Fatalf("Clients: %v %+v", err, clients)
	}

	if _, err := e.srv.RevokeGrant(ctx, "0123456789abcdef"); !errors.Is(err, ErrUnknownGrant) {
		t.Fatalf("RevokeGrant of an unknown ref: %v", err)
	}
	got, err := e.srv.RevokeGrant(ctx, byName["Claude"].Ref)
	if err != nil || got.ClientName != "Claude" {
		t.Fatalf("RevokeGrant: %v %+v", err, got)
	}
	if s := e.mcpStatus(tokClaude.AccessToken); s != http.StatusUnauthorized {
		t.Errorf("revoked access token: %d, want 401", s)
	}
	if _, err := e.refresh(claude, tokClaude.RefreshToken); err == nil {
		t.Error("revoked refresh token still refreshes")
	}
	if s := e.mcpStatus(tokInspector.AccessToken); s != http.StatusOK {
		t.Errorf("the other client's token: %d, want 200", s)
	}
	if grants, _ := e.srv.Grants(ctx); len(grants) != 1 || grants[0].ClientName != "Inspector" {
		t.Errorf("after revoking: %+v", grants)
	}
	if _, err := e.srv.RevokeGrant(ctx, byName["Claude"].Ref); !errors.Is(err, ErrUnknownGrant) {
		t.Errorf("revoking twice: %v", err)
	}
}
