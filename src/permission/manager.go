package permission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// Notifier posts a request where only the user sees it (implemented elsewhere with a Home Assistant
// persistent notification). The message contains the one-time code; it must never reach the model.
// Withdraw may be called for a request that was never posted or is already gone, and must then do nothing.
type Notifier interface {
	Notify(ctx context.Context, p Pending) error
	Withdraw(ctx context.Context, p Pending) error
}

// Options configure a Manager. The zero value of every field has a sensible default.
type Options struct {
	Policies   map[Category]Policy // missing categories are PolicyAsk
	Categories []Category          // listed by Status; default filesystem, database, command (add HubAdmin with the Hubitat tools)
	Warnings   map[Category]string // overrides of the built-in warnings, e.g. to name the configured folders
	GrantTTL   time.Duration       // default 8h; a grant also ends with its session
	CodeTTL    time.Duration       // lifetime of a pending request and its one-time code, default 10 min
	// CodeArgument is the tool argument the model puts the user's code in, named in refusals.
	CodeArgument string       // default "permission_code"
	Store        *store.Store // audit log and token-level grants; nil keeps both in memory only (tests, tools)
	Notifier     Notifier     // may be nil: then the user approves in the panel only
	Clock        func() time.Time
	Logger       *slog.Logger
}

// Request is one privileged tool call asking to go ahead.
type Request struct {
	SessionKey  string // MCP session id; for sessionless HTTP the token's grant key (see TokenKey)
	Client      string // client name/version for the audit log
	Tool        string
	Category    Category
	ArgsSummary string // short, secret-free summary
	Code        string // one-time code the user gave the assistant, carried by a retried call ("" if none)
	// Elicit asks the user through the MCP client; nil when the client does not support elicitation.
	// It returns accepted=true only when the user explicitly accepted.
	Elicit func(ctx context.Context, message string) (accepted bool, err error)
}

// Ways a grant was obtained.
const (
	ViaElicitation = "elicitation"
	ViaCode        = "code"
	ViaApproval    = "approval"
	ViaPolicy      = "policy"
)

// Grant is a category a session holds.
type Grant struct {
	Category  Category  `json:"category"`
	GrantedAt time.Time `json:"granted_at"`
	ExpiresAt time.Time `json:"expires_at,omitzero"` // zero for policy grants, which do not expire
	Via       string    `json:"via"`
}

// Manager holds every session's grants, denials and pending requests. It is safe for concurrent use.
type Manager struct {
	policies   map[Category]Policy
	categories []Category
	warnings   map[Category]string
	grantTTL   time.Duration
	codeTTL    time.Duration
	codeArg    string
	store      *store.Store
	notifier   Notifier
	clock      func() time.Time
	log        *slog.Logger
	started    time.Time

	mu       sync.RWMutex
	sessions map[string]*session
	requests map[string]*pendingReq // by request id
	sweepAt  int

	bg     background
	audits chan store.AuditEntry
	kick   chan struct{} // wakes the writer for grant persistence
	stop   chan struct{}
	once   sync.Once
	opsMu  sync.Mutex
	ops    []grantOp
	drops  atomic.Int64
}

