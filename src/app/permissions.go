package app

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/src/approval"
	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/httpserver"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
)

// haNotifier posts permission requests as Home Assistant persistent notifications. The model can read
// everything that passes Home Assistant (the call_service event, the recorder), so the notification only
// points at the approval page and the panel; the link in it is useless without an administrator's login.
type haNotifier struct{ ha *homeassistant.Client }

func notificationID(p permission.Pending) string { return "hamcp_permission_" + p.ID }

func (n haNotifier) Notify(ctx context.Context, p permission.Pending) error {
	_, _, err := n.ha.CallService(ctx, "persistent_notification", "create", map[string]any{
		"notification_id": notificationID(p), "title": permission.NotificationTitle, "message": p.Message(),
	}, false)
	return err
}

func (n haNotifier) Withdraw(ctx context.Context, p permission.Pending) error {
	_, _, err := n.ha.CallService(ctx, "persistent_notification", "dismiss", map[string]any{"notification_id": notificationID(p)}, false)
	return err
}

// openPermissions opens hamcp's store, the permission manager and the approval page from the config.
func openPermissions(cfg *config.Config, ha *homeassistant.Client, a *App) (*store.Store, *permission.Manager, *approval.Page, error) {
	st, err := store.Open(filepath.Join(cfg.DataDir, "hamcp.db"))
	if err != nil {
		return nil, nil, nil, &config.Error{Option: "data_dir", Source: "configuration", Value: cfg.DataDir, Reason: "hamcp's store cannot be opened there: " + err.Error()}
	}
	policies := map[permission.Category]permission.Policy{}
	for c, v := range map[permission.Category]string{permission.Filesystem: cfg.PermissionFilesystem, permission.Database: cfg.PermissionDatabase, permission.Command: cfg.PermissionCommand, permission.SupervisorToken: cfg.PermissionSupervisorToken, permission.DatabaseWrite: cfg.PermissionDatabaseWrite} {
		p, err := permission.ParsePolicy(v)
		if err != nil {
			st.Close()
			return nil, nil, nil, &config.Error{Option: "permission_" + string(c), Source: "configuration", Value: v, Reason: err.Error()}
		}
		policies[c] = p
	}
	var page *approval.Page // the manager makes links through the page, which answers through the manager
	m, err := permission.New(permission.Options{
		Policies: policies, GrantTTL: cfg.GrantTTL, Store: st, Notifier: haNotifier{ha}, Logger: a.Logger.With("component", "permissions"),
		Link: func(secret string) string { return page.Link(secret) },
		// ha_get_permissions and the panel show database_write and the Supervisor token next to the
		// categories they build on.
		Categories: []permission.Category{permission.Filesystem, permission.Database, permission.DatabaseWrite, permission.Command, permission.SupervisorToken},
	})
	if err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	page, err = approval.New(approval.Options{Manager: m, HAInternalURL: a.haDirect, Logger: a.Logger.With("component", "approval"),
		EntityName: entityName(ha)})
	if err != nil {
		m.Close()
		st.Close()
		return nil, nil, nil, err
	}
	return st, m, page, nil
}

// startApprovals makes permission requests carry links to the approval page at base: external_url, or
// else the address hamcp listens at when a browser can reach it there (the demo on loopback).
func (a *App) startApprovals(base string, ln net.Addr) {
	if a.Approvals.Started() {
		return
	}
	if base == "" && ln != nil {
		if host, _, err := net.SplitHostPort(ln.String()); err == nil {
			if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
				base = "http://" + ln.String()
			}
		}
	}
	if base == "" {
		a.Logger.Warn("permission requests carry no approval link: set external_url so the user can approve them in a browser; until then they approve in the hamcp panel or in their client")
		return
	}
	// The page logs in exactly like OAuth, so it needs the same address of Home Assistant for the browser.
	browser, err := a.oauthBrowserURL()
	if err == nil {
		err = a.Approvals.Start(base, browser)
	}
	if err != nil {
		a.Logger.Warn("permission requests carry no approval link: the approval page cannot run at "+base, "err", err)
	}
}

// requestRoutes is the token-facing side of permission requests. A token sees and may deny only the
// requests its own sessions made; it can never approve, since the model holds the token. The user
// approves on the approval page or in the panel, which has its own listener and checks that its
// visitor is an active Home Assistant administrator (package panel). Session ids never appear:
// requests name their session by its label.
func requestRoutes(m *permission.Manager) func(g *echo.Group) {
	return func(g *echo.Group) {
		g.GET("/api/permissions/requests", func(c echo.Context) error {
			owner := authn.PrincipalOf(httpserver.TokenInfo(c.Request())).Owner()
			return c.JSON(http.StatusOK, map[string]any{"requests": m.PendingFor(owner)})
		})
		answer := func(approve bool) echo.HandlerFunc {
			return func(c echo.Context) error {
				id := c.Param("id")
				if approve {
					return c.JSON(http.StatusForbidden, map[string]any{"error": "a token cannot approve permission requests: " +
						"the user approves on the approval page (the link in the permission_required error) or in the hamcp panel"})
				}
				err := m.DenyAsOwner(c.Request().Context(), id, authn.PrincipalOf(httpserver.TokenInfo(c.Request())).Owner())
				switch {
				case errors.Is(err, permission.ErrNotOwner):
					return c.JSON(http.StatusForbidden, map[string]any{"error": err.Error()})
				case errors.Is(err, permission.ErrUnknownRequest):
					return c.JSON(http.StatusNotFound, map[string]any{"error": err.Error()})
				case errors.Is(err, permission.ErrRequestExpired):
					return c.JSON(http.StatusGone, map[string]any{"error": err.Error()})
				case err != nil:
					return err
				}
				return c.JSON(http.StatusOK, map[string]any{"id": id, "approved": approve})
			}
		}
		g.POST("/api/permissions/requests/:id/approve", answer(true))
		g.POST("/api/permissions/requests/:id/deny", answer(false))
	}
}

// entityName reads an entity's friendly name from the state mirror, so a request shows which door.
// The id is always shown beside it: a name is whatever the entity's owner (or an assistant) set.
func entityName(ha *homeassistant.Client) func(id string) string {
	return func(id string) string {
		if ha == nil || ha.Mirror() == nil {
			return ""
		}
		st, ok := ha.Mirror().Get(id)
		if !ok {
			return ""
		}
		n, _ := st.Attributes["friendly_name"].(string)
		return n
	}
}
