// Package haauth is the simulated Home Assistant's login side: the auth providers list, the
// /auth/authorize login page, the login flow, the token and revoke endpoints, with HA's shapes,
// status codes and IndieAuth client rules. Users log in with a username and password (HA's
// "homeassistant" provider); the tokens it issues are opaque strings the simulator's REST and
// WebSocket APIs resolve through CurrentUser.
package haauth

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Lifetimes HA uses (homeassistant/auth/const.py).
const (
	AccessTokenLifetime  = 30 * time.Minute
	CodeLifetime         = 10 * time.Minute
	RefreshTokenIdleLife = 90 * 24 * time.Hour
	flowLifetime         = 30 * time.Minute
)

// User is one account of the "homeassistant" auth provider.
type User struct {
	ID, Name, Username, Password string
	Admin                        bool
}

// Option configures a Provider.
type Option func(*Provider)

// WithClock replaces time.Now (tests that age codes and tokens).
func WithClock(now func() time.Time) Option { return func(p *Provider) { p.now = now } }

// Provider is the simulated HA auth system. It is safe for concurrent use.
type Provider struct {
	users []User
	now   func() time.Time

	mu      sync.Mutex
	flows   map[string]*flow
	codes   map[string]*authCode
	refresh map[string]*refreshToken // by token string
	access  map[string]*accessToken  // by token string
}

type flow struct {
	clientID, redirectURI string
	ip                    string
	created               time.Time
}

type authCode struct {
	clientID, userID string
	expires          time.Time
}

type refreshToken struct {
	id, clientID, userID string
	lastUsed             time.Time
}

type accessToken struct {
	refreshID, userID string
	expires           time.Time
}

// New returns a provider with these users. The first user is the owner, as the account made
// during onboarding is in HA.
func New(users []User, opts ...Option) *Provider {
	p := &Provider{
		users:   append([]User(nil), users...),
		now:     time.Now,
		flows:   map[string]*flow{},
		codes:   map[string]*authCode{},
		refresh: map[string]*refreshToken{},
		access:  map[string]*accessToken{},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Register adds the auth routes to mux.
func (p *Provider) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /auth/providers", p.providers)
	mux.HandleFunc("GET /auth/authorize", p.authorizePage)
	mux.HandleFunc("/auth/login_flow", p.loginFlowIndex)
	mux.HandleFunc("/auth/login_flow/{flow_id}", p.loginFlowStep)
	mux.HandleFunc("POST /auth/token", p.token)
	mux.HandleFunc("POST /auth/revoke", p.revoke)
}

// CurrentUser resolves an access token the provider issued and that is still valid.
func (p *Provider) CurrentUser(accessToken string) (User, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.access[accessToken]
	if !ok || !p.now().Before(at.expires) {
		return User{}, false
	}
	return p.userByID(at.userID)
}

// CurrentUserResult is the result of the WebSocket command auth/current_user for u.
func (p *Provider) CurrentUserResult(u User) map[string]any {
	p.mu.Lock()
	owner := len(p.users) > 0 && p.users[0].ID == u.ID
	p.mu.Unlock()
	return map[string]any{
		"id":       u.ID,
		"name":     u.Name,
		"is_owner": owner,
		"is_admin": u.Admin,
		"credentials": []map[string]any{
			{"auth_provider_type": "homeassistant", "auth_provider_id": nil},
		},
		"mfa_modules": []map[string]any{{"id": "totp", "name": "Authenticator app", "enabled": false}},
	}
}

// UserList is the result of the WebSocket command config/auth/list (an administrator's command in
// HA) for the provider's users, in HA's shape: administrators are in the "system-admin" group,
// everyone else in "system-users"; the owner is the first user.
func (p *Provider) UserList() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]map[string]any, 0, len(p.users))
	for i, u := range p.users {
		group := "system-users"
		if u.Admin {
			group = "system-admin"
		}
		out = append(out, map[string]any{
			"id": u.ID, "username": u.Username, "name": u.Name, "is_owner": i == 0, "is_active": true,
			"local_only": false, "system_generated": false, "group_ids": []string{group},
			"credentials": []map[string]any{{"type": "homeassistant"}},
		})
	}
	return out
}

// SetAdmin moves a user in or out of the administrators group, as the Users settings page does.
// It reports whether the user exists.
func (p *Provider) SetAdmin(id string, admin bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.users {
		if p.users[i].ID == id {
			p.users[i].Admin = admin
			return true
		}
	}
	return false
}

// RemoveUser deletes a user and every login session of theirs, as deleting a user in HA does. It
// reports whether the user existed.
func (p *Provider) RemoveUser(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.IndexFunc(p.users, func(u User) bool { return u.ID == id })
	if i < 0 {
		return false
	}
	p.users = slices.Delete(p.users, i, i+1)
	for t, rt := range p.refresh {
		if rt.userID == id {
			p.dropRefreshLocked(t, rt)
		}
	}
	return true
}

// RefreshTokenCount is how many login sessions (refresh tokens) are live, so tests can check that
// a client revoked what it no longer needs.
func (p *Provider) RefreshTokenCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.refresh)
}

func (p *Provider) userByID(id string) (User, bool) {
	for _, u := range p.users {
		if u.ID == id {
			return u, true
		}
	}
	return User{}, false
}

// tidyLocked drops what has expired so long-running simulators do not grow.
func (p *Provider) tidyLocked(now time.Time) {
	for id, f := range p.flows {
		if now.Sub(f.created) > flowLifetime {
			delete(p.flows, id)
		}
	}
	for c, ac := range p.codes {
		if !now.Before(ac.expires) {
			delete(p.codes, c)
		}
	}
	for t, at := range p.access {
		if !now.Before(at.expires) {
			delete(p.access, t)
		}
	}
	for t, rt := range p.refresh {
		if now.Sub(rt.lastUsed) > RefreshTokenIdleLife {
			p.dropRefreshLocked(t, rt)
		}
	}
}

func (p *Provider) dropRefreshLocked(token string, rt *refreshToken) {
	delete(p.refresh, token)
	for t, at := range p.access {
		if at.refreshID == rt.id {
			delete(p.access, t)
		}
	}
}

// hexID is HA's uuid4().hex shape: 32 lowercase hex digits.
func hexID() string { return randomHex(16) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("haauth: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}
