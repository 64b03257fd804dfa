package oauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/hamcp/hamcp/src/authn"
)

// parseScope reads a requested scope (RFC 6749 §3.3) and returns the access hamcp grants: full or
// read-only. Scopes hamcp does not know (openid, offline_access…) are ignored as the RFC allows; a
// request naming neither hamcp scope asks for full access, which the consent page shows the user.
func parseScope(raw string) (string, error) {
	if len(raw) > 1000 {
		return "", errors.New("scope is longer than 1000 characters")
	}
	full, read := false, false
	for _, tok := range strings.Split(raw, " ") {
		if tok == "" {
			continue
		}
		for i := 0; i < len(tok); i++ {
			c := tok[i]
			if c < 0x21 || c == 0x22 || c == 0x5c || c > 0x7e {
				return "", fmt.Errorf("scope %q contains a character scopes may not contain; use %s or %s", tok, authn.ScopeFull, authn.ScopeReadOnly)
			}
		}
		switch tok {
		case authn.ScopeFull:
			full = true
		case authn.ScopeReadOnly:
			read = true
		}
	}
	if read && !full {
		return authn.ScopeReadOnly, nil
	}
	return authn.ScopeFull, nil
}

// scopeWithin reports whether a refresh request's scope stays inside the granted one.
func scopeWithin(requested, granted string) bool {
	return requested == granted || requested == authn.ScopeReadOnly
}

// canonicalResource normalises a resource indicator (RFC 8707) for comparison: lower-case scheme
// and host, no default port, no trailing slash. Fragments and user info are refused, as the RFC says.
func canonicalResource(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("resource is empty")
	}
	if len(raw) > maxRedirectURILen {
		return "", errors.New("resource is too long")
	}
	if strings.Contains(raw, "#") {
		return "", errors.New("resource must not contain a fragment")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("resource is not a URL: %v", err)
	}
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "https" && scheme != "http") || u.Host == "" || u.Opaque != "" {
		return "", errors.New("resource must be an absolute http(s) URL")
	}
	if u.User != nil {
		return "", errors.New("resource must not carry user info")
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", errors.New("resource must name a host")
	}
	port := u.Port()
	if port != "" && !allDigits(port) {
		return "", errors.New("resource has an invalid port")
	}
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	out := scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out, nil
}

// checkResource accepts an absent resource (clients of the 2025-03-26 spec do not send one) or
// exactly the MCP resource, in any spelling that normalises to it.
func (s *Server) checkResource(values []string) error {
	for _, v := range values {
		c, err := canonicalResource(v)
		if err != nil {
			return err
		}
		if c != s.resource {
			return fmt.Errorf("resource %q is not this server: tokens here are only issued for %s", v, s.resource)
		}
	}
	return nil
}

// validChallenge checks a PKCE S256 code challenge: the base64url SHA-256 of the verifier, 43 chars.
func validChallenge(ch string) bool {
	if len(ch) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(ch)
	return err == nil
}

// verifyPKCE checks a code verifier (RFC 7636: 43–128 unreserved characters) against its challenge.
func verifyPKCE(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for i := 0; i < len(verifier); i++ {
		c := verifier[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}
