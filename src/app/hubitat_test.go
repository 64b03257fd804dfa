package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/sim"
	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Every Hubitat setting is checked at start, and a bad one names its option (and never echoes the
// token or password).
func TestHubitatOptions(t *testing.T) {
	t.Parallel()
	const token = "3f7c1a52-9b1e-4a8e-9c57-1d2e3f4a5b6c"
	good := func(c *config.Config) {
		c.HubitatURL, c.HubitatAppID, c.HubitatToken, c.HubitatEvents = "http://192.168.1.20", "7", token, "auto"
	}
	tests := []struct {
		name   string
		set    func(*config.Config)
		option string // "" = accepted
	}{
		{"no hub", func(*config.Config) {}, ""},
		{"a hub", good, ""},
		{"app id without a hub", func(c *config.Config) { c.HubitatAppID = "7" }, "hubitat_app_id"},
		{"admin write without a hub", func(c *config.Config) { c.HubitatAdminWrite = true }, "hubitat_admin_write"},
		{"token without a hub", func(c *config.Config) { c.HubitatToken = token }, "hubitat_token"},
		{"no app id", func(c *config.Config) { good(c); c.HubitatAppID = "" }, "hubitat_app_id"},
		{"app id not a number", func(c *config.Config) { good(c); c.HubitatAppID = "maker" }, "hubitat_app_id"},
		{"no token", func(c *config.Config) { good(c); c.HubitatToken = "" }, "hubitat_token"},
		{"token with a space", func(c *config.Config) { good(c); c.HubitatToken = token + " x" }, "hubitat_token"},
		{"url with the token in it", func(c *config.Config) { good(c); c.HubitatURL = "http://hub/apps/api/7/devices?access_token=" + token }, "hubitat_url"},
		{"url without a scheme", func(c *config.Config) { good(c); c.HubitatURL = "192.168.1.20" }, "hubitat_url"},
		{"user without password", func(c *config.Config) { good(c); c.HubitatUsername = "admin" }, "hubitat_password"},
		{"device not an id", func(c *config.Config) { good(c); c.HubitatDevices = []string{"12", "Porch"} }, "hubitat_devices"},
		{"posturl without external_url", func(c *config.Config) { good(c); c.HubitatEvents = "posturl" }, "hubitat_events"},
		{"posturl with external_url", func(c *config.Config) {
			good(c)
			c.HubitatEvents, c.ExternalURL = "posturl", "https://mcp.example.com/"
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := &config.Config{}
			tc.set(cfg)
			o, err := hubitatOptions(cfg)
			var ce *config.Error
			switch {
			case tc.option == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.option != "" && (!errors.As(err, &ce) || ce.Option != tc.option):
				t.Fatalf("error %v, want one naming %s", err, tc.option)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Errorf("the error shows the token: %v", err)
			}
			if err == nil && cfg.ExternalURL != "" && o.PushURL != "https://mcp.example.com/hubitat/events" {
				t.Errorf("push URL %q", o.PushURL)
			}
		})
	}
}

// The Hubitat tools exist only when a hub is configured; asking for their toolsets without one
// says what is missing.
func TestHubitatToolsOnlyWithAHub(t *testing.T) {
	t.Parallel()
	home, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { home.Close() })
	hub := simhub.New(simhub.Options{})
	hubURL, err := hub.Start(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	base := func(c *config.Config) {
		c.HAURL, c.HAToken, c.DataDir, c.FSBase = home.URL(), home.Token(), t.TempDir(), home.Sandbox().Root
		c.ToolMode = "all"
	}
	tests := []struct {
		name      string
		set       func(*config.Config)
		hubitat   bool
		refuseOpt string
	}{
		{"no hub", func(*config.Config) {}, false, ""},
		{"a hub", func(c *config.Config) {
			c.HubitatURL, c.HubitatAppID, c.HubitatToken = hubURL, hub.AppID(), hub.Token()
		}, true, ""},
		{"a Hubitat toolset without a hub", func(c *config.Config) { c.Toolsets = []string{"states", "hubitat_devices"} }, false, "toolsets"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(config.Sources{NoOptionsFile: true, Env: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			base(cfg)
			tc.set(cfg)
			a, err := New(context.Background(), cfg, Options{Logger: slog.New(slog.DiscardHandler)})
			if tc.refuseOpt != "" {
				var ce *config.Error
				if !errors.As(err, &ce) || ce.Option != tc.refuseOpt || !strings.Contains(ce.Reason, "hubitat_url") {
					t.Fatalf("error %v, want one about %s naming hubitat_url", err, tc.refuseOpt)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			n := 0
			for _, tool := range a.Registry.Select(toolkit.Filter{}) {
				if strings.HasPrefix(tool.Name(), "hubitat_") {
					n++
				}
			}
			if (n > 0) != tc.hubitat || (a.Hubitat != nil) != tc.hubitat {
				t.Errorf("%d Hubitat tools, client %v", n, a.Hubitat != nil)
			}
		})
	}
}
