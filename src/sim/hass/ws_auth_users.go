package hass

// config/auth/list: Home Assistant's user list (homeassistant/components/config/auth.py), an
// administrator's command. With a login side (Options.Auth) its users, whose admin flag tests can
// change, are the truth; otherwise the home model's. The Supervisor's system user is listed as HA
// lists it.

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
