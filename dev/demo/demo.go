// Package demo runs hamcp against the built-in simulated home: the simulator on loopback
// ports, and hamcp configured to reach it. It is what `hamcp demo` and `hamcp stdio --demo` run.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/sim/hass"
	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/src/app"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/panel"
)

// Info is what a demo prints and writes to --info-file for scripts and tests.
type Info struct {
	MCPURL     string `json:"mcp_url,omitempty"`
	Token      string `json:"token"`
	HAURL      string `json:"ha_url"`
	HAToken    string `json:"ha_token"`
	SandboxDir string `json:"sandbox_dir"`
	Recorder   string `json:"recorder_db"`
	Supervisor string `json:"supervisor_url"`
	UserToken  string `json:"user_token"`
	SSH        string `json:"ssh_addr,omitempty"`
	// PanelURL is the hamcp panel, served on loopback as a demo user (the add-on serves it to Home
	// Assistant's sidebar through ingress).
	PanelURL string `json:"panel_url,omitempty"`
	// HubitatURL is the simulated Hubitat hub beside the simulated Home Assistant.
	HubitatURL string      `json:"hubitat_url"`
	Logins     []sim.Login `json:"logins"`
}

// Demo is a running simulated home with hamcp wired to it.
type Demo struct {
	Home    *sim.Home
	Hubitat *simhub.Hub
	App     *app.App
	Info    Info
	cleanup func()
	// stopPanel stops the panel's listener; set by servePanel.
	stopPanel func()
}

// Start starts the simulated home and a hamcp App against it. cfg comes from the usual
// sources (environment, flags); the Home Assistant settings are overridden to point at the
// simulator. so.Dir == "" uses a temporary directory removed on Close.
func Start(ctx context.Context, cfg *config.Config, so sim.Options, logger *slog.Logger) (*Demo, error) {
	return StartOn(ctx, cfg, so, "127.0.0.1:0", logger)
}

// StartOn is Start with the panel on panelAddr, a loopback address (`hamcp demo --panel-listen`).
func StartOn(ctx context.Context, cfg *config.Config, so sim.Options, panelAddr string, logger *slog.Logger) (*Demo, error) {
	dir := so.Dir
	so.Logger = logger.With("component", "sim")
	home, err := sim.Start(ctx, so)
	if err != nil {
		return nil, fmt.Errorf("starting the simulated home: %w", err)
	}
	// A Hubitat hub beside it, with Hub Security on, as most hubs have.
	hub := simhub.New(simhub.Options{Username: demoHubUser, Password: demoHubPassword, Logger: logger.With("component", "sim-hubitat")})
	hubURL, err := hub.Start(ctx, "127.0.0.1:0")
	if err != nil {
		home.Close()
		return nil, fmt.Errorf("starting the simulated Hubitat hub: %w", err)
	}
	stopSims := func() { hub.Close(); home.Close() }
	c := *cfg
	c.HubitatURL, c.HubitatAppID, c.HubitatToken = hubURL, hub.AppID(), hub.Token()
	c.HubitatUsername, c.HubitatPassword = demoHubUser, demoHubPassword
	c.HubitatRMEndpoint = hub.RuleEndpointURL()
	c.HAURL = home.URL()
	c.HAToken = home.Token()
	c.HAAuthURL = home.URL()
	c.SupervisorURL = home.SupervisorURL()
	c.SupervisorToken = home.SupervisorToken()
	c.FSBase = home.Sandbox().Root
	// The demo serves its panel on loopback itself (servePanel), not on the add-on's ingress port.
	c.IngressListen = ""
	// hamcp's own data (store, trash) must lie outside every root the file tools reach.
	var cleanup func()
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hamcp-demo-data-")
		if err != nil {
			stopSims()
			return nil, err
		}
		c.DataDir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	} else {
		c.DataDir, cleanup = filepath.Join(dir, "hamcp-data"), func() {}
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			stopSims()
			return nil, err
		}
	}
	a, err := app.New(ctx, &c, app.Options{Logger: logger})
	if err != nil {
		stopSims()
		cleanup()
		return nil, err
	}
	d := &Demo{Home: home, Hubitat: hub, App: a, cleanup: cleanup, Info: Info{HubitatURL: hubURL,
		Token: home.Token(), HAURL: home.URL(), HAToken: home.Token(), SandboxDir: home.Sandbox().Root,
		Recorder: home.RecorderPath(), Supervisor: home.SupervisorURL(), UserToken: home.UserToken(), Logins: home.Logins(),
	}}
	if err := d.servePanel(ctx, panelAddr); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.seedRules(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// The simulated hub's Hub Security login.
const (
	demoHubUser     = "admin"
	demoHubPassword = "demo-hub-password"
)

// DemoUser is who the demo's panel takes its visitor for: in the add-on, Home Assistant's ingress
// names the user instead. The panel checks them against the simulated HA's user list like anyone
// else, which lists them as an administrator.
var DemoUser = panel.User{ID: hass.DemoAdminID, Name: "demo", DisplayName: "Demo Administrator"}

// servePanel serves the hamcp panel on a loopback port, answering loopback only, as DemoUser.
func (d *Demo) servePanel(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("the demo's panel: %w", err)
	}
	pctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := d.App.ServePanel(pctx, ln, app.PanelOptions{AllowLoopback: true, DemoUser: &DemoUser, PollEvery: 500 * time.Millisecond}); err != nil {
			d.App.Logger.Error("the demo's panel stopped", "err", err)
		}
	}()
	d.stopPanel = func() { stop(); <-done }
	d.Info.PanelURL = "http://" + ln.Addr().String() + "/"
	return nil
}

// WriteInfo writes the info JSON atomically, so a reader polling for the file never sees half of it.
func (d *Demo) WriteInfo(path string) error {
	b, err := json.MarshalIndent(d.Info, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Close stops hamcp and the simulated home.
// StopPanel stops the panel's listener, as when hamcp stops answering an open panel.
func (d *Demo) StopPanel() {
	if d.stopPanel != nil {
		d.stopPanel()
		d.stopPanel = nil
	}
}

func (d *Demo) Close() error {
	if d.stopPanel != nil {
		d.stopPanel()
	}
	err := d.App.Close()
	if cerr := d.Hubitat.Close(); err == nil {
		err = cerr
	}
	if cerr := d.Home.Close(); err == nil {
		err = cerr
	}
	d.cleanup()
	return err
}
