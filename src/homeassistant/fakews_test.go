package homeassistant

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hamcp/hamcp/dev/testkit"
)

// fakeWS is a small Home Assistant WebSocket endpoint for transport edge cases the simulator
// does not let a test provoke on demand: dropped connections, swallowed pings, coalesced and
// malformed frames, out-of-order replies. It enforces HA's id rule and records violations.
type fakeWS struct {
	t        testing.TB
	token    string
	srv      *httptest.Server
	coalesce bool // answer call_service with [result, event] in one array frame

	mu           sync.Mutex
	states       map[string]State
	conns        map[*fakeConn]struct{}
	connects     int
	idViolations []string
	swallowPings bool
	getStates    int
}

type fakeConn struct {
	ws       *websocket.Conn
	writeMu  sync.Mutex
	mu       sync.Mutex
	subs     map[int64]string // subscription id → event type ("" = all)
	coalesce bool
}

func newFakeWS(t testing.TB) *fakeWS {
	f := &fakeWS{t: t, token: "good-token", states: map[string]State{}, conns: map[*fakeConn]struct{}{}}
	now := time.Now().UTC()
	for _, id := range []string{"light.kitchen", "light.porch", "switch.fan"} {
		f.states[id] = State{EntityID: id, State: "off", Attributes: map[string]any{"friendly_name": id},
			LastChanged: now, LastUpdated: now, LastReported: now, Context: Context{ID: "c0"}}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/websocket", f.serve)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeWS) url() string { return f.srv.URL }

func (f *fakeWS) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(1 << 20)
	fc := &fakeConn{ws: ws, subs: map[int64]string{}}
	ctx := r.Context()
	defer ws.CloseNow()
	fc.send(ctx, map[string]any{"type": "auth_required", "ha_version": "2026.1.0"})
	_, data, err := ws.Read(ctx)
	if err != nil {
		return
	}
	var auth struct {
		Type        string `json:"type"`
		AccessToken string `json:"access_token"`
	}
	if json.Unmarshal(data, &auth) != nil || auth.Type != "auth" || auth.AccessToken != f.token {
		fc.send(ctx, map[string]any{"type": "auth_invalid", "message": "Invalid access token or password"})
		ws.Close(websocket.StatusPolicyViolation, "")
		return
	}
	fc.send(ctx, map[string]any{"type": "auth_ok", "ha_version": "2026.1.0"})
	f.mu.Lock()
	f.conns[fc] = struct{}{}
	f.connects++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.conns, fc)
		f.mu.Unlock()
	}()
	var lastID int64
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var msgs []map[string]any
		if len(data) > 0 && data[0] == '[' {
			_ = json.Unmarshal(data, &msgs)
		} else {
			var m map[string]any
			_ = json.Unmarshal(data, &m)
			msgs = append(msgs, m)
		}
		for _, m := range msgs {
			idf, _ := m["id"].(float64)
			id := int64(idf)
			if id <= lastID {
				f.mu.Lock()
				f.idViolations = append(f.idViolations, fmt.Sprintf("id %d after %d", id, lastID))
				f.mu.Unlock()
				fc.send(ctx, errFrame(id, "id_reuse", "Identifier values have to increase."))
				continue
			}
			lastID = id
			f.handle(ctx, fc, id, m)
		}
	}
}

func errFrame(id int64, code, msg string) map[string]any {
	return map[string]any{"id": id, "type": "result", "success": false, "error": map[string]any{"code": code, "message": msg}}
}

func okFrame(id int64, result any) map[string]any {
	return map[string]any{"id": id, "type": "result", "success": true, "result": result}
}

