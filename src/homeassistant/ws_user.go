package homeassistant

import (
	"context"
	"encoding/json"
	"fmt"
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
