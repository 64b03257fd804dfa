package oauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestTokenRefusals: every binding of a code is checked, and a code is spent by any attempt.
func TestTokenRefusals(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	tests := []struct {
		name string
		run  func(t *testing.T) (string, error)
	}{
		{"tampered verifier, then the right one", func(t *testing.T) (string, error) {
			v := oauth2.GenerateVerifier()
			code := e.code(c, v)
			if _, err := e.exchange(c, code, oauth2.GenerateVerifier()); oauthErrorCode(err) != "invalid_grant" {
				t.Errorf("tampered verifier: %v", err)
			}
			_, err := e.exchange(c, code, v)
			return "invalid_grant", err
		}},
		{"missing verifier", func(t *testing.T) (string, error) {
			code := e.code(c, oauth2.GenerateVerifier())
			_, err := c.cfg.Exchange(t.Context(), code, oauth2.SetAuthURLParam("resource", c.resource))
			return "invalid_request", err
		}},
		{"reused code revokes what it issued", func(t *testing.T) (string, error) {
			v := oauth2.GenerateVerifier()
			code := e.code(c, v)
			tok, err := e.exchange(c, code, v)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.exchange(c, code, v)
			if st := e.mcpStatus(tok.AccessToken); st != 401 {
				t.Errorf("token from a replayed code still works: %d", st)
			}
			if _, rerr := e.refresh(c, tok.RefreshToken); oauthErrorCode(rerr) != "invalid_grant" {
				t.Errorf("refresh token from a replayed code still works: %v", rerr)
			}
			return "invalid_grant", err
		}},
		{"redirect_uri differs at the token endpoint", func(t *testing.T) (string, error) {
			v := oauth2.GenerateVerifier()
			code := e.code(c, v)
			other := *c.cfg
			other.RedirectURL = "https://claude.com/api/mcp/auth_callback"
			_, err := other.Exchange(t.Context(), code, oauth2.VerifierOption(v))
			return "invalid_grant", err
		}},
		{"wrong resource at the token endpoint", func(t *testing.T) (string, error) {
			v := oauth2.GenerateVerifier()
			code := e.code(c, v)
			_, err := c.cfg.Exchange(t.Context(), code, oauth2.VerifierOption(v), oauth2.SetAuthURLParam("resource", "https://elsewhere.example/mcp"))
			return "invalid_target", err
		}},
		{"code of another client", func(t *testing.T) (string, error) {
			v := oauth2.GenerateVerifier()
			code := e.code(c, v)
			thief := e.register(claudeCallback, "Thief")
			_, err := e.exchange(thief, code, v)
			return "invalid_grant", err
		}},
		{"expired code", func(t *testing.T) (string, error) {
			v := oauth2.GenerateVerifier()
			code := e.code(c, v)
			e.clock.Advance(codeTTL + time.Second)
			_, err := e.exchange(c, code, v)
			return "invalid_grant", err
		}},
		{"unknown client", func(t *testing.T) (string, error) {
			ghost := e.clientFor("c_00000000000000000000000000000000", claudeCallback)
			_, err := e.exchange(ghost, "hamcp_ac_x", oauth2.GenerateVerifier())
			return "invalid_client", err
		}},
		{"unknown code", func(t *testing.T) (string, error) {
			_, err := e.exchange(c, "hamcp_ac_nope", oauth2.GenerateVerifier())
			return "invalid_grant", err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := tt.run(t)
			if got := oauthErrorCode(err); got != want {
				t.Fatalf("error %q (%v), want %q", got, err, want)
			}
		})
	}
}

