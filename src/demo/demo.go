// Package demo runs hamcp against the built-in simulated home: the simulator on loopback
// ports, and hamcp configured to reach it. It is what `hamcp demo` and `hamcp stdio --demo` run.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hamcp/hamcp/src/app"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/sim"
)

// Info is what a demo prints and writes to --info-file for scripts and tests.
type Info struct {
	MCPURL     string      `json:"mcp_url,omitempty"`
	Token      string      `json:"token"`
	HAURL      string      `json:"ha_url"`
	HAToken    string      `json:"ha_token"`
	SandboxDir string      `json:"sandbox_dir"`
	Recorder   string      `json:"recorder_db"`
	Supervisor string      `json:"supervisor_url"`
	UserToken  string      `json:"user_token"`
	SSH        string      `json:"ssh_addr,omitempty"`
	Logins     []sim.Login `json:"logins"`
}

// Demo is a running simulated home with hamcp wired to it.
type Demo struct {
	Home    *sim.Home
	App     *app.App
	Info    Info
	cleanup func()
}

// Start starts the simulated home and a hamcp App against it. cfg comes from the usual
// sources (environment, flags); the Home Assistant settings are overridden to point at the
// simulator. so.Dir == "" uses a temporary directory removed on Close.
func Start(ctx context.Context, cfg *config.Config, so sim.Options, logger *slog.Logger) (*Demo, error) {
	dir := so.Dir
	so.Logger = logger.With("component", "sim")
	home, err := sim.Start(ctx, so)
	if err != nil {
		return nil, fmt.Errorf("starting the simulated home: %w", err)
	}
	c := *cfg
	c.HAURL = home.URL()
	c.HAToken = home.Token()
	c.HAAuthURL = home.URL()
	c.SupervisorURL = home.SupervisorURL()
	c.SupervisorToken = home.SupervisorToken()
	c.FSBase = home.Sandbox().Root
	// hamcp's own data (store, trash) must lie outside every root the file tools reach.
	var cleanup func()
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hamcp-demo-data-")
		if err != nil {
			home.Close()
			return nil, err
		}
		c.DataDir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	} else {
		c.DataDir, cleanup = filepath.Join(dir, "hamcp-data"), func() {}
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			home.Close()
			return nil, err
		}
	}
	a, err := app.New(ctx, &c, app.Options{Logger: logger})
	if err != nil {
		home.Close()
		cleanup()
		return nil, err
	}
	return &Demo{Home: home, App: a, cleanup: cleanup, Info: Info{
		Token: home.Token(), HAURL: home.URL(), HAToken: home.Token(), SandboxDir: home.Sandbox().Root,
		Recorder: home.RecorderPath(), Supervisor: home.SupervisorURL(), UserToken: home.UserToken(), Logins: home.Logins(),
	}}, nil
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
func (d *Demo) Close() error {
	err := d.App.Close()
	if cerr := d.Home.Close(); err == nil {
		err = cerr
	}
	d.cleanup()
	return err
}
