//go:build nosim

package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/hamcp/hamcp/src/app"
	"github.com/hamcp/hamcp/src/config"
)

// errNoSim is what `hamcp demo` and `hamcp stdio --demo` answer in the add-on's build, which
// leaves the simulated home out (-tags nosim) to keep the image small.
var errNoSim = errors.New("this hamcp was built without the simulated home (-tags nosim, the add-on build); " +
	"run the demo with a default build: go run ./src/cmd/hamcp demo")

// demoRun and demoInfo mirror the fields main.go uses of demo.Demo and demo.Info, so main.go
// compiles unchanged in both builds; startDemo never returns one.
type (
	demoRun struct {
		App  *app.App
		Info demoInfo
	}
	demoInfo struct {
		MCPURL, Token, HAURL, HAToken, SandboxDir, SSH, PanelURL, HubitatURL string
		Logins                                                               []struct {
			Username, Password string
			Admin              bool
		}
	}
)

func (*demoRun) Close() error           { return nil }
func (*demoRun) WriteInfo(string) error { return errNoSim }
func startDemo(context.Context, *config.Config, string, string, *slog.Logger) (*demoRun, error) {
	return nil, errNoSim
}
