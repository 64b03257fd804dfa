package app

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/panel"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
)

// The Hubitat tools exist only when a hub is configured; asking for their toolsets without one
// says what is missing. With a hub, the panel lists the rules hamcp stopped, from the integration.
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
	base := func(c *config.Config, dataDir string) {
		c.HAURL, c.HAToken, c.DataDir, c.FSBase = home.URL(), home.Token(), dataDir, home.Sandbox().Root
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
			dataDir := t.TempDir()
			stoppedAt := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			seedStoppedRule(t, dataDir, "Toggle forever", stoppedAt)
			base(cfg, dataDir)
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
			_, running := a.Integration("hubitat")
			if (n > 0) != tc.hubitat || running != tc.hubitat {
				t.Errorf("%d Hubitat tools, integration running %v", n, running)
			}
			want := []panel.StoppedRule(nil)
			if tc.hubitat {
				want = []panel.StoppedRule{{Name: "Toggle forever", Reason: "stopped by hamcp: 61 runs in a minute", At: stoppedAt}}
			}
			if got := a.panelStatus(context.Background()).StoppedRules; !reflect.DeepEqual(got, want) {
				t.Errorf("the panel's stopped rules %+v, want %+v", got, want)
			}
		})
	}
}

// seedStoppedRule leaves hamcp's store in dataDir as a run that ran away leaves it: the rule
// disabled, with why and when.
func seedStoppedRule(t *testing.T, dataDir, name string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(filepath.Join(dataDir, "hamcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hs, err := hubstore.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	e := rules.New(rules.Options{Store: hs})
	defer e.Close()
	r, probs, err := e.Create(ctx, rules.Rule{Name: name, Triggers: []rules.Trigger{{Type: "periodic", Interval: 1, Unit: "hours"}},
		Actions: []rules.Action{{Type: "log", Message: "tick"}}})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	if _, err := hs.DB().ExecContext(ctx, `UPDATE hubitat_rules SET enabled = 0,
		body = json_set(body, '$.disabledReason', ?, '$.disabledAt', ?) WHERE id = ?`,
		"stopped by hamcp: 61 runs in a minute", at.Format(time.RFC3339Nano), r.ID); err != nil {
		t.Fatal(err)
	}
}

// A hub behind Hub Security without a login in hamcp's options does not give its location: the
// rule engine schedules by Home Assistant's (the add-on's own), and says so.
func TestHubitatRulesTakeHomeAssistantsPlace(t *testing.T) {
	t.Parallel()
	home, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { home.Close() })
	hub := simhub.New(simhub.Options{Username: "admin", Password: "pw"})
	hubURL, err := hub.Start(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	cfg, err := config.Load(config.Sources{NoOptionsFile: true, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	cfg.HAURL, cfg.HAToken, cfg.DataDir, cfg.FSBase = home.URL(), home.Token(), t.TempDir(), home.Sandbox().Root
	cfg.HubitatURL, cfg.HubitatAppID, cfg.HubitatToken = hubURL, hub.AppID(), hub.Token()
	a, err := New(context.Background(), cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ha, err := a.HA.Config(context.Background())
	if err != nil || ha.TimeZone == "" {
		t.Fatalf("Home Assistant's config: %+v %v", ha, err)
	}
	in, ok := a.Integration("hubitat")
	if !ok {
		t.Fatal("no hubitat integration")
	}
	e := in.(interface{ Rules() *rules.Engine }).Rules()
	r, probs, err := e.Create(context.Background(), rules.Rule{Name: "dusk", Enabled: true,
		Triggers: []rules.Trigger{{Type: "time", Sunset: true}}, Actions: []rules.Action{{Type: "log", Message: "dusk"}}})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	testkit.Eventually(t, "the sunset trigger armed from Home Assistant's coordinates", func() bool {
		d, err := e.Diagnostics(context.Background(), r.ID)
		return err == nil && d.LocationError == "" && strings.Contains(d.LocationSource, "Home Assistant") &&
			len(d.Triggers) == 1 && d.Triggers[0].Armed && d.Triggers[0].Next != nil && d.Triggers[0].Next.Location().String() == ha.TimeZone
	})
}
