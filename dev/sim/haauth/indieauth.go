package haauth

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// parseClientID applies HA's IndieAuth client identifier rules (components/auth/indieauth.py): an
// http(s) URL with a path, no dot segments, no fragment, no user info, a valid port, and a host that
// is a domain name or a local IP address.
func parseClientID(clientID string) (*url.URL, error) {
	u, err := parseIndieURL(clientID)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("client id must use http or https")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, errors.New("client id cannot contain single-dot or double-dot path segments")
		}
	}
	if u.Fragment != "" || strings.Contains(clientID, "#") {
		return nil, errors.New("client id cannot contain a fragment")
	}
	if u.User != nil {
		return nil, errors.New("client id cannot contain a username or password")
	}
	if u.Hostname() == "" {
		return nil, errors.New("client id has no host")
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()) {
		return nil, errors.New("client id host is an IP address that is not local")
	}
	return u, nil
}

// parseIndieURL canonicalises as IndieAuth 3.2 asks: lower-case host, empty path means "/".
func parseIndieURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if p := u.Port(); p != "" {
		for _, c := range p {
			if c < '0' || c > '9' {
				return nil, errors.New("invalid port")
			}
		}
	}
	u.Host = strings.ToLower(u.Host)
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// verifyRedirectURI is HA's rule: the redirect must share the client id's scheme and host:port.
// (HA would otherwise fetch the client id page for <link rel="redirect_uri">, and special-cases its
// mobile apps; the simulator only serves the same-origin case.)
func verifyRedirectURI(clientID, redirectURI string) bool {
	c, err := parseClientID(clientID)
	if err != nil {
		return false
	}
	r, err := parseIndieURL(redirectURI)
	if err != nil {
		return false
	}
	return c.Scheme == r.Scheme && c.Host == r.Host
}

func verifyClientID(clientID string) bool {
	_, err := parseClientID(clientID)
	return err == nil
}
