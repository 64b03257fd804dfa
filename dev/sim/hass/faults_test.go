package hass_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hamcp/hamcp/dev/sim"
)

// faultyHome is a home of the test's own: faults are switched for the whole server, so they
// must not reach the package's shared home.
func faultyHome(t *testing.T) *sim.Home {
	t.Helper()
	h, err := sim.Start(context.Background(), sim.Options{Seed: 5, HistoryDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// TestFaultsFailing: a failing HA answers REST with aiohttp's 500 page and WebSocket commands
// with unknown_error, still authenticates and answers pings, and heals when switched back.
func TestFaultsFailing(t *testing.T) {
	t.Parallel()
	h := faultyHome(t)
	w := dialAt(t, wsURL(h.URL())+"/api/websocket", h.Token())
	h.Faults().SetFailing(true)
	r := do(t, h.URL(), http.MethodGet, "/api/states", h.Token(), "")
	if r.status != 500 || string(r.body) != "500 Internal Server Error\n\nServer got itself in trouble" || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("REST while failing: %d %q %v", r.status, r.body, r.header)
	}
	m, _ := w.cmd(map[string]any{"id": 1, "type": "get_states"})
	if e, _ := m["error"].(map[string]any); m["success"] != false || e["code"] != "unknown_error" || e["message"] != "Unknown error" {
		t.Fatalf("WS command while failing: %v", m)
	}
	w.send(map[string]any{"id": 2, "type": "ping"})
	if m := w.next(); m["type"] != "pong" || m["id"] != 2.0 {
		t.Fatalf("ping while failing: %v", m)
	}
	if m, _ := w.cmd(map[string]any{"id": 2, "type": "get_config"}); m["error"].(map[string]any)["code"] != "id_reuse" {
		t.Fatalf("a failed command's id still counts: %v", m)
	}
	// HA refuses unknown and malformed commands before any handler runs: they fail as usual.
	if m, _ := w.cmd(map[string]any{"id": 3, "type": "make_coffee"}); m["error"].(map[string]any)["code"] != "unknown_command" {
		t.Fatalf("unknown command while failing: %v", m)
	}
	w.send(map[string]any{"type": "get_states"})
	if m := w.next(); m["error"].(map[string]any)["code"] != "invalid_format" {
		t.Fatalf("malformed command while failing: %v", m)
	}
	// Logging in is not what broke.
	dialAt(t, wsURL(h.URL())+"/api/websocket", h.Token())

	h.Faults().SetFailing(false)
	if r := do(t, h.URL(), http.MethodGet, "/api/states", h.Token(), ""); r.status != 200 {
		t.Fatalf("REST after healing: %d %q", r.status, r.body)
	}
	if m, _ := w.cmd(map[string]any{"id": 4, "type": "get_config"}); m["success"] != true {
		t.Fatalf("WS after healing: %v", m)
	}
}

// TestFaultsFailingService: one service's calls fail as when its integration raises (WS
// home_assistant_error, REST 500) and change nothing; other services and commands go through.
func TestFaultsFailingService(t *testing.T) {
	t.Parallel()
	h := faultyHome(t)
	w := dialAt(t, wsURL(h.URL())+"/api/websocket", h.Token())
	h.Faults().SetFailingService("switch.turn_off")
	call := func(id int, service, entity string) map[string]any {
		m, _ := w.cmd(map[string]any{"id": id, "type": "call_service", "domain": "switch", "service": service, "target": map[string]any{"entity_id": entity}})
		return m
	}
	if m := call(1, "turn_on", "switch.coffee_machine"); m["success"] != true {
		t.Fatalf("another service: %v", m)
	}
	m := call(2, "turn_off", "switch.coffee_machine")
	if e, _ := m["error"].(map[string]any); m["success"] != false || e["code"] != "home_assistant_error" {
		t.Fatalf("the failing service over WS: %v", m)
	}
	if r := do(t, h.URL(), http.MethodPost, "/api/services/switch/turn_off", h.Token(), `{"entity_id":"switch.coffee_machine"}`); r.status != 500 {
		t.Fatalf("the failing service over REST: %d %q", r.status, r.body)
	}
	if r := do(t, h.URL(), http.MethodGet, "/api/states/switch.coffee_machine", h.Token(), ""); r.status != 200 || !strings.Contains(string(r.body), `"state":"on"`) {
		t.Fatalf("a failed call changed the switch: %d %s", r.status, r.body)
	}
	if m := call(2, "turn_off", "switch.coffee_machine"); m["error"].(map[string]any)["code"] != "id_reuse" {
		t.Fatalf("a failed call's id still counts: %v", m)
	}
	h.Faults().SetFailingService("")
	if m := call(3, "turn_off", "switch.coffee_machine"); m["success"] != true {
		t.Fatalf("after healing: %v", m)
	}
}

// TestFaultsDelay: a slow HA holds REST requests and WebSocket commands on the socket for the
// delay, lets them go at once when the delay is lifted, and stops holding a request whose
// client hung up.
func TestFaultsDelay(t *testing.T) {
	t.Parallel()
	h := faultyHome(t)
	w := dialAt(t, wsURL(h.URL())+"/api/websocket", h.Token())
	const d = 300 * time.Millisecond
	h.Faults().SetDelay(d)

	start := time.Now()
	if r := do(t, h.URL(), http.MethodGet, "/api/", h.Token(), ""); r.status != 200 || time.Since(start) < d {
		t.Fatalf("REST answered %d after %v, want 200 after at least %v", r.status, time.Since(start), d)
	}
	start = time.Now()
	if m, _ := w.cmd(map[string]any{"id": 1, "type": "get_config"}); m["success"] != true || time.Since(start) < d {
		t.Fatalf("WS answered %v after %v, want success after at least %v", m["success"], time.Since(start), d)
	}

	// A long delay: a client that gives up is let go, and lifting the delay frees the rest.
	h.Faults().SetDelay(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.URL()+"/api/", nil)
		req.Header.Set("Authorization", "Bearer "+h.Token())
		_, err := http.DefaultClient.Do(req)
		gone <- err
	}()
	w.send(map[string]any{"id": 2, "type": "get_config"})
	waitHeld(t, h, 2)
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned request: %v", err)
	}
	waitHeld(t, h, 1)
	start = time.Now()
	h.Faults().SetDelay(0)
	if m := w.next(); m["id"] != 2.0 || m["success"] != true || time.Since(start) > 2*time.Second {
		t.Fatalf("held command after the delay was lifted: %v after %v", m, time.Since(start))
	}
	waitHeld(t, h, 0)
}

// TestFaultsDropClients: a dropped WebSocket ends without a close frame, as a reset
// connection does, and HA takes new connections right away.
func TestFaultsDropClients(t *testing.T) {
	t.Parallel()
	h := faultyHome(t)
	w := dialAt(t, wsURL(h.URL())+"/api/websocket", h.Token())
	h.DropClients()
	_, err := w.read(5 * time.Second)
	if err == nil || websocket.CloseStatus(err) != -1 {
		t.Fatalf("after a drop the client read %v (close status %d), want a broken connection", err, websocket.CloseStatus(err))
	}
	w2 := dialAt(t, wsURL(h.URL())+"/api/websocket", h.Token())
	if m, _ := w2.cmd(map[string]any{"id": 1, "type": "get_config"}); m["success"] != true {
		t.Fatalf("new connection after the drop: %v", m)
	}
}

func waitHeld(t *testing.T, h *sim.Home, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.Faults().Held() != n {
		if time.Now().After(deadline) {
			t.Fatalf("held requests: %d, want %d", h.Faults().Held(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
