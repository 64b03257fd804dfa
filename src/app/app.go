// Package app wires hamcp together from a Config: backend clients, the tool registry, the MCP
// server and its transports. The hamcp command only parses flags and calls it.
package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/approval"
	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/command"
	"github.com/hamcp/hamcp/src/completion"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/httpserver"
	"github.com/hamcp/hamcp/src/integration"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/conformance"
	"github.com/hamcp/hamcp/src/tools/dbtools"
	"github.com/hamcp/hamcp/src/tools/fstools"
	"github.com/hamcp/hamcp/src/tools/hatools"
	"github.com/hamcp/hamcp/src/tools/permtools"
	"github.com/hamcp/hamcp/src/tools/systools"
)

// Version is set at build time (-ldflags "-X github.com/hamcp/hamcp/src/app.Version=…").
var Version = "0.1.0-dev"

// App is a wired hamcp.
type App struct {
	Config      *config.Config
	Logger      *slog.Logger
	HA          *homeassistant.Client
	Store       *store.Store
	Permissions *permission.Manager
	Approvals   *approval.Page // the page the links in permission requests open
	Files       *fsguard.FS
	Supervisor  *supervisor.Client // nil outside the add-on
	Registry    *toolkit.Registry
	Builder     *mcpserver.Builder
	// integrations are the integrations running (integrations.go).
	integrations []integration.Integration

	cancel  context.CancelFunc
	closers []func() error
	// haDirect is Home Assistant's own URL, where users' tokens are checked and OAuth codes
	// exchanged (haDirectURL).
	haDirect string
	// Resources, prompts and completions beyond Home Assistant's (EnableConformance).
	extensions  []mcpserver.Extension
	completions []*completion.Set
	panel       panelState // what the hamcp panel shows about the transports (panel.go)
}

// Options are what the caller decides beyond the Config.
type Options struct {
	Logger *slog.Logger
	NoAuth bool // demo only, loopback only (checked by the caller and again in HTTPServer)
	// HATimeout bounds each call to Home Assistant and the health check's; 0 means 2 minutes
	// (the fault tests make it short).
	HATimeout time.Duration
	// MaxSessionsPerIP and MaxSessionsPerToken cap the open MCP sessions; 0 means httpserver's
	// defaults. The demo lifts them with --rate-limit 0 (conformance runs, load tests).
	MaxSessionsPerIP, MaxSessionsPerToken int
}

