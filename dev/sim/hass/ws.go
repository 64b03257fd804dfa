package hass

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/hamcp/hamcp/dev/sim/home"
)

const (
	maxPending    = 4096 // HA's MAX_PENDING_MSG: a client this far behind is dropped
	heartbeat     = 55 * time.Second
	maxFrameBytes = 16 << 20
	// coalesceWindow is how long a coalescing writer gathers messages.
	coalesceWindow = 5 * time.Millisecond
)

// wsConn is one authenticated WebSocket client.
type wsConn struct {
	s      *Server
	c      *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	user   *user
	out    chan []byte

	mu       sync.Mutex
	lastID   int64
	subs     map[int64]func()
	coalesce bool
	closed   bool
}

func (s *Server) handleWS(w http.ResponseWriter, r *http.Request, _ params) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	c.SetReadLimit(maxFrameBytes)
	ctx, cancel := context.WithCancel(context.Background())
	conn := &wsConn{s: s, c: c, ctx: ctx, cancel: cancel, out: make(chan []byte, maxPending), subs: map[int64]func(){}}
	defer conn.close()
	if err := conn.writeNow(handshakeFrame{Type: "auth_required", HAVersion: home.Version}); err != nil {
		return
	}
	u, ok := conn.authPhase()
	if !ok {
		return
	}
	conn.user = u
	s.mu.Lock()
	s.conns[conn] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
	}()
	go conn.writer()
	go conn.heartbeat()
	conn.readLoop()
}

// writeNow writes directly (handshake only, before the writer runs).
func (c *wsConn) writeNow(v any) error {
	raw, err := marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	return c.c.Write(ctx, websocket.MessageText, raw)
}

// authPhase waits for {"type":"auth","access_token":...} within AuthTimeout.
func (c *wsConn) authPhase() (*user, bool) {
	ctx, cancel := context.WithTimeout(c.ctx, c.s.o.AuthTimeout)
	defer cancel()
	typ, data, err := c.c.Read(ctx)
	if err != nil || typ != websocket.MessageText {
		return nil, false // timeout, close, or a binary frame: disconnect
	}
	var msg any
	if err := decodeJSON(data, &msg); err != nil {
		return nil, false
	}
	m, ok := msg.(map[string]any)
	if !ok {
		_ = c.writeNow(handshakeFrame{Type: "auth_invalid", Message: "Auth message incorrectly formatted: expected a dictionary. Got " + pyRepr(fromGo(msg))})
		return nil, false
	}
	if bad := authSchemaError(m); bad != "" {
		_ = c.writeNow(handshakeFrame{Type: "auth_invalid", Message: "Auth message incorrectly formatted: " + bad})
		return nil, false
	}
	tok, _ := m["access_token"].(string)
	u := c.s.userForToken(tok)
	if u == nil {
		_ = c.writeNow(handshakeFrame{Type: "auth_invalid", Message: "Invalid access token or password"})
		return nil, false
	}
	if err := c.writeNow(handshakeFrame{Type: "auth_ok", HAVersion: home.Version}); err != nil {
		return nil, false
	}
	return u, true
}

// authSchemaError checks AUTH_MESSAGE_SCHEMA; "" when valid.
func authSchemaError(m map[string]any) string {
	t, ok := m["type"]
	if !ok {
		return "required key not provided @ data['type']. Got None"
	}
	if t != "auth" {
		return "value must be one of ['auth'] for dictionary value @ data['type']. Got " + pyRepr(fromGo(t))
	}
	_, hasTok := m["access_token"]
	_, hasPw := m["api_password"]
	if hasTok && hasPw {
		return "two or more values in the same group of exclusion 'login' @ data[<login>]. Got None"
	}
	for k, v := range m {
		switch k {
		case "type":
		case "access_token", "api_password":
			if _, ok := v.(string); !ok {
				return "expected str for dictionary value @ data['" + k + "']. Got " + pyRepr(fromGo(v))
			}
		default:
			return "extra keys not allowed @ data['" + k + "']. Got " + pyRepr(fromGo(v))
		}
	}
	return ""
}

