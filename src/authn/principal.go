package authn

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Kind is how a caller proved who they are.
type Kind string

// The kinds of caller hamcp serves.
const (
	KindHAToken Kind = "ha_token" // a Home Assistant access token (long-lived or not)
	KindOAuth   Kind = "oauth"    // an access token hamcp's OAuth server issued
	KindSSH     Kind = "ssh"      // a public key listed in ssh_authorized_keys
	KindStdio   Kind = "stdio"    // the process's own stdin/stdout: whoever started hamcp
	KindIngress Kind = "ingress"  // a Home Assistant user in the panel, named by the Supervisor's ingress proxy
	// KindToken is a bearer token accepted by a verifier outside this package that attached no
	// principal: all that is known is its user and scopes.
	KindToken Kind = "token"
)

// Principal is the one answer to "who is calling, and how": set once where the credential is
// checked, read by every layer after. A nil *Principal is nobody (--no-auth on loopback); its
// methods answer for that case.
type Principal struct {
	Kind Kind
	// UserID and UserName name the Home Assistant user (HA token, OAuth, ingress); UserName may be
	// "" when it is not known.
	UserID, UserName string
	// ClientID and ClientName name the OAuth client the user approved.
	ClientID, ClientName string
	// KeyFingerprint and KeyComment name the SSH key that logged in.
	KeyFingerprint, KeyComment string
	// Scopes are the token's scopes (ScopeFull, ScopeReadOnly).
	Scopes []string
	// GrantID names what the user approved, never the secret itself: the OAuth grant (its family
	// id, shared by every token refreshed from it) or the HA token's Fingerprint.
	GrantID string
}

// Stdio is the caller on hamcp's own stdin/stdout.
func Stdio() *Principal { return &Principal{Kind: KindStdio} }

// ReadOnly reports whether the caller may only use read-only tools: its scopes hold
// ScopeReadOnly and not ScopeFull.
func (p *Principal) ReadOnly() bool {
	if p == nil {
		return false
	}
	return slices.Contains(p.Scopes, ScopeReadOnly) && !slices.Contains(p.Scopes, ScopeFull)
}

// credentialID names the exact credential, secret-free: the OAuth grant, the HA token by its
// fingerprint, the SSH key by its fingerprint; else the kind and user.
func (p *Principal) credentialID() string {
	switch {
	case p.Kind == KindOAuth && p.GrantID != "":
		return "oauth:" + p.GrantID
	case p.Kind == KindHAToken && p.GrantID != "":
		return "ha-token:" + p.GrantID
	case p.Kind == KindSSH:
		return "ssh:" + p.KeyFingerprint
	case p.Kind == KindToken:
		return "user:" + p.UserID
	}
	return string(p.Kind) + ":" + p.UserID
}

// Credential is a stable, secret-free name of the exact credential behind a call, for binding an
// MCP session to the credential that created it: the same OAuth grant with the same scopes, the
// same HA token, the same SSH key, the same ingress user. Another token of the same user is
// another credential. "" for nobody (--no-auth).
func (p *Principal) Credential() string {
	if p == nil {
		return ""
	}
	scopes := slices.Clone(p.Scopes)
	slices.Sort(scopes)
	return p.credentialID() + "|" + p.UserID + "|" + strings.Join(scopes, " ")
}

// Owner names the credential that owns the permission requests this caller makes: only it may
// list and withdraw them over the HTTP API. "" for callers without such an API (stdio, SSH,
// nobody).
func (p *Principal) Owner() string {
	if p == nil {
		return ""
	}
	switch p.Kind {
	case KindOAuth, KindHAToken:
		if p.GrantID != "" {
			return p.credentialID()
		}
	case KindStdio, KindSSH:
		return ""
	}
	return p.UserID
}

// Grant names what the permission grants of a sessionless call (one HTTP POST, no MCP session)
// belong to: the OAuth grant or the HA token, so a grant lasts across requests made with it; for a
// token known only by its user, that user. "" when the caller has nothing that outlives a
// connection (stdio, SSH, nobody): such calls must be scoped to their session.
func (p *Principal) Grant() string {
	if p == nil {
		return ""
	}
	switch p.Kind {
	case KindStdio, KindSSH:
		return ""
	case KindOAuth, KindHAToken:
		if p.GrantID != "" {
			return p.credentialID()
		}
	}
	return p.UserID
}

// String names the caller for logs.
func (p *Principal) String() string {
	if p == nil {
		return "nobody (no authentication)"
	}
	switch p.Kind {
	case KindSSH:
		if p.KeyComment != "" {
			return p.KeyFingerprint + " " + p.KeyComment
		}
		return p.KeyFingerprint
	case KindStdio:
		return "stdio"
	}
	who := p.UserID
	if p.UserName != "" {
		who = p.UserName + " (" + p.UserID + ")"
	}
	if p.Kind == KindOAuth {
		client := p.ClientName
		if client == "" {
			client = p.ClientID
		}
		return who + " via " + client
	}
	return who
}

// principalKey is where a TokenInfo carries its principal. Only this package reads it.
const principalKey = "hamcp/principal"

// TokenInfo is the token info that carries p, for a verifier to return: the go-sdk hands it to
// every call made with the token (req.Extra.TokenInfo), and PrincipalOf reads p back from it.
// The user id is what the go-sdk binds a session to: an HA token's is "ha-user:<id>".
func (p *Principal) TokenInfo(expires time.Time) *auth.TokenInfo {
	user := p.UserID
	if p.Kind == KindHAToken {
		user = "ha-user:" + p.UserID
	}
	extra := map[string]any{principalKey: p}
	return &auth.TokenInfo{UserID: user, Scopes: slices.Clone(p.Scopes), Expiration: expires, Extra: extra}
}

// PrincipalOf is the caller behind a verified token: the principal its verifier attached, or for a
// token from a verifier that attached none, a KindToken principal with its user and scopes. nil
// for no token (--no-auth).
func PrincipalOf(ti *auth.TokenInfo) *Principal {
	if ti == nil {
		return nil
	}
	if p, ok := ti.Extra[principalKey].(*Principal); ok && p != nil {
		return p
	}
	return &Principal{Kind: KindToken, UserID: ti.UserID, Scopes: slices.Clone(ti.Scopes)}
}

type contextKey struct{}

// WithPrincipal returns ctx carrying p, for transports whose calls carry no token (stdio, SSH):
// the go-sdk runs every request of a connection under the context it was connected with.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, contextKey{}, p)
}

// Caller is the principal behind a call: the one its token carries, else the one its connection's
// context carries (WithPrincipal), else nil (nobody).
func Caller(ctx context.Context, ti *auth.TokenInfo) *Principal {
	if ti != nil {
		return PrincipalOf(ti)
	}
	p, _ := ctx.Value(contextKey{}).(*Principal)
	return p
}
