package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/src/authn"
)

// authorize is GET /authorize. Until the client and its redirect URI are known to belong together,
// every problem is an error page: hamcp never sends a browser to an address it cannot vouch for.
func (s *Server) authorize(c echo.Context) error {
	q := c.QueryParams()
	for _, p := range []string{"client_id", "redirect_uri", "response_type", "state", "scope", "code_challenge", "code_challenge_method"} {
		if len(q[p]) > 1 {
			return errorPage(c, http.StatusBadRequest, "Invalid request", "The parameter "+p+" appears more than once. Start the connection again from your assistant.")
		}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		return errorPage(c, http.StatusBadRequest, "Invalid request", "client_id is missing from the authorization request.")
	}
	ctx := c.Request().Context()
	cl, err := s.lookupClient(ctx, clientID)
	switch {
	case errors.Is(err, errUnknownClient):
		return errorPage(c, http.StatusBadRequest, "Unknown application", "hamcp does not know the client "+clientID+". Remove the connector in your assistant and add it again so it registers afresh.")
	case err != nil && isURLClientID(clientID):
		return errorPage(c, http.StatusBadRequest, "Application not accepted", "The client metadata document at "+clientID+" could not be used: "+err.Error())
	case err != nil:
		s.log.Error("oauth: look up client", "err", err)
		return errorPage(c, http.StatusInternalServerError, "Server error", "hamcp could not read its client list; see the add-on log.")
	}
	redirectURI, given := q.Get("redirect_uri"), q.Has("redirect_uri")
	switch {
	case given && !redirectMatches(cl.RedirectURIs, redirectURI):
		return errorPage(c, http.StatusBadRequest, "Redirect address not registered", "The application asked to be sent back to "+redirectURI+", which is not one of the addresses it registered. Nothing was sent there.")
	case !given && len(cl.RedirectURIs) != 1:
		return errorPage(c, http.StatusBadRequest, "Invalid request", "redirect_uri is required because the application registered several.")
	case !given:
		redirectURI = cl.RedirectURIs[0]
	}

	// The redirect URI is trusted from here on: the remaining errors go back to the client.
	state := q.Get("state")
	fail := func(code, desc string) error {
		return c.Redirect(http.StatusFound, withParams(redirectURI, url.Values{
			"error": {code}, "error_description": {desc}, "state": {state}, "iss": {s.issuer},
		}))
	}
	if q.Get("response_type") != "code" {
		return fail("unsupported_response_type", "response_type must be code")
	}
	if !slices.Contains(cl.GrantTypes, "authorization_code") {
		return fail("unauthorized_client", "this client did not register for the authorization_code grant")
	}
	if q.Get("code_challenge_method") != "S256" || !validChallenge(q.Get("code_challenge")) {
		return fail("invalid_request", "PKCE is required: send code_challenge (43 base64url characters) with code_challenge_method=S256")
	}
	scope, err := parseScope(q.Get("scope"))
	if err != nil {
		return fail("invalid_scope", err.Error())
	}
	if err := s.checkResource(q["resource"]); err != nil {
		return fail("invalid_target", err.Error())
	}

	browser, ok := s.browserID(c.Request())
	if !ok {
		browser = newSecret(browserPrefix)
	}
	x := &login{
		id: randomHex(24), browser: hashSecret(browser),
		clientID: cl.ID, clientName: cl.Name, cimd: cl.CIMD, refresh: cl.refreshAllowed(),
		redirectURI: redirectURI, redirectGiven: given,
		challenge: q.Get("code_challenge"), scope: scope, resource: s.resource, state: state,
		created: s.now(), from: addressKey(c.RealIP()),
	}
	_ = s.logins.add(x, s.now()) // never refuses: over the quotas, older pending logins give way
	s.setBrowserCookie(c.Response(), browser)
	pageHeaders(c)
	return c.Redirect(http.StatusFound, s.haConfig().AuthCodeURL(x.id))
}

// haCallback is GET /oauth/ha-callback, where Home Assistant sends the browser after the login.
func (s *Server) haCallback(c echo.Context) error {
	pageHeaders(c)
	q := c.QueryParams()
	x, live, ok := s.logins.lookup(q.Get("state"), s.now())
	if !ok {
		return errorPage(c, http.StatusBadRequest, "Login expired", "This login has expired or was already used. Start the connection again from your assistant.")
	}
	if !sameBrowser(x, c.Request()) {
		return errorPage(c, http.StatusBadRequest, "Login started elsewhere", "This login was started in another browser. Start the connection again from your assistant, in this browser.")
	}
	if !live {
		return s.refuseExpired(c, x)
	}
	if q.Get("error") != "" || q.Get("code") == "" {
		s.logins.drop(x.id)
		return c.Redirect(http.StatusFound, withParams(x.redirectURI, url.Values{
			"error": {"access_denied"}, "error_description": {"the Home Assistant login did not complete"}, "state": {x.state}, "iss": {s.issuer},
		}))
	}
	user, err := s.haIdentify(c.Request().Context(), q.Get("code"))
	if err != nil {
		s.logins.drop(x.id)
		msg := "The login could not be confirmed with Home Assistant."
		var he *errHA
		if errors.As(err, &he) {
			s.log.Warn("oauth: Home Assistant login failed", "client_id", x.clientID, "err", he.msg)
			msg = he.msg
		}
		return s.refuse(c, x, http.StatusBadGateway, "the Home Assistant login could not be confirmed", "Home Assistant login failed", msg)
	}
	if !user.IsAdmin {
		s.logins.drop(x.id)
		s.log.Warn("oauth: login refused, not an administrator", "user", user.Name, "client_id", x.clientID)
		return s.refuse(c, x, http.StatusForbidden, "the Home Assistant user is not an administrator", "An administrator is needed",
			"The Home Assistant user “"+user.Name+"” is not an administrator. hamcp can control the whole home, so only Home Assistant administrators may connect an assistant. Log in with an administrator account, or ask an administrator to connect it.")
	}
	if !s.logins.setUser(x.id, user.ID, user.Name, newSecret("")) {
		return errorPage(c, http.StatusBadRequest, "Login expired", "This login was already completed. Start the connection again from your assistant.")
	}
	return c.Redirect(http.StatusSeeOther, "/oauth/consent?login="+url.QueryEscape(x.id))
}

