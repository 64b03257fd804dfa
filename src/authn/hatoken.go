package authn

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/sync/singleflight"
)

// ErrRejected is what a TokenCheck returns when Home Assistant says the token is not valid.
var ErrRejected = errors.New("rejected by Home Assistant")

// TokenCheck asks Home Assistant who owns a token. It returns the HA user id, an error wrapping
// ErrRejected when HA refuses the token, ErrForbidden when the user may not use hamcp (not an
// administrator), or another error when HA cannot answer.
type TokenCheck func(ctx context.Context, token string) (userID string, err error)

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
	// checks makes the requests that find the same token unchecked share one question to HA:
	// when a busy client's cache entry expires, 64 waiting requests cost one round trip, not 64.
	checks singleflight.Group
}

type cached struct {
	err     error // nil: valid
	user    string
	expires time.Time
}

// Verify implements Verifier. It claims every token: it is the last verifier in the chain.
func (h *HAToken) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	fp := Fingerprint(token)
	info := func(user string) *auth.TokenInfo {
		return (&Principal{Kind: KindHAToken, UserID: user, Scopes: []string{ScopeFull}, GrantID: fp}).TokenInfo(time.Time{})
	}
	h.mu.Lock()
	if h.cache == nil {
		h.cache = map[string]cached{}
	}
	c, hit := h.cache[fp]
	h.mu.Unlock()
	t := now()
	if hit && t.Before(c.expires) {
		if c.err != nil {
			return nil, c.err
		}
		return info(c.user), nil
	}
	user, err := h.check(ctx, fp, token)
	switch {
	case err == nil:
		h.remember(fp, cached{user: user, expires: t.Add(orDefault(h.TTL, time.Minute))}, t)
		return info(user), nil
	case errors.Is(err, ErrRejected):
		h.remember(fp, cached{err: ErrInvalidToken, expires: t.Add(orDefault(h.NegTTL, 10*time.Second))}, t)
		return nil, ErrInvalidToken
	case errors.Is(err, ErrForbidden):
		h.remember(fp, cached{err: err, expires: t.Add(orDefault(h.NegTTL, 10*time.Second))}, t)
		return nil, err
	default:
		return nil, errors.Join(ErrUnavailable, err)
	}
}

// check asks HA once for all the requests waiting on the same token. The shared question is not
// tied to the first caller's context (its cancellation must not fail the others); each caller
// still stops waiting when its own context ends.
func (h *HAToken) check(ctx context.Context, fp, token string) (string, error) {
	ch := h.checks.DoChan(fp, func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkTimeout)
		defer cancel()
		return h.Check(cctx, token)
	})
	select {
	case r := <-ch:
		user, _ := r.Val.(string)
		return user, r.Err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// checkTimeout bounds one shared question to Home Assistant.
const checkTimeout = 15 * time.Second

func (h *HAToken) remember(fp string, c cached, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cache[fp] = c
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
