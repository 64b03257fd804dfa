package oauth

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/store"
)

var testAllowed, _ = newHostSet("AllowedRedirectHosts", defaultRedirectHosts)

func TestValidateRedirectURI(t *testing.T) {
	tests := []struct {
		uri string
		ok  bool
	}{
		{"https://claude.ai/api/mcp/auth_callback", true},
		{"https://CLAUDE.com/api/mcp/auth_callback", true},
		{"http://localhost:33418/callback", true},
		{"http://127.0.0.1/callback", true},
		{"http://[::1]:8080/cb", true},
		{"https://claude.ai:443/cb?x=1", true},
		{"http://claude.ai/cb", false},
		{"https://evil.example/cb", false},
		{"https://claude.ai.evil.example/cb", false},
		{"https://user@claude.ai/cb", false},
		{"https://claude.ai/cb#frag", false},
		{"https://claude.ai:x/cb", false},
		{"javascript:alert(1)", false},
		{"//claude.ai/cb", false},
		{"/relative", false},
		{"https:///cb", false},
		{"https://claude.ai\\@evil.example/", false},
		{"", false},
	}
	for _, tt := range tests {
		err := validateRedirectURI(tt.uri, testAllowed)
		if (err == nil) != tt.ok {
			t.Errorf("validateRedirectURI(%q) = %v, want ok=%v", tt.uri, err, tt.ok)
		}
	}
}

func TestRedirectMatches(t *testing.T) {
	reg := []string{"https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:5000/cb"}
	tests := []struct {
		given string
		ok    bool
	}{
		{"https://claude.ai/api/mcp/auth_callback", true},
		{"https://claude.ai/api/mcp/auth_callback/", false},
		{"https://claude.ai/api/mcp/auth_callback?x=1", false},
		{"https://claude.ai:8443/api/mcp/auth_callback", false},
		{"http://127.0.0.1:6000/cb", true},
		{"http://127.0.0.1/cb", true},
		{"http://localhost:5000/cb", false},
		{"http://127.0.0.1:5000/cb2", false},
		{"https://127.0.0.1:5000/cb", false},
	}
	for _, tt := range tests {
		if got := redirectMatches(reg, tt.given); got != tt.ok {
			t.Errorf("redirectMatches(%q) = %v, want %v", tt.given, got, tt.ok)
		}
	}
}

