package permission

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// OutcomeRevoked marks an audit entry for a grant the user took back in the panel.
const OutcomeRevoked = "revoked"

// ErrUnknownGrant is returned by RevokeGrant when the session holds no such grant (any more).
var ErrUnknownGrant = errors.New("permission: no such grant: the session ended, the grant expired, or it was revoked already")

// SessionGrants is what one session holds, for the panel. Sessions are named by their label only.
type SessionGrants struct {
	Session string        `json:"session"`
	Token   bool          `json:"token"` // calls made without an MCP session, under one OAuth grant or token
	Client  string        `json:"client,omitempty"`
	SignIn  string        `json:"sign_in,omitempty"`
	Grants  []Grant       `json:"grants"`
	Denied  []DeniedGrant `json:"denied,omitempty"`
	First   time.Time     `json:"-"` // earliest grant, for ordering
}

// DeniedGrant is a category refused for the rest of a session, and why.
type DeniedGrant struct {
	Category Category `json:"category"`
	Reason   string   `json:"reason"`
}

// SessionGrants lists every session holding a live grant or a denial, newest grant first. Grants the
// policy allows are not listed: they belong to no session (see Policies).
func (m *Manager) SessionGrants() []SessionGrants {
	now := m.clock()
	m.mu.RLock()
	out := make([]SessionGrants, 0, len(m.sessions))
	for key, s := range m.sessions {
		sg := SessionGrants{Session: m.label(key), Token: isTokenKey(key), Client: s.client, SignIn: s.signIn}
		for _, c := range AllCategories {
			if g, ok := s.grants[c]; ok && now.Before(g.ExpiresAt) {
				sg.Grants = append(sg.Grants, g)
				if sg.First.IsZero() || g.GrantedAt.Before(sg.First) {
					sg.First = g.GrantedAt
				}
			}
			if reason, ok := s.denied[c]; ok {
				sg.Denied = append(sg.Denied, DeniedGrant{Category: c, Reason: reason})
			}
		}
		if len(sg.Grants) > 0 || len(sg.Denied) > 0 {
			out = append(out, sg)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b SessionGrants) int {
		if c := b.First.Compare(a.First); c != 0 {
			return c
		}
		return strings.Compare(a.Session, b.Session)
	})
	return out
}

// RevokeGrant takes a category back from the session with this label (as SessionLabel shows it): its
// next call of that category asks again. by is the user in the panel, written to the audit log.
func (m *Manager) RevokeGrant(sessionLabel string, c Category, by Approver) error {
	if by.Via != ViaPanel && by.Via != ViaPage || !by.valid() {
		return errors.New("permission: RevokeGrant needs the user in the panel or on the approval page")
	}
	m.mu.Lock()
	now := m.clock()
	var key string
	var s *session
	for k, cand := range m.sessions {
		if m.label(k) == sessionLabel {
			key, s = k, cand
			break
		}
	}
	if s == nil {
		m.mu.Unlock()
		return ErrUnknownGrant
	}
	g, ok := s.grants[c]
	if !ok || !now.Before(g.ExpiresAt) {
		m.mu.Unlock()
		return ErrUnknownGrant
	}
	m.dropGrantLocked(key, s, c)
	m.mu.Unlock()
	m.record(Request{SessionKey: key, Category: c, Tool: "panel"}, OutcomeRevoked,
		string(c)+" grant revoked by "+by.String(), now)
	m.log.Info("permission: grant revoked", "session", sessionLabel, "category", c, "by", by.Via)
	return nil
}

// Policies is the add-on's policy for each category the server uses, with what the category allows.
func (m *Manager) Policies() []CategoryStatus {
	out := make([]CategoryStatus, 0, len(m.categories))
	for _, c := range m.categories {
		out = append(out, CategoryStatus{Category: c, Policy: m.policies[c], Warning: m.warnings[c]})
	}
	return out
}

// Uptime is how long the manager (and so the server) has been running.
func (m *Manager) Uptime() time.Duration { return m.clock().Sub(m.started) }

// RecordPanelAction writes a decision the user made in the panel outside the permission categories
// (such as revoking an OAuth sign-in) to the audit log, with no session.
func (m *Manager) RecordPanelAction(tool, client, detail string) {
	m.record(Request{Tool: tool, Client: client}, OutcomeRevoked, detail, m.clock())
}
