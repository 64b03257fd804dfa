package app

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/store"
)

// TestOAuthCIMDOptions: a bad oauth_cimd_private_hosts or oauth_cimd_ca_file stops start-up
// with an error naming that option (not external_url) and saying what to do.
func TestOAuthCIMDOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "hamcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	for _, c := range []struct {
		name        string
		hosts       []string
		caFile      string
		option, say string // "" option: accepted
	}{
		{"a host and port", []string{"agent.lan:8443"}, "", "", ""},
		{"a URL instead of a host", []string{"https://agent.lan:8443/c.json"}, "", "oauth_cimd_private_hosts", "host and port such as client.lan:8443"},
		{"a wildcard", []string{"*.lan"}, "", "oauth_cimd_private_hosts", "no scheme, path or wildcard"},
		{"a missing CA file", []string{"agent.lan:8443"}, filepath.Join(dir, "missing.pem"), "oauth_cimd_ca_file", "ssl folder"},
		{"a CA file without a certificate", []string{"agent.lan:8443"}, notPEM, "oauth_cimd_ca_file", "no PEM certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := config.Config{ExternalURL: "https://mcp.example.com", HAExternalURL: "https://home.example.com",
				OAuthCIMDPrivateHosts: c.hosts, OAuthCIMDCAFile: c.caFile}
			a := &App{Config: &cfg, Store: st, Logger: slog.New(slog.DiscardHandler), haDirect: "http://127.0.0.1:1"}
			_, err := a.oauthServer()
			var cerr *config.Error
			switch {
			case c.option == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.option != "" && (!errors.As(err, &cerr) || cerr.Option != c.option || !strings.Contains(err.Error(), c.say)):
				t.Fatalf("got %v, want an error naming %s that says %q", err, c.option, c.say)
			}
		})
	}
}