func (c *wsConn) close() { c.end(true) }

// end closes the connection once: with a close handshake (graceful), or by dropping the TCP
// connection (DropClients).
func (c *wsConn) end(graceful bool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	subs := c.subs
	c.subs = map[int64]func(){}
	c.mu.Unlock()
	for _, cancel := range subs {
		cancel()
	}
	c.cancel()
	if !graceful {
		_ = c.c.CloseNow()
		return
	}
	// the close handshake waits for the peer; never hold up the caller
	// (which may be this connection's own read loop, e.g. during a restart)
	go func() { _ = c.c.Close(websocket.StatusNormalClosure, "") }()
}

// send queues a message; a client that cannot keep up is disconnected.
func (c *wsConn) send(v any) {
	raw, err := marshal(v)
	if err != nil {
		return
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return
	}
	select {
	case c.out <- raw:
	default:
		c.s.log.Warn("websocket client unable to keep up with pending messages", "pending", maxPending)
		go c.close()
	}
}

func (c *wsConn) writer() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case first := <-c.out:
			frame := first
			c.mu.Lock()
			coalesce := c.coalesce
			c.mu.Unlock()
			if coalesce {
				// like HA's writer, which runs after the current loop iteration:
				// whatever is produced in the next moment goes out in one array frame
				parts := [][]byte{first}
				window := time.NewTimer(coalesceWindow)
			collect:
				for len(parts) < 512 {
					select {
					case m := <-c.out:
						parts = append(parts, m)
					case <-window.C:
						break collect
					}
				}
				window.Stop()
				if len(parts) > 1 {
					frame = append([]byte{'['}, joinBytes(parts)...)
					frame = append(frame, ']')
				}
			}
			ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
			err := c.c.Write(ctx, websocket.MessageText, frame)
			cancel()
			if err != nil {
				go c.close()
				return
			}
		}
	}
}

func joinBytes(parts [][]byte) []byte {
	var out []byte
	for i, p := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	return out
}

func (c *wsConn) heartbeat() {
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(c.ctx, heartbeat)
			err := c.c.Ping(ctx)
			cancel()
			if err != nil {
				go c.close()
				return
			}
		}
	}
}

func (c *wsConn) readLoop() {
	for {
		typ, data, err := c.c.Read(c.ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			return // HA disconnects on non-text frames
		}
		var v any
		if err := decodeJSON(data, &v); err != nil {
			return // and on invalid JSON
		}
		if list, ok := v.([]any); ok {
			for _, m := range list {
				if c.faultCommand(m) {
					c.handle(m)
				}
			}
			continue
		}
		if c.faultCommand(v) {
			c.handle(v)
		}
	}
}

// handle applies HA's per-message rules: format, increasing ids, command lookup.
func (c *wsConn) handle(v any) {
	m, isMap := v.(map[string]any)
	id := wsID(m)
	if id == 0 {
		var rid any = int64(0)
		if isMap {
			rid = toGoNumbers(m["id"])
		}
		c.sendErrorExtra(rid, "invalid_format", "Message incorrectly formatted.", nil)
		return
	}
	c.mu.Lock()
	last := c.lastID
	c.mu.Unlock()
	if id <= last {
		c.sendError(id, "id_reuse", "Identifier values have to increase.")
		return
	}
	typ := m["type"].(string)
	cmd, ok := wsCommands[typ]
	if !ok || cmd.needsRecorder && c.s.rec == nil {
		c.sendError(id, "unknown_command", "Unknown command.")
		c.setLast(id)
		return
	}
	c.setLast(id)
	if cmd.admin && !c.user.IsAdmin {
		c.sendError(id, "unauthorized", "Unauthorized")
		return
	}
	if err := cmd.schema.check(m); err != nil {
		c.sendError(id, "invalid_format", err.Error())
		return
	}
	defer func() {
		if r := recover(); r != nil {
			c.s.log.Error("websocket command panicked", "type", typ, "panic", r)
			c.sendError(id, "unknown_error", "Unknown error")
		}
	}()
	cmd.handle(c, id, m)
}

