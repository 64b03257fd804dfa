//go:build !nosim

package main

import (
	"context"
	"log/slog"

	"github.com/hamcp/hamcp/dev/demo"
	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/config"
)

// The default build carries the simulated home for `hamcp demo` and `hamcp stdio --demo`; the
// add-on builds with -tags nosim (demo_nosim.go) and leaves it out.
type (
	demoRun  = demo.Demo
	demoInfo = demo.Info
)

func startDemo(ctx context.Context, cfg *config.Config, dir, panelListen string, logger *slog.Logger) (*demoRun, error) {
	return demo.StartOn(ctx, cfg, sim.Options{Dir: dir}, panelListen, logger)
}
