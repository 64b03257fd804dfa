package homeassistant

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// SupervisorAPI calls the Supervisor through core (WS supervisor/api, administrators only), for
// clients that cannot reach the Supervisor themselves: endpoint is the Supervisor's path (e.g.
// "/addons"), body its JSON data, and out receives the envelope's data member. Without a
// Supervisor the error is an *APIError with Code "unknown_command" (hassio not loaded) or a
// message saying it is not available.
func (c *Client) SupervisorAPI(ctx context.Context, method, endpoint string, body, out any) error {
	msg := map[string]any{"endpoint": endpoint, "method": strings.ToLower(method)}
	if body != nil {
		msg["data"] = body
	}
	// Core gives up on a Supervisor call after 10 s unless told otherwise ("timeout" in
	// hassio's websocket_supervisor_api) and answers unknown_error while the Supervisor
	// carries on: an add-on install or update, a backup or a stop waiting for a container
	// all take longer. Actions wait as long as the Supervisor takes (the caller's deadline
	// still bounds them); reads keep core's 10 s.
	if method != http.MethodGet {
		msg["timeout"] = nil
		if _, ok := ctx.Deadline(); !ok { // longer than Call's own bound, as the Supervisor's client allows
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, supervisorActionTimeout)
			defer cancel()
		}
	}
	return c.Call(ctx, "supervisor/api", msg, out)
}

// supervisorActionTimeout bounds a Supervisor action through core: an add-on install or a backup
// takes minutes (src/supervisor's client allows the same).
const supervisorActionTimeout = 10 * time.Minute
