package homeassistant

import (
	"context"
	"errors"
	"testing"

	"github.com/hamcp/hamcp/dev/sim/hass"
)

// TestSimUsers: the user list as the add-on reads it (the Supervisor's token through its /core
// proxy): the owner and administrators are admins, a household member and a deactivated
// administrator are not; a non-admin's token is refused the list.
func TestSimUsers(t *testing.T) {
	h := simHome(t)
	c := fastClient(t, h.SupervisorURL()+"/core", h.SupervisorToken())
	waitConnected(t, c)
	users, err := c.Users(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]AuthUser{}
	for _, u := range users {
		byID[u.ID] = u
	}
	model := h.Model().Users()
	for _, tt := range []struct {
		name, id      string
		active, admin bool
	}{
		{"owner", model[0].ID, true, true},
		{"household member", model[1].ID, true, false},
		{"demo administrator", hass.DemoAdminID, true, true},
		{"deactivated administrator", hass.DeactivatedAdminID, false, false},
	} {
		u, ok := byID[tt.id]
		if !ok || u.IsActive != tt.active || u.IsAdmin() != tt.admin || u.SystemGenerated {
			t.Errorf("%s: listed %v as %+v (admin %v), want active %v admin %v", tt.name, ok, u, u.IsAdmin(), tt.active, tt.admin)
		}
	}

	plain := fastClient(t, h.URL(), h.UserToken())
	waitConnected(t, plain)
	var apiErr *APIError
	if _, err := plain.Users(context.Background()); !errors.As(err, &apiErr) || apiErr.Code != "unauthorized" {
		t.Fatalf("a non-admin's token listed users: %v", err)
	}
}
