package hass_test

import (
	"slices"
	"testing"
)

// TestWSConfigAuthList: HA's user list, as an administrator sees it on the Users page and as
// hamcp's OAuth refresh reads it: the owner and admins in system-admin, a non-admin in
// system-users, the Supervisor as a system-generated admin; non-admins are refused.
func TestWSConfigAuthList(t *testing.T) {
	w := dialAuthed(t, home.Token())
	users := w.ok(map[string]any{"id": 1, "type": "config/auth/list"}).([]any)
	keys := []string{"id", "username", "name", "is_owner", "is_active", "local_only", "system_generated", "group_ids", "credentials"}
	var owners, admins, plain, system int
	for _, raw := range users {
		u := raw.(map[string]any)
		for _, k := range keys {
			if _, ok := u[k]; !ok {
				t.Fatalf("user lacks %s: %v", k, u)
			}
		}
		groups := u["group_ids"].([]any)
		switch {
		case u["system_generated"] == true:
			system++
		case u["is_owner"] == true:
			owners++
		case slices.Contains(groups, any("system-admin")):
			admins++
		case slices.Contains(groups, any("system-users")):
			plain++
		}
	}
	if owners != 1 || plain != 1 || system != 1 {
		t.Fatalf("owners %d, admins %d, users %d, system %d: %v", owners, admins, plain, system, users)
	}
	u := dialAuthed(t, home.UserToken())
	if m, _ := u.cmd(map[string]any{"id": 1, "type": "config/auth/list"}); errCode(m) != "unauthorized" {
		t.Fatalf("a non-admin listed users: %v", m)
	}
}
