package hubitat

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/integration"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
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
		{"rule endpoint without a hub", func(c *config.Config) {
			c.HubitatRMEndpoint = "http://192.168.1.20/apps/api/14/trigger?access_token=" + token
		}, "hubitat_rm_endpoint"},
		{"rule endpoint", func(c *config.Config) {
			good(c)
			c.HubitatRMEndpoint = "http://192.168.1.20/apps/api/14/trigger?access_token=" + token
		}, ""},
		{"cloud rule endpoint", func(c *config.Config) {
			good(c)
			c.HubitatRMEndpoint = "https://cloud.hubitat.com/api/x/apps/14/trigger?access_token=" + token
		}, "hubitat_rm_endpoint"},
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
			o, err := Options(cfg)
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

// The integration, started over a simulated hub, brings what the app composes: its tools, the
// hub_admin category, the push route (which refuses anyone without the secret) and a health check
// that reports the link without the hub's address.
func TestIntegrationOverASimulatedHub(t *testing.T) {
	t.Parallel()
	sim := simhub.New(simhub.Options{})
	url, err := sim.Start(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	st, err := store.Open(filepath.Join(t.TempDir(), "hamcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	if h, err := New(&config.Config{}); h != nil || err != nil {
		t.Fatalf("no hub configured: %v, %v; want nothing", h, err)
	}
	if in, err := Kind.New(&config.Config{}); in != nil || err != nil {
		t.Fatalf("Kind.New without a hub: %v, %v; want a nil Integration", in, err)
	}
	cfg := &config.Config{HubitatURL: url, HubitatAppID: sim.AppID(), HubitatToken: sim.Token(), ExternalURL: "https://mcp.example.com"}
	in, err := Kind.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// As the app does: the integration's tables first.
	if err := st.Migrate(context.Background(), in.Migrations()...); err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background(), integration.Host{Store: st, Logger: slog.New(slog.DiscardHandler), Version: "1.2.3"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if in.Name() != "hubitat" || len(in.Tools()) != len(Kind.Declared()) {
		t.Errorf("%s: %d tools, %d declared", in.Name(), len(in.Tools()), len(Kind.Declared()))
	}
	cats := in.Categories()
	if len(cats) != 1 || cats[0].Category != "hub_admin" {
		t.Fatalf("categories %+v, want hub_admin", cats)
	}
	if c, err := permission.ParseCategory("hub_admin"); err != nil || c != cats[0].Category {
		t.Errorf("hub_admin is not a known permission category: %v", err)
	}
	routes := in.Routes()
	if len(routes) != 1 || routes[0].Path != PushPath+"/:secret" {
		t.Fatalf("routes %+v", routes)
	}
	rec := httptest.NewRecorder()
	routes[0].Handler.ServeHTTP(rec, httptest.NewRequest("POST", PushPath+"/guessed", strings.NewReader(`{}`)))
	if rec.Code != 404 {
		t.Errorf("a push without the secret: %d, want 404", rec.Code)
	}
	if stopped, err := in.(integration.StatusReporter).StoppedRules(context.Background()); len(stopped) != 0 || err != nil {
		t.Errorf("stopped rules of a fresh store: %v %v", stopped, err)
	}
	testkit.Eventually(t, "the hub link to be healthy", func() bool { ok, _ := in.Health(context.Background()); return ok })
	_, detail := in.Health(context.Background())
	if b, _ := json.Marshal(detail); strings.Contains(string(b), strings.TrimPrefix(url, "http://")) || !strings.Contains(string(b), `"link":"connected"`) {
		t.Errorf("health detail %s: want the link, never the hub's address", b)
	}
}
