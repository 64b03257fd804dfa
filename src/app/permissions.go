package app

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/httpserver"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/tools/permtools"
)

// haNotifier posts permission requests as Home Assistant persistent notifications: the user
// sees them in HA's sidebar, the model never does.
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

// openPermissions opens hamcp's store and the permission manager from the config.
func openPermissions(cfg *config.Config, ha *homeassistant.Client, a *App) (*store.Store, *permission.Manager, error) {
	st, err := store.Open(filepath.Join(cfg.DataDir, "hamcp.db"))
	if err != nil {
		return nil, nil, &config.Error{Option: "data_dir", Source: "configuration", Value: cfg.DataDir, Reason: "hamcp's store cannot be opened there: " + err.Error()}
	}
	policies := map[permission.Category]permission.Policy{}
	for c, v := range map[permission.Category]string{permission.Filesystem: cfg.PermissionFilesystem, permission.Database: cfg.PermissionDatabase, permission.Command: cfg.PermissionCommand} {
		p, err := permission.ParsePolicy(v)
		if err != nil {
			st.Close()
			return nil, nil, &config.Error{Option: "permission_" + string(c), Source: "configuration", Value: v, Reason: err.Error()}
		}
		policies[c] = p
	}
	m, err := permission.New(permission.Options{
		Policies: policies, GrantTTL: cfg.GrantTTL, Store: st, Notifier: haNotifier{ha}, Logger: a.Logger.With("component", "permissions"),
	})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, m, nil
}

// approvalRoutes is the user's side of permission requests: list what is pending and approve
// or deny it. A session can never approve its own request — the approver must be a different
// identity (the add-on panel through ingress, or another token) from the one that asked.
func approvalRoutes(m *permission.Manager, owners *permtools.Owners) func(g *echo.Group) {
	return func(g *echo.Group) {
		g.GET("/api/permissions/requests", func(c echo.Context) error {
			return c.JSON(http.StatusOK, map[string]any{"requests": m.Pending()})
		})
		answer := func(approve bool) echo.HandlerFunc {
			return func(c echo.Context) error {
				id := c.Param("id")
				var target *permission.Pending
				for _, p := range m.Pending() {
					if p.ID == id {
						target = &p
					}
				}
				if target == nil {
					return c.JSON(http.StatusNotFound, map[string]any{"error": permission.ErrUnknownRequest.Error()})
				}
				me := permtools.Identity(httpserver.TokenInfo(c.Request()))
				if approve && (me == "" || me == owners.Get(target.SessionKey)) {
					return c.JSON(http.StatusForbidden, map[string]any{"error": "a session cannot approve its own request: approve it in the hamcp panel in Home Assistant, with another account's token, or give the assistant the one-time code from the notification"})
				}
				var err error
				if approve {
					err = m.Approve(c.Request().Context(), id)
				} else {
					err = m.Deny(c.Request().Context(), id)
				}
				switch {
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
