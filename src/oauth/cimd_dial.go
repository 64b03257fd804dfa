package oauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// A client id metadata document URL comes from a stranger. Before hamcp connects anywhere for it,
// the address is checked at the one point where it is final: net.Dialer.Control runs after name
// resolution, for every address the dialer is about to connect to, so DNS rebinding (a name that
// resolves to a public address when checked and to 127.0.0.1 when used) finds nothing to exploit.
// Redirects are not followed; if that ever changes, every hop still dials through the same check.

// errAddressRefused is the dial error for a checked address that is not public. The caller never
// shows it (see errCIMDUnreachable); it reaches the log.
var errAddressRefused = errors.New("address is not a public unicast address")

// nonPublicPrefixes are special-purpose ranges netip's predicates do not cover (IANA IPv4 and IPv6
// special-purpose registries). The IPv6 translation ranges embed IPv4 addresses (6to4, Teredo,
// NAT64, IPv4-compatible), which could lead back to a refused IPv4 address through a gateway.
var nonPublicPrefixes = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // carrier-grade NAT (RFC 6598)
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"240.0.0.0/4",     // reserved, and 255.255.255.255
		"::/96",           // IPv4-compatible (deprecated)
		"64:ff9b::/96",    // NAT64
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard-only
		"2001::/32",       // Teredo
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4
		"fec0::/10",       // site-local (deprecated)
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// publicAddr reports whether a is a global unicast address hamcp may fetch a document from:
// never loopback, private (RFC 1918, fc00::/7), link-local, unspecified, multicast, CGNAT or
// another special-purpose range, whatever the notation (IPv4-mapped IPv6 is unmapped first).
func publicAddr(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() ||
		a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// checkDialAddress is the dialer's Control: address is the resolved "ip:port" about to be used.
func checkDialAddress(network, address string, allowLoopback bool) error {
	a, err := dialAddr(network, address)
	if err != nil {
		return err
	}
	if publicAddr(a) || (allowLoopback && a.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("%w: %s", errAddressRefused, a)
}

// dialAddr is the resolved TCP address a dialer's Control is asked about, unmapped and unzoned.
func dialAddr(network, address string) (netip.Addr, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return netip.Addr{}, fmt.Errorf("%w: network %s", errAddressRefused, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%w: %q", errAddressRefused, address)
	}
	return ap.Addr().WithZone("").Unmap(), nil
}

// cimdHTTPClient is the client for metadata documents: the configured client's TLS settings, but
// its own dialer with the address check, no proxy (a proxy would connect on hamcp's behalf to an
// address nobody checked) and no redirects. With private set it is the fetcher for the listed
// hosts only (cimd_private.go): it refuses to dial any other name, and trusts roots if given.
func (s *Server) cimdHTTPClient(private privateHosts, roots *x509.CertPool) *http.Client {
	var tr *http.Transport
	if base, ok := s.o.HTTPClient.Transport.(*http.Transport); ok {
		tr = base.Clone()
	} else {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	allowLoopback := s.o.cimdAllowLoopback
	check := func(network, address string, _ syscall.RawConn) error {
		return checkDialAddress(network, address, allowLoopback)
	}
	if private != nil {
		check = func(network, address string, _ syscall.RawConn) error { return privateDialAddr(network, address) }
		if roots != nil {
			tr.TLSClientConfig = tr.TLSClientConfig.Clone()
			if tr.TLSClientConfig == nil {
				tr.TLSClientConfig = &tls.Config{}
			}
			tr.TLSClientConfig.RootCAs = roots
		}
	}
	d := &net.Dialer{Timeout: cimdTimeout, Control: check}
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if private != nil && !private.hasDialAddr(addr) {
			return nil, fmt.Errorf("%w: %s is not a listed private client host", errAddressRefused, addr)
		}
		return d.DialContext(ctx, network, addr)
	}
	tr.DialTLSContext = nil
	tr.MaxIdleConns, tr.IdleConnTimeout = 8, 30*time.Second
	return &http.Client{
		Transport:     tr,
		Timeout:       cimdTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
