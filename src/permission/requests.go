package permission

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// NotificationTitle is the title the user looks for; refusals name it.
const NotificationTitle = "hamcp: permission request"

// notifyTimeout bounds how long a tool call waits for the notification to be posted.
const notifyTimeout = 10 * time.Second

// Pending is a request waiting for the user. It goes to the Notifier and the user's approve/deny API,
// never to the model.
type Pending struct {
	ID          string    `json:"id"`
	SessionKey  string    `json:"session_key"`
	Client      string    `json:"client,omitempty"`
	Tool        string    `json:"tool"`
	Category    Category  `json:"category"`
	ArgsSummary string    `json:"args_summary,omitempty"`
	Warning     string    `json:"warning"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	// Code is the one-time code, set only in what the Notifier receives. It is never serialized, so no
	// API can hand it out by accident.
	Code string `json:"-"`
}

// Message is the notification text: what is asked, what it allows, and the two ways to say yes.
func (p Pending) Message() string {
	who := p.Client
	if who == "" {
		who = "An assistant"
	}
	what := toolOrCall(p.Tool)
	if p.ArgsSummary != "" {
		what += " (" + p.ArgsSummary + ")"
	}
	return fmt.Sprintf("%s (session %s) asks for the **%s** permission to run %s.\n\n%s\n\n"+
		"To allow it for this session, tell the assistant the code **%s**, or approve request %s in the hamcp panel. "+
		"The code works once and expires at %s UTC. If you did not expect this, deny the request in the panel.",
		who, shortKey(p.SessionKey), p.Category, what, p.Warning, p.Code, p.ID, p.ExpiresAt.UTC().Format("15:04"))
}

type pendingReq struct {
	Pending
	attempts int         // wrong codes so far, under Manager.mu
	notified atomic.Bool // the Notifier accepted it, so the code can reach the user
}

func (m *Manager) newPendingLocked(r Request, s *session, now time.Time) (*pendingReq, error) {
	id, err := newRequestID()
	if err != nil {
		return nil, err
	}
	code, err := newCode()
	if err != nil {
		return nil, err
	}
	p := &pendingReq{Pending: Pending{
		ID: id, SessionKey: r.SessionKey, Client: r.Client, Tool: r.Tool, Category: r.Category,
		ArgsSummary: r.ArgsSummary, Warning: m.warnings[r.Category], CreatedAt: now,
		ExpiresAt: now.Add(m.codeTTL), Code: code,
	}}
	s.pending[r.Category] = p
	m.requests[id] = p
	return p, nil
}

func (m *Manager) dropPendingLocked(s *session, p *pendingReq) {
	if s.pending[p.Category] == p {
		delete(s.pending, p.Category)
	}
	delete(m.requests, p.ID)
}

// notify posts the request once, when it is made. A failure leaves the panel as the way to approve.
func (m *Manager) notify(ctx context.Context, p *pendingReq) {
	if m.notifier == nil {
		return
	}
	// The model's call may be cancelled; the user should still see the request.
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
	defer cancel()
	if err := m.notifier.Notify(nctx, p.Pending); err != nil {
		m.log.Warn("permission: could not post the request notification; the user can still approve it in the panel",
			"request", p.ID, "err", err)
		return
	}
	p.notified.Store(true)
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

// Pending lists the requests waiting for the user, oldest first, without their codes.
func (m *Manager) Pending() []Pending {
	now := m.clock()
	m.mu.RLock()
	out := make([]Pending, 0, len(m.requests))
	for _, p := range m.requests {
		if now.Before(p.ExpiresAt) {
			q := p.Pending
			q.Code = ""
			out = append(out, q)
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

// Approve grants the request's category to its session (the user said yes in the panel).
func (m *Manager) Approve(ctx context.Context, requestID string) error {
	return m.answer(requestID, true)
}

// Deny refuses the request's category for the rest of its session.
func (m *Manager) Deny(ctx context.Context, requestID string) error {
	return m.answer(requestID, false)
}

func (m *Manager) answer(requestID string, approve bool) error {
	m.mu.Lock()
	now := m.clock()
	p := m.requests[requestID]
	if p == nil {
		m.mu.Unlock()
		return ErrUnknownRequest
	}
	s := m.sessions[p.SessionKey]
	if s == nil {
		// Sessions are only dropped with their requests, so this means a bug elsewhere; refuse safely.
		delete(m.requests, requestID)
		m.mu.Unlock()
		return ErrUnknownRequest
	}
	m.dropPendingLocked(s, p)
	if !now.Before(p.ExpiresAt) {
		m.mu.Unlock()
		m.withdraw(p.Pending)
		return ErrRequestExpired
	}
	r := Request{SessionKey: p.SessionKey, Client: p.Client, Tool: p.Tool, Category: p.Category, ArgsSummary: p.ArgsSummary}
	if approve {
		m.grantLocked(p.SessionKey, s, p.Category, ViaApproval, now)
	} else {
		s.denied[p.Category] = "the user denied request " + p.ID
	}
	m.mu.Unlock()
	m.withdraw(p.Pending)
	if approve {
		m.record(r, store.OutcomeGranted, "the user approved request "+p.ID, now)
	} else {
		m.record(r, store.OutcomeDenied, "the user denied request "+p.ID, now)
	}
	return nil
}
