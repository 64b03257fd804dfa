package homeassistant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// User is Home Assistant's answer to auth/current_user.
type User struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	IsOwner bool   `json:"is_owner"`
	IsAdmin bool   `json:"is_admin"`
}

// CurrentUser asks Home Assistant who owns token (WebSocket auth/current_user on a connection of
// its own, closed right after). A rejected token is ErrUnauthorized.
func (c *Client) CurrentUser(ctx context.Context, token string) (User, error) {
	if !validHeaderValue(token) || token == "" {
		return User{}, fmt.Errorf("%w: malformed token", ErrUnauthorized)
	}
	one := &Client{
		base: c.base, wsURL: c.wsURL, token: token, http: c.http, log: c.log,
		handshakeWait: c.handshakeWait, writeTimeout: c.writeTimeout, readLimit: 1 << 20,
	}
	s, err := one.dialSession(ctx)
	if err != nil {
		return User{}, err
	}
	defer s.close()
	raw, err := s.call(ctx, "auth/current_user", nil, nil)
	if err != nil {
		return User{}, err
	}
	var u User
	if err := json.Unmarshal(raw, &u); err != nil {
		return User{}, fmt.Errorf("homeassistant: auth/current_user answer: %w", err)
	}
	return u, nil
}

// AuthUser is one entry of Home Assistant's user list (WebSocket config/auth/list,
// homeassistant/components/config/auth.py), as the Users settings page shows it.
type AuthUser struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	IsOwner         bool     `json:"is_owner"`
	IsActive        bool     `json:"is_active"`
	SystemGenerated bool     `json:"system_generated"`
	GroupIDs        []string `json:"group_ids"`
}

// GroupAdmin is Home Assistant's administrators group (GROUP_ID_ADMIN).
const GroupAdmin = "system-admin"

// IsAdmin is Home Assistant's User.is_admin: the owner, or an active member of the administrators
// group.
func (u AuthUser) IsAdmin() bool {
	return u.IsOwner || u.IsActive && slices.Contains(u.GroupIDs, GroupAdmin)
}

// Users lists Home Assistant's users (config/auth/list). It is an administrator's command: hamcp's
// own token (the Supervisor's system user in the add-on) may send it; a non-admin token is refused.
// An empty list is an error, since Home Assistant always has its owner.
func (c *Client) Users(ctx context.Context) ([]AuthUser, error) {
	users, err := callAs[[]AuthUser](ctx, c, "config/auth/list", nil)
	if err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("homeassistant: config/auth/list returned no users")
	}
	return users, nil
}
