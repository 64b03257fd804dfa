package hass

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/hamcp/hamcp/src/sim/home"
)

// proxyREST forwards /core/api/... to HA with the Supervisor's own token,
// as the real Supervisor does for add-ons; 502 when HA is down.
func (s *Supervisor) proxyREST(w http.ResponseWriter, r *http.Request, p params) {
	if !s.checkToken(w, r) {
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
	relay := func(dst, src *websocket.Conn) {
		defer cancel()
		for {
			typ, data, err := src.Read(ctx)
			if err != nil {
				return
			}
			if err := dst.Write(ctx, typ, data); err != nil {
				return
			}
		}
	}
	go relay(upstream, client)
	relay(client, upstream)
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
