package permission

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// NotificationTitle is the title of the Home Assistant notification that points the user at a request.
const NotificationTitle = "hamcp: permission request"

// notifyTimeout bounds how long a tool call waits for the notification to be posted.
const notifyTimeout = 10 * time.Second

// Pending is a request waiting for the user. It goes to the Notifier, the approval page and the panel;
// the model sees only its id and link (in the refusal). Nothing in it grants anything.
type Pending struct {
	ID string `json:"id"`
	// SessionKey is the raw session id or token key: never serialized, so no API can show one session
	// another's key. Session is the label shown instead.
	SessionKey  string    `json:"-"`
	Session     string    `json:"session"`
	Client      string    `json:"client,omitempty"`
	SignIn      string    `json:"sign_in,omitempty"`
	Tool        string    `json:"tool"`
	Category    Category  `json:"category"`
	ArgsSummary string    `json:"args_summary,omitempty"`
	Warning     string    `json:"warning"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	// Link is the approval page for this request ("" when no page is served). It carries a 256-bit
	// secret so nobody can find the page of a request they were not given, but it grants nothing by
	// itself: the page demands a Home Assistant administrator's login.
	Link string `json:"-"`
	// Owner is the credential that made the request (see Request.Owner).
	Owner string `json:"-"`
}

// Message is the Home Assistant notification: what is asked and where to answer it. It goes through
// Home Assistant, so the model can read it: the link is included because it is useless without an
// administrator's login, and nothing here can grant anything.
func (p Pending) Message() string {
	who := p.Client
	if who == "" {
		who = "An assistant"
	}
	where := "Approve or deny it in the hamcp panel in the sidebar."
	if p.Link != "" {
		where = fmt.Sprintf("Approve or deny it on [hamcp's approval page](%s) (you log in to Home Assistant there as an "+
			"administrator) or in the hamcp panel.", p.Link)
	}
	if p.Category == ConfirmKind {
		return fmt.Sprintf("%s (%s) asks you to confirm: %s\n\n%s The request expires at %s UTC. If you did not ask for it, deny it.",
			who, p.Session, p.Warning, where, p.ExpiresAt.UTC().Format("15:04"))
	}
	return fmt.Sprintf("%s (%s) asks for the **%s** permission to run %s.\n\n%s\n\n%s "+
		"The request expires at %s UTC. If you did not expect it, deny it.",
		who, p.Session, p.Category, describeCall(p.Tool, p.ArgsSummary), p.Warning, where, p.ExpiresAt.UTC().Format("15:04"))
}

// Approver is who answered a request, written to the audit log with the decision.
type Approver struct {
	Via    string // ViaPage, ViaPanel or ViaOwner
	UserID string // the Home Assistant user id, or the owner's credential key
	Name   string // the Home Assistant user's name, for people reading the log
}

// Where a request was answered.
const (
	ViaPage  = "approval_page" // hamcp's approval page, after a Home Assistant administrator login
	ViaPanel = "panel"         // the add-on panel, through Home Assistant's ingress
	ViaOwner = "owner"         // the credential that made the request (deny only)
)

func (a Approver) String() string {
	who := a.Name
	if who == "" {
		who = "the session's owner"
	}
	if a.UserID != "" && a.Via != ViaOwner {
		who += " (Home Assistant user " + a.UserID + ")"
	}
	switch a.Via {
	case ViaPage:
		return who + " on the approval page"
	case ViaPanel:
		return who + " in the hamcp panel"
	}
	return who
}

func (a Approver) valid() bool {
	switch a.Via {
	case ViaPage, ViaPanel:
		return a.UserID != ""
	case ViaOwner:
		return true
	}
	return false
}

// outcomeViewed marks an audit entry for a person looking at a request on the approval page.
const outcomeViewed = "request_viewed"

// outcomeRefused marks an audit entry for a login the approval page turned away (not an administrator).
const outcomeRefused = "approval_refused"

type pendingReq struct {
	Pending
	linkHash [32]byte
	done     chan struct{} // closed when the request is answered, expires or its session ends
	urlAsked bool          // a call is showing the page in its client (URL elicitation), under Manager.mu
	action   *string       // the call key of a confirmation request (confirm.go); nil for a permission request
}

func (m *Manager) newPendingLocked(r Request, s *session, now time.Time) (*pendingReq, error) {
	var b [8]byte
	var secret [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("permission: generate request id: %w", err)
	}
	if _, err := rand.Read(secret[:]); err != nil {
		return nil, fmt.Errorf("permission: generate approval link: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(secret[:])
	p := &pendingReq{Pending: Pending{
		ID: "req_" + hex.EncodeToString(b[:]), SessionKey: r.SessionKey, Session: m.label(r.SessionKey),
		Client: r.Client, Tool: r.Tool, Category: r.Category, ArgsSummary: r.ArgsSummary, Warning: m.warnings[r.Category],
		CreatedAt: now, ExpiresAt: now.Add(m.requestTTL), Owner: r.Owner, SignIn: r.SignIn,
	}, linkHash: sha256.Sum256([]byte(token)), done: make(chan struct{})}
	if m.link != nil {
		p.Link = m.link(token)
	}
	s.pending[r.Category] = p
	m.requests[p.ID] = p
	m.byLink[p.linkHash] = p
	return p, nil
}

// dropPendingLocked forgets a request and wakes whoever waits on it.
func (m *Manager) dropPendingLocked(s *session, p *pendingReq) {
	if s != nil && s.pending[p.Category] == p {
		delete(s.pending, p.Category)
	}
	delete(m.requests, p.ID)
	delete(m.byLink, p.linkHash)
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}

// label names a session for people (the page, the panel, the notification) without giving away its id:
// a keyed hash, so it cannot be turned back into the id or guessed from it.
func (m *Manager) label(key string) string {
	h := hmac.New(sha256.New, m.labelKey[:])
	h.Write([]byte(key))
	return "session " + hex.EncodeToString(h.Sum(nil)[:4])
}

// SessionLabel is what people see for a session instead of its id.
func (m *Manager) SessionLabel(sessionKey string) string { return m.label(sessionKey) }

// notify posts the request once, when it is made. A failure leaves the page and the panel.
func (m *Manager) notify(ctx context.Context, p *pendingReq) {
	if m.notifier == nil {
		return
	}
	// The model's call may be cancelled; the user should still see the request.
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
	defer cancel()
	if err := m.notifier.Notify(nctx, p.Pending); err != nil {
		m.log.Warn("permission: could not post the request notification; the approval page and the panel still work",
			"request", p.ID, "err", err)
		return
	}
	// Answered while the notification was being posted: take it down again.
	m.mu.RLock()
	live := m.requests[p.ID] == p
	m.mu.RUnlock()
	if !live {
		m.withdraw(p.Pending)
	}
}

// withdraw takes notifications down in the background; nobody waits on a cleanup.
func (m *Manager) withdraw(ps ...Pending) {
	if m.notifier == nil || len(ps) == 0 {
		return
	}
	run := func() {
		for _, p := range ps {
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			if err := m.notifier.Withdraw(ctx, p); err != nil {
				m.log.Warn("permission: could not withdraw the request notification", "request", p.ID, "err", err)
			}
			cancel()
		}
	}
	if !m.bg.Go(run) {
		run() // closing: do it now rather than lose it
	}
}

// Pending lists every request waiting for the user, oldest first: for the panel, which Home Assistant's
// ingress shows only to the user.
func (m *Manager) Pending() []Pending { return m.pendingWhere(func(*pendingReq) bool { return true }) }

// PendingFor lists the requests made with one credential (Request.Owner), for that credential's API.
func (m *Manager) PendingFor(owner string) []Pending {
	if owner == "" {
		return []Pending{}
	}
	return m.pendingWhere(func(p *pendingReq) bool { return p.Owner == owner })
}

func (m *Manager) pendingWhere(keep func(*pendingReq) bool) []Pending {
	now := m.clock()
	m.mu.RLock()
	out := make([]Pending, 0, len(m.requests))
	for _, p := range m.requests {
		if now.Before(p.ExpiresAt) && keep(p) {
			out = append(out, p.Pending)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Pending) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// ByLink finds the request an approval link was made for. The secret is looked up by its SHA-256, so
// neither the stored value nor the lookup's timing reveals it. ErrRequestExpired when it ran out,
// ErrUnknownRequest when there is no such request (any more).
func (m *Manager) ByLink(secret string) (Pending, error) {
	if secret == "" || len(secret) > 128 {
		return Pending{}, ErrUnknownRequest
	}
	return m.lookup(func() *pendingReq { return m.byLink[sha256.Sum256([]byte(secret))] })
}

// Request returns a pending request by id, for a page that already checked the link.
func (m *Manager) Request(id string) (Pending, error) {
	return m.lookup(func() *pendingReq { return m.requests[id] })
}

func (m *Manager) lookup(find func() *pendingReq) (Pending, error) {
	now := m.clock()
	m.mu.RLock()
	defer m.mu.RUnlock()
	p := find()
	switch {
	case p == nil:
		return Pending{}, ErrUnknownRequest
	case !now.Before(p.ExpiresAt):
		return Pending{}, ErrRequestExpired
	}
	return p.Pending, nil
}

// Approve grants the request's category to its session. Only the user may call it: the approval page
// after a Home Assistant administrator logged in, or the panel behind Home Assistant's ingress. by is
// written to the audit log.
func (m *Manager) Approve(ctx context.Context, requestID string, by Approver) error {
	if by.Via == ViaOwner || !by.valid() {
		return fmt.Errorf("permission: Approve needs the user on the approval page or in the panel (Approver.Via %q, user %q)", by.Via, by.UserID)
	}
	return m.answer(requestID, true, by)
}

// Deny refuses the request's category for the rest of its session (the answer sticks). by is the user
// on the page or in the panel; the session's own credential uses DenyAsOwner.
func (m *Manager) Deny(ctx context.Context, requestID string, by Approver) error {
	if by.Via == ViaOwner || !by.valid() {
		return fmt.Errorf("permission: Deny needs the user on the approval page or in the panel (Approver.Via %q, user %q)", by.Via, by.UserID)
	}
	return m.answer(requestID, false, by)
}

// DenyAsOwner lets the credential that made a request withdraw it, denying the category for its
// session. Any other credential gets ErrNotOwner, whoever it belongs to.
func (m *Manager) DenyAsOwner(ctx context.Context, requestID, owner string) error {
	m.mu.RLock()
	p := m.requests[requestID]
	mine := p != nil && owner != "" && hmac.Equal([]byte(p.Owner), []byte(owner))
	m.mu.RUnlock()
	switch {
	case p == nil:
		return ErrUnknownRequest
	case !mine:
		return ErrNotOwner
	}
	return m.answer(requestID, false, Approver{Via: ViaOwner})
}

// RecordView audits that a person saw a request on the approval page (or was turned away from it).
func (m *Manager) RecordView(requestID string, by Approver, refused string) {
	m.mu.RLock()
	p := m.requests[requestID]
	m.mu.RUnlock()
	if p == nil {
		return
	}
	r := Request{SessionKey: p.SessionKey, Client: p.Client, Tool: p.Tool, Category: p.Category, ArgsSummary: p.ArgsSummary}
	if refused != "" {
		m.record(r, outcomeRefused, "request "+p.ID+" not shown to "+by.String()+": "+refused, m.clock())
		return
	}
	m.record(r, outcomeViewed, "request "+p.ID+" shown to "+by.String(), m.clock())
}

func (m *Manager) answer(requestID string, approve bool, by Approver) error {
	m.mu.Lock()
	now := m.clock()
	p := m.requests[requestID]
	if p == nil {
		m.mu.Unlock()
		return ErrUnknownRequest
	}
	if p.action != nil {
		return m.answerActionLocked(p, approve, by, now)
	}
	s := m.sessions[p.SessionKey]
	if s == nil {
		// Sessions are only dropped with their requests, so this means a bug elsewhere; refuse safely.
		m.dropPendingLocked(nil, p)
		m.mu.Unlock()
		return ErrUnknownRequest
	}
	if !now.Before(p.ExpiresAt) {
		m.dropPendingLocked(s, p)
		m.mu.Unlock()
		m.withdraw(p.Pending)
		return ErrRequestExpired
	}
	r := Request{SessionKey: p.SessionKey, Client: p.Client, Tool: p.Tool, Category: p.Category, ArgsSummary: p.ArgsSummary}
	if approve {
		m.grantLocked(p.SessionKey, s, p.Category, ViaApproval, now)
	} else {
		s.denied[p.Category] = "denied by " + by.String() + " (request " + p.ID + ")"
	}
	m.dropPendingLocked(s, p)
	m.mu.Unlock()
	m.withdraw(p.Pending)
	if approve {
		m.record(r, store.OutcomeGranted, "request "+p.ID+" approved by "+by.String(), now)
	} else {
		m.record(r, store.OutcomeDenied, "request "+p.ID+" denied by "+by.String(), now)
	}
	return nil
}
