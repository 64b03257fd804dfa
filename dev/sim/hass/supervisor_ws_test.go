package hass_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
)

// dialAt connects to a WebSocket API at url (HA's, or the Supervisor's /core/websocket
// proxy) and authenticates with token.
func dialAt(t testing.TB, url, token string) *wsClient {
	t.Helper()
	w := dialRaw(t, url)
	if m := w.next(); m["type"] != "auth_required" {
		t.Fatalf("first message: %v", m)
	}
	w.send(map[string]any{"type": "auth", "access_token": token})
	if m := w.next(); m["type"] != "auth_ok" {
		t.Fatalf("auth: %v", m)
	}
	return w
}

// TestWSSupervisorAPITimeout: core's supervisor/api gives up after "timeout" seconds (10 by
// default, none for null) with unknown_error, while the Supervisor finishes the action.
func TestWSSupervisorAPITimeout(t *testing.T) {
	t.Parallel()
	h, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 3, SupervisorAPITimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	started, release := h.HoldSupervisorActions()
	defer release()
	w := dialAt(t, wsURL(h.URL())+"/api/websocket", h.Token())
	install := func(id int, slug string, timeout ...any) {
		m := map[string]any{"id": id, "type": "supervisor/api", "endpoint": "/store/addons/" + slug + "/install", "method": "post"}
		if len(timeout) > 0 {
			m["timeout"] = timeout[0]
		}
		w.send(m)
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("the install of %s did not reach the Supervisor", slug)
		}
	}
	install(1, "core_samba")             // no timeout: core's default
	install(2, "5c53de3b_esphome", 0.05) // 50 ms
	install(3, "a0d7b954_vscode", nil)
	got := map[float64]map[string]any{}
	for len(got) < 2 {
		m := w.next()
		got[m["id"].(float64)] = m
	}
	for _, id := range []float64{1, 2} {
		if errCode(got[id]) != "unknown_error" {
			t.Errorf("call %v timed out with %v, want unknown_error", id, got[id])
		}
	}
	// "timeout": null waits: three default timeouts later the call is still open, so the
	// ping sent then is answered first. (A short wall-clock wait: the timeout being tested
	// runs on the server's clock.)
	time.Sleep(300 * time.Millisecond)
	w.send(map[string]any{"id": 4, "type": "ping"})
	if m := w.next(); m["id"] != float64(4) {
		t.Fatalf("answer before the install finished: %v", m)
	}
	release()
	if m := w.next(); m["id"] != float64(3) || m["success"] != true {
		t.Fatalf("install with timeout null: %v", m)
	}
	// The Supervisor carried on with the calls core gave up on.
	for _, slug := range []string{"core_samba", "5c53de3b_esphome", "a0d7b954_vscode"} {
		var info struct {
			Data struct {
				Version *string `json:"version"`
			} `json:"data"`
		}
		r := do(t, h.SupervisorURL(), "GET", "/addons/"+slug+"/info", h.SupervisorToken(), "")
		if err := json.Unmarshal(r.body, &info); err != nil || info.Data.Version == nil {
			t.Errorf("%s after its install: %d %s", slug, r.status, r.body)
		}
	}
}

// TestProxyRefusesSupervisorCommands: through the Supervisor's /core/websocket proxy an add-on
// cannot send supervisor/* or hassio/* commands (alone or in an array frame); the rest passes.
func TestProxyRefusesSupervisorCommands(t *testing.T) {
	t.Parallel()
	w := dialAt(t, wsURL(home.SupervisorURL())+"/core/websocket", home.SupervisorToken())
	w.sendRaw(`[{"id":1,"type":"get_config"},{"id":2,"type":"supervisor/api","endpoint":"/addons","method":"get"}]`)
	w.send(map[string]any{"id": 3, "type": "hassio/update/addon", "addon": "core_samba"})
	w.send(map[string]any{"id": 4, "type": "ping"})
	got := map[float64]map[string]any{}
	for len(got) < 4 {
		m := w.next()
		got[m["id"].(float64)] = m
	}
	for id, want := range map[float64]string{1: "", 2: "unauthorized", 3: "unauthorized", 4: ""} {
		if m := got[id]; errCode(m) != want || want == "" && m["type"] == "result" && m["success"] != true {
			t.Errorf("message %v: %v, want error %q", id, m, want)
		}
	}
}
