// Package panel is the hamcp panel in Home Assistant's sidebar (add-on ingress): how to connect an
// assistant, the permission requests waiting for the user with Approve and Deny, the grants and OAuth
// clients with Revoke, the audit log, and the server's status. Pages are rendered on the server with
// html/template; a little JavaScript keeps the approval queue and the reachability checks live.
//
// Trust comes from the TCP peer only: the Supervisor's ingress proxy (172.30.32.2) and, where the
// caller allows it, loopback. Home Assistant's X-Remote-User-* headers name the user who opened the
// panel, and they are read only from those peers; X-Forwarded-For is never consulted. Home Assistant
// opens ingress to every user, so that user must also be an active administrator in Home
// Assistant's user list (admins.go).
package panel

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/oauth"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
)

// SupervisorAddr is the address Home Assistant's ingress proxy connects from.
var SupervisorAddr = netip.MustParseAddr("172.30.32.2")

// User is the Home Assistant user who opened the panel.
type User struct {
	ID          string
	Name        string // the login name
	DisplayName string
}

// Label is how the user is shown and recorded: their display name, else their login name.
func (u User) Label() string {
	switch {
	case u.DisplayName != "":
		return u.DisplayName
	case u.Name != "":
		return u.Name
	}
	return u.ID
}

// AuditLog is the part of hamcp's store the Activity page reads (*store.Store).
type AuditLog interface {
	ListAudit(ctx context.Context, q store.AuditQuery) ([]store.AuditEntry, int, error)
	AuditValues(ctx context.Context, col store.AuditColumn, limit int) ([]string, error)
}

// Options configure the panel.
type Options struct {
	Permissions *permission.Manager // required
	// Users reads Home Assistant's user list (config/auth/list) with hamcp's own access; required.
	// Only users it lists as active administrators are served.
	Users func(ctx context.Context) ([]homeassistant.AuthUser, error)
	Audit AuditLog // nil hides the Activity page's entries
	// Undo takes a change back from the Activity page (undo.go); nil offers no Undo.
	Undo UndoFunc
	// OAuth is the authorization server whose sign-ins the Clients page lists; it returns nil while
	// OAuth is off (no external_url). Nil means always off.
	OAuth func() *oauth.Server
	// Connect says how assistants reach this installation; r is the panel request (its Host is what
	// the user's browser calls Home Assistant, the best guess at the machine's name).
	Connect func(r *http.Request) Connect
	Status  func(ctx context.Context) Status
	// SSHKeys lists the authorized SSH keys, as fingerprints and comments only.
	SSHKeys func() []SSHKey
	// EntityName is an entity's friendly name ("" when unknown), so requests say which door.
	EntityName func(id string) string
	// AllowLoopback also accepts requests from loopback addresses (the demo; an add-on leaves it off,
	// so that nothing running inside the container can speak for the user).
	AllowLoopback bool
	// DemoUser is the user of a request that carries no X-Remote-User-Id (the demo on loopback). It
	// must be an administrator in Home Assistant's user list like anyone else. Nil means such
	// requests are refused.
	DemoUser *User
	Logger   *slog.Logger
	Now      func() time.Time
	// PollEvery is how often open Approvals pages ask for news (default 2 s).
	PollEvery time.Duration
}

// Panel is the panel's HTTP handler.
type Panel struct {
	o       Options
	log     *slog.Logger
	now     func() time.Time
	csrfKey [32]byte
	mux     *http.ServeMux
	admins  *admins
}

