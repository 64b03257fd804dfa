package panel

import (
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// FuzzTrustedPeer: whatever the remote address string, only the Supervisor's address (and loopback
// when allowed) is accepted, and nothing panics.
func FuzzTrustedPeer(f *testing.F) {
	for _, s := range []string{"172.30.32.2:1", "[::ffff:172.30.32.2]:1", "127.0.0.1:1", "[::1]:1", "172.30.32.2", "", ":", "[::]:0",
		"172.030.032.002:1", "[172.30.32.2]:1", "172.30.32.2%eth0:1", "[fe80::1%lo]:1"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, remote string, loopback bool) {
		p := &Panel{o: Options{AllowLoopback: loopback}}
		if !p.trustedPeer(remote) {
			return
		}
		host, _, err := net.SplitHostPort(remote)
		if err != nil {
			t.Fatalf("accepted %q, which has no host:port", remote)
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			t.Fatalf("accepted %q, whose host is not an IP", remote)
		}
		ip = ip.Unmap()
		if ip != SupervisorAddr && !(loopback && ip.IsLoopback()) {
			t.Fatalf("accepted %q (loopback allowed: %v)", remote, loopback)
		}
	})
}

// FuzzIngressBase: the link prefix is the site root or a well-formed ingress path, never anything
// that could leave the page's origin or break out of an attribute.
func FuzzIngressBase(f *testing.F) {
	for _, s := range []string{"/api/hassio_ingress/abc", "/api/hassio_ingress/abc/", `/api/hassio_ingress/a"b`, "//evil", "/api/hassio_ingress/a\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Ingress-Path", h)
		b := base(r)
		if b == "/" {
			return
		}
		if !strings.HasPrefix(b, "/api/hassio_ingress/") || !strings.HasSuffix(b, "/") || strings.ContainsAny(b, "\"'<> \\?#\r\n") ||
			strings.Count(b, "/") != 4 {
			t.Fatalf("X-Ingress-Path %q gave the prefix %q", h, b)
		}
	})
}

// FuzzRedact: redacting never panics, is stable, and leaves no hamcp token behind.
func FuzzRedact(f *testing.F) {
	f.Add("Bearer hamcp_at_0123456789abcdef ?r=aaaaaaaaaaaaaaaaaaaa")
	f.Fuzz(func(t *testing.T, s string) {
		once := redact(s)
		if redact(once) != once {
			t.Fatalf("redact is not stable on %q", s)
		}
		if secretShapes()[2].MatchString(once) {
			t.Fatalf("a hamcp token survived in %q", once)
		}
	})
}
