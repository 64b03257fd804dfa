// Package approval is hamcp's approval page: where the user answers a permission request from a link
// the assistant gave them. The link alone shows nothing and grants nothing: it sends the browser
// through a Home Assistant login (the same IndieAuth login as the OAuth flow), only an administrator
// gets past it, and the page then shows what is asked with Approve and Deny forms bound to that login
// and that browser (cookie + CSRF token). Views, refusals and decisions go to the audit log with the
// Home Assistant user.
package approval

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/src/oauth"
	"github.com/hamcp/hamcp/src/permission"
)

// Paths the page serves.
const (
	PathStart    = "/approve"          // ?r=<link secret>: starts the login
	PathCallback = "/approve/callback" // Home Assistant sends the browser back here
	PathRequest  = "/approve/request"  // GET shows the request, POST answers it
)

const (
	visitTTL  = 10 * time.Minute // a login started from a link must finish within this
	maxVisits = 1000             // logins in progress; the oldest is dropped to make room
	cookie    = "hamcp_approval"
)

// Options configure the page.
type Options struct {
	Manager *permission.Manager
	// HAInternalURL is where hamcp reaches Home Assistant for the login's token exchange.
	HAInternalURL string
	HTTPClient    *http.Client
	// EntityName is an entity's friendly name ("" when unknown), so a request says which door.
	EntityName func(id string) string
	Logger     *slog.Logger
	Now        func() time.Time
}

// Page is the approval page. Links work once Start has told it where it is reached.
type Page struct {
	o     Options
	log   *slog.Logger
	now   func() time.Time
	tmpl  *template.Template
	state atomic.Pointer[started]

	mu     sync.Mutex
	visits map[string]*visit
}

type started struct {
	base  string
	login *oauth.HALogin
}

// A visit is one browser's way from a link through the Home Assistant login to an answer.
type visit struct {
	id        string // also the state sent to Home Assistant
	browser   [32]byte
	requestID string
	created   time.Time
	// Set once Home Assistant said who logged in (an administrator).
	user oauth.HAUser
	csrf string
	seen bool
}