// wsID is a well-formed command's id: a positive integer, with a non-empty type beside it; 0 otherwise.
func wsID(m map[string]any) int64 {
	n, ok := m["id"].(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE") {
		return 0
	}
	i, err := n.Int64()
	if t, _ := m["type"].(string); err != nil || i <= 0 || t == "" {
		return 0
	}
	return i
}

func (c *wsConn) setLast(id int64) {
	c.mu.Lock()
	if id > c.lastID {
		c.lastID = id
	}
	c.mu.Unlock()
}

// Frames in HA's key order.
type resultFrame struct {
	ID      int64  `json:"id"`
	Type    string `json:"type"`
	Success bool   `json:"success"`
	Result  any    `json:"result"`
}

type errorFrame struct {
	ID      any            `json:"id"`
	Type    string         `json:"type"`
	Success bool           `json:"success"`
	Error   map[string]any `json:"error"`
}

type eventFrame struct {
	ID    int64  `json:"id"`
	Type  string `json:"type"`
	Event any    `json:"event"`
}

type handshakeFrame struct {
	Type      string `json:"type"`
	HAVersion string `json:"ha_version,omitempty"`
	Message   string `json:"message,omitempty"`
}

func (c *wsConn) result(id int64, v any) {
	c.send(resultFrame{ID: id, Type: "result", Success: true, Result: v})
}

func (c *wsConn) sendError(id int64, code, msg string) {
	c.sendErrorExtra(id, code, msg, nil)
}

func (c *wsConn) sendErrorExtra(id any, code, msg string, extra map[string]any) {
	e := map[string]any{"code": code, "message": msg}
	for k, v := range extra {
		e[k] = v
	}
	c.send(errorFrame{ID: id, Type: "result", Success: false, Error: e})
}

func (c *wsConn) event(id int64, ev any) {
	c.send(eventFrame{ID: id, Type: "event", Event: ev})
}

// subscribe remembers a subscription's cancel func under its id.
func (c *wsConn) subscribe(id int64, cancel func()) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		return
	}
	c.subs[id] = cancel
	c.mu.Unlock()
}

func (c *wsConn) unsubscribe(id int64) bool {
	c.mu.Lock()
	cancel, ok := c.subs[id]
	delete(c.subs, id)
	c.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// haError maps a home error to HA's WS error code and message.
func (c *wsConn) haError(id int64, err error) {
	var inv *home.InvalidError
	var sve *home.ServiceValidationError
	var nf *home.NotFoundError
	var ns *home.NotSupportedError
	var info *home.InfoError
	var hae *home.HAError
	switch {
	case errors.As(err, &inv):
		c.sendError(id, "invalid_format", inv.Msg)
	case errors.As(err, &sve):
		c.sendErrorExtra(id, "service_validation_error", "Validation error: "+sve.Msg, translation(sve))
	case errors.As(err, &nf):
		c.sendError(id, "not_found", nf.Msg)
	case errors.As(err, &ns):
		c.sendError(id, "not_supported", ns.Msg)
	case errors.As(err, &info):
		c.sendError(id, "invalid_info", info.Msg)
	case errors.As(err, &hae):
		c.sendError(id, "home_assistant_error", hae.Msg)
	default:
		c.sendError(id, "unknown_error", "Unknown error")
	}
}

func translation(e *home.ServiceValidationError) map[string]any {
	m := map[string]any{}
	if e.Key != "" {
		m["translation_key"] = e.Key
		m["translation_domain"] = e.Domain
		ph := map[string]any{}
		for k, v := range e.Placeholders {
			ph[k] = v
		}
		m["translation_placeholders"] = ph
	}
	return m
}
