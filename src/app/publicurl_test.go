package app

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/src/oauth"
	"github.com/hamcp/hamcp/src/store"
)

func TestPublicURLProblems(t *testing.T) {
	t.Parallel()
	resolver := map[string][]string{
		"mcp.example.com":    {"203.0.113.7"},
		"mixed.example.com":  {"192.168.1.5", "198.51.100.9"},
		"inside.example.com": {"192.168.1.5"},
		"tail.example.com":   {"100.101.102.103"},
	}
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, s := range resolver[host] {
			out = append(out, netip.MustParseAddr(s))
		}
		if len(out) == 0 {
			return nil, errors.New("no such host")
		}
		return out, nil
	}
	for _, tt := range []struct {
		url  string
		want []string // each must appear in one problem; none means no problem
	}{
		{"https://mcp.example.com", nil},
		{"https://mixed.example.com", nil},
		{"http://mcp.example.com", []string{"claude.ai connects only over https"}},
		{"http://127.0.0.1:8099", []string{"https", "loopback"}},
		{"https://192.168.1.20:8099", []string{"private address"}},
		{"https://[fe80::1]", []string{"link-local"}},
		{"https://100.70.1.2", []string{"Tailscale"}},
		{"https://203.0.113.7", []string{"bare IP address"}},
		{"https://homeassistant.local:8099", []string{"ends in .local"}},
		{"https://ha.home.arpa", []string{"ends in .home.arpa"}},
		{"https://homeassistant", []string{"only this network knows"}},
		{"https://inside.example.com", []string{"resolves only to a private address"}},
		{"https://tail.example.com", []string{"resolves only to a CGNAT or Tailscale address"}},
		{"https://gone.example.com", []string{"does not resolve"}},
		{"not a url", []string{"is not an address"}},
	} {
		t.Run(tt.url, func(t *testing.T) {
			got := publicURLProblems(context.Background(), tt.url, lookup)
			if len(tt.want) == 0 && len(got) > 0 {
				t.Fatalf("problems for a public https address: %q", got)
			}
			all := strings.Join(got, " | ")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems %q do not say %q", all, w)
				}
			}
		})
	}
}

func FuzzPublicURLProblems(f *testing.F) {
	for _, s := range []string{"https://mcp.example.com", "http://127.0.0.1:8099", "https://[::1]", "https://a.local", "https://100.64.0.1", "https://%zz"} {
		f.Add(s)
	}
	public := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("203.0.113.1")}, nil
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := publicURLProblems(context.Background(), raw, public)
		// An address that is not https, or names this machine, is never accepted.
		lower := strings.ToLower(raw)
		if len(got) == 0 && (!strings.HasPrefix(lower, "https://") || strings.Contains(lower, "127.0.0.1") || strings.Contains(lower, "localhost")) {
			t.Fatalf("%q passed the public address check", raw)
		}
	})
}

// TestCheckMetadata fetches hamcp's real OAuth metadata over TLS, as claude.ai does, and finds an
// external_url that differs from the address it was fetched at.
func TestCheckMetadata(t *testing.T) {
	t.Parallel()
	serve := func(t *testing.T, issuer func(srvURL string) string) (*httptest.Server, string) {
		e := echo.New()
		srv := httptest.NewUnstartedServer(e)
		srv.StartTLS()
		t.Cleanup(srv.Close)
		st, err := store.Open(filepath.Join(t.TempDir(), "hamcp.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		o, err := oauth.New(oauth.Options{Store: st, Issuer: issuer(srv.URL), HAInternalURL: "http://homeassistant:8123",
			HACommand: func(context.Context, string, any, any) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		o.Mount(e)
		return srv, srv.URL
	}
	t.Run("names itself", func(t *testing.T) {
		srv, ext := serve(t, func(u string) string { return u })
		if err := checkMetadata(context.Background(), srv.Client(), ext); err != nil {
			t.Fatalf("matching metadata refused: %v", err)
		}
	})
	t.Run("external_url differs", func(t *testing.T) {
		srv, ext := serve(t, func(string) string { return "https://other.example.com" })
		err := checkMetadata(context.Background(), srv.Client(), ext)
		if err == nil || !strings.Contains(err.Error(), `"https://other.example.com/mcp"`) || !strings.Contains(err.Error(), "external_url") {
			t.Fatalf("a mismatch was not named: %v", err)
		}
	})
	t.Run("not hamcp", func(t *testing.T) {
		srv := httptest.NewTLSServer(echo.New())
		t.Cleanup(srv.Close)
		err := checkMetadata(context.Background(), srv.Client(), srv.URL)
		if err == nil || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "/.well-known/") {
			t.Fatalf("a server without hamcp's metadata: %v", err)
		}
	})
}