// New checks the options and, with a Store, reloads the token-level grants that have not expired.
func New(o Options) (*Manager, error) {
	m := &Manager{
		policies: map[Category]Policy{}, warnings: map[Category]string{},
		grantTTL: o.GrantTTL, codeTTL: o.CodeTTL, codeArg: o.CodeArgument,
		store: o.Store, notifier: o.Notifier, clock: o.Clock, log: o.Logger,
		sessions: map[string]*session{}, requests: map[string]*pendingReq{}, sweepAt: 64,
		audits: make(chan store.AuditEntry, 1024), kick: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	for _, c := range AllCategories {
		m.policies[c] = PolicyAsk
		m.warnings[c] = defaultWarnings[c]
	}
	for c, p := range o.Policies {
		if !c.valid() {
			return nil, fmt.Errorf("permission: Options.Policies has unknown category %q: use filesystem, database, command or hub_admin", c)
		}
		switch p {
		case PolicyAsk, PolicyAllow, PolicyDeny:
		default: // exact values only: the config layer runs ParsePolicy on what the user typed
			return nil, fmt.Errorf("permission: Options.Policies[%s] = %q: use ask, allow or deny", c, p)
		}
		m.policies[c] = p
	}
	for c, w := range o.Warnings {
		if !c.valid() || strings.TrimSpace(w) == "" {
			return nil, fmt.Errorf("permission: Options.Warnings[%q] must name a known category and say what it allows", c)
		}
		m.warnings[c] = w
	}
	m.categories = o.Categories
	if len(m.categories) == 0 {
		m.categories = []Category{Filesystem, Database, Command}
	}
	for _, c := range m.categories {
		if !c.valid() {
			return nil, fmt.Errorf("permission: Options.Categories has unknown category %q: use filesystem, database, command or hub_admin", c)
		}
	}
	switch {
	case m.grantTTL < 0:
		return nil, fmt.Errorf("permission: Options.GrantTTL %v is negative: use 0 for the default (8h) or a positive duration", m.grantTTL)
	case m.grantTTL == 0:
		m.grantTTL = 8 * time.Hour
	}
	switch {
	case m.codeTTL < 0:
		return nil, fmt.Errorf("permission: Options.CodeTTL %v is negative: use 0 for the default (10m) or a positive duration", m.codeTTL)
	case m.codeTTL == 0:
		m.codeTTL = 10 * time.Minute
	}
	if m.codeArg == "" {
		m.codeArg = "permission_code"
	}
	if m.clock == nil {
		m.clock = time.Now
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.started = m.clock()
	if err := m.loadGrants(); err != nil {
		return nil, err
	}
	m.bg.Go(m.writer)
	return m, nil
}

// Close stops the background writer after it has written everything queued. Call it before closing the
// Store.
func (m *Manager) Close() error {
	m.once.Do(func() { close(m.stop) })
	m.bg.close()
	if n := m.drops.Load(); n > 0 {
		m.log.Warn("permission: audit entries were dropped because the store fell behind", "dropped", n)
	}
	return nil
}

// Warning says exactly what the category allows, in plain words.
func (m *Manager) Warning(c Category) string { return m.warnings[c] }

// Authorize lets the call go ahead (nil), or returns *RequiredError when the user must grant the category
// first, or *DeniedError when it is refused for the session. Other errors mean the request itself is
// malformed.
func (m *Manager) Authorize(ctx context.Context, r Request) error {
	if r.SessionKey == "" {
		return errors.New("permission: Request.SessionKey is empty: every MCP session (or token) needs its own key")
	}
	switch m.policies[r.Category] {
	case PolicyAllow:
		return nil
	case PolicyDeny:
		return &DeniedError{Category: r.Category, ByPolicy: true,
			Reason: "the add-on option " + optionName(r.Category) + " is set to deny"}
	case "":
		return fmt.Errorf("permission: Request.Category %q is not a category: use filesystem, database, command or hub_admin", r.Category)
	}
	// The fast path: a live grant needs only a read lock.
	now := m.clock()
	m.mu.RLock()
	if s := m.sessions[r.SessionKey]; s != nil {
		if g, ok := s.grants[r.Category]; ok && now.Before(g.ExpiresAt) {
			m.mu.RUnlock()
			return nil
		}
	}
	m.mu.RUnlock()
	return m.decide(ctx, r)
}

// decide is the slow path: denial, code, elicitation, or a pending request, in that order. It loops only
// to wait out another call's elicitation for the same session and category.
func (m *Manager) decide(ctx context.Context, r Request) error {
	c := r.Category
	detail := "" // why a code was refused, kept across the loop's retries
	for {
		m.mu.Lock()
		now := m.clock()
		s := m.sessionLocked(r.SessionKey, now)
		if reason, ok := s.denied[c]; ok {
			m.mu.Unlock()
			return &DeniedError{Category: c, Reason: reason}
		}
		if g, ok := s.grants[c]; ok {
			if now.Before(g.ExpiresAt) {
				m.mu.Unlock()
				return nil
			}
			m.dropGrantLocked(r.SessionKey, s, c)
		}
		var stale []Pending // requests to take down once the lock is released
		p := s.pending[c]
		if p != nil && !now.Before(p.ExpiresAt) {
			m.dropPendingLocked(s, p)
			stale, p = append(stale, p.Pending), nil
		}

		if r.Code != "" {
			if p != nil && codeMatches(p.Code, r.Code) {
				m.grantLocked(r.SessionKey, s, c, ViaCode, now)
				m.dropPendingLocked(s, p)
				m.mu.Unlock()
				m.withdraw(append(stale, p.Pending)...)
				m.record(r, store.OutcomeGranted, "granted with the one-time code from the user", now)
				return nil
			}
			var denied bool
			var gone *pendingReq
			detail, gone, denied = m.wrongCodeLocked(s, p)
			if gone != nil {
				stale, p = append(stale, gone.Pending), nil
			}
			if denied {
				m.mu.Unlock()
				m.withdraw(stale...)
				m.record(r, store.OutcomeDenied, reasonTooManyCodes, now)
				return &DeniedError{Category: c, Reason: reasonTooManyCodes}
			}
			m.record(r, store.OutcomeCodeRejected, detail, now)
			r.Code = "" // counted once, however often the loop goes round
		}

		if p == nil && r.Elicit != nil {
			if ch, busy := s.eliciting[c]; busy {
				m.mu.Unlock()
				m.withdraw(stale...)
				select {
				case <-ch:
					continue
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			ch := make(chan struct{})
			s.eliciting[c] = ch
			m.mu.Unlock()
			m.withdraw(stale...)
			final, err := m.elicit(ctx, r, s, ch)
			if final {
				return err
			}
			// The client could not ask (error, timeout): fall back to a pending request.
			m.log.Warn("permission: elicitation failed, posting a request instead",
				"session", shortKey(r.SessionKey), "category", c, "err", err)
			r.Elicit = nil
			continue
		}

		fresh := p == nil
		if fresh {
			var err error
			if p, err = m.newPendingLocked(r, s, now); err != nil {
				m.mu.Unlock()
				return err
			}
		}
		m.mu.Unlock()
		m.withdraw(stale...)
		if fresh {
			m.notify(ctx, p)
			m.record(r, store.OutcomePermissionRequired, "request "+p.ID+" posted for the user", now)
			m.log.Info("permission: request posted", "request", p.ID, "session", shortKey(r.SessionKey), "category", c, "tool", r.Tool)
		}
		return m.requiredError(r, p, detail)
	}
}

const reasonTooManyCodes = "too many wrong one-time codes"

var errSessionEnded = errors.New("permission: the session ended while the user was being asked")

// elicit asks the user through the client while other calls for the same session and category wait on
// ch. final is false only when the client could not ask; then err is its error and the caller falls back.
func (m *Manager) elicit(ctx context.Context, r Request, s *session, ch chan struct{}) (final bool, err error) {
	accepted, err := r.Elicit(ctx, m.elicitMessage(r))
	m.mu.Lock()
	delete(s.eliciting, r.Category)
	close(ch)
	if m.sessions[r.SessionKey] != s {
		m.mu.Unlock()
		return true, errSessionEnded
	}
	now := m.clock()
	switch {
	case err != nil:
		m.mu.Unlock()
		return false, err
	case accepted:
		m.grantLocked(r.SessionKey, s, r.Category, ViaElicitation, now)
		m.mu.Unlock()
		m.record(r, store.OutcomeGranted, "the user accepted when asked by the client", now)
		return true, nil
	default:
		reason := "the user declined it when asked"
		s.denied[r.Category] = reason
		m.mu.Unlock()
		m.record(r, store.OutcomeDenied, reason, now)
		return true, &DeniedError{Category: r.Category, Reason: reason}
	}
}

func (m *Manager) elicitMessage(r Request) string {
	what := toolOrCall(r.Tool)
	if r.ArgsSummary != "" {
		what += " (" + r.ArgsSummary + ")"
	}
	return fmt.Sprintf("Allow the %s permission for this session? The assistant wants to run %s. %s "+
		"The permission lasts until this session ends, at most %s. Declining blocks it for the rest of this session.",
		r.Category, what, m.warnings[r.Category], m.grantTTL)
}

// wrongCodeLocked counts a wrong code against the pending request. It returns what to tell the model,
// the request if it was cancelled, and whether the category is now denied for the session.
func (m *Manager) wrongCodeLocked(s *session, p *pendingReq) (detail string, cancelled *pendingReq, denied bool) {
	if p == nil {
		return "The code given is not valid: it expired, was already used, or belongs to another request. " +
			"A new request with a new code has been sent to the user.", nil, false
	}
	p.attempts++
	if left := MaxCodeAttempts - p.attempts; left > 0 {
		return fmt.Sprintf("The code given is wrong (%d tries left); ask the user to read it again from the notification.", left), nil, false
	}
	m.dropPendingLocked(s, p)
	s.strikes[p.Category]++
	if s.strikes[p.Category] >= maxStrikes {
		s.denied[p.Category] = reasonTooManyCodes
		return "", p, true
	}
	return "Too many wrong codes: that request was cancelled and a new one with a new code has been sent to the user.", p, false
}

func (m *Manager) requiredError(r Request, p *pendingReq, detail string) *RequiredError {
	return &RequiredError{RequestID: p.ID, Category: r.Category, Tool: r.Tool,
		Warning: m.warnings[r.Category], HowTo: m.howTo(p), Detail: detail}
}

// howTo tells the model what the user can do about p. The code route is offered only once the
// notification carrying it was posted.
func (m *Manager) howTo(p *pendingReq) string {
	if p.notified.Load() {
		return fmt.Sprintf("Tell the user you need the %s permission and why. They can approve request %s in the "+
			"hamcp panel, or read you the %d-digit code from the Home Assistant notification %q; then retry this "+
			"call with that code in the `%s` argument.", p.Category, p.ID, codeDigits, NotificationTitle, m.codeArg)
	}
	return fmt.Sprintf("Tell the user you need the %s permission and why, and ask them to approve request %s "+
		"in the hamcp panel (Home Assistant sidebar); then retry this call.", p.Category, p.ID)
}
