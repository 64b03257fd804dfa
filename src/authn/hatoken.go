package authn

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// ErrRejected is what a TokenCheck returns when Home Assistant says the token is not valid.
var ErrRejected = errors.New("rejected by Home Assistant")

// TokenCheck asks Home Assistant whether a token is valid (GET /api/ with that token).
// It returns nil, an error wrapping ErrRejected for a 401, or another error when HA cannot answer.
type TokenCheck func(ctx context.Context, token string) error

// HAToken verifies Home Assistant long-lived (or short-lived) access tokens against HA itself,
// remembering answers briefly so every MCP request does not cost a round trip to HA.
type HAToken struct {
	Check    TokenCheck
	TTL      time.Duration // how long a valid token is trusted without asking again (default 60 s)
	NegTTL   time.Duration // how long a rejected token stays rejected (default 10 s)
	Now      func() time.Time
	mu       sync.Mutex
	cache    map[string]cached
	lastTidy time.Time
}

type cached struct {
	ok      bool
	expires time.Time
}

// Verify implements Verifier. It claims every token: it is the last verifier in the chain.
func (h *HAToken) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	fp := Fingerprint(token)
	info := &auth.TokenInfo{
		UserID: "ha-token:" + fp,
		Scopes: []string{ScopeFull},
		Extra:  map[string]any{"kind": "ha_token", "grant_key": "ha-token:" + fp},
	}
	h.mu.Lock()
	if h.cache == nil {
		h.cache = map[string]cached{}
	}
	c, hit := h.cache[fp]
	h.mu.Unlock()
	t := now()
	if hit && t.Before(c.expires) {
		if c.ok {
			return info, nil
		}
		return nil, ErrInvalidToken
	}
	err := h.Check(ctx, token)
	switch {
	case err == nil:
		h.remember(fp, true, t.Add(orDefault(h.TTL, time.Minute)), t)
		return info, nil
	case errors.Is(err, ErrRejected):
		h.remember(fp, false, t.Add(orDefault(h.NegTTL, 10*time.Second)), t)
		return nil, ErrInvalidToken
	default:
		return nil, errors.Join(ErrUnavailable, err)
	}
}

func (h *HAToken) remember(fp string, ok bool, until, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cache[fp] = cached{ok: ok, expires: until}
	if now.Sub(h.lastTidy) > time.Minute {
		for k, v := range h.cache {
			if now.After(v.expires) {
				delete(h.cache, k)
			}
		}
		h.lastTidy = now
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
