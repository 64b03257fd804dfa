package app

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/httpserver"
	"github.com/hamcp/hamcp/src/integration"
	hubitatint "github.com/hamcp/hamcp/src/integrations/hubitat"
	"github.com/hamcp/hamcp/src/permission"
)

// integrations are the integrations hamcp has beside Home Assistant, in the order their tools,
// routes and health checks are listed.
var integrations = []integration.Kind{hubitatint.Kind}

// startIntegrations builds each integration the configuration asks for, gives it its tables in
// the store, starts it and adds its tools. Each closes before the store (closers run in reverse).
func (a *App) startIntegrations(ctx context.Context) error {
	host := integration.Host{Store: a.Store, Logger: a.Logger, Version: Version, Supervisor: a.Supervisor}
	if a.HA != nil {
		host.HomePlace = func(ctx context.Context) (string, float64, float64, error) {
			c, err := a.HA.Config(ctx)
			return c.TimeZone, c.Latitude, c.Longitude, err
		}
	}
	for _, k := range integrations {
		in, err := k.New(a.Config)
		if err != nil || in == nil {
			if err != nil {
				return err
			}
			continue
		}
		for _, c := range in.Categories() {
			if _, err := permission.ParseCategory(string(c.Category)); err != nil {
				return fmt.Errorf("integration %s: its category %s is not registered: %w", k.Name, c.Category, err)
			}
		}
		if err := a.Store.Migrate(ctx, in.Migrations()...); err != nil {
			return &config.Error{Option: "data_dir", Source: "configuration", Value: a.Config.DataDir,
				Reason: "hamcp's store cannot hold the " + k.Title + " integration's tables: " + err.Error()}
		}
		if err := in.Start(ctx, host); err != nil {
			return err
		}
		a.closers = append(a.closers, in.Close)
		a.integrations = append(a.integrations, in)
		a.Registry.Add(in.Tools()...)
	}
	return nil
}

// Integration is the running integration of that name (a Kind's Name, e.g. "hubitat"); ok is
// false when the configuration did not ask for it.
func (a *App) Integration(name string) (in integration.Integration, ok bool) {
	for _, in := range a.integrations {
		if in.Name() == name {
			return in, true
		}
	}
	return nil, false
}

// integrationMounts serve the running integrations' routes, outside hamcp's authentication (each
// route checks its own credential), and integrationHealth their health checks.
func (a *App) integrationMounts() []func(*echo.Echo) {
	var out []func(*echo.Echo)
	for _, in := range a.integrations {
		for _, r := range in.Routes() {
			h := echo.WrapHandler(r.Handler)
			out = append(out, func(e *echo.Echo) { e.Any(r.Path, h) })
		}
	}
	return out
}

func (a *App) integrationHealth() []httpserver.HealthCheck {
	var out []httpserver.HealthCheck
	for _, in := range a.integrations {
		out = append(out, httpserver.HealthCheck{Name: in.Name(), Check: in.Health})
	}
	return out
}

// offeredBy is the integration that declares toolset ts, for a user who asked for it without
// configuring that integration.
func offeredBy(ts string) (integration.Kind, bool) {
	for _, k := range integrations {
		for _, t := range k.Declared() {
			if t.Toolset() == ts {
				return k, true
			}
		}
	}
	return integration.Kind{}, false
}
