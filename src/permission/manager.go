package permission

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// Notifier tells the user, where they look, that a request is waiting (implemented elsewhere with a
// Home Assistant persistent notification). Everything posted through Home Assistant is readable by the
// model (event bus, recorder), so what it receives must never grant anything: Pending carries the
// approval link, which is useless without a Home Assistant administrator's login, and nothing else
// secret. Withdraw may be called for a request that was never posted or is already gone, and must then
// do nothing.
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
	RequestTTL time.Duration       // lifetime of a pending request and its approval link, default 10 min
	// Link turns a request's link secret into the approval page's URL; it returns "" while no page is
	// served (stdio without HTTP). Nil means no approval page: the user answers in the panel.
	Link     func(secret string) string
	Store    *store.Store // audit log and token-level grants; nil keeps both in memory only (tests, tools)
	Notifier Notifier     // may be nil: then the user approves on the page or in the panel without being told
	Clock    func() time.Time
	Logger   *slog.Logger
}

// Request is one privileged tool call asking to go ahead.
type Request struct {
	SessionKey  string // where grants are filed: Scope.Key
	Client      string // client name/version for the audit log
	Tool        string
	Category    Category
	ArgsSummary string // short, secret-free summary
	// SignIn says how the caller signed in ("OAuth: Claude, as Alice"), for the user reading the
	// panel; "" when unknown.
	SignIn string
	// Owner names the credential behind the session (authn.Principal.Owner); "" for stdio and SSH. Only
	// the owner may deny the session's requests besides the user on the page or in the panel.
	Owner string
	// Elicit asks the user through the MCP client (form mode); nil when the client cannot. It returns
	// accepted=true only when the user explicitly accepted.
	Elicit func(ctx context.Context, message string) (accepted bool, err error)
	// OpenURL asks the client to open the approval page for the user (MCP URL-mode elicitation); nil
	// when the client cannot. accepted means the user agreed to open it, not that they approved.
	OpenURL func(ctx context.Context, message, url, elicitationID string) (accepted bool, err error)
	// URLDone tells the client the page was answered (notifications/elicitation/complete). May be nil.
	URLDone func(ctx context.Context, elicitationID string)
}

// Ways a grant was obtained.
const (
	ViaElicitation = "elicitation" // the user accepted the prompt in their MCP client
	ViaApproval    = "approval"    // the user approved on the approval page or in the panel
	ViaPolicy      = "policy"      // the add-on option allows the category
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
	requestTTL time.Duration
	link       func(string) string
	store      *store.Store
	notifier   Notifier
	clock      func() time.Time
	log        *slog.Logger
	started    time.Time
	labelKey   [32]byte // keys the session labels shown instead of session ids

	mu       sync.RWMutex
	sessions map[string]*session
	requests map[string]*pendingReq // by request id
	byLink   map[[32]byte]*pendingReq
	actions  actionBook // confirmations of single calls (confirm.go)
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
		grantTTL: o.GrantTTL, requestTTL: o.RequestTTL, link: o.Link,
		store: o.Store, notifier: o.Notifier, clock: o.Clock, log: o.Logger,
		sessions: map[string]*session{}, requests: map[string]*pendingReq{}, byLink: map[[32]byte]*pendingReq{}, sweepAt: 64,
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
	case m.requestTTL < 0:
		return nil, fmt.Errorf("permission: Options.RequestTTL %v is negative: use 0 for the default (10m) or a positive duration", m.requestTTL)
	case m.requestTTL == 0:
		m.requestTTL = 10 * time.Minute
	}
	if _, err := rand.Read(m.labelKey[:]); err != nil {
		return nil, fmt.Errorf("permission: session label key: %w", err)
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

// decide is the slow path: denial, elicitation, or a pending request, in that order. It loops only to
// wait out another call's elicitation for the same session and category.
func (m *Manager) decide(ctx context.Context, r Request) error {
	c := r.Category
	for {
		m.mu.Lock()
		now := m.clock()
		s := m.sessionLocked(r.SessionKey, now)
		s.saw(r)
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
				"session", m.label(r.SessionKey), "category", c, "err", err)
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
		// One call at a time shows the page in the client; the others wait for the same answer.
		askURL := r.OpenURL != nil && p.Link != "" && !p.urlAsked
		waitURL := r.OpenURL != nil && p.urlAsked
		if askURL {
			p.urlAsked = true
		}
		m.mu.Unlock()
		m.withdraw(stale...)
		if fresh {
			m.notify(ctx, p)
			m.record(r, store.OutcomePermissionRequired, "request "+p.ID+" posted for the user", now)
			m.log.Info("permission: request posted", "request", p.ID, "session", m.label(r.SessionKey), "category", c, "tool", r.Tool)
		}
		if askURL || waitURL {
			if err, done := m.viaPage(ctx, r, p, askURL); done {
				return err
			}
		}
		return m.requiredError(r, p, "")
	}
}

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
		return askedOnRetry(err), err // asked on retry: final, nothing decided (mrtr.go)
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

