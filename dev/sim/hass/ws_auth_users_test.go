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
	var owners, admins, plain, system, inactive int
	for _, raw := range users {
		u := raw.(map[string]any)
		for _, k := range keys {
			if _, ok := u[k]; !ok {
				t.Fatalf("user lacks %s: %v", k, u)
			}
		}
		groups := u["group_ids"].([]any)
		if u["is_active"] == false {
			inactive++
		}
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
	// The demo's administrator and a deactivated administrator are listed beside the logins.
	if owners != 1 || admins != 2 || plain != 1 || system != 1 || inactive != 1 {
		t.Fatalf("owners %d, admins %d, users %d, system %d, inactive %d: %v", owners, admins, plain, system, inactive, users)
	}
	u := dialAuthed(t, home.UserToken())
	if m, _ := u.cmd(map[string]any{"id": 1, "type": "config/auth/list"}); errCode(m) != "unauthorized" {
		t.Fatalf("a non-admin listed users: %v", m)
	}
}

// TestWSConfigAuthUpdate: an administrator promotes a user on the Users page and the list says so
// at once; system users cannot be changed, unknown ids are not found, non-admins are refused.
func TestWSConfigAuthUpdate(t *testing.T) {
	w := dialAuthed(t, home.Token())
	sam := home.Model().Users()[1].ID
	var n int
	next := func() int { n++; return n }
	groups := func(id string) []any {
		for _, raw := range w.ok(map[string]any{"id": next(), "type": "config/auth/list"}).([]any) {
			if u := raw.(map[string]any); u["id"] == id {
				return u["group_ids"].([]any)
			}
		}
		t.Fatalf("%s is not listed", id)
		return nil
	}
	t.Cleanup(func() {
		w.ok(map[string]any{"id": next(), "type": "config/auth/update", "user_id": sam, "group_ids": []string{"system-users"}})
	})
	for _, tt := range []struct {
		group string
		admin bool
	}{{"system-admin", true}, {"system-users", false}} {
		res := w.ok(map[string]any{"id": next(), "type": "config/auth/update", "user_id": sam, "group_ids": []string{tt.group}}).(map[string]any)
		if res["user"].(map[string]any)["id"] != sam {
			t.Fatalf("update answered %v", res)
		}
		if got := slices.Contains(groups(sam), any("system-admin")); got != tt.admin {
			t.Fatalf("after moving Sam to %s the list says admin %v", tt.group, got)
		}
	}
	for _, tt := range []struct{ user, code string }{
		{"0f3e2a8d5c1b4e7f9a6d3c2b1e0f4a5d", "cannot_modify_system_generated"},
		{"no-such-user", "not_found"},
	} {
		if m, _ := w.cmd(map[string]any{"id": next(), "type": "config/auth/update", "user_id": tt.user, "group_ids": []string{"system-admin"}}); errCode(m) != tt.code {
			t.Errorf("update %s: %v, want %s", tt.user, m, tt.code)
		}
	}
	u := dialAuthed(t, home.UserToken())
	if m, _ := u.cmd(map[string]any{"id": 1, "type": "config/auth/update", "user_id": sam, "group_ids": []string{"system-admin"}}); errCode(m) != "unauthorized" {
		t.Fatalf("a non-admin promoted themselves: %v", m)
	}
}
