// Package hubitat is the Hubitat integration: a Hubitat Elevation hub beside Home Assistant. It builds
// the hub client (src/hubitat) from the hubitat_* options, runs hamcp's rule engine over it
// (src/rules), and contributes the Hubitat toolsets (src/tools/hubitattools), the hub_admin permission
// category, its tables in hamcp's store (hubstore), the hub's postURL push route, the "hubitat" health
// check and the rules hamcp stopped (for the panel), through integration.Integration.
package hubitat

import (
	"context"
	"strings"
	"sync"

	"github.com/hamcp/hamcp/src/config"
	hubclient "github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integration"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

// PushPath is where the hub POSTs Maker API events (postURL). The hub cannot send a bearer token,
// so the route is outside hamcp's authentication: the client's secret last path segment is the
// credential (hubitat.Client.PushHandler checks it), and only the hub is told it.
const PushPath = "/hubitat/events"

// Kind is the Hubitat integration for the app's list.
var Kind = integration.Kind{
	Name: "hubitat", Title: "Hubitat", Enable: "with a hub: set hubitat_url",
	Declared: func() []*toolkit.Tool { return hubitattools.Tools(hubitattools.Deps{}) },
	New: func(cfg *config.Config) (integration.Integration, error) {
		h, err := New(cfg)
		if h == nil {
			return nil, err // a nil *Hub is not a nil Integration
		}
		return h, err
	},
}

// Hub is a configured Hubitat integration.
type Hub struct {
	opts                  hubclient.Options
	adminRead, adminWrite bool

	client *hubclient.Client
	rules  *rules.Engine
	tools  []*toolkit.Tool
	// started is closed once the rule engine's background start has returned.
	started chan struct{}
	close   sync.Once
}

var (
	_ integration.Integration    = (*Hub)(nil)
	_ integration.StatusReporter = (*Hub)(nil)
)

// New checks the hubitat_* options; it returns nil, nil when no hub is configured.
func New(cfg *config.Config) (*Hub, error) {
	o, err := Options(cfg)
	if err != nil || o.URL == "" {
		return nil, err
	}
	return &Hub{opts: o, adminRead: cfg.HubitatAdminRead, adminWrite: cfg.HubitatAdminWrite}, nil
}

// Options turns the hubitat_* options into client options, refusing half a setup.
func Options(cfg *config.Config) (hubclient.Options, error) {
	if cfg.HubitatURL == "" {
		// Hubitat settings without a hub are a half-finished setup: say so rather than ignore them.
		for _, o := range []struct {
			name string
			set  bool
		}{{"hubitat_app_id", cfg.HubitatAppID != ""}, {"hubitat_token", cfg.HubitatToken != ""}, {"hubitat_username", cfg.HubitatUsername != ""},
			{"hubitat_password", cfg.HubitatPassword != ""}, {"hubitat_devices", len(cfg.HubitatDevices) > 0}, {"hubitat_rm_endpoint", cfg.HubitatRMEndpoint != ""},
			{"hubitat_admin_read", cfg.HubitatAdminRead}, {"hubitat_admin_write", cfg.HubitatAdminWrite}} {
			if o.set {
				return hubclient.Options{}, &config.Error{Option: o.name, Source: "configuration",
					Reason: "is set but hubitat_url is empty: set hubitat_url to the hub's address (e.g. http://192.168.1.20), or clear " + o.name}
			}
		}
		return hubclient.Options{}, nil
	}
	o := hubclient.Options{URL: cfg.HubitatURL, AppID: cfg.HubitatAppID, Token: cfg.HubitatToken, Username: cfg.HubitatUsername,
		Password: cfg.HubitatPassword, Devices: cfg.HubitatDevices, RuleEndpoint: cfg.HubitatRMEndpoint}
	switch cfg.HubitatEvents {
	case "eventsocket":
		o.Events = hubclient.EventsSocket
	case "posturl":
		o.Events = hubclient.EventsPostURL
		if cfg.ExternalURL == "" {
			return o, &config.Error{Option: "hubitat_events", Source: "configuration", Value: cfg.HubitatEvents,
				Reason: "needs external_url: the hub posts its events to external_url" + PushPath + ", so set external_url to an address the hub can reach, or use eventsocket"}
		}
	}
	if cfg.ExternalURL != "" {
		o.PushURL = strings.TrimRight(cfg.ExternalURL, "/") + PushPath
	}
	if err := o.Validate(); err != nil {
		return o, configError(err)
	}
	return o, nil
}

// configError names the first option hubitat.Options.Validate complains about (its messages begin
// with the option's name), so Config.Explain can say where it was set.
func configError(err error) error {
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

// Name is the health check's name and the tools' prefix.
func (h *Hub) Name() string { return Kind.Name }

// Categories: hub_admin, which the admin write tools need (registered by hubitattools).
func (h *Hub) Categories() []permission.CategoryInfo {
	return []permission.CategoryInfo{hubitattools.HubAdminCategory}
}

// Migrations are its tables' steps (hubstore.Migrations: captures, debug log, backups, rule
// variables, rules).
func (h *Hub) Migrations() []store.Migration { return hubstore.Migrations() }

// Start connects to the hub and builds the tools: Maker API calls work at once; the live link (and
// the device cache) come up in the background, and so does the rule engine.
func (h *Hub) Start(ctx context.Context, host integration.Host) error {
	o := h.opts
	o.Logger = host.Logger.With("backend", "hubitat")
	c, err := hubclient.New(o)
	if err != nil {
		return configError(err)
	}
	c.Start(ctx)
	h.client = c
	tables := hubstore.New(host.Store)
	deps := hubitattools.Deps{Hub: c, Store: tables, AdminRead: h.adminRead, AdminWrite: h.adminWrite,
		Version: host.Version, Supervisor: host.Supervisor}
	deps.Rules = h.startRules(ctx, host, tables, deps.LogRule)
	h.tools = hubitattools.Tools(deps)
	return nil
}

// startRules runs the rule engine over the hub. It starts in the background: reading the hub's
// location (for sun times) may wait for a hub that is still booting, and hamcp serves meanwhile
// (the rule tools work at once; triggers arm when the start is done).
func (h *Hub) startRules(ctx context.Context, host integration.Host, tables *hubstore.Store,
	log func(ctx context.Context, level, component, ruleID, msg string)) *rules.Engine {
	o := rules.Options{Hub: h.client, Store: tables, Logger: host.Logger, ServerVersion: host.Version, Log: log}
	if host.HomePlace != nil {
		o.HomePlace = func(ctx context.Context) (rules.Place, error) {
			tz, lat, lon, err := host.HomePlace(ctx)
			return rules.Place{TimeZone: tz, Latitude: lat, Longitude: lon}, err
		}
	}
	e := rules.New(o)
	h.started = make(chan struct{})
	go func() {
		defer close(h.started)
		if err := e.Start(ctx); err != nil && ctx.Err() == nil {
			host.Logger.Error("the Hubitat rule engine did not start; rules will not run", "err", err)
		}
	}()
	h.rules = e
	return e
}

// Tools are the Hubitat tools over the started client.
func (h *Hub) Tools() []*toolkit.Tool { return h.tools }

// Routes: the hub's postURL pushes (see PushPath).
func (h *Hub) Routes() []integration.Route {
	return []integration.Route{{Path: PushPath + "/:secret", Handler: h.client.PushHandler()}}
}

// Health reports the hub link without contacting the hub. The hub's address and the error text
// (which names it) stay in the log.
func (h *Hub) Health(context.Context) (bool, any) {
	st := h.client.Status()
	detail := map[string]any{"link": st.Link, "via": st.Via, "reconnects": st.Reconnects, "live_updates": st.CacheLive, "devices": st.Devices}
	if !st.LastErrorAt.IsZero() {
		detail["last_error_at"] = st.LastErrorAt
	}
	return st.Link == "connected" && st.CacheLive, detail
}

// Client is the hub client (nil before Start), for the demo's wiring.
func (h *Hub) Client() *hubclient.Client { return h.client }

// Rules is the rule engine (nil before Start); it may still be starting.
func (h *Hub) Rules() *rules.Engine { return h.rules }

// StoppedRules are the rules hamcp stopped and disabled as runaways, for the panel.
func (h *Hub) StoppedRules(ctx context.Context) ([]integration.StoppedRule, error) {
	if h.rules == nil {
		return nil, nil
	}
	list, err := h.rules.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []integration.StoppedRule
	for _, r := range list {
		if r.DisabledReason != "" && r.DisabledAt != nil {
			out = append(out, integration.StoppedRule{Name: r.Name, Reason: r.DisabledReason, At: *r.DisabledAt})
		}
	}
	return out, nil
}

// Close stops the rule engine once its start has given up, then the hub client. The store both
// use is the app's and closes after.
func (h *Hub) Close() error {
	var err error
	h.close.Do(func() {
		if h.rules != nil {
			<-h.started
			err = h.rules.Close()
		}
		if h.client != nil {
			if cerr := h.client.Close(); err == nil {
				err = cerr
			}
		}
	})
	return err
}
