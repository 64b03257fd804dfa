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
