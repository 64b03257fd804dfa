package permission

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/store"
)

// Scope is where a caller's permission grants are filed.
type Scope struct {
	// Session is the key of the MCP session the call belongs to (stdio, SSH, Streamable HTTP,
	// legacy SSE): its grants end with the session.
	Session string
	// Grant, for a sessionless HTTP call, names the OAuth grant or token the call was made with
	// (authn.Principal.Grant): its grants last across requests and survive a restart until they
	// expire. Never the token itself.
	Grant string
}

// ScopeOf is the scope of a call by p: its session when it has one (session is the transport's key
// for it), else p's grant. The zero Scope (no session, nobody) files nothing: Key is "".
func ScopeOf(p *authn.Principal, session string) Scope {
	if session != "" {
		return Scope{Session: session}
	}
	return Scope{Grant: p.Grant()}
}

// Key is the scope as the session key the Manager's methods take (Request.SessionKey), "" for the
// zero Scope. How a grant's scope is written is the Manager's own business: read it only through
// Scope.
func (s Scope) Key() string {
	switch {
	case s.Session != "":
		return s.Session
	case s.Grant != "":
		return tokenPrefix + s.Grant
	}
	return ""
}

// tokenPrefix marks the keys of grant scopes, the ones written to the store
// (permission_grants.grant_key): "token:ha-token:<fingerprint>", "token:oauth:<family id>", and
// for a token known only by its user "token:<user id>". Rows written by earlier builds use the same
// form, so they keep loading.
const tokenPrefix = "token:"

func isTokenKey(key string) bool { return strings.HasPrefix(key, tokenPrefix) }

type session struct {
	client, signIn string // who the session's calls came from, as last seen: the panel names them
	grants         map[Category]Grant
	denied         map[Category]string // reason, for the rest of the session
	pending        map[Category]*pendingReq
	eliciting      map[Category]chan struct{} // closed when the one in-flight elicitation ends
}

func newSession() *session {
	return &session{
		grants: map[Category]Grant{}, denied: map[Category]string{}, pending: map[Category]*pendingReq{},
		eliciting: map[Category]chan struct{}{},
	}
}

func (s *session) saw(r Request) {
	if r.Client != "" {
		s.client = r.Client
	}
	if r.SignIn != "" {
		s.signIn = r.SignIn
	}
}

func (s *session) empty() bool {
	return len(s.grants) == 0 && len(s.denied) == 0 && len(s.pending) == 0 && len(s.eliciting) == 0
}

// sessionLocked returns the session's state, creating it; creation is also when forgotten sessions
// (never ended by their transport) are swept, so memory stays bounded without a timer.
func (m *Manager) sessionLocked(key string, now time.Time) *session {
	if s := m.sessions[key]; s != nil {
		return s
	}
	if len(m.sessions) >= m.sweepAt {
		m.sweepLocked(now)
		m.sweepAt = max(64, 2*len(m.sessions))
	}
	s := newSession()
	m.sessions[key] = s
	return s
}

func (m *Manager) sweepLocked(now time.Time) {
	var stale []Pending
	for key, s := range m.sessions {
		for c, g := range s.grants {
			if !now.Before(g.ExpiresAt) {
				m.dropGrantLocked(key, s, c)
			}
		}
		for _, p := range s.pending {
			if !now.Before(p.ExpiresAt) {
				m.dropPendingLocked(s, p)
				stale = append(stale, p.Pending)
			}
		}
		if s.empty() {
			delete(m.sessions, key)
		}
	}
	m.withdraw(stale...)
}

func (m *Manager) grantLocked(key string, s *session, c Category, via string, now time.Time) {
	g := Grant{Category: c, GrantedAt: now, ExpiresAt: now.Add(m.grantTTL), Via: via}
	s.grants[c] = g
	if isTokenKey(key) {
		m.enqueue(grantOp{rec: store.GrantRecord{Key: key, Category: string(c), Via: via, GrantedAt: g.GrantedAt, ExpiresAt: g.ExpiresAt}})
	}
}

func (m *Manager) dropGrantLocked(key string, s *session, c Category) {
	delete(s.grants, c)
	if isTokenKey(key) {
		m.enqueue(grantOp{del: true, rec: store.GrantRecord{Key: key, Category: string(c)}})
	}
}

// EndSession forgets everything the session held: grants, denials and pending requests.
func (m *Manager) EndSession(sessionKey string) {
	m.mu.Lock()
	s := m.sessions[sessionKey]
	delete(m.sessions, sessionKey)
	var stale []Pending
	if s != nil {
		for _, p := range s.pending {
			m.dropPendingLocked(s, p)
			stale = append(stale, p.Pending)
		}
	}
	stale = append(stale, m.dropActionsLocked(sessionKey)...)
	if isTokenKey(sessionKey) {
		m.enqueue(grantOp{del: true, all: true, rec: store.GrantRecord{Key: sessionKey}})
	}
	m.mu.Unlock()
	m.withdraw(stale...)
}

func (m *Manager) loadGrants() error {
	if m.store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs, err := m.store.LoadGrants(ctx, m.clock())
	if err != nil {
		return fmt.Errorf("permission: reload token grants: %w", err)
	}
	for _, g := range recs {
		c := Category(g.Category)
		if !c.valid() || !isTokenKey(g.Key) {
			continue // written by a newer build; leave it for that build
		}
		s := m.sessions[g.Key]
		if s == nil {
			s = newSession()
			m.sessions[g.Key] = s
		}
		s.grants[c] = Grant{Category: c, GrantedAt: g.GrantedAt, ExpiresAt: g.ExpiresAt, Via: g.Via}
	}
	return nil
}
