package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/integration"
	"github.com/hamcp/hamcp/src/oauth"
	"github.com/hamcp/hamcp/src/panel"
	"github.com/hamcp/hamcp/src/sshserver"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// panelState is what the panel needs to know about the transports, recorded as they start.
type panelState struct {
	httpAddr atomic.Pointer[string] // where ServeHTTP listens
	sshAddr  atomic.Pointer[string] // where ServeSSH listens

	oauthMu sync.Mutex
	oauth   *oauth.Server // for listing and revoking sign-ins; built on first use

	// lookup and client reach the public address for the Connect page's checks; tests replace them
	// (a resolver that answers private addresses, a TLS server's client).
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	client *http.Client
}

// PanelOptions are what the caller decides about the panel.
type PanelOptions struct {
	// AllowLoopback answers loopback peers too (the demo). The add-on leaves it off: only the
	// Supervisor's ingress proxy may speak for the user, not a command running in the container.
	AllowLoopback bool
	// DemoUser stands in for the Home Assistant user on requests without ingress headers.
	DemoUser *panel.User
	// PollEvery is how often open Approvals pages ask for news (default 2 s).
	PollEvery time.Duration
}

// Panel builds the hamcp panel (Home Assistant's sidebar, through ingress).
func (a *App) Panel(o PanelOptions) (*panel.Panel, error) {
	return panel.New(panel.Options{
		Permissions: a.Permissions,
		// Only active Home Assistant administrators use the panel: HA's user list, read with
		// hamcp's own access (the Supervisor's system user in the add-on), says who they are.
		Users:         a.HA.Users,
		Audit:         a.Store,
		Undo:          a.panelUndo,
		OAuth:         a.panelOAuth,
		Connect:       a.panelConnect,
		Status:        a.panelStatus,
		SSHKeys:       a.panelSSHKeys,
		EntityName:    entityName(a.HA),
		AllowLoopback: o.AllowLoopback,
		DemoUser:      o.DemoUser,
		PollEvery:     o.PollEvery,
		Logger:        a.Logger.With("component", "panel"),
	})
}

