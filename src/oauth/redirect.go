package oauth

import (
	"fmt"
	"net/url"
	"strings"
)

const maxRedirectURILen = 2000

// validateRedirectURI decides whether a client may register this redirect URI: an absolute https URL
// on an allowed host, or plain http on a loopback host that is itself allowed (native clients such as
// Claude Code listen on 127.0.0.1). The error says which rule failed.
func validateRedirectURI(raw string, allowed hostSet) error {
	if raw == "" {
		return fmt.Errorf("redirect URI is empty")
	}
	if len(raw) > maxRedirectURILen {
		return fmt.Errorf("redirect URI is longer than %d characters", maxRedirectURILen)
	}
	if strings.ContainsAny(raw, "#\\ \t\r\n") {
		return fmt.Errorf("redirect URI %q must not contain a fragment, backslash or whitespace", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("redirect URI %q is not a URL: %v", raw, err)
	}
	if u.User != nil {
		return fmt.Errorf("redirect URI %q must not carry user info", raw)
	}
	host := strings.ToLower(u.Hostname())
	if u.Opaque != "" || host == "" {
		return fmt.Errorf("redirect URI %q must be an absolute URL with a host, e.g. https://claude.ai/api/mcp/auth_callback", raw)
	}
	if p := u.Port(); p != "" && !allDigits(p) {
		return fmt.Errorf("redirect URI %q has an invalid port", raw)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopbackHost(host) {
			return fmt.Errorf("redirect URI %q uses plain http on a host that is not loopback: use https", raw)
		}
	default:
		return fmt.Errorf("redirect URI %q must use https (or http on loopback), not %q", raw, u.Scheme)
	}
	if !allowed[host] {
		return fmt.Errorf("redirect host %q is not allowed: add it to the allowed redirect hosts option if you trust this client", host)
	}
	return nil
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// redirectMatches is the exact-match rule, with the one exception OAuth 2.1 (and RFC 8252 §7.3)
// requires: for loopback redirects the port is chosen when the native app starts, so it may differ.
func redirectMatches(registered []string, given string) bool {
	for _, r := range registered {
		if r == given {
			return true
		}
	}
	g, err := url.Parse(given)
	if err != nil || g.Scheme != "http" || !isLoopbackHost(g.Hostname()) || g.User != nil || g.Fragment != "" {
		return false
	}
	for _, r := range registered {
		ru, err := url.Parse(r)
		if err != nil || ru.Scheme != "http" || !isLoopbackHost(ru.Hostname()) {
			continue
		}
		if strings.EqualFold(ru.Hostname(), g.Hostname()) && ru.EscapedPath() == g.EscapedPath() && ru.RawQuery == g.RawQuery {
			return true
		}
	}
	return false
}

// withParams adds the authorization response parameters to the client's redirect URI, keeping any
// query it registered.
func withParams(redirectURI string, params url.Values) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI
	}
	q := u.Query()
	for k, vs := range params {
		if len(vs) > 0 && vs[0] != "" {
			q.Set(k, vs[0])
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