func (f *fakeWS) handle(ctx context.Context, fc *fakeConn, id int64, m map[string]any) {
	switch m["type"] {
	case "supported_features":
		feats, _ := m["features"].(map[string]any)
		fc.mu.Lock()
		fc.coalesce = feats["coalesce_messages"] == float64(1)
		fc.mu.Unlock()
		fc.send(ctx, okFrame(id, nil))
	case "ping":
		f.mu.Lock()
		swallow := f.swallowPings
		f.mu.Unlock()
		if !swallow {
			fc.send(ctx, map[string]any{"id": id, "type": "pong"})
		}
	case "get_states":
		f.mu.Lock()
		f.getStates++
		list := make([]State, 0, len(f.states))
		for _, s := range f.states {
			list = append(list, s)
		}
		f.mu.Unlock()
		fc.send(ctx, okFrame(id, list))
	case "subscribe_events":
		et, _ := m["event_type"].(string)
		fc.mu.Lock()
		fc.subs[id] = et
		fc.mu.Unlock()
		fc.send(ctx, okFrame(id, nil))
	case "unsubscribe_events":
		sid, _ := m["subscription"].(float64)
		fc.mu.Lock()
		_, ok := fc.subs[int64(sid)]
		delete(fc.subs, int64(sid))
		fc.mu.Unlock()
		if !ok {
			fc.send(ctx, errFrame(id, "not_found", "Subscription not found."))
			return
		}
		fc.send(ctx, okFrame(id, nil))
	case "call_service":
		data, _ := m["service_data"].(map[string]any)
		eid, _ := data["entity_id"].(string)
		svc, _ := m["service"].(string)
		newState := map[string]string{"turn_on": "on", "turn_off": "off"}[svc]
		if newState == "" || eid == "" {
			fc.send(ctx, errFrame(id, "not_found", fmt.Sprintf("Action %v.%v not found.", m["domain"], svc)))
			return
		}
		ev := f.setState(eid, newState, false)
		fc.mu.Lock()
		co := fc.coalesce && f.coalesce
		fc.mu.Unlock()
		if co {
			// Result and the resulting event in one array frame, as HA does with coalescing.
			frames := []any{okFrame(id, map[string]any{"context": map[string]any{"id": "ctx1"}})}
			for sid := range fc.subscribedTo("state_changed") {
				frames = append(frames, map[string]any{"id": sid, "type": "event", "event": ev})
			}
			fc.send(ctx, frames)
			f.broadcast(ctx, ev, fc)
			return
		}
		fc.send(ctx, okFrame(id, map[string]any{"context": map[string]any{"id": "ctx1"}}))
		f.broadcast(ctx, ev, nil)
	case "test/echo":
		// Answer from another goroutine after a random pause so replies come back out of order.
		go func() {
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			fc.send(ctx, okFrame(id, map[string]any{"n": m["n"]}))
		}()
	case "test/garbage":
		// A malformed frame, a binary frame, then the real answer: the client must survive both.
		fc.writeMu.Lock()
		_ = fc.ws.Write(ctx, websocket.MessageText, []byte(`{"id": 1, "type": `))
		_ = fc.ws.Write(ctx, websocket.MessageBinary, []byte{0, 1, 2})
		fc.writeMu.Unlock()
		fc.send(ctx, okFrame(id, "survived"))
	case "test/burst":
		n := int(m["n"].(float64))
		frames := []any{}
		for i := 0; i < n; i++ {
			frames = append(frames, map[string]any{"id": int64(m["sub"].(float64)), "type": "event", "event": map[string]any{"i": i}})
		}
		frames = append(frames, okFrame(id, n))
		fc.send(ctx, frames)
	default:
		fc.send(ctx, errFrame(id, "unknown_command", "Unknown command."))
	}
}

func (fc *fakeConn) subscribedTo(eventType string) map[int64]struct{} {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	out := map[int64]struct{}{}
	for id, et := range fc.subs {
		if et == "" || et == eventType {
			out[id] = struct{}{}
		}
	}
	return out
}

func (fc *fakeConn) send(ctx context.Context, v any) {
	data, _ := json.Marshal(v)
	fc.writeMu.Lock()
	defer fc.writeMu.Unlock()
	_ = fc.ws.Write(ctx, websocket.MessageText, data)
}

// setState changes an entity and returns the state_changed event; with notify it is also pushed
// to every subscribed connection (a change made while nobody is connected passes notify=false).
func (f *fakeWS) setState(id, state string, notify bool) map[string]any {
	f.mu.Lock()
	old := f.states[id]
	now := time.Now().UTC()
	n := State{EntityID: id, State: state, Attributes: old.Attributes, LastChanged: now, LastUpdated: now, LastReported: now, Context: Context{ID: "c1"}}
	f.states[id] = n
	f.mu.Unlock()
	ev := map[string]any{"event_type": "state_changed", "data": map[string]any{"entity_id": id, "old_state": old, "new_state": n},
		"origin": "LOCAL", "time_fired": now, "context": map[string]any{"id": "c1"}}
	if notify {
		f.broadcast(context.Background(), ev, nil)
	}
	return ev
}

func (f *fakeWS) broadcast(ctx context.Context, ev map[string]any, skip *fakeConn) {
	f.mu.Lock()
	conns := make([]*fakeConn, 0, len(f.conns))
	for fc := range f.conns {
		if fc != skip {
			conns = append(conns, fc)
		}
	}
	f.mu.Unlock()
	et, _ := ev["event_type"].(string)
	for _, fc := range conns {
		for sid := range fc.subscribedTo(et) {
			fc.send(ctx, map[string]any{"id": sid, "type": "event", "event": ev})
		}
	}
}

// dropAll closes every connection without a close handshake, like a crashed or restarted HA.
func (f *fakeWS) dropAll() {
	f.mu.Lock()
	conns := make([]*fakeConn, 0, len(f.conns))
	for fc := range f.conns {
		conns = append(conns, fc)
	}
	f.mu.Unlock()
	for _, fc := range conns {
		_ = fc.ws.CloseNow()
	}
}

func (f *fakeWS) connectCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connects
}

// fastClient returns a started client with test-sized timers.
func fastClient(t testing.TB, baseURL, token string) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: baseURL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	c.backoffBase = 5 * time.Millisecond
	c.backoffCap = 50 * time.Millisecond
	c.handshakeWait = 2 * time.Second
	c.setupTimeout = 5 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		_ = c.Close()
	})
	c.Start(ctx)
	return c
}

func waitConnected(t testing.TB, c *Client) {
	t.Helper()
	testkit.Eventually(t, "websocket connected", func() bool {
		c.ws.mu.Lock()
		defer c.ws.mu.Unlock()
		return c.ws.state == stateConnected
	})
}

// restClient is a client used only for REST (not started).
func restClient(t testing.TB, baseURL, token string) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: baseURL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