// ServePanel serves the panel on ln until ctx ends.
func (a *App) ServePanel(ctx context.Context, ln net.Listener, o PanelOptions) error {
	p, err := a.Panel(o)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	a.Logger.Info("hamcp panel listening", "addr", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveIngress serves the panel on ingress_listen in the add-on. A failure is logged, not fatal: MCP
// keeps working without the panel.
func (a *App) serveIngress(ctx context.Context) {
	if !a.Config.InAddon() || a.Config.IngressListen == "" {
		return
	}
	ln, err := net.Listen("tcp", a.Config.IngressListen)
	if err != nil {
		a.Logger.Error("the hamcp panel cannot listen; the sidebar panel is unavailable",
			"option", "ingress_listen", "addr", a.Config.IngressListen, "err", err)
		return
	}
	go func() {
		if err := a.ServePanel(ctx, ln, PanelOptions{}); err != nil {
			a.Logger.Error("the hamcp panel stopped", "err", err)
		}
	}()
}

func (a *App) panelOAuth() *oauth.Server {
	if a.Config.ExternalURL == "" {
		return nil
	}
	a.panel.oauthMu.Lock()
	defer a.panel.oauthMu.Unlock()
	if a.panel.oauth == nil {
		o, err := a.oauthServer()
		if err != nil {
			a.Logger.Warn("panel: OAuth sign-ins cannot be listed", "err", err)
			return nil
		}
		a.panel.oauth = o
	}
	return a.panel.oauth
}

func (a *App) panelSSHKeys() []panel.SSHKey {
	keys, err := sshserver.ParseAuthorizedKeys(a.Config.SSHAuthorizedKeys)
	if err != nil {
		return nil
	}
	out := make([]panel.SSHKey, 0, len(keys))
	for _, k := range keys {
		out = append(out, panel.SSHKey{Fingerprint: k.Fingerprint, Comment: k.Comment, Expires: k.Expires})
	}
	return out
}

func (a *App) panelStatus(ctx context.Context) panel.Status {
	s := panel.Status{Version: Version, OpenSessions: a.Builder.OpenSessions()}
	ha := panel.Backend{Name: "Home Assistant"}
	if err := a.HA.Ping(ctx); err != nil {
		ha.Detail = err.Error()
	} else {
		ha.OK = true
		m := a.HA.Mirror()
		ha.Detail = fmt.Sprintf("%d entities", m.Len())
		if !m.Live() {
			ha.Detail += ", live updates paused"
		}
	}
	s.Backends = append(s.Backends, ha)
	if a.Supervisor != nil {
		sup := panel.Backend{Name: "Supervisor"}
		if info, err := a.Supervisor.SupervisorInfo(ctx); err != nil {
			sup.Detail = err.Error()
		} else {
			sup.OK, sup.Detail = true, "version "+info.Version
		}
		s.Backends = append(s.Backends, sup)
	}
	on := a.Builder.Tools(false)
	for _, ts := range a.Registry.Toolsets() {
		total := len(a.Registry.Select(toolkit.Filter{Toolsets: []string{ts}}))
		n := 0
		for _, t := range on {
			if t.Toolset() == ts {
				n++
			}
		}
		s.Toolsets = append(s.Toolsets, panel.ToolsetCount{Name: ts, Enabled: n, Total: total})
	}
	if list, err := hatools.SensitiveEntities(ctx, hatools.Deps{HA: a.HA, SensitiveEntities: a.Config.SensitiveEntities}); err != nil {
		s.SensitiveErr = err.Error()
	} else {
		for _, e := range list {
			s.Sensitive = append(s.Sensitive, panel.SensitiveEntity{EntityID: e.EntityID, Why: e.Why})
		}
	}
	for _, in := range a.integrations {
		ok, detail := in.Health(ctx)
		s.Backends = append(s.Backends, panel.Backend{Name: titleCase(in.Name()), OK: ok, Detail: healthDetail(detail)})
	}
	for _, in := range a.integrations {
		rep, ok := in.(integration.StatusReporter)
		if !ok {
			continue
		}
		// The page shows what it can read: a store error here is in the rule tools' answers too.
		if list, err := rep.StoppedRules(ctx); err == nil {
			for _, r := range list {
				s.StoppedRules = append(s.StoppedRules, panel.StoppedRule{Name: r.Name, Reason: r.Reason, At: r.At})
			}
		}
	}
	listed, mode := a.Builder.Listed(false)
	s.ToolsListed, s.ToolsListBytes = len(listed), toolkit.ListBytes(listed)
	s.ToolMode = toolMode(a.Config) + "; tool_mode " + a.Config.ToolMode + " (listing " + string(mode) + ")"
	return s
}

func toolMode(c *config.Config) string {
	var parts []string
	switch {
	case c.ReadOnly:
		parts = append(parts, "read-only (tools that change nothing)")
	default:
		parts = append(parts, "full")
	}
	if len(c.Toolsets) > 0 {
		ts := slices.Clone(c.Toolsets)
		slices.Sort(ts)
		parts = append(parts, "toolsets "+strings.Join(ts, ", "))
	} else {
		parts = append(parts, "all toolsets")
	}
	if n := len(c.DisabledTools); n > 0 {
		parts = append(parts, strconv.Itoa(n)+" tools disabled")
	}
	return strings.Join(parts, "; ")
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// healthDetail writes an integration's health detail for the Status page: "devices: 12, link:
// connected", keys in order; a detail that is not an object as it is.
func healthDetail(d any) string {
	m, ok := d.(map[string]any)
	if !ok {
		if d == nil {
			return ""
		}
		return fmt.Sprint(d)
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if t, ok := v.(time.Time); ok {
			v = t.UTC().Format("2006-01-02 15:04 UTC")
		}
		parts = append(parts, strings.ReplaceAll(k, "_", " ")+": "+fmt.Sprint(v))
	}
	return strings.Join(parts, ", ")
}