func TestParseScope(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{"", authn.ScopeFull, false},
		{"hamcp:full", authn.ScopeFull, false},
		{"hamcp:read", authn.ScopeReadOnly, false},
		{"hamcp:full hamcp:read", authn.ScopeFull, false},
		{"offline_access  hamcp:read", authn.ScopeReadOnly, false},
		{"openid profile", authn.ScopeFull, false},
		{"hamcp:read \"x", "", true},
		{"caf\u00e9", "", true},
		{"a\\b", "", true},
		{strings.Repeat("a", 1001), "", true},
	}
	for _, tt := range tests {
		got, err := parseScope(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseScope(%q) = %q, %v; want %q, err=%v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestCanonicalResource(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"HTTPS://MCP.Example.com:443/mcp/", "https://mcp.example.com/mcp", false},
		{"http://127.0.0.1:80/mcp", "http://127.0.0.1/mcp", false},
		{"http://[::1]:8099/mcp", "http://[::1]:8099/mcp", false},
		{"https://mcp.example.com", "https://mcp.example.com", false},
		{"https://mcp.example.com/mcp?x=1", "https://mcp.example.com/mcp?x=1", false},
		{"https://mcp.example.com/mcp#f", "", true},
		{"https://u@mcp.example.com/mcp", "", true},
		{"mcp.example.com/mcp", "", true},
		{"ftp://mcp.example.com/mcp", "", true},
		{"https://mcp.example.com:x/", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := canonicalResource(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("canonicalResource(%q) = %q, %v; want %q, err=%v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestPKCE(t *testing.T) {
	v := oauth2.GenerateVerifier()
	ch := oauth2.S256ChallengeFromVerifier(v)
	tests := []struct {
		name, verifier string
		ok             bool
	}{
		{"right verifier", v, true},
		{"other verifier", oauth2.GenerateVerifier(), false},
		{"too short", v[:42], false},
		{"bad character", v[:42] + "!", false},
		{"challenge as verifier", ch, false},
	}
	if !validChallenge(ch) || validChallenge(ch[:42]) || validChallenge(ch[:42]+"=") {
		t.Fatal("validChallenge")
	}
	for _, tt := range tests {
		if got := verifyPKCE(tt.verifier, ch); got != tt.ok {
			t.Errorf("%s: verifyPKCE = %v", tt.name, got)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no store", Options{Issuer: "https://x.example", HAInternalURL: "http://ha:8123"}, "Store"},
		{"no issuer", Options{Store: st, HAInternalURL: "http://ha:8123"}, "Issuer"},
		{"http issuer off loopback", Options{Store: st, Issuer: "http://mcp.example.com", HAInternalURL: "http://ha:8123"}, "https"},
		{"issuer with path", Options{Store: st, Issuer: "https://x.example/hamcp", HAInternalURL: "http://ha:8123"}, "origin"},
		{"no HA", Options{Store: st, Issuer: "https://x.example"}, "HAInternalURL"},
		{"bad redirect host", Options{Store: st, Issuer: "https://x.example", HAInternalURL: "http://ha:8123", AllowedRedirectHosts: []string{"https://claude.ai/"}}, "AllowedRedirectHosts"},
		{"no way to re-check users", Options{Store: st, Issuer: "https://x.example", HAInternalURL: "http://ha:8123"}, "HACommand"},
	}
	for _, tt := range tests {
		if _, err := New(tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error naming %s", tt.name, err, tt.want)
		}
	}
	s, err := New(Options{Store: st, Issuer: "https://MCP.example.com/", HAInternalURL: "http://homeassistant:8123",
		HACommand: func(context.Context, string, any, any) error { return errors.New("not called here") }})
	if err != nil {
		t.Fatal(err)
	}
	if s.Resource() != "https://mcp.example.com/mcp" || s.ResourceMetadataURL() != "https://mcp.example.com/.well-known/oauth-protected-resource/mcp" || s.haClientID != "https://mcp.example.com/" {
		t.Fatalf("derived URLs: %s %s %s", s.Resource(), s.ResourceMetadataURL(), s.haClientID)
	}
	u, _ := url.Parse(s.haConfig().AuthCodeURL("st"))
	if u.Host != "homeassistant:8123" || u.Query().Get("redirect_uri") != "https://mcp.example.com/oauth/ha-callback" || u.Query().Get("client_id") != "https://mcp.example.com/" {
		t.Fatalf("HA authorize URL = %s", u)
	}
	if _, err := s.Verifier().Verify(context.Background(), "an-ha-long-lived-token"); err != authn.ErrNotMine {
		t.Fatalf("foreign token: %v, want ErrNotMine", err)
	}
	if _, err := s.Verifier().Verify(context.Background(), accessPrefix+"forged"); err != authn.ErrInvalidToken {
		t.Fatalf("unknown token: %v, want ErrInvalidToken", err)
	}
}

func FuzzRedirectURI(f *testing.F) {
	for _, s := range []string{"https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:5/cb", "http://[::1]/x", "https://claude.ai@evil/", "https://claude.ai%2eevil/"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, registered, given string) {
		if validateRedirectURI(registered, testAllowed) != nil {
			return
		}
		u, err := url.Parse(registered)
		if err != nil || !testAllowed[strings.ToLower(u.Hostname())] || u.User != nil || u.Fragment != "" {
			t.Fatalf("accepted %q", registered)
		}
		if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
			t.Fatalf("accepted plain http off loopback: %q", registered)
		}
		if !redirectMatches([]string{registered}, given) {
			return
		}
		g, err := url.Parse(given)
		if err != nil {
			t.Fatalf("matched unparsable %q", given)
		}
		if given != registered && (g.Scheme != "http" || !strings.EqualFold(g.Hostname(), u.Hostname()) || g.EscapedPath() != u.EscapedPath()) {
			t.Fatalf("%q matched registered %q", given, registered)
		}
	})
}

func FuzzScope(f *testing.F) {
	for _, s := range []string{"", "hamcp:read", "hamcp:full hamcp:read", "openid\thamcp:read", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := parseScope(raw)
		if err != nil {
			return
		}
		if got != authn.ScopeFull && got != authn.ScopeReadOnly {
			t.Fatalf("parseScope(%q) = %q", raw, got)
		}
		if got == authn.ScopeReadOnly && !strings.Contains(raw, authn.ScopeReadOnly) {
			t.Fatalf("read-only without asking: %q", raw)
		}
		if got == authn.ScopeReadOnly && strings.Contains(" "+raw+" ", " "+authn.ScopeFull+" ") {
			t.Fatalf("asked for full, got read-only: %q", raw)
		}
	})
}

func FuzzResource(f *testing.F) {
	for _, s := range []string{"https://mcp.example.com/mcp", "HTTP://A:80/", "http://[::1]:1/x?y", "https://a/%2F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := canonicalResource(raw)
		if err != nil {
			return
		}
		again, err := canonicalResource(c)
		if err != nil || again != c {
			t.Fatalf("not idempotent: %q → %q → %q (%v)", raw, c, again, err)
		}
		if strings.Contains(c, "#") || strings.HasSuffix(c, "/") && !strings.Contains(c, "?") {
			t.Fatalf("canonical form %q keeps a fragment or trailing slash", c)
		}
	})
}

func FuzzClientMetadata(f *testing.F) {
	f.Add(`{"redirect_uris":["https://claude.ai/cb"],"token_endpoint_auth_method":"none"}`)
	f.Add(`{"redirect_uris":["http://localhost:1/cb"],"application_type":"web"}`)
	f.Add(`{"redirect_uris":["https://claude.ai/cb"],"grant_types":["refresh_token"]}`)
	f.Fuzz(func(t *testing.T, body string) {
		m, err := parseClientMetadata([]byte(body), testAllowed, true)
		if err != nil {
			return
		}
		if len(m.RedirectURIs) == 0 || m.TokenEndpointAuthMethod == "" || m.ApplicationType == "" {
			t.Fatalf("accepted incomplete metadata %+v", m)
		}
		for _, r := range m.RedirectURIs {
			if validateRedirectURI(r, testAllowed) != nil {
				t.Fatalf("accepted redirect %q", r)
			}
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	st, err := store.Open(filepath.Join(b.TempDir(), "h.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := New(Options{Store: st, Issuer: "https://mcp.example.com", HAInternalURL: "http://ha:8123"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	tx, _ := st.DB().BeginTx(ctx, nil)
	f := family{id: "g_bench", clientID: "c", userID: "u", scope: authn.ScopeFull, resource: s.resource}
	tx.ExecContext(ctx, `INSERT INTO oauth_families (family_id, client_id, user_id, scope, resource, created_at) VALUES (?, ?, ?, ?, ?, 0)`, f.id, f.clientID, f.userID, f.scope, f.resource)
	resp, err := s.issueTokens(ctx, tx, f, s.now())
	if err != nil {
		b.Fatal(err)
	}
	tx.Commit()
	v := s.Verifier()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.Verify(ctx, resp.AccessToken); err != nil {
				b.Fatal(err)
			}
		}
	})
}
