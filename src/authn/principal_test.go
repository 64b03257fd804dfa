package authn

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// TestPrincipalKinds: every kind of caller answers who, how and where its grants go, and comes back
// unchanged from the token info the go-sdk carries into each call.
func TestPrincipalKinds(t *testing.T) {
	fp := Fingerprint("a-long-lived-token")
	full, read := []string{ScopeFull}, []string{ScopeReadOnly}
	tests := []struct {
		name     string
		p        *Principal
		sdkUser  string // TokenInfo.UserID: what the go-sdk binds a session to
		readOnly bool
		owner    string
		grant    string
		str      string
	}{
		{"HA token", &Principal{Kind: KindHAToken, UserID: "u-1", Scopes: full, GrantID: fp},
			"ha-user:u-1", false, "ha-token:" + fp, "ha-token:" + fp, "u-1"},
		{"OAuth, full", &Principal{Kind: KindOAuth, UserID: "u-1", UserName: "Alex", ClientID: "c-1", ClientName: "Claude", Scopes: full, GrantID: "family-1"},
			"u-1", false, "oauth:family-1", "oauth:family-1", "Alex (u-1) via Claude"},
		{"OAuth, read-only", &Principal{Kind: KindOAuth, UserID: "u-1", ClientID: "c-1", Scopes: read, GrantID: "family-2"},
			"u-1", true, "oauth:family-2", "oauth:family-2", "u-1 via c-1"},
		{"OAuth, both scopes", &Principal{Kind: KindOAuth, UserID: "u-1", ClientID: "c-1", Scopes: []string{ScopeReadOnly, ScopeFull}, GrantID: "family-3"},
			"u-1", false, "oauth:family-3", "oauth:family-3", "u-1 via c-1"},
		{"ingress user", &Principal{Kind: KindIngress, UserID: "u-2", UserName: "Sam"},
			"u-2", false, "u-2", "u-2", "Sam (u-2)"},
		{"SSH key", &Principal{Kind: KindSSH, KeyFingerprint: "SHA256:abc", KeyComment: "laptop"},
			"", false, "", "", "SHA256:abc laptop"},
		{"stdio", Stdio(), "", false, "", "", "stdio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := time.Unix(1e9, 0)
			ti := tt.p.TokenInfo(exp)
			if got := PrincipalOf(ti); got != tt.p {
				t.Fatalf("PrincipalOf(TokenInfo) = %+v, want the principal attached", got)
			}
			if ti.UserID != tt.sdkUser || !ti.Expiration.Equal(exp) || len(ti.Scopes) != len(tt.p.Scopes) {
				t.Fatalf("token info %+v", ti)
			}
			if got := tt.p.ReadOnly(); got != tt.readOnly || ReadOnly(ti) != tt.readOnly {
				t.Errorf("ReadOnly = %v (from the token info %v), want %v", got, ReadOnly(ti), tt.readOnly)
			}
			if got := tt.p.Owner(); got != tt.owner {
				t.Errorf("Owner = %q, want %q", got, tt.owner)
			}
			if got := tt.p.Grant(); got != tt.grant {
				t.Errorf("Grant = %q, want %q", got, tt.grant)
			}
			if got := tt.p.String(); got != tt.str {
				t.Errorf("String = %q, want %q", got, tt.str)
			}
			if tt.p.Credential() == "" {
				t.Error("Credential is empty for a caller")
			}
		})
	}
}

// TestPrincipalOfForeignToken: a token from a verifier outside authn that attached no principal is
// known by its user and scopes; no token is nobody.
func TestPrincipalOfForeignToken(t *testing.T) {
	p := PrincipalOf(&auth.TokenInfo{UserID: "alice", Scopes: []string{ScopeReadOnly}, Extra: map[string]any{"kind": "oauth"}})
	if p.Kind != KindToken || p.UserID != "alice" || !p.ReadOnly() || p.Owner() != "alice" || p.Grant() != "alice" {
		t.Fatalf("foreign token: %+v", p)
	}
	var nobody *Principal = PrincipalOf(nil)
	if nobody != nil || nobody.Credential() != "" || nobody.Owner() != "" || nobody.Grant() != "" || nobody.ReadOnly() {
		t.Fatalf("no token: %+v", nobody)
	}
}

// TestCredentialSeparatesCredentials: two calls share a Credential only when they come with the same
// credential; that is what keeps a second token of the same user out of another's MCP session.
func TestCredentialSeparatesCredentials(t *testing.T) {
	ha := func(token string) *Principal {
		return &Principal{Kind: KindHAToken, UserID: "u-1", Scopes: []string{ScopeFull}, GrantID: Fingerprint(token)}
	}
	oauth := func(family string, scopes ...string) *Principal {
		return &Principal{Kind: KindOAuth, UserID: "u-1", ClientID: "c-1", Scopes: scopes, GrantID: family}
	}
	tests := []struct {
		name string
		a, b *Principal
		same bool
	}{
		{"the same HA token", ha("t1"), ha("t1"), true},
		{"two HA tokens of one user", ha("t1"), ha("t2"), false},
		{"the same OAuth grant", oauth("f1", ScopeFull), oauth("f1", ScopeFull), true},
		{"scopes in another order", oauth("f1", ScopeFull, ScopeReadOnly), oauth("f1", ScopeReadOnly, ScopeFull), true},
		{"the same grant, read-only", oauth("f1", ScopeFull), oauth("f1", ScopeReadOnly), false},
		{"two OAuth grants of one user", oauth("f1", ScopeFull), oauth("f2", ScopeFull), false},
		{"an HA token whose fingerprint is an OAuth grant id", ha("t1"), oauth(Fingerprint("t1"), ScopeFull), false},
		{"two SSH keys", &Principal{Kind: KindSSH, KeyFingerprint: "SHA256:a"}, &Principal{Kind: KindSSH, KeyFingerprint: "SHA256:b"}, false},
		{"two ingress users", &Principal{Kind: KindIngress, UserID: "u-1"}, &Principal{Kind: KindIngress, UserID: "u-2"}, false},
		{"an ingress user and that user's foreign token", &Principal{Kind: KindIngress, UserID: "u-1"}, PrincipalOf(&auth.TokenInfo{UserID: "u-1"}), false},
		{"a caller and nobody", ha("t1"), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Credential() == tt.b.Credential(); got != tt.same {
				t.Fatalf("%q vs %q: same=%v, want %v", tt.a.Credential(), tt.b.Credential(), got, tt.same)
			}
		})
	}
}

// TestCaller: a call's token names its caller; a call without one is the connection's (stdio, SSH).
func TestCaller(t *testing.T) {
	ssh := &Principal{Kind: KindSSH, KeyFingerprint: "SHA256:a"}
	token := &Principal{Kind: KindHAToken, UserID: "u-1", GrantID: "fp"}
	ctx := WithPrincipal(context.Background(), ssh)
	tests := []struct {
		name string
		ctx  context.Context
		ti   *auth.TokenInfo
		want *Principal
	}{
		{"token", context.Background(), token.TokenInfo(time.Time{}), token},
		{"token wins over the connection", ctx, token.TokenInfo(time.Time{}), token},
		{"connection", ctx, nil, ssh},
		{"nobody", context.Background(), nil, nil},
	}
	for _, tt := range tests {
		if got := Caller(tt.ctx, tt.ti); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