// New checks the options and builds the handler.
func New(o Options) (*Panel, error) {
	if o.Permissions == nil {
		return nil, errors.New("panel: Options.Permissions is required")
	}
	if o.Users == nil {
		return nil, errors.New("panel: Options.Users is required: the panel serves only the administrators Home Assistant's user list names")
	}
	if o.Connect == nil {
		o.Connect = func(*http.Request) Connect { return Connect{} }
	}
	if o.Status == nil {
		o.Status = func(context.Context) Status { return Status{} }
	}
	if o.OAuth == nil {
		o.OAuth = func() *oauth.Server { return nil }
	}
	if o.SSHKeys == nil {
		o.SSHKeys = func() []SSHKey { return nil }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PollEvery <= 0 {
		o.PollEvery = 2 * time.Second
	}
	p := &Panel{o: o, log: o.Logger, now: o.Now, admins: &admins{list: o.Users, now: o.Now}}
	if _, err := rand.Read(p.csrfKey[:]); err != nil {
		return nil, fmt.Errorf("panel: CSRF key: %w", err)
	}
	p.routes()
	return p, nil
}

// ServeHTTP answers only the Supervisor's ingress proxy and, if allowed, loopback: everyone else gets
// 403 before anything is read.
func (p *Panel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.trustedPeer(r.RemoteAddr) {
		http.Error(w, "403 forbidden: the hamcp panel is only served through Home Assistant's sidebar", http.StatusForbidden)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	p.mux.ServeHTTP(w, r)
}

// trustedPeer decides on the TCP peer alone; proxies' forwarding headers are never believed.
func (p *Panel) trustedPeer(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	var ip netip.Addr
	if err == nil {
		ip = ap.Addr()
	} else if host, _, herr := net.SplitHostPort(remoteAddr); herr == nil {
		if ip, err = netip.ParseAddr(host); err != nil {
			return false
		}
	} else {
		return false
	}
	// A zone ("%eth0") names no peer we trust, and netip accepts zones net.SplitHostPort refuses
	// ("[::1%]]:0", found by FuzzTrustedPeer): a peer with one is refused.
	if ip.Zone() != "" {
		return false
	}
	ip = ip.Unmap()
	return ip == SupervisorAddr || (p.o.AllowLoopback && ip.IsLoopback())
}

// maxHeader bounds the user headers kept; Home Assistant's ids are 32 hex digits.
const maxHeader = 200

// user is who opened the panel: the X-Remote-User-* headers Home Assistant's ingress sets (the peer was
// checked in ServeHTTP), else the demo user. ok is false when nobody is known.
func (p *Panel) user(r *http.Request) (User, bool) {
	id := cleanHeader(r.Header.Get("X-Remote-User-Id"))
	if id == "" {
		if p.o.DemoUser != nil {
			return *p.o.DemoUser, true
		}
		return User{}, false
	}
	return User{ID: id, Name: cleanHeader(r.Header.Get("X-Remote-User-Name")),
		DisplayName: cleanHeader(r.Header.Get("X-Remote-User-Display-Name"))}, true
}

func cleanHeader(v string) string {
	v = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(v))
	if len(v) > maxHeader {
		v = v[:maxHeader]
	}
	return strings.ToValidUTF8(v, "")
}

func (p *Panel) approver(u User) permission.Approver {
	return permission.Approver{Via: permission.ViaPanel, UserID: u.ID, Name: u.Label()}
}

// csrfToken binds a form to the user it was shown to. Home Assistant's ingress session is the real
// credential; the token stops another page from making the browser post here.
func (p *Panel) csrfToken(u User) string {
	m := hmac.New(sha256.New, p.csrfKey[:])
	m.Write([]byte("panel-csrf\x00" + u.ID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkPost is the guard in front of every state-changing request: a known user, a same-origin
// browser, and the form's CSRF token.
func (p *Panel) checkPost(w http.ResponseWriter, r *http.Request) (User, bool) {
	u, ok := p.user(r)
	if !ok {
		http.Error(w, "403 forbidden: no Home Assistant user; open the panel from Home Assistant's sidebar", http.StatusForbidden)
		return User{}, false
	}
	back := errorData{Back: backTo(r), BackLabel: "Back to the page"}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		back.Text = "403 forbidden: the request did not come from the hamcp panel, so nothing was done."
		p.errorPage(w, r, http.StatusForbidden, "Request refused", back)
		return User{}, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		back.Text = "400 bad request: the form could not be read, so nothing was done."
		p.errorPage(w, r, http.StatusBadRequest, "Request refused", back)
		return User{}, false
	}
	if got := r.PostForm.Get("csrf"); !hmac.Equal([]byte(got), []byte(p.csrfToken(u))) {
		back.Text = "403 forbidden: this form was stale (its CSRF token is missing or from an earlier page), so nothing was done. " +
			"Go back, reload the page and try again."
		p.errorPage(w, r, http.StatusForbidden, "This form was stale", back)
		return User{}, false
	}
	return u, true
}

// backTo is the page a refused form came from: the first segment of its path, a known page only.
func backTo(r *http.Request) string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch seg {
	case "approvals", "grants":
		return "approvals"
	case "clients", "activity", "status":
		return seg
	}
	return ""
}

// reIngressPath is the prefix Home Assistant serves an add-on's ingress under.
var reIngressPath = regexp.MustCompile(`^/api/hassio_ingress/[A-Za-z0-9_-]{1,200}$`)

// base is the prefix every link carries: the ingress path when Home Assistant gave a well-formed one,
// else the site root (the demo). A malformed header cannot inject anything into the pages.
func base(r *http.Request) string {
	if ip := r.Header.Get("X-Ingress-Path"); reIngressPath.MatchString(ip) {
		return ip + "/"
	}
	return "/"
}
