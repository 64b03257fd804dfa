package homeassistant

import (
	"context"
	"time"
)

// Status is a health snapshot for the server's health endpoint. Error texts never contain the
// token.
type Status struct {
	BaseURL            string    `json:"base_url"`
	RESTReachable      bool      `json:"rest_reachable"`
	RESTError          string    `json:"rest_error,omitempty"`
	WebSocket          string    `json:"websocket"` // not_started | connecting | connected | down | closed
	WebSocketConnected bool      `json:"websocket_connected"`
	ConnectedSince     time.Time `json:"connected_since,omitzero"`
	Reconnects         int       `json:"reconnects"`
	MirrorReady        bool      `json:"mirror_ready"`
	MirrorLive         bool      `json:"mirror_live"`
	Entities           int       `json:"entities"`
	HAVersion          string    `json:"ha_version,omitempty"`
	LastError          string    `json:"last_error,omitempty"`
	LastErrorAt        time.Time `json:"last_error_at,omitzero"`
}

// Status checks REST reachability now (GET /api/, bounded by ctx) and reports the WebSocket and
// mirror state as last seen.
func (c *Client) Status(ctx context.Context) Status {
	st := Status{BaseURL: c.base}
	w := &c.ws
	w.mu.Lock()
	st.WebSocket = w.state.String()
	st.WebSocketConnected = w.state == stateConnected
	if st.WebSocketConnected {
		st.ConnectedSince = w.connectedAt.UTC()
	}
	st.Reconnects = w.reconnects
	st.HAVersion = w.haVersion
	if w.lastErr != nil {
		st.LastError = w.lastErr.Error()
		st.LastErrorAt = w.lastErrAt.UTC()
	}
	w.mu.Unlock()

	st.MirrorReady = c.mirror.Ready()
	st.MirrorLive = c.mirror.Live()
	st.Entities = c.mirror.Len()

	if err := c.Ping(ctx); err != nil {
		st.RESTError = err.Error()
		return st
	}
	st.RESTReachable = true
	if st.HAVersion == "" {
		if cfg, err := c.Config(ctx); err == nil {
			st.HAVersion = cfg.Version
		}
	}
	return st
}
