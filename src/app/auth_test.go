package app

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
)

// TestHADirectURL: inside the add-on users' tokens are checked, and OAuth codes exchanged, at
// core's own address, built from the Supervisor's /core/info (ssl, port) rather than assumed
// to be http://homeassistant:8123. An explicit ha_auth_url or ha_url wins.
func TestHADirectURL(t *testing.T) {
	t.Parallel()
	h, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	core, _ := url.Parse(h.URL())
	logger := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"add-on", config.Config{SupervisorToken: h.SupervisorToken(), SupervisorURL: h.SupervisorURL()}, "http://homeassistant:" + core.Port()},
		{"add-on with ha_auth_url", config.Config{SupervisorToken: h.SupervisorToken(), SupervisorURL: h.SupervisorURL(), HAAuthURL: "https://ha.lan:8443"}, "https://ha.lan:8443"},
		{"add-on, Supervisor unreachable", config.Config{SupervisorToken: h.SupervisorToken(), SupervisorURL: "http://127.0.0.1:1"}, "http://homeassistant:8123"},
		{"standalone", config.Config{HAURL: "http://ha.local:8123"}, "http://ha.local:8123"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := haDirectURL(context.Background(), &c.cfg, logger); got != c.want {
				t.Fatalf("haDirectURL = %s, want %s", got, c.want)
			}
		})
	}
}

// TestOAuthBrowserURL: inside the add-on, OAuth needs an address users' browsers reach Home
// Assistant at (ha_external_url or HA's external_url); without one hamcp refuses to start with
// a reason instead of sending them to http://homeassistant:8123.
func TestOAuthBrowserURL(t *testing.T) {
	t.Parallel()
	h, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 7}) // external_url: null
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ha, err := homeassistant.New(homeassistant.Config{BaseURL: h.URL(), Token: h.Token()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ha.Close() })
	for _, c := range []struct {
		name    string
		cfg     config.Config
		direct  string // where hamcp reaches Home Assistant itself (haDirectURL)
		want    string
		refused bool
	}{
		{"add-on without any external URL", config.Config{SupervisorToken: "x", ExternalURL: "https://mcp.example.com"}, "http://homeassistant:8123", "", true},
		{"add-on with ha_external_url", config.Config{SupervisorToken: "x", ExternalURL: "https://mcp.example.com", HAExternalURL: "https://home.example.com"},
			"http://homeassistant:8123", "https://home.example.com", false},
		{"add-on with ha_auth_url on the LAN", config.Config{SupervisorToken: "x", ExternalURL: "https://mcp.example.com", HAAuthURL: "http://192.168.1.5:8123"},
			"http://192.168.1.5:8123", "", false},
		{"standalone falls back to ha_url", config.Config{HAURL: h.URL(), ExternalURL: "https://mcp.example.com"}, h.URL(), "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := &App{Config: &c.cfg, HA: ha, Logger: slog.New(slog.DiscardHandler), haDirect: c.direct}
			got, err := a.oauthBrowserURL()
			var cerr *config.Error
			switch {
			case c.refused && (!errors.As(err, &cerr) || cerr.Option != "ha_external_url" || !strings.Contains(err.Error(), "external URL")):
				t.Fatalf("want a start-up error naming ha_external_url, got %q, %v", got, err)
			case !c.refused && (err != nil || got != c.want):
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
