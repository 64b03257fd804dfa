package permission

import "time"

// States a category can be in for a session.
const (
	StateGranted      = "granted"
	StateDenied       = "denied"
	StatePending      = "pending"
	StateNotRequested = "not_requested"
)

// CategoryStatus is what ha_get_permissions shows the model for one category.
type CategoryStatus struct {
	Category  Category  `json:"category"`
	Policy    Policy    `json:"policy"`
	State     string    `json:"state"`
	Via       string    `json:"via,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	RequestID string    `json:"request_id,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Warning   string    `json:"warning"`
	HowTo     string    `json:"how_to,omitempty"`
}

// Grants lists the categories the session may use now, including those the policy allows.
func (m *Manager) Grants(sessionKey string) []Grant {
	now := m.clock()
	var out []Grant
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.sessions[sessionKey]
	for _, c := range AllCategories {
		switch m.policies[c] {
		case PolicyAllow:
			out = append(out, Grant{Category: c, GrantedAt: m.started, Via: ViaPolicy})
		case PolicyAsk:
			if s == nil {
				continue
			}
			if g, ok := s.grants[c]; ok && now.Before(g.ExpiresAt) {
				out = append(out, g)
			}
		}
	}
	return out
}

// Status says, for each category the server uses, where the session stands and how to get further.
func (m *Manager) Status(sessionKey string) []CategoryStatus {
	now := m.clock()
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.sessions[sessionKey]
	out := make([]CategoryStatus, 0, len(m.categories))
	for _, c := range m.categories {
		st := CategoryStatus{Category: c, Policy: m.policies[c], Warning: m.warnings[c]}
		switch {
		case st.Policy == PolicyAllow:
			st.State, st.Via = StateGranted, ViaPolicy
		case st.Policy == PolicyDeny:
			st.State = StateDenied
			st.Reason = "the add-on option " + optionName(c) + " is set to deny"
			st.HowTo = "Only the user can change this, in the add-on configuration."
		case s != nil && s.denied[c] != "":
			st.State, st.Reason = StateDenied, s.denied[c]
			st.HowTo = "Denied for the rest of this session; a new session will ask again."
		case s != nil && s.grants[c].ExpiresAt.After(now):
			g := s.grants[c]
			st.State, st.Via, st.ExpiresAt = StateGranted, g.Via, g.ExpiresAt
		case s != nil && s.pending[c] != nil && s.pending[c].ExpiresAt.After(now):
			p := s.pending[c]
			st.State, st.RequestID = StatePending, p.ID
			st.HowTo = m.howTo(p)
		default:
			st.State = StateNotRequested
			st.HowTo = "Call a tool of this category; the user will be asked to allow it for this session."
		}
		out = append(out, st)
	}
	return out
}
