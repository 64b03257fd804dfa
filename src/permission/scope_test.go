package permission

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/store"
)

func TestScopeOf(t *testing.T) {
	fp := authn.Fingerprint("a-long-lived-token")
	haToken := &authn.Principal{Kind: authn.KindHAToken, UserID: "u-1", Scopes: []string{authn.ScopeFull}, GrantID: fp}
	oauth := &authn.Principal{Kind: authn.KindOAuth, UserID: "u-1", ClientID: "c-1", Scopes: []string{authn.ScopeReadOnly}, GrantID: "family-7"}
	tests := []struct {
		name    string
		p       *authn.Principal
		session string
		want    Scope
		key     string
	}{
		{"HA token, sessionless: the token", haToken, "", Scope{Grant: "ha-token:" + fp}, "token:ha-token:" + fp},
		{"OAuth, sessionless: the grant", oauth, "", Scope{Grant: "oauth:family-7"}, "token:oauth:family-7"},
		{"token known only by its user", authn.PrincipalOf(&auth.TokenInfo{UserID: "u-9"}), "", Scope{Grant: "u-9"}, "token:u-9"},
		{"HA token in a session: the session", haToken, "mcp:abc", Scope{Session: "mcp:abc"}, "mcp:abc"},
		{"OAuth in a session", oauth, "mcp:def", Scope{Session: "mcp:def"}, "mcp:def"},
		{"SSH: its session", &authn.Principal{Kind: authn.KindSSH, KeyFingerprint: "SHA256:x"}, "9f3c", Scope{Session: "9f3c"}, "9f3c"},
		{"SSH without a session: nothing", &authn.Principal{Kind: authn.KindSSH, KeyFingerprint: "SHA256:x"}, "", Scope{}, ""},
		{"stdio without a session: nothing", authn.Stdio(), "", Scope{}, ""},
		{"nobody (--no-auth), sessionless: nothing", nil, "", Scope{}, ""},
		{"nobody in a session", nil, "mcp:ghi", Scope{Session: "mcp:ghi"}, "mcp:ghi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScopeOf(tt.p, tt.session)
			if got != tt.want {
				t.Fatalf("ScopeOf = %+v, want %+v", got, tt.want)
			}
			if k := got.Key(); k != tt.key {
				t.Fatalf("Key = %q, want %q", k, tt.key)
			}
			if isTokenKey(got.Key()) != (tt.want.Grant != "") {
				t.Fatalf("%q is stored: %v, want %v", got.Key(), isTokenKey(got.Key()), tt.want.Grant != "")
			}
		})
	}
}

// TestGrantsPersistedByEarlierBuildsStillCount: rows earlier builds wrote to permission_grants (keys
// "token:ha-token:<fingerprint>", "token:oauth:<family>") are found for the same credential's
// sessionless calls, and for no other credential.
func TestGrantsPersistedByEarlierBuildsStillCount(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	f.m.Close()
	fp := authn.Fingerprint("the-ha-token")
	for _, key := range []string{"token:ha-token:" + fp, "token:oauth:family-7"} {
		rec := store.GrantRecord{Key: key, Category: string(Filesystem), Via: ViaApproval, GrantedAt: t0, ExpiresAt: t0.Add(8 * time.Hour)}
		if err := f.store.SaveGrant(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	m, err := New(Options{Store: f.store, Notifier: f.inbox, Clock: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })

	verified := func(p *authn.Principal) *authn.Principal { return authn.PrincipalOf(p.TokenInfo(time.Time{})) }
	tests := []struct {
		name    string
		p       *authn.Principal
		session string
		granted bool
	}{
		{"the HA token", verified(&authn.Principal{Kind: authn.KindHAToken, UserID: "u-1", Scopes: []string{authn.ScopeFull}, GrantID: fp}), "", true},
		{"the OAuth grant", verified(&authn.Principal{Kind: authn.KindOAuth, UserID: "u-1", Scopes: []string{authn.ScopeFull}, GrantID: "family-7"}), "", true},
		{"another HA token of the same user", verified(&authn.Principal{Kind: authn.KindHAToken, UserID: "u-1", Scopes: []string{authn.ScopeFull}, GrantID: authn.Fingerprint("other")}), "", false},
		{"another OAuth grant", verified(&authn.Principal{Kind: authn.KindOAuth, UserID: "u-1", Scopes: []string{authn.ScopeFull}, GrantID: "family-8"}), "", false},
		{"the HA token inside an MCP session", verified(&authn.Principal{Kind: authn.KindHAToken, UserID: "u-1", Scopes: []string{authn.ScopeFull}, GrantID: fp}), "mcp:s1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.Authorize(ctx, req(ScopeOf(tt.p, tt.session).Key(), Filesystem))
			if tt.granted && err != nil {
				t.Fatalf("the grant written by an earlier build was not found: %v", err)
			}
			if !tt.granted {
				asRequired(t, err)
			}
		})
	}
}