// consentForm is GET /oauth/consent: what is asked, by whom, for whom.
func (s *Server) consentForm(c echo.Context) error {
	x, live, ok := s.logins.lookup(c.QueryParam("login"), s.now())
	if !ok || x.userID == "" {
		return errorPage(c, http.StatusBadRequest, "Login expired", "This login has expired or was already answered. Start the connection again from your assistant.")
	}
	if !sameBrowser(x, c.Request()) {
		return errorPage(c, http.StatusBadRequest, "Login started elsewhere", "This login was started in another browser. Start the connection again from your assistant, in this browser.")
	}
	if !live {
		return s.refuseExpired(c, x)
	}
	return consentPage(c, consentData{
		ClientName: x.clientName, ClientID: x.clientID, ClientIsURL: x.cimd, RedirectHost: redirectHost(x.redirectURI),
		UserName: x.userName, ReadOnly: x.scope == authn.ScopeReadOnly, LoginID: x.id, CSRF: x.csrf,
	})
}

// consentAnswer is POST /oauth/consent. It answers a login once, approving or denying.
func (s *Server) consentAnswer(c echo.Context) error {
	pageHeaders(c)
	id := c.FormValue("login")
	x, live, ok := s.logins.lookup(id, s.now())
	if !ok || x.userID == "" {
		return errorPage(c, http.StatusBadRequest, "Login expired", "This login has expired or was already answered. Start the connection again from your assistant.")
	}
	if !sameBrowser(x, c.Request()) || subtle.ConstantTimeCompare([]byte(c.FormValue("csrf")), []byte(x.csrf)) != 1 {
		return errorPage(c, http.StatusForbidden, "Request refused", "The answer did not come from the consent page hamcp showed in this browser.")
	}
	if !live {
		return s.refuseExpired(c, x)
	}
	if _, ok := s.logins.take(id); !ok {
		return errorPage(c, http.StatusBadRequest, "Login expired", "This login was already answered.")
	}
	back := url.Values{"state": {x.state}, "iss": {s.issuer}}
	switch c.FormValue("action") {
	case "allow":
	case "allow_read":
		x.scope = authn.ScopeReadOnly
	default:
		s.log.Info("oauth: access denied by the user", "user", x.userName, "client_id", x.clientID)
		back.Set("error", "access_denied")
		back.Set("error_description", "the user denied access")
		return c.Redirect(http.StatusSeeOther, withParams(x.redirectURI, back))
	}
	code, err := s.issueCode(c.Request().Context(), x)
	if err != nil {
		s.log.Error("oauth: store authorization code", "err", err)
		return errorPage(c, http.StatusInternalServerError, "Server error", "hamcp could not save the authorization; see the add-on log.")
	}
	s.log.Info("oauth: access granted", "user", x.userName, "client_id", x.clientID, "scope", x.scope)
	back.Set("code", code)
	return c.Redirect(http.StatusSeeOther, withParams(x.redirectURI, back))
}

func (s *Server) issueCode(ctx context.Context, x login) (string, error) {
	code := newSecret(codePrefix)
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_codes
		(code_hash, client_id, redirect_uri, redirect_given, code_challenge, scope, resource, user_id, user_name, refresh, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		hashSecret(code), x.clientID, x.redirectURI, x.redirectGiven, x.challenge, x.scope, x.resource,
		x.userID, x.userName, x.refresh, s.now().Add(codeTTL).UnixMilli())
	return code, err
}

// refuse ends a login the user cannot complete: it shows the user why, then (by a link and an
// automatic redirect) returns the browser to the client with error=access_denied, so the client learns the
// outcome at once instead of waiting for its timeout. Only for logins whose redirect URI was
// checked against the client's registration.
func (s *Server) refuse(c echo.Context, x login, status int, desc, title, msg string) error {
	back := withParams(x.redirectURI, url.Values{
		"error": {"access_denied"}, "error_description": {desc}, "state": {x.state}, "iss": {s.issuer},
	})
	return refusalPage(c, status, refusalData{Title: title, Message: msg, Continue: back, ClientHost: redirectHost(x.redirectURI), Seconds: refusalRedirectSeconds})
}

// refuseExpired answers a login that outlived loginTTL, once.
func (s *Server) refuseExpired(c echo.Context, x login) error {
	s.logins.drop(x.id)
	return s.refuse(c, x, http.StatusBadRequest, "the login expired before it was completed", "Login expired",
		"This login took longer than ten minutes and has expired. Nothing was granted. Start the connection again from your assistant.")
}

// redirectHost is the host a redirect URI sends the browser to, as pages name it.
func redirectHost(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Host != "" {
		return u.Host
	}
	return uri
}