// New builds the page; it serves nothing useful until Start.
func New(o Options) (*Page, error) {
	if o.Manager == nil {
		return nil, errors.New("approval: Options.Manager is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	t, err := oauth.Pages(templates)
	if err != nil {
		return nil, fmt.Errorf("approval: templates: %w", err)
	}
	return &Page{o: o, log: o.Logger, now: o.Now, tmpl: t, visits: map[string]*visit{}}, nil
}

// Start makes links point at base (hamcp's external URL, or the address the demo listens at) and sends
// logins to Home Assistant at haBrowserURL ("" = HAInternalURL). base must be https unless it is on
// loopback, as for OAuth.
func (p *Page) Start(base, haBrowserURL string) error {
	login, err := oauth.NewHALogin(oauth.HALoginOptions{
		ClientURL: base, CallbackPath: PathCallback, HAInternalURL: p.o.HAInternalURL, HABrowserURL: haBrowserURL,
		HTTPClient: p.o.HTTPClient, Logger: p.log,
	})
	if err != nil {
		return err
	}
	u, _ := url.Parse(base)
	p.state.Store(&started{base: u.Scheme + "://" + u.Host, login: login})
	return nil
}

// Started reports whether links are being made.
func (p *Page) Started() bool { return p.state.Load() != nil }

// Link is the page's URL for a request's link secret; "" before Start. It is the permission
// manager's Options.Link.
func (p *Page) Link(secret string) string {
	st := p.state.Load()
	if st == nil {
		return ""
	}
	return st.base + PathStart + "?r=" + url.QueryEscape(secret)
}

// Mount adds the page's routes. They need no bearer token: the Home Assistant login is the
// authentication, and the browser cookie and CSRF token bind every step to it.
func (p *Page) Mount(e *echo.Echo) {
	e.GET(PathStart, p.start)
	e.GET(PathCallback, p.callback)
	e.GET(PathRequest, p.show)
	e.POST(PathRequest, p.decide)
}

// start is GET /approve?r=…: check the link, then log the user in through Home Assistant. Nothing about
// the request is shown before the login.
func (p *Page) start(c echo.Context) error {
	st := p.state.Load()
	if st == nil {
		return p.errorPage(c, http.StatusServiceUnavailable, "Approval page not available", "hamcp does not know the address it is reached at; set external_url in the add-on options.")
	}
	req, err := p.o.Manager.ByLink(c.QueryParam("r"))
	if err != nil {
		return p.requestGone(c, err)
	}
	browser := secret()
	v := &visit{id: secret(), browser: sha256.Sum256([]byte(browser)), requestID: req.ID, created: p.now()}
	p.add(v)
	http.SetCookie(c.Response(), &http.Cookie{
		Name: cookie, Value: browser, Path: PathStart, MaxAge: int(visitTTL.Seconds()),
		HttpOnly: true, Secure: st.login.Secure(), SameSite: http.SameSiteLaxMode,
	})
	oauth.PageHeaders(c)
	return c.Redirect(http.StatusFound, st.login.AuthCodeURL(v.id))
}

// callback is GET /approve/callback: Home Assistant's answer to the login. Only an administrator
// gets further; anyone else is turned away and the attempt is audited.
func (p *Page) callback(c echo.Context) error {
	st := p.state.Load()
	v, ok := p.get(c.QueryParam("state"), c.Request())
	if st == nil || !ok {
		return p.errorPage(c, http.StatusBadRequest, "Login expired", "This login has expired, was already used, or was started in another browser. Open the approval link again.")
	}
	if c.QueryParam("error") != "" || c.QueryParam("code") == "" {
		p.drop(v.id)
		return p.errorPage(c, http.StatusBadRequest, "Login not completed", "The Home Assistant login did not complete. Open the approval link again to retry.")
	}
	user, err := st.login.Identify(c.Request().Context(), c.QueryParam("code"))
	if err != nil {
		p.drop(v.id)
		p.log.Warn("approval: Home Assistant login failed", "request", v.requestID, "err", oauth.UserError(err))
		return p.errorPage(c, http.StatusBadGateway, "Home Assistant login failed", oauth.UserError(err))
	}
	by := permission.Approver{Via: permission.ViaPage, UserID: user.ID, Name: user.Name}
	if !user.IsAdmin {
		p.drop(v.id)
		p.o.Manager.RecordView(v.requestID, by, "not a Home Assistant administrator")
		p.log.Warn("approval: login refused, not an administrator", "user", user.Name, "request", v.requestID)
		return p.errorPage(c, http.StatusForbidden, "An administrator is needed",
			"The Home Assistant user “"+user.Name+"” is not an administrator. Only Home Assistant administrators may answer hamcp's permission requests.")
	}
	if !p.login(v.id, user) {
		return p.errorPage(c, http.StatusBadRequest, "Login expired", "This login was already completed. Open the approval link again.")
	}
	return c.Redirect(http.StatusSeeOther, PathRequest+"?v="+url.QueryEscape(v.id))
}

type pageData struct {
	Req         permission.Pending
	Once        bool   // a confirmation of one action, not a permission for the session
	Summary     string // the arguments, with entity names
	User        string
	Visit, CSRF string
	Expires     string
}

// show is GET /approve/request: what is asked, for the administrator who logged in.
func (p *Page) show(c echo.Context) error {
	v, ok := p.get(c.QueryParam("v"), c.Request())
	if !ok || v.user.ID == "" {
		return p.errorPage(c, http.StatusBadRequest, "Login expired", "This login has expired or was started in another browser. Open the approval link again.")
	}
	req, err := p.o.Manager.Request(v.requestID)
	if err != nil {
		p.drop(v.id)
		return p.requestGone(c, err)
	}
	if p.markSeen(v.id) {
		p.o.Manager.RecordView(req.ID, permission.Approver{Via: permission.ViaPage, UserID: v.user.ID, Name: v.user.Name}, "")
	}
	return p.render(c, http.StatusOK, "approval", pageData{Req: req, User: v.user.Name, Visit: v.id, CSRF: v.csrf,
		Once: req.Category == permission.ConfirmKind, Summary: permission.NameEntities(req.ArgsSummary, p.o.EntityName),
		Expires: req.ExpiresAt.UTC().Format("15:04 UTC")})
}

type doneData struct {
	Title, Message string
}

// decide is POST /approve/request: the administrator's answer, once, from the page shown in this
// browser (cookie) for this login (CSRF token).
func (p *Page) decide(c echo.Context) error {
	v, ok := p.get(c.FormValue("v"), c.Request())
	if !ok || v.user.ID == "" || subtle.ConstantTimeCompare([]byte(c.FormValue("csrf")), []byte(v.csrf)) != 1 {
		return p.errorPage(c, http.StatusForbidden, "Answer refused", "The answer did not come from the approval page hamcp showed in this browser. Open the approval link again.")
	}
	action := c.FormValue("action")
	if action != "approve" && action != "deny" {
		return p.errorPage(c, http.StatusBadRequest, "Answer refused", "Choose Approve or Deny.")
	}
	p.drop(v.id)                                   // one answer per login
	req, _ := p.o.Manager.PendingByID(v.requestID) // its kind words the answer
	by := permission.Approver{Via: permission.ViaPage, UserID: v.user.ID, Name: v.user.Name}
	var err error
	if action == "approve" {
		err = p.o.Manager.Approve(c.Request().Context(), v.requestID, by)
	} else {
		err = p.o.Manager.Deny(c.Request().Context(), v.requestID, by)
	}
	if err != nil {
		return p.requestGone(c, err)
	}
	p.log.Info("approval: request answered", "request", v.requestID, "action", action, "user", v.user.Name)
	title, text := p.o.Manager.Answered(req.Category, action == "approve")
	return p.render(c, http.StatusOK, "done", doneData{Title: title, Message: text + " You can tell the assistant."})
}

func (p *Page) requestGone(c echo.Context, err error) error {
	if errors.Is(err, permission.ErrRequestExpired) {
		return p.errorPage(c, http.StatusGone, "Request expired", "This permission request has expired. If you still want to allow it, ask the assistant to try again: it gets a new link.")
	}
	if errors.Is(err, permission.ErrUnknownRequest) {
		return p.errorPage(c, http.StatusNotFound, "No such request", "This approval link does not belong to a waiting request: it was already answered, it was cancelled, or its session ended.")
	}
	p.log.Error("approval: answering a request", "err", err)
	return p.errorPage(c, http.StatusInternalServerError, "Server error", "hamcp could not record the answer; see the add-on log.")
}

func (p *Page) errorPage(c echo.Context, status int, title, msg string) error {
	return p.render(c, status, "error", doneData{Title: title, Message: msg})
}

func (p *Page) render(c echo.Context, status int, name string, data any) error {
	oauth.PageHeaders(c)
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return p.tmpl.ExecuteTemplate(c.Response(), name, data)
}

// secret is 256 random bits, URL-safe.
func secret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("approval: crypto/rand failed: " + err.Error()) // never happens on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (p *Page) add(v *visit) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	var oldest *visit
	for id, x := range p.visits {
		if now.Sub(x.created) > visitTTL {
			delete(p.visits, id)
		} else if oldest == nil || x.created.Before(oldest.created) {
			oldest = x
		}
	}
	// Room is made by dropping the oldest login rather than refusing everyone.
	if len(p.visits) >= maxVisits && oldest != nil {
		delete(p.visits, oldest.id)
	}
	p.visits[v.id] = v
}

// get returns a copy of a live visit if r comes from the browser that started it.
func (p *Page) get(id string, r *http.Request) (visit, bool) {
	ck, err := r.Cookie(cookie)
	if id == "" || err != nil {
		return visit{}, false
	}
	h := sha256.Sum256([]byte(ck.Value))
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.visits[id]
	if !ok || p.now().Sub(v.created) > visitTTL || subtle.ConstantTimeCompare(h[:], v.browser[:]) != 1 {
		return visit{}, false
	}
	return *v, true
}

// login records the administrator once; a replayed callback finds it set and fails.
func (p *Page) login(id string, u oauth.HAUser) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.visits[id]
	if !ok || v.user.ID != "" {
		return false
	}
	v.user, v.csrf = u, secret()
	return true
}

func (p *Page) markSeen(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.visits[id]
	if !ok || v.seen {
		return false
	}
	v.seen = true
	return true
}

func (p *Page) drop(id string) {
	p.mu.Lock()
	delete(p.visits, id)
	p.mu.Unlock()
}
