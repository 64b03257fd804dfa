package hass

import "slices"

// config/auth/list: Home Assistant's user list (homeassistant/components/config/auth.py), an
// administrator's command. With a login side (Options.Auth) its users, whose admin flag tests can
// change, are the truth; otherwise the home model's. After them come the accounts every simulated
// HA has (listedUsers) and the Supervisor's system user, as HA lists it.

// Accounts the simulated HA lists beside the users who log in, with fixed ids so that tests and
// the demo can name them. Neither has a password: they never sign in, they are only looked up.
const (
	// DemoAdminID is the administrator `hamcp demo` opens its panel as (demo.DemoUser): the panel
	// checks every visitor against this list, the demo's included.
	DemoAdminID = "demo-user-0001"
	// DeactivatedAdminID is an administrator the owner deactivated on the Users page: still in
	// the administrators group, but is_active false.
	DeactivatedAdminID = "7b1e4c0a9d2f4e6b8a3c5d7e9f0a1b2c"
)

var listedUsers = []struct {
	id, name, username string
	active             bool
}{
	{DemoAdminID, "Demo Administrator", "demo", true},
	{DeactivatedAdminID, "Robin", "robin", false},
}

func handleAuthList(c *wsConn, id int64, _ map[string]any) { c.result(id, c.s.authUserList()) }

func (s *Server) authUserList() []map[string]any {
	var out []map[string]any
	if s.o.Auth != nil {
		out = s.o.Auth.UserList()
	} else {
		for _, u := range s.h.Users() {
			group := "system-users"
			if u.IsAdmin {
				group = "system-admin"
			}
			out = append(out, map[string]any{"id": u.ID, "username": nil, "name": u.Name, "is_owner": u.IsOwner, "is_active": true,
				"local_only": false, "system_generated": false, "group_ids": []string{group},
				"credentials": []map[string]any{{"type": "homeassistant"}}})
		}
	}
	for _, u := range listedUsers {
		out = append(out, map[string]any{"id": u.id, "username": u.username, "name": u.name, "is_owner": false, "is_active": u.active,
			"local_only": false, "system_generated": false, "group_ids": []string{"system-admin"},
			"credentials": []map[string]any{{"type": "homeassistant"}}})
	}
	s.tokMu.RLock()
	defer s.tokMu.RUnlock()
	for _, u := range s.tokens {
		if u.system {
			out = append(out, map[string]any{"id": u.ID, "username": nil, "name": u.Name, "is_owner": false, "is_active": true,
				"local_only": false, "system_generated": true, "group_ids": []string{"system-admin"}, "credentials": []map[string]any{}})
		}
	}
	return out
}

// handleAuthUpdate is config/auth/update as the Users page sends it when an administrator moves a
// user in or out of the administrators group. Only the login side's users can change here (the
// fixed accounts and system users cannot); the answer is the user as config/auth/list shows them.
func handleAuthUpdate(c *wsConn, id int64, m map[string]any) {
	userID, _ := m["user_id"].(string)
	if groups, ok := m["group_ids"].([]any); ok && c.s.o.Auth != nil {
		c.s.o.Auth.SetAdmin(userID, slices.Contains(groups, any("system-admin")))
	}
	for _, u := range c.s.authUserList() {
		if u["id"] != userID {
			continue
		}
		if u["system_generated"] == true {
			c.sendError(id, "cannot_modify_system_generated", "Unable to update system generated users.")
			return
		}
		c.result(id, map[string]any{"user": u})
		return
	}
	c.sendError(id, "not_found", "User not found")
}
