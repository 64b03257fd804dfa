package httpx

import (
	"fmt"
	"net/http"
)

// Service names a backend in its errors and gives the sentinel errors its APIError matches.
// Each client declares one empty type implementing it, so that every backend's APIError is a
// type of its own: errors.As for a Supervisor error never catches a Home Assistant one.
type Service interface {
	Name() string        // as error texts start, e.g. "home assistant"
	Unauthorized() error // matched by 401, 403 and the auth error codes
	Unavailable() error  // matched by a gateway failure (502, 503, 504)
}

// APIError is an error answer from a backend: an HTTP status with the message of its body, or
// (Status 0) a WebSocket result with a code. Code and Path are set by the backends that have
// them: Home Assistant's error codes, the Hubitat route that answered.
type APIError[S Service] struct {
	Status  int
	Code    string
	Path    string // the route, without host or query
	Message string
}

func (e *APIError[S]) Error() string {
	var s S
	switch {
	case e.Path != "":
		return fmt.Sprintf("%s %s answered %d: %s", s.Name(), e.Path, e.Status, e.Message)
	case e.Status != 0 && e.Code != "":
		return fmt.Sprintf("%s returned %d %s: %s", s.Name(), e.Status, e.Code, e.Message)
	case e.Status != 0:
		return fmt.Sprintf("%s returned %d: %s", s.Name(), e.Status, e.Message)
	default:
		return fmt.Sprintf("%s error %s: %s", s.Name(), e.Code, e.Message)
	}
}

// Is lets callers test an APIError against its backend's sentinel errors without unwrapping by
// hand: a 401/403 (or Home Assistant's auth error codes) is Unauthorized, and a gateway failure
// — the Supervisor's proxy while Home Assistant restarts, a reverse proxy — is Unavailable.
func (e *APIError[S]) Is(target error) bool {
	var s S
	switch target {
	case s.Unauthorized():
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden ||
			e.Code == "unauthorized" || e.Code == "auth_invalid"
	case s.Unavailable():
		return GatewayDown(e.Status)
	}
	return false
}

// StatusText never returns "": unusual statuses still get a readable message.
func StatusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return fmt.Sprintf("HTTP status %d", status)
}
