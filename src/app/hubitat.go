package app

import (
	"context"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

// hubitatPushPath is where the hub POSTs Maker API events (postURL). The hub cannot send a bearer
// token, so the route is outside hamcp's authentication: the client's secret last path segment is
// the credential (hubitat.Client.PushHandler checks it), and only the hub is told it.
const hubitatPushPath = "/hubitat/events"

// hubitatOptions turns the hubitat_* options into client options, refusing half a setup.
func hubitatOptions(cfg *config.Config) (hubitat.Options, error) {
	if cfg.HubitatURL == "" {
		// Hubitat settings without a hub are a half-finished setup: say so rather than ignore them.
		for _, o := range []struct {
			name string
			set  bool
		}{{"hubitat_app_id", cfg.HubitatAppID != ""}, {"hubitat_token", cfg.HubitatToken != ""}, {"hubitat_username", cfg.HubitatUsername != ""},
			{"hubitat_password", cfg.HubitatPassword != ""}, {"hubitat_devices", len(cfg.HubitatDevices) > 0},
			{"hubitat_admin_read", cfg.HubitatAdminRead}, {"hubitat_admin_write", cfg.HubitatAdminWrite}} {
			if o.set {
				return hubitat.Options{}, &config.Error{Option: o.name, Source: "configuration",
					Reason: "is set but hubitat_url is empty: set hubitat_url to the hub's address (e.g. http://192.168.1.20), or clear " + o.name}
			}
		}
		return hubitat.Options{}, nil
	}
	o := hubitat.Options{URL: cfg.HubitatURL, AppID: cfg.HubitatAppID, Token: cfg.HubitatToken, Username: cfg.HubitatUsername,
		Password: cfg.HubitatPassword, Devices: cfg.HubitatDevices}
	switch cfg.HubitatEvents {
	case "eventsocket":
		o.Events = hubitat.EventsSocket
	case "posturl":
		o.Events = hubitat.EventsPostURL
		if cfg.ExternalURL == "" {
			return o, &config.Error{Option: "hubitat_events", Source: "configuration", Value: cfg.HubitatEvents,
				Reason: "needs external_url: the hub posts its events to external_url" + hubitatPushPath + ", so set external_url to an address the hub can reach, or use eventsocket"}
		}
	}
	if cfg.ExternalURL != "" {
		o.PushURL = strings.TrimRight(cfg.ExternalURL, "/") + hubitatPushPath
	}
	if err := o.Validate(); err != nil {
		return o, hubitatConfigError(err)
	}
	return o, nil
}

// hubitatConfigError names the first option hubitat.Options.Validate complains about (its
// messages begin with the option's name), so Config.Explain can say where it was set.
func hubitatConfigError(err error) error {
	first := err
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		first = j.Unwrap()[0]
	}
	msg := first.Error()
	name, reason, _ := strings.Cut(msg, " ")
	if i := strings.IndexByte(name, '['); i > 0 {
		name = name[:i]
	}
	if _, known := config.Lookup(name); !known {
		return err
	}
	if rest := strings.TrimPrefix(err.Error(), msg); rest != "" {
		reason += ";" + strings.ReplaceAll(rest, "\n", " ")
	}
	return &config.Error{Option: name, Source: "configuration", Reason: strings.TrimSpace(reason)}
}

// startHubitat connects to the hub when one is configured and adds its tools: they exist only
// then. Maker API calls work at once; the live link (and the device cache) come up in the
// background.
func (a *App) startHubitat(ctx context.Context) error {
	o, err := hubitatOptions(a.Config)
	if err != nil || o.URL == "" {
		return err
	}
	o.Logger = a.Logger.With("backend", "hubitat")
	c, err := hubitat.New(o)
	if err != nil {
		return hubitatConfigError(err)
	}
	c.Start(ctx)
	a.Hubitat = c
	a.closers = append(a.closers, c.Close)
	deps := hubitattools.Deps{Hub: c, Store: a.Store, AdminRead: a.Config.HubitatAdminRead,
		AdminWrite: a.Config.HubitatAdminWrite, Version: Version, Supervisor: a.Supervisor}
	deps.Rules = a.startRules(ctx, c, deps.LogRule)
	a.Registry.Add(hubitattools.Tools(deps)...)
	return nil
}

// startRules runs the rule engine over the hub. It starts in the background: reading the hub's
// location (for sun times) may wait for a hub that is still booting, and hamcp serves meanwhile
// (the rule tools work at once; triggers arm when the start is done). It closes before the hub
// client and the store it uses (closers run in reverse), after its start has given up.
func (a *App) startRules(ctx context.Context, c *hubitat.Client, log func(ctx context.Context, level, component, ruleID, msg string)) *rules.Engine {
	e := rules.New(rules.Options{Hub: c, Store: a.Store, Logger: a.Logger, ServerVersion: Version, Log: log})
	started := make(chan struct{})
	go func() {
		defer close(started)
		if err := e.Start(ctx); err != nil && ctx.Err() == nil {
			a.Logger.Error("the Hubitat rule engine did not start; rules will not run", "err", err)
		}
	}()
	a.closers = append(a.closers, func() error { <-started; return e.Close() })
	a.rules = e
	return e
}

// mountHubitatPush serves the hub's postURL pushes (see hubitatPushPath).
func (a *App) mountHubitatPush(e *echo.Echo) {
	h := echo.WrapHandler(a.Hubitat.PushHandler())
	e.Any(hubitatPushPath+"/:secret", h)
}

// hubitatHealth reports the hub link for /mcp/health, without contacting the hub. The endpoint
// is unauthenticated, so the hub's address and the error text (which names it) stay in the log.
func (a *App) hubitatHealth(context.Context) (bool, any) {
	st := a.Hubitat.Status()
	detail := map[string]any{"link": st.Link, "via": st.Via, "reconnects": st.Reconnects, "live_updates": st.CacheLive, "devices": st.Devices}
	if !st.LastErrorAt.IsZero() {
		detail["last_error_at"] = st.LastErrorAt
	}
	return st.Link == "connected" && st.CacheLive, detail
}
