package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
)

var (
	homeOnce sync.Once
	home     *sim.Home
	homeErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if home != nil {
		_ = home.Close()
	}
	os.Exit(code)
}

func simClient(t *testing.T) *Client {
	t.Helper()
	homeOnce.Do(func() { home, homeErr = sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 3}) })
	if homeErr != nil {
		t.Fatalf("starting the simulated home: %v", homeErr)
	}
	c, err := New(Config{BaseURL: home.SupervisorURL(), Token: home.SupervisorToken()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantAPIError(t *testing.T, err error, status int) *APIError {
	t.Helper()
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != status || apiErr.Message == "" {
		t.Fatalf("want *APIError %d with a message, got %v", status, err)
	}
	return apiErr
}

func TestInfoEndpoints(t *testing.T) {
	c := simClient(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		check func() error
	}{
		{"core", func() error {
			v, err := c.CoreInfo(ctx)
			return expect(err, v.Version != "" && v.Port > 0 && len(v.Raw) > 0, "core info", v)
		}},
		{"host", func() error {
			v, err := c.HostInfo(ctx)
			return expect(err, v.Hostname != "" && v.DiskTotal > 0 && len(v.Raw) > 0, "host info", v)
		}},
		{"os", func() error {
			v, err := c.OSInfo(ctx)
			return expect(err, v.Version != "" && v.Board != "", "os info", v)
		}},
		{"supervisor", func() error {
			v, err := c.SupervisorInfo(ctx)
			return expect(err, v.Version != "" && v.Channel != "", "supervisor info", v)
		}},
		{"resolution", func() error {
			v, err := c.ResolutionInfo(ctx)
			return expect(err, v.Checks != nil || v.Issues != nil || v.Unsupported != nil, "resolution", v)
		}},
		{"backups", func() error {
			v, err := c.Backups(ctx)
			return expect(err, len(v) > 0 && v[0].Slug != "" && v[0].Type != "", "backups", v)
		}},
		{"ping via Do", func() error { return c.Do(ctx, http.MethodGet, "/supervisor/ping", nil, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func expect(err error, ok bool, what string, v any) error {
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: unexpected content %+v", what, v)
	}
	return nil
}

func TestAddonLifecycle(t *testing.T) {
	c := simClient(t)
	ctx := context.Background()
	addons, err := c.Addons(ctx)
	if err != nil || len(addons) == 0 {
		t.Fatalf("Addons: %v, %v", addons, err)
	}
	var slug string
	for _, a := range addons {
		if a.State == "started" {
			slug = a.Slug
			break
		}
	}
	if slug == "" {
		t.Fatalf("no started add-on in %+v", addons)
	}
	info, err := c.AddonInfo(ctx, slug)
	if err != nil || info.Slug != slug || info.State != "started" || len(info.Raw) == 0 {
		t.Fatalf("AddonInfo: %+v, %v", info, err)
	}
	steps := []struct{ action, state string }{{"stop", "stopped"}, {"start", "started"}, {"restart", "started"}}
	for _, s := range steps {
		if err := c.AddonAction(ctx, slug, s.action); err != nil {
			t.Fatalf("%s: %v", s.action, err)
		}
		info, err := c.AddonInfo(ctx, slug)
		if err != nil || info.State != s.state {
			t.Fatalf("after %s: state %q, %v", s.action, info.State, err)
		}
	}
	logs, err := c.Logs(ctx, "/addons/"+slug+"/logs", 5)
	if err != nil || strings.TrimSpace(logs) == "" {
		t.Fatalf("addon logs: %q, %v", logs, err)
	}

	_, err = c.AddonInfo(ctx, "no_such_addon")
	wantAPIError(t, err, http.StatusNotFound) // "Addon <slug> does not exist"
	if err := c.AddonAction(ctx, slug, "explode"); err == nil || errors.As(err, new(*APIError)) {
		t.Fatalf("invalid action must fail locally: %v", err)
	}
	if err := c.AddonAction(ctx, "../core", "start"); err == nil || errors.As(err, new(*APIError)) {
		t.Fatalf("invalid slug must fail locally: %v", err)
	}
}

func TestAddonInstallUpdateUninstall(t *testing.T) {
	c := simClient(t)
	ctx := context.Background()
	var store struct {
		Addons []Addon `json:"addons"`
	}
	if err := c.Do(ctx, http.MethodGet, "/store/addons", nil, &store); err != nil {
		t.Fatalf("store via Do: %v", err)
	}
	var fresh, outdated string
	for _, a := range store.Addons {
		if !a.Installed && fresh == "" {
			fresh = a.Slug
		}
	}
	addons, err := c.Addons(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addons {
		if a.UpdateAvailable && outdated == "" {
			outdated = a.Slug
		}
	}
	if fresh == "" || outdated == "" {
		t.Fatalf("the simulated store needs an uninstalled and an outdated add-on: %+v", store.Addons)
	}

	if err := c.AddonAction(ctx, outdated, "update"); err != nil {
		t.Fatalf("update %s: %v", outdated, err)
	}
	if info, err := c.AddonInfo(ctx, outdated); err != nil || info.Version != info.VersionLatest || info.UpdateAvailable {
		t.Fatalf("after update: %+v, %v", info, err)
	}

	if err := c.AddonAction(ctx, fresh, "install"); err != nil {
		t.Fatalf("install %s: %v", fresh, err)
	}
	if info, err := c.AddonInfo(ctx, fresh); err != nil || info.Version == "" {
		t.Fatalf("after install: %+v, %v", info, err)
	}
	wantAPIError(t, c.AddonAction(ctx, fresh, "install"), http.StatusBadRequest) // already installed
	if err := c.AddonAction(ctx, fresh, "uninstall"); err != nil {
		t.Fatalf("uninstall %s: %v", fresh, err)
	}
	wantAPIError(t, c.AddonAction(ctx, fresh, "start"), http.StatusBadRequest) // not installed any more
}

func TestCoreActionsAndLogs(t *testing.T) {
	c := simClient(t)
	ctx := context.Background()
	// A valid configuration answers ok; an invalid one is an APIError carrying HA's report.
	if err := c.CoreCheck(ctx); err != nil {
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || !strings.Contains(apiErr.Message, "Invalid config") {
			t.Fatalf("CoreCheck: %v", err)
		}
	}
	if err := c.CoreRestart(ctx, false); err != nil {
		t.Fatalf("CoreRestart: %v", err)
	}
	logs, err := c.Logs(ctx, "/core/logs", 10)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(logs, "\n"), "\n")
	if len(lines) == 0 || len(lines) > 10 || lines[0] == "" {
		t.Fatalf("want 1..10 log lines, got %d: %q", len(lines), logs)
	}
	if _, err := c.Logs(ctx, "core/logs", 1); err == nil {
		t.Fatal("relative path must be refused")
	}
	err = c.Do(ctx, http.MethodGet, "/no/such/endpoint", nil, nil)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("unknown endpoint: %v", err)
	}
}

func TestAuthAndUnavailable(t *testing.T) {
	simClient(t)
	bad, err := New(Config{BaseURL: home.SupervisorURL(), Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Addons(context.Background())
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("wrong token: %v", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error echoes the token: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	down, _ := New(Config{BaseURL: "http://" + addr, Token: "t"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = down.CoreInfo(ctx)
	if !errors.Is(err, ErrUnavailable) || ctx.Err() != nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("closed port: %v", err)
	}
}

// TestCoreURL: core's direct URL comes from /core/info's port and ssl, and reaches core (here
// on loopback instead of CoreHost), which answers users' own tokens.
func TestCoreURL(t *testing.T) {
	t.Parallel()
	c := simClient(t)
	u, err := c.CoreURL(context.Background(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if u != home.URL() {
		t.Fatalf("CoreURL = %s, want the simulated core at %s", u, home.URL())
	}
	req, _ := http.NewRequest("GET", u+"/api/", nil)
	req.Header.Set("Authorization", "Bearer "+home.UserToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("core at %s answered a user's token with %d", u, resp.StatusCode)
	}
}
