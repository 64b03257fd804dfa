package oauth

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// HALogin is the Home Assistant half of the authorization server's login, for other pages that must
// know which Home Assistant user is at the browser (the permission approval page). It is the same
// code path as /authorize: hamcp is an IndieAuth client of HA, exchanges HA's code at /auth/token,
// asks auth/current_user over the WebSocket API, and revokes the HA session at once, so hamcp learns
// who logged in and holds none of HA's tokens.
type HALogin struct{ s *Server }

// HALoginOptions configure an HALogin.
type HALoginOptions struct {
	// ClientURL is the origin the browser reaches hamcp at (external_url, or the demo's own address).
	// Its "/" is hamcp's IndieAuth client id at HA. https unless it is on loopback.
	ClientURL string
	// CallbackPath is where HA sends the browser back, on ClientURL (HA wants the same origin).
	CallbackPath string
	// HAInternalURL is where hamcp reaches HA; HABrowserURL where the browser does ("" = the same).
	HAInternalURL, HABrowserURL string
	HTTPClient                  *http.Client
	Logger                      *slog.Logger
}

// HAUser is who logged in, as Home Assistant's auth/current_user says.
type HAUser struct {
	ID      string
	Name    string
	IsOwner bool
	IsAdmin bool
}

// NewHALogin checks the options like New does for the same settings.
func NewHALogin(o HALoginOptions) (*HALogin, error) {
	base, err := baseURL("ClientURL (hamcp's URL for the browser)", o.ClientURL, true)
	if err != nil {
		return nil, err
	}
	if o.CallbackPath == "" || o.CallbackPath[0] != '/' {
		return nil, errors.New("oauth: HALoginOptions.CallbackPath must be a path such as /approve/callback")
	}
	internal, err := baseURL("HAInternalURL (where hamcp reaches Home Assistant)", o.HAInternalURL, false)
	if err != nil {
		return nil, err
	}
	browser := internal
	if o.HABrowserURL != "" {
		if browser, err = baseURL("HABrowserURL (Home Assistant's external URL)", o.HABrowserURL, false); err != nil {
			return nil, err
		}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	// Only the fields the HA login reads: the rest of the server (store, clients, tokens) is not used.
	return &HALogin{s: &Server{
		o: Options{HTTPClient: o.HTTPClient}, log: o.Logger, now: time.Now,
		haInternal: internal, haBrowser: browser, haClientID: base + "/", haRedirect: base + o.CallbackPath,
	}}, nil
}

// Secure reports whether ClientURL is https, so cookies set for the page can be Secure.
func (l *HALogin) Secure() bool { return len(l.s.haClientID) > 6 && l.s.haClientID[:6] == "https:" }

// AuthCodeURL is where to send the browser to log in; state comes back with the code.
func (l *HALogin) AuthCodeURL(state string) string { return l.s.haConfig().AuthCodeURL(state) }

// Identify exchanges HA's code, asks HA who logged in, and revokes that HA session. Errors are safe
// to show the user (see UserError).
func (l *HALogin) Identify(ctx context.Context, code string) (HAUser, error) {
	u, err := l.s.haIdentify(ctx, code)
	if err != nil {
		return HAUser{}, err
	}
	return HAUser(u), nil
}

// UserError is the text of an Identify error that may be shown in the browser; generic when the error
// could carry something that should not be shown.
func UserError(err error) string {
	var he *errHA
	if errors.As(err, &he) {
		return he.msg
	}
	return "The login could not be confirmed with Home Assistant."
}

// PageHeaders sets the headers of hamcp's login pages: no framing, no caching, no Referer (the URLs
// carry login ids), nothing but inline styles.
func PageHeaders(c echo.Context) { pageHeaders(c) }

// pagesBase is a copy of the login pages taken before any of them ran: html/template cannot clone a
// set that has executed, and the OAuth pages execute from the first login on.
var pagesBase = template.Must(pages.Clone())

// Pages returns the login pages' templates ("head", "error", …) with extra definitions added, so
// other pages look the same and share the error page.
func Pages(extra string) (*template.Template, error) {
	t, err := pagesBase.Clone()
	if err != nil {
		return nil, err
	}
	return t.Parse(extra)
}
