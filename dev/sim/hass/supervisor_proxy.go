package hass

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// proxyREST forwards /core/api/... to HA with the Supervisor's own token,
// as the real Supervisor does for add-ons; 502 when HA is down.
func (s *Supervisor) proxyREST(w http.ResponseWriter, r *http.Request, p params) {
	if !s.checkToken(w, r) {
		return
	}
	// The Supervisor never lets an add-on reach core's own Supervisor proxy.
	if rest := p["rest"]; rest == "hassio" || strings.HasPrefix(rest, "hassio/") || strings.HasPrefix(rest, "hassio_") {
		plain(w, http.StatusForbidden, "403: Forbidden")
		return
	}
	base := s.o.HAURL()
	if base == "" {
		plain(w, 502, "502: Bad Gateway")
		return
	}
	target := base + "/api"
	if rest, ok := p["rest"]; ok {
		target += "/" + rest
	}
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target, io.LimitReader(r.Body, maxBody))
	if err != nil {
		plain(w, 502, "502: Bad Gateway")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Authorization", "Bearer "+s.o.SystemToken)
	resp, err := s.client.Do(req)
	if err != nil {
		plain(w, 502, "502: Bad Gateway")
		return
	}
	defer resp.Body.Close()
	for _, h := range []string{"Content-Type", "Location", "Allow"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// proxyWS is /core/websocket: the Supervisor authenticates the add-on with
// SUPERVISOR_TOKEN, logs in to HA with its own token, then relays frames.
func (s *Supervisor) proxyWS(w http.ResponseWriter, r *http.Request, _ params) {
	base := s.o.HAURL()
	if base == "" {
		plain(w, 502, "502: Bad Gateway")
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	upstream, err := s.dialHA(ctx, base)
	if err != nil {
		plain(w, 502, "502: Bad Gateway")
		return
	}
	defer upstream.Close(websocket.StatusNormalClosure, "")
	client, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	defer client.Close(websocket.StatusNormalClosure, "")
	client.SetReadLimit(maxFrameBytes)
	if !s.wsClientAuth(ctx, client) {
		return
	}
	var clientMu sync.Mutex // the refusals and the relay from core both write to the add-on
	toClient := func(typ websocket.MessageType, data []byte) error {
		clientMu.Lock()
		defer clientMu.Unlock()
		return client.Write(ctx, typ, data)
	}
	relay := func(write func(websocket.MessageType, []byte) error, src *websocket.Conn, filter bool) {
		defer cancel()
		for {
			typ, data, err := src.Read(ctx)
			if err != nil {
				return
			}
			if filter {
				var refused [][]byte
				if data, refused = refuseSupervisorCommands(data); len(refused) > 0 {
					for _, r := range refused {
						if toClient(websocket.MessageText, r) != nil {
							return
						}
					}
				}
				if data == nil {
					continue
				}
			}
			if err := write(typ, data); err != nil {
				return
			}
		}
	}
	go relay(func(typ websocket.MessageType, data []byte) error { return upstream.Write(ctx, typ, data) }, client, true)
	relay(toClient, upstream, false)
}

// blockedForAddons are the WebSocket commands the Supervisor's proxy keeps from add-ons:
// they would reach the Supervisor as core, with core's rights.
var blockedForAddons = []string{"supervisor/", "hassio/"}

// refuseSupervisorCommands takes the supervisor/* and hassio/* commands out of an add-on's
// frame (one message or an array of them) and returns what is left to forward (nil: nothing)
// and an error result for each one taken out.
func refuseSupervisorCommands(frame []byte) (rest []byte, refused [][]byte) {
	var one map[string]any
	var many []map[string]any
	if decodeJSON(frame, &one) == nil {
		many = []map[string]any{one}
	} else if decodeJSON(frame, &many) != nil {
		return frame, nil // not JSON: core deals with it
	}
	var keep []map[string]any
	for _, m := range many {
		typ, _ := m["type"].(string)
		blocked := false
		for _, p := range blockedForAddons {
			blocked = blocked || strings.HasPrefix(typ, p)
		}
		if !blocked {
			keep = append(keep, m)
			continue
		}
		raw, _ := marshal(map[string]any{"id": m["id"], "type": "result", "success": false,
			"error": map[string]any{"code": "unauthorized", "message": "Add-ons cannot send " + typ + " through the Supervisor's proxy; use the Supervisor API"}})
		refused = append(refused, raw)
	}
	switch {
	case len(refused) == 0:
		return frame, nil
	case len(keep) == 0:
		return nil, refused
	case one != nil:
		rest, _ = marshal(keep[0])
	default:
		rest, _ = marshal(keep)
	}
	return rest, refused
}

// dialHA connects to HA's WebSocket and logs in as the Supervisor.
func (s *Supervisor) dialHA(ctx context.Context, base string) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, "ws"+strings.TrimPrefix(base, "http")+"/api/websocket", nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(maxFrameBytes)
	if _, _, err := c.Read(dctx); err != nil { // auth_required
		c.Close(websocket.StatusNormalClosure, "")
		return nil, err
	}
	raw, _ := marshal(map[string]any{"type": "auth", "access_token": s.o.SystemToken})
	if err := c.Write(dctx, websocket.MessageText, raw); err != nil {
		c.Close(websocket.StatusNormalClosure, "")
		return nil, err
	}
	_, data, err := c.Read(dctx)
	if err != nil || !strings.Contains(string(data), `"auth_ok"`) {
		c.Close(websocket.StatusNormalClosure, "")
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return c, nil
}

func (s *Supervisor) wsClientAuth(ctx context.Context, c *websocket.Conn) bool {
	write := func(v any) bool {
		raw, _ := marshal(v)
		return c.Write(ctx, websocket.MessageText, raw) == nil
	}
	if !write(handshakeFrame{Type: "auth_required", HAVersion: home.Version}) {
		return false
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	typ, data, err := c.Read(actx)
	if err != nil || typ != websocket.MessageText {
		return false
	}
	var m map[string]any
	if decodeJSON(data, &m) != nil {
		return false
	}
	tok, _ := m["access_token"].(string)
	if tok == "" {
		tok, _ = m["api_password"].(string)
	}
	if m["type"] != "auth" || tok != s.o.Token {
		write(handshakeFrame{Type: "auth_invalid", Message: "Invalid access"})
		return false
	}
	return write(handshakeFrame{Type: "auth_ok", HAVersion: home.Version})
}

// hassioLogPath is the part of core's hassio HTTP view (/api/hassio/<path>, admin only) the
// simulator serves: the Supervisor's log endpoints, forwarded with their query.
var hassioLogPath = regexp.MustCompile(`^(core|supervisor|addons/[a-z0-9_]+)/logs$`)

// hassioLogs is core's /api/hassio/<path> for log paths: 404 without a Supervisor (the
// hassio integration is not loaded) or for other paths.
func (s *Server) hassioLogs(w http.ResponseWriter, r *http.Request, p params, _ *user) {
	if s.o.Supervisor == nil || !hassioLogPath.MatchString(p["rest"]) {
		plain(w, http.StatusNotFound, "404: Not Found")
		return
	}
	fwd := r.Clone(r.Context())
	fwd.URL.Path, fwd.URL.RawPath = "/"+p["rest"], ""
	fwd.Header.Set("Authorization", "Bearer "+s.o.Supervisor.o.Token)
	s.o.Supervisor.Handler().ServeHTTP(w, fwd)
}
