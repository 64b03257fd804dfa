package oauth

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
)

// A grant outlives the Home Assistant login it came from (hamcp revoked that HA session at once),
// so a refresh cannot ask HA "through the user". It asks with hamcp's own administrator access
// instead: config/auth/list is HA's user list as the Users settings page shows it.

const haUserCheckTimeout = 10 * time.Second

// haUserStanding asks Home Assistant whether userID may still hold a grant: the user exists, is
// active, is not a system user, and is an administrator. ok false comes with the reason to log
// and tell the client; err means HA could not answer, and the caller must fail closed.
func (s *Server) haUserStanding(ctx context.Context, userID string) (ok bool, why string, err error) {
	ctx, cancel := context.WithTimeout(ctx, haUserCheckTimeout)
	defer cancel()
	var users []homeassistant.AuthUser
	if err := s.o.HACommand(ctx, "config/auth/list", nil, &users); err != nil {
		return false, "", fmt.Errorf("config/auth/list: %w", err)
	}
	if len(users) == 0 {
		// HA always has at least its owner and the Supervisor user: an empty list is no answer.
		return false, "", fmt.Errorf("config/auth/list returned no users")
	}
	i := slices.IndexFunc(users, func(u homeassistant.AuthUser) bool { return u.ID == userID })
	switch {
	case i < 0:
		return false, "the Home Assistant user no longer exists", nil
	case !users[i].IsActive:
		return false, "the Home Assistant user " + users[i].Name + " is deactivated", nil
	case users[i].SystemGenerated:
		return false, "the Home Assistant user " + users[i].Name + " is a system user", nil
	case !users[i].IsAdmin():
		return false, "the Home Assistant user " + users[i].Name + " is no longer an administrator", nil
	}
	return true, "", nil
}