// New builds every part and starts the background connections (HA WebSocket).
func New(ctx context.Context, cfg *config.Config, o Options) (*App, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	base := cfg.HABaseURL()
	if base == "" {
		return nil, &config.Error{Option: "ha_url", Source: "configuration", Reason: "is required outside the add-on: set HA_URL (e.g. http://homeassistant.local:8123) and HA_TOKEN, or run `hamcp demo`"}
	}
	if cfg.HAAPIToken() == "" {
		return nil, &config.Error{Option: "ha_token", Source: "configuration", Reason: "is required outside the add-on: create a long-lived access token in your Home Assistant profile and set HA_TOKEN"}
	}
	ha, err := homeassistant.New(homeassistant.Config{BaseURL: base, Token: cfg.HAAPIToken(), Logger: logger.With("backend", "home_assistant"), Timeout: o.HATimeout})
	if err != nil {
		return nil, &config.Error{Option: "ha_url", Source: "configuration", Value: base, Reason: err.Error()}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ha.Start(runCtx)
	a := &App{Config: cfg, Logger: logger, HA: ha, cancel: cancel, haDirect: haDirectURL(ctx, cfg, logger)}
	a.closers = append(a.closers, ha.Close)

	st, pm, page, err := openPermissions(cfg, ha, a)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Store, a.Permissions, a.Approvals = st, pm, page
	// The manager flushes its audit queue into the store, so it closes first (closers run in reverse).
	a.closers = append(a.closers, st.Close, pm.Close)

	files, err := openFiles(cfg)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Files = files
	a.closers = append(a.closers, files.Close)

	if cfg.SupervisorToken != "" {
		sup, err := supervisor.New(supervisor.Config{BaseURL: cfg.SupervisorURL, Token: cfg.SupervisorToken, Logger: logger.With("backend", "supervisor")})
		if err != nil {
			a.Close()
			return nil, &config.Error{Option: "supervisor_url", Source: "configuration", Value: cfg.SupervisorURL, Reason: err.Error()}
		}
		a.Supervisor = sup
	}

	rec := a.recorder()
	history, err := confighistory.Open(ctx, st)
	if err != nil {
		a.Close()
		return nil, err
	}
	deps := hatools.Deps{HA: ha, Supervisor: a.Supervisor, Files: files, Recorder: rec, SensitiveEntities: cfg.SensitiveEntities, History: history,
		Scope: hatools.NewScope(ha, cfg.ExposeScope)}
	if err := command.CheckEnvNames(cfg.CommandEnv); err != nil {
		a.Close()
		return nil, &config.Error{Option: "command_env", Source: "configuration", Value: strings.Join(cfg.CommandEnv, ","), Reason: err.Error()}
	}
	for _, id := range cfg.SensitiveEntities {
		if !entityIDShape.MatchString(strings.TrimSpace(id)) {
			a.Close()
			return nil, &config.Error{Option: "sensitive_entities", Source: "configuration", Value: id,
				Reason: "each entry must be an entity id such as switch.garage_opener (lower case, domain.object_id)"}
		}
	}
	trusted, err := confirmTrusted(cfg.ConfirmTrusted)
	if err != nil {
		a.Close()
		return nil, &config.Error{Option: "confirm_trusted", Source: "configuration", Value: strings.Join(cfg.ConfirmTrusted, ","), Reason: err.Error()}
	}
	// Commands end with everything they started at Close, which runs once the server stopped:
	// on SIGTERM a running command gets shutdown_grace to finish, like any other call (a call
	// still running when the grace ends is cancelled with its connection, which ends its tree).
	cmdStop, stopCommands := context.WithCancel(context.WithoutCancel(ctx))
	a.closers = append(a.closers, func() error { stopCommands(); return nil })
	a.Registry = registry(deps, pm, st, files, dbtools.Deps{DB: rec, HA: ha},
		systools.Deps{Files: files, Stop: cmdStop, CommandEnv: cfg.CommandEnv, SupervisorToken: cfg.SupervisorToken})

	if err := a.startIntegrations(runCtx); err != nil {
		a.Close()
		return nil, cfg.Explain(err)
	}

	a.Builder = mcpserver.New(mcpserver.Options{
		Name:         "hamcp",
		Version:      Version,
		Registry:     a.Registry,
		Filter:       toolkit.Filter{Toolsets: cfg.Toolsets, ReadOnly: cfg.ReadOnly, Disabled: cfg.DisabledTools},
		ToolMode:     toolkit.Mode(cfg.ToolMode),
		Env:          &toolkit.Env{MaxResponseBytes: cfg.MaxResponseKB << 10, Logger: logger, Gate: permtools.Gate{M: pm}, ConfirmTrusted: trusted, AuditReads: cfg.AuditReads},
		SessionEnded: pm.EndSession,
		// The SDK logs every resource notification at info; only its warnings are worth keeping.
		Logger:      slog.New(levelFloor{logger.Handler(), slog.LevelWarn}),
		Extensions:  []mcpserver.Extension{a.installExtensions},
		Completion:  a.complete,
		Subscribe:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		Unsubscribe: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	a.completions = []*completion.Set{hatools.Completions(deps)}
	if err := a.checkToolsets(); err != nil {
		a.Close()
		return nil, cfg.Explain(err)
	}
	return a, nil
}

// EnableConformance adds the conformance suite's fixture toolset, resources and prompts
// (`hamcp demo --conformance`). Call it before serving: servers are built on first use.
func (a *App) EnableConformance() {
	ctx, stop := context.WithCancel(context.Background())
	a.closers = append(a.closers, func() error { stop(); return nil })
	f := conformance.New(ctx)
	a.Registry.Add(f.Tools()...)
	a.extensions = append(a.extensions, f.Install)
	a.completions = append(a.completions, conformance.Completions())
}

func (a *App) installExtensions(s *mcp.Server, readOnly bool) {
	for _, ext := range a.extensions {
		ext(s, readOnly)
	}
}

func (a *App) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return completion.Handler(a.completions...)(ctx, req)
}

func (a *App) checkToolsets() error {
	known := a.Registry.Toolsets()
	for _, ts := range a.Config.Toolsets {
		if slices.Contains(known, ts) {
			continue
		}
		if k, ok := offeredBy(ts); ok {
			return &config.Error{Option: "toolsets", Source: "configuration", Value: ts, Reason: "is a " + k.Title + " toolset, offered only " + k.Enable + ", or drop it from toolsets"}
		}
		return &config.Error{Option: "toolsets", Source: "configuration", Value: ts, Reason: "is not a toolset; accepted values: " + strings.Join(known, ", ")}
	}
	return nil
}

// registry is every tool hamcp has; DOCS.md's tool → grant table is checked against it (grants_docs_test.go).
func registry(ha hatools.Deps, pm *permission.Manager, st *store.Store, files *fsguard.FS, db dbtools.Deps, sys systools.Deps) *toolkit.Registry {
	r := toolkit.NewRegistry()
	r.Add(hatools.Tools(ha)...)
	r.Add(permtools.Tools(pm, st)...)
	r.Add(fstools.Tools(files)...)
	r.Add(dbtools.Tools(db)...)
	r.Add(systools.Tools(sys)...)
	r.AddResources(hatools.Resources(ha)...)
	r.AddPrompts(hatools.Prompts()...)
	// Search mode lists these next to the tool search: finding entities, reading them, acting on them.
	r.SetCore("ha_search_entities", "ha_get_states", "ha_get_entity_details", "ha_call_service")
	return r
}

// Toolsets lists the names of hamcp's toolsets (the accepted values of the toolsets option),
// from tools declared without backends: declaring a tool reaches none.
func Toolsets() []string {
	return declared().Toolsets()
}

// declared is every tool hamcp can have, every integration's included, declared without backends
// (for the accepted toolsets and DOCS.md's tables).
func declared() *toolkit.Registry {
	r := registry(hatools.Deps{}, nil, nil, nil, dbtools.Deps{}, systools.Deps{})
	for _, k := range integrations {
		r.Add(k.Declared()...)
	}
	return r
}

// Close stops background work and releases resources.
func (a *App) Close() error {
	a.cancel()
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	return errors.Join(errs...)
}

// HTTPServer builds the HTTP transport.
func (a *App) HTTPServer(o Options) (*httpserver.Server, error) {
	var proxies []*net.IPNet
	for _, p := range a.Config.TrustedProxies {
		if !strings.Contains(p, "/") {
			if strings.Contains(p, ":") {
				p += "/128"
			} else {
				p += "/32"
			}
		}
		_, n, err := net.ParseCIDR(p)
		if err != nil {
			return nil, &config.Error{Option: "trusted_proxies", Source: "configuration", Value: p, Reason: "is not an IP or CIDR"}
		}
		proxies = append(proxies, n)
	}
	if a.Config.InAddon() {
		// Home Assistant's ingress proxy.
		_, n, _ := net.ParseCIDR("172.30.32.2/32")
		proxies = append(proxies, n)
	}
	verifier, err := a.verifiers(checkerFor(a.haDirect, a.Logger))
	if err != nil {
		return nil, err
	}
	mounts := append([]func(*echo.Echo){a.Approvals.Mount}, a.integrationMounts()...)
	health := append([]httpserver.HealthCheck{{Name: "home_assistant", Check: a.haHealth}}, a.integrationHealth()...)
	a.startApprovals(a.Config.ExternalURL, nil)
	resourceMetadata := ""
	if a.Config.ExternalURL != "" {
		o, err := a.oauthServer()
		if err != nil {
			return nil, err
		}
		mounts = append(mounts, o.Mount)
		resourceMetadata = o.ResourceMetadataURL()
		verifier = append(authn.Chain{o.Verifier()}, verifier...)
	}
	return httpserver.New(httpserver.Options{
		Builder:             a.Builder,
		Verifier:            verifier,
		NoAuth:              o.NoAuth,
		Version:             Version,
		Logger:              a.Logger,
		RateLimit:           a.Config.RateLimit,
		MaxSessionsPerIP:    o.MaxSessionsPerIP,
		MaxSessionsPerToken: o.MaxSessionsPerToken,
		AllowedOrigins:      a.Config.AllowedOrigins,
		ExternalURL:         a.Config.ExternalURL,
		TrustedProxies:      proxies,
		BodyLimit:           int64(a.Config.BodyLimitKB) << 10,
		Health:              health,
		MountAuthed:         []func(g *echo.Group){requestRoutes(a.Permissions)},
		Mount:               mounts,
		ResourceMetadataURL: resourceMetadata,
	}), nil
}

func (a *App) haHealth(ctx context.Context) (bool, any) {
	// No longer than a call may wait: an HA too slow for tool calls is not healthy.
	ctx, cancel := context.WithTimeout(ctx, a.HA.Timeout())
	defer cancel()
	err := a.HA.Ping(ctx)
	m := a.HA.Mirror()
	detail := map[string]any{"reachable": err == nil, "live_updates": m.Live(), "entities": m.Len()}
	if err != nil {
		detail["error"] = err.Error()
	}
	return err == nil, detail
}

// ServeHTTP serves MCP over HTTP on ln until ctx ends.
func (a *App) ServeHTTP(ctx context.Context, ln net.Listener, o Options) error {
	if o.NoAuth && !isLoopback(ln.Addr()) {
		return &config.Error{Option: "no-auth", Source: "flag --no-auth", Reason: "is only allowed when listening on a loopback address such as 127.0.0.1; " + ln.Addr().String() + " is not"}
	}
	srv, err := a.HTTPServer(o)
	if err != nil {
		return err
	}
	a.startApprovals("", ln.Addr()) // without external_url, the page is where hamcp listens
	addr := ln.Addr().String()
	a.panel.httpAddr.Store(&addr)
	a.serveIngress(ctx) // the sidebar panel, in the add-on only
	return srv.Serve(ctx, ln, a.Config.ShutdownGrace)
}

// ServeStdio serves one MCP session over in/out (stdin/stdout) until the peer closes or ctx ends.
func (a *App) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return a.ServeConn(authn.WithPrincipal(ctx, authn.Stdio()), in, out, "")
}

// ServeConn serves one MCP session over in/out under the grant key the transport chose for the
// connection ("" draws a random one). When it returns, the session's grants have ended.
func (a *App) ServeConn(ctx context.Context, in io.ReadCloser, out io.WriteCloser, key string) error {
	// Requests read before the input ends are answered before the session ends (stdio.go).
	f := newFinishing(in, out, a.Config.ShutdownGrace)
	return a.Builder.Run(ctx, false, &mcp.IOTransport{Reader: f, Writer: f}, key)
}

func isLoopback(addr net.Addr) bool {
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// WaitReady waits until the state mirror is primed, or the timeout passes (tools then fall back to REST).
func (a *App) WaitReady(ctx context.Context, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if a.HA.Mirror().Ready() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

// levelFloor drops records below a minimum level before they reach the wrapped handler.
type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (l levelFloor) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min && l.Handler.Enabled(ctx, lv)
}

func (l levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{l.Handler.WithAttrs(a), l.min}
}
func (l levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{l.Handler.WithGroup(n), l.min}
}
