package hass_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsClient is a tiny test client over a real WebSocket.
type wsClient struct {
	t      testing.TB
	c      *websocket.Conn
	queue  []map[string]any
	frames int // frames read, to see coalescing
	arrays int // frames that were JSON arrays
}

func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") }

func dialRaw(t testing.TB, url string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(32 << 20)
	w := &wsClient{t: t, c: c}
	t.Cleanup(func() { c.Close(websocket.StatusNormalClosure, "") })
	return w
}

// dialAuthed connects to HA's /api/websocket and authenticates.
func dialAuthed(t testing.TB, token string) *wsClient {
	t.Helper()
	return dialAt(t, wsURL(home.URL())+"/api/websocket", token)
}

func (w *wsClient) send(v any) {
	w.t.Helper()
	raw, _ := json.Marshal(v)
	w.sendRaw(string(raw))
}

func (w *wsClient) sendRaw(s string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		w.t.Fatal(err)
	}
}

// read returns the next message or an error (closed, timeout).
func (w *wsClient) read(timeout time.Duration) (map[string]any, error) {
	if len(w.queue) > 0 {
		m := w.queue[0]
		w.queue = w.queue[1:]
		return m, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, data, err := w.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	w.frames++
	if len(data) > 0 && data[0] == '[' {
		w.arrays++
		var list []map[string]any
		if err := json.Unmarshal(data, &list); err != nil {
			w.t.Fatalf("bad array frame %s", data)
		}
		w.queue = append(w.queue, list...)
		return w.read(timeout)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		w.t.Fatalf("bad frame %s", data)
	}
	return m, nil
}

func (w *wsClient) next() map[string]any {
	w.t.Helper()
	m, err := w.read(5 * time.Second)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	return m
}

// result sends a command and returns its result message, collecting any
// events that arrive first.
func (w *wsClient) cmd(v map[string]any) (map[string]any, []map[string]any) {
	w.t.Helper()
	w.send(v)
	raw, _ := json.Marshal(v["id"])
	var want any
	_ = json.Unmarshal(raw, &want)
	var events []map[string]any
	for {
		m := w.next()
		if m["type"] == "result" && m["id"] == want {
			return m, events
		}
		events = append(events, m)
	}
}

func (w *wsClient) ok(v map[string]any) any {
	w.t.Helper()
	m, events := w.cmd(v)
	if m["success"] != true {
		w.t.Fatalf("%v failed: %v", v, m)
	}
	w.queue = append(events, w.queue...) // keep earlier events for waitEvent
	return m["result"]
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func errMsg(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// waitEvent reads until an event for subscription id satisfies pred.
func (w *wsClient) waitEvent(id float64, pred func(ev map[string]any) bool) map[string]any {
	w.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		m, err := w.read(time.Until(deadline))
		if err != nil {
			break
		}
		if m["type"] == "event" && m["id"] == id {
			ev, _ := m["event"].(map[string]any)
			if pred(ev) {
				return ev
			}
		}
	}
	w.t.Fatalf("no matching event for subscription %v", id)
	return nil
}