// TestAuthorizeRefusals: hamcp never redirects to a URI it cannot vouch for; once it can, it
// reports problems to the client in the redirect.
func TestAuthorizeRefusals(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	native := e.register("http://127.0.0.1:5000/callback", "Native")
	v := oauth2.GenerateVerifier()
	auth := func(cl oauthClient, mutate func(url.Values)) string {
		u, _ := url.Parse(cl.authURL(v, "st"))
		q := u.Query()
		mutate(q)
		u.RawQuery = q.Encode()
		return u.String()
	}
	tests := []struct {
		name      string
		url       string
		status    int    // for error pages
		clientErr string // error sent to the client's redirect URI
		login     bool   // reaches the Home Assistant login page
	}{
		{"unregistered redirect", auth(c, func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") }), 400, "", false},
		{"redirect differing only by path", auth(c, func(q url.Values) { q.Set("redirect_uri", claudeCallback+"x") }), 400, "", false},
		{"unknown client", auth(c, func(q url.Values) { q.Set("client_id", "c_unknown") }), 400, "", false},
		{"duplicate redirect_uri", auth(c, func(q url.Values) { q.Add("redirect_uri", "https://evil.example/cb") }), 400, "", false},
		{"wrong resource", auth(c, func(q url.Values) { q.Set("resource", "https://elsewhere.example/mcp") }), 0, "invalid_target", false},
		{"no PKCE", auth(c, func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }), 0, "invalid_request", false},
		{"plain PKCE", auth(c, func(q url.Values) { q.Set("code_challenge_method", "plain") }), 0, "invalid_request", false},
		{"token response type", auth(c, func(q url.Values) { q.Set("response_type", "token") }), 0, "unsupported_response_type", false},
		{"bad scope characters", auth(c, func(q url.Values) { q.Set("scope", "hamcp:full \"x\"") }), 0, "invalid_scope", false},
		{"resource with trailing slash is the same resource", auth(c, func(q url.Values) { q.Set("resource", e.issuer+"/mcp/") }), 200, "", true},
		{"no resource (2025-03-26 clients)", auth(c, func(q url.Values) { q.Del("resource") }), 200, "", true},
		{"loopback redirect on another port", auth(native, func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:6111/callback") }), 200, "", true},
		{"loopback redirect on another path", auth(native, func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:5000/other") }), 400, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBrowser(t)
			b.home = []string{e.issuer, e.haURL}
			page := b.get(tt.url, outside)
			switch {
			case tt.clientErr != "":
				if page.url == nil || page.url.Query().Get("error") != tt.clientErr || page.url.Query().Get("state") != "st" || page.url.Query().Get("iss") != e.issuer {
					t.Fatalf("want redirect with error %s, got %d %v", tt.clientErr, page.status, page.url)
				}
				if !strings.HasPrefix(page.url.String(), claudeCallback) {
					t.Fatalf("error sent to %v", page.url)
				}
			case tt.login:
				if page.url != nil || page.status != 200 || !strings.Contains(page.body, `name="password"`) {
					t.Fatalf("want the HA login page, got %d %v", page.status, page.url)
				}
			default:
				if page.url != nil || page.status != tt.status || !strings.Contains(page.body, "<h1>") {
					t.Fatalf("want an error page %d, got %d %v", tt.status, page.status, page.url)
				}
			}
		})
	}
}

// TestConsentRefusals: the consent answer must come from the browser that logged in, with the
// page's CSRF token, once.
func TestConsentRefusals(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	start := func(t *testing.T) (*browser, landing) {
		b := newBrowser(t)
		return b, e.loginAtHA(b, c.authURL(oauth2.GenerateVerifier(), "s"), "ada", "ada-pw", claudeCallback)
	}
	tests := []struct {
		name   string
		run    func(t *testing.T) landing
		status int
	}{
		{"wrong CSRF token", func(t *testing.T) landing {
			b, page := start(t)
			path, f := formFields(page.body)
			f.Set("csrf", "forged")
			f.Set("action", "allow")
			return b.postForm(e.issuer+path, f, claudeCallback)
		}, http.StatusForbidden},
		{"answer from another browser", func(t *testing.T) landing {
			_, page := start(t)
			path, f := formFields(page.body)
			f.Set("action", "allow")
			return newBrowser(t).postForm(e.issuer+path, f, claudeCallback)
		}, http.StatusForbidden},
		{"answered twice", func(t *testing.T) landing {
			b, page := start(t)
			path, f := formFields(page.body)
			f.Set("action", "allow")
			if first := b.postForm(e.issuer+path, f, claudeCallback); first.url == nil {
				t.Fatal("first answer failed")
			}
			return b.postForm(e.issuer+path, f, claudeCallback)
		}, http.StatusBadRequest},
		{"login link opened in another browser", func(t *testing.T) landing {
			// The victim opens the HA login link from someone else's /authorize.
			b := newBrowser(t)
			haPage := b.get(c.authURL(oauth2.GenerateVerifier(), "s"), claudeCallback)
			action, f := formFields(haPage.body)
			f.Set("username", "ada")
			f.Set("password", "ada-pw")
			return newBrowser(t).postForm(e.haURL+action, f, claudeCallback)
		}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.run(t)
			if got.url != nil || got.status != tt.status {
				t.Fatalf("got %d %v, want error page %d", got.status, got.url, tt.status)
			}
		})
	}
}