// viaPage opens the approval page in the client (URL-mode elicitation) when ask is set, then waits for
// the user's answer on the page, the request's expiry, or the call's end. done is false when the call
// should get the ordinary permission_required error (the client could not open the page, or the user
// closed it without choosing); then the link stays valid.
func (m *Manager) viaPage(ctx context.Context, r Request, p *pendingReq, ask bool) (err error, done bool) {
	if ask {
		accepted, err := r.OpenURL(ctx, m.openURLMessage(r), p.Link, p.ID)
		switch {
		case err != nil:
			m.log.Warn("permission: the client could not open the approval page; the link stays in the refusal",
				"request", p.ID, "err", err)
			m.clearURLAsked(p)
			return nil, false
		case !accepted:
			// Declined or cancelled: the user chose not to look at the request in their client. It
			// stays pending (the link and the panel still work); the model is told to ask the user.
			m.clearURLAsked(p)
			return nil, false
		}
	}
	if err := m.waitAction(ctx, p); err != nil {
		return err, true
	}
	if ask && r.URLDone != nil {
		r.URLDone(context.WithoutCancel(ctx), p.ID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[r.SessionKey]
	if s == nil {
		return errSessionEnded, true
	}
	if reason, ok := s.denied[r.Category]; ok {
		return &DeniedError{Category: r.Category, Reason: reason}, true
	}
	if g, ok := s.grants[r.Category]; ok && m.clock().Before(g.ExpiresAt) {
		return nil, true
	}
	return &RequiredError{RequestID: p.ID, Category: r.Category, Tool: r.Tool, Warning: m.warnings[r.Category],
		HowTo:  "Retry the call to make a new request, and ask the user to answer it.",
		Detail: "Request " + p.ID + " expired before the user answered it."}, true
}

func (m *Manager) clearURLAsked(p *pendingReq) {
	m.mu.Lock()
	p.urlAsked = false
	m.mu.Unlock()
}

func (m *Manager) elicitMessage(r Request) string {
	return fmt.Sprintf("Allow the %s permission for this session? The assistant wants to run %s. %s "+
		"The permission lasts until this session ends, at most %s. Declining blocks it for the rest of this session.",
		r.Category, describeCall(r.Tool, r.ArgsSummary), m.warnings[r.Category], m.grantTTL)
}

func (m *Manager) openURLMessage(r Request) string {
	return fmt.Sprintf("The assistant asks for the %s permission to run %s. Open hamcp's approval page, log in to Home "+
		"Assistant as an administrator, and approve or deny it there.", r.Category, describeCall(r.Tool, r.ArgsSummary))
}

func describeCall(tool, summary string) string {
	what := toolOrCall(tool)
	if summary != "" {
		what += " (" + summary + ")"
	}
	return what
}

func (m *Manager) requiredError(r Request, p *pendingReq, detail string) *RequiredError {
	return &RequiredError{RequestID: p.ID, Category: r.Category, Tool: r.Tool, Link: p.Link,
		Warning: m.warnings[r.Category], HowTo: m.howTo(p), Detail: detail}
}

// howTo tells the model what the user can do about p: open the link (which needs their Home Assistant
// administrator login) or use the panel.
func (m *Manager) howTo(p *pendingReq) string {
	until := p.ExpiresAt.UTC().Format("15:04")
	if p.Link != "" {
		return fmt.Sprintf("Tell the user you need the %s permission and why, and give them this link: %s — it opens "+
			"hamcp's approval page, where they log in to Home Assistant as an administrator and approve or deny request %s "+
			"(it expires at %s UTC; it is also listed in the hamcp panel). When they say it is approved, retry this call.",
			p.Category, p.Link, p.ID, until)
	}
	return fmt.Sprintf("Tell the user you need the %s permission and why, and ask them to approve request %s "+
		"in the hamcp panel in Home Assistant's sidebar before %s UTC; then retry this call.", p.Category, p.ID, until)
}
