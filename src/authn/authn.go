// Package authn decides who a bearer token belongs to. Verifiers form one chain: each either
// claims a token (and accepts or rejects it) or passes it on, so OAuth access tokens issued by
// hamcp and Home Assistant long-lived tokens work side by side on the same endpoint.
package authn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

var (
	// ErrNotMine means a verifier does not handle this kind of token; the chain tries the next.
	ErrNotMine = errors.New("token not handled by this verifier")
	// ErrInvalidToken means the token was recognised and is not valid (unknown, expired, revoked).
	ErrInvalidToken = errors.New("invalid access token")
	// ErrForbidden means the token is valid but its owner may not use hamcp (answered with 403).
	ErrForbidden = errors.New("this Home Assistant user may not use hamcp")
	// ErrUnavailable means the token could not be checked right now (e.g. Home Assistant is down).
	ErrUnavailable = errors.New("token cannot be verified right now")
)

// Verifier checks one kind of bearer token.
type Verifier interface {
	Verify(ctx context.Context, token string) (*auth.TokenInfo, error)
}

// Chain tries verifiers in order until one claims the token.
type Chain []Verifier

// Verify returns the token's info, ErrInvalidToken when nobody accepts it, or ErrUnavailable.
func (c Chain) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if token == "" {
		return nil, ErrInvalidToken
	}
	for _, v := range c {
		info, err := v.Verify(ctx, token)
		if errors.Is(err, ErrNotMine) {
			continue
		}
		return info, err
	}
	return nil, ErrInvalidToken
}

// Fingerprint is a stable, non-reversible id for a token, safe to log and to key grants by.
func Fingerprint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8])
}

// Scopes hamcp understands.
const (
	ScopeFull     = "hamcp:full"
	ScopeReadOnly = "hamcp:read"
)

// ReadOnly reports whether a token only grants read-only access (Principal.ReadOnly).
func ReadOnly(info *auth.TokenInfo) bool { return PrincipalOf(info).ReadOnly() }
