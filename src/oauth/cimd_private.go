package oauth

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Client metadata documents on the household's own network. By default a document is only
// fetched from a public address (cimd_dial.go): the client id URL is chosen by whoever starts a
// login, so anything else would let a stranger make hamcp probe the LAN. An HA administrator can
// name exact hosts (host:port) of their own MCP clients whose documents may come from a private
// address. The name is what is allowed, not an address: a request is routed to the private
// fetcher only when its URL's host:port is listed, the fetcher's dialer checks the name again,
// and then connects to whatever that name resolves to. Every other client id keeps the public-only
// fetcher, so listing client.lan:8443 opens nothing else, under any notation or port.

// privateHosts is a set of host:port keys as cimdHostKey writes them.
type privateHosts map[string]bool

// cimdHostKey is the comparable form of a host and port: lower case, IPv6 in brackets, the port
// explicit (443 when the URL has none).
func cimdHostKey(host, port string) string {
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(strings.ToLower(strings.Trim(host, "[]")), port)
}

// newPrivateHosts checks the administrator's list: each entry is host:port or a host (port 443),
// nothing else.
func newPrivateHosts(entries []string) (privateHosts, error) {
	set := privateHosts{}
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		u, err := url.Parse("https://" + e)
		if err != nil || u.Host != e || u.Hostname() == "" || u.User != nil || u.Path != "" || strings.ContainsAny(e, "/?#@ *\\") ||
			(u.Port() == "" && strings.HasSuffix(e, ":")) {
			return nil, &FieldError{Field: "CIMDPrivateHosts", Reason: fmt.Sprintf("entry %q must be a host and port such as client.lan:8443 (no scheme, path or wildcard)", raw)}
		}
		set[cimdHostKey(u.Hostname(), u.Port())] = true
	}
	return set, nil
}

// hasURL reports whether a client id URL names a listed host.
func (p privateHosts) hasURL(u *url.URL) bool {
	return len(p) > 0 && u.Scheme == "https" && p[cimdHostKey(u.Hostname(), u.Port())]
}

// hasDialAddr reports whether the transport's dial address (the URL's host:port, before name
// resolution) is listed.
func (p privateHosts) hasDialAddr(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	return err == nil && p[cimdHostKey(host, port)]
}

// privateDialAddr is the address check for a listed host: its name is the administrator's, so any
// unicast address it resolves to may be used; what is never a host is still refused.
func privateDialAddr(network, address string) error {
	a, err := dialAddr(network, address)
	if err != nil {
		return err
	}
	if !a.IsValid() || a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return fmt.Errorf("%w: %s", errAddressRefused, a)
	}
	return nil
}

// cimdRoots is the system's trust store plus the administrator's PEM certificates, for documents
// on listed hosts only (a LAN client usually has a self-signed certificate or a private CA).
func cimdRoots(pem string) (*x509.CertPool, error) {
	if strings.TrimSpace(pem) == "" {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM([]byte(pem)) {
		return nil, &FieldError{Field: "CIMDRootCAs", Reason: "holds no PEM certificate (paste the client's certificate or its CA, from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----)"}
	}
	return pool, nil
}

// FieldError is a bad value in one field of Options, so the caller can name its own option.
type FieldError struct {
	Field  string // the Options field, e.g. CIMDPrivateHosts
	Reason string
}

func (e *FieldError) Error() string { return "oauth: " + e.Field + " " + e.Reason }
