package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit"
)

func TestWSBadTokenIsUnauthorized(t *testing.T) {
	f := newFakeWS(t)
	c := fastClient(t, f.url(), "wrong-token")
	testkit.Eventually(t, "first attempt to fail", func() bool { return c.Status(context.Background()).WebSocket == "down" })
	err := c.Call(context.Background(), "get_config", nil, nil)
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("Call with a rejected token: got %v, want ErrUnauthorized", err)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "auth_invalid" || apiErr.Message != "Invalid access token or password" {
		t.Fatalf("want APIError auth_invalid with HA's message, got %#v", apiErr)
	}
	if st := c.Status(context.Background()); st.LastError == "" || st.WebSocketConnected {
		t.Fatalf("status should report the auth failure: %+v", st)
	}
}

func TestWSConcurrentCallsMatchReplies(t *testing.T) {
	f := newFakeWS(t)
	c := fastClient(t, f.url(), f.token)
	waitConnected(t, c)
	const workers, perWorker = 32, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				n := w*1000 + i
				var out struct{ N int }
				if err := c.Call(context.Background(), "test/echo", map[string]any{"n": n}, &out); err != nil {
					errs <- err
					return
				}
				if out.N != n {
					errs <- errors.New("reply matched to the wrong call")
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.idViolations) > 0 {
		t.Fatalf("ids did not strictly increase: %v", f.idViolations[:min(5, len(f.idViolations))])
	}
}

func TestWSErrorReplyIsAPIError(t *testing.T) {
	f := newFakeWS(t)
	c := fastClient(t, f.url(), f.token)
	waitConnected(t, c)
	tests := []struct {
		name, msgType string
		payload       any
		code          string
	}{
		{"unknown command", "no/such_command", nil, "unknown_command"},
		{"unknown service", "call_service", map[string]any{"domain": "light", "service": "explode", "service_data": map[string]any{"entity_id": "light.kitchen"}}, "not_found"},
		{"unknown subscription", "unsubscribe_events", map[string]any{"subscription": 99999}, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Call(context.Background(), tt.msgType, tt.payload, nil)
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Code != tt.code || apiErr.Status != 0 || apiErr.Message == "" {
				t.Fatalf("got %v (%#v), want APIError code %s", err, apiErr, tt.code)
			}
		})
	}
}

func TestWSMalformedAndBinaryFramesAreSkipped(t *testing.T) {
	f := newFakeWS(t)
	c := fastClient(t, f.url(), f.token)
	waitConnected(t, c)
	var out string
	if err := c.Call(context.Background(), "test/garbage", nil, &out); err != nil || out != "survived" {
		t.Fatalf("call after a malformed frame: %q, %v", out, err)
	}
	if err := c.Call(context.Background(), "ping", nil, nil); err != nil {
		t.Fatalf("connection unusable after malformed frame: %v", err)
	}
}

func TestWSCoalescedFrames(t *testing.T) {
	f := newFakeWS(t)
	f.coalesce = true
	c := fastClient(t, f.url(), f.token)
	waitConnected(t, c)

	var got []int
	var mu sync.Mutex
	unsub, err := c.Subscribe(context.Background(), map[string]any{"type": "subscribe_events", "event_type": "test_burst"}, func(raw json.RawMessage) {
		var ev struct{ I int }
		_ = json.Unmarshal(raw, &ev)
		mu.Lock()
		got = append(got, ev.I)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer unsub(context.Background())
	sub := subscriptionIDs(c)
	if len(sub) != 1 {
		t.Fatalf("want one user subscription, got %v", sub)
	}
	var n int
	if err := c.Call(context.Background(), "test/burst", map[string]any{"n": 50, "sub": sub[0]}, &n); err != nil || n != 50 {
		t.Fatalf("burst: %d, %v", n, err)
	}
	testkit.Eventually(t, "50 coalesced events", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 50 })
	for i, v := range got {
		if v != i {
			t.Fatalf("events out of order at %d: %v", i, got)
		}
	}
	// A result and its state_changed event in one array: the mirror must see the change.
	if err := c.Call(context.Background(), "call_service", map[string]any{"domain": "light", "service": "turn_on", "service_data": map[string]any{"entity_id": "light.kitchen"}}, nil); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "mirror to apply coalesced event", func() bool {
		s, ok := c.Mirror().Get("light.kitchen")
		return ok && s.State == "on"
	})
}

func subscriptionIDs(c *Client) []int64 {
	c.ws.mu.Lock()
	defer c.ws.mu.Unlock()
	var ids []int64
	for sub := range c.ws.subs {
		sub.mu.Lock()
		ids = append(ids, sub.id)
		sub.mu.Unlock()
	}
	return ids
}

func TestWSReconnectResyncsAndResubscribes(t *testing.T) {
	f := newFakeWS(t)
	c := fastClient(t, f.url(), f.token)
	waitConnected(t, c)
	testkit.Eventually(t, "mirror ready", c.Mirror().Ready)

	var events atomic.Int64
	unsub, err := c.Subscribe(context.Background(), map[string]any{"type": "subscribe_events", "event_type": "state_changed"}, func(json.RawMessage) { events.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	var changes atomic.Int64
	remove := c.Mirror().OnStateChanged(func(old, new *State) {
		if new != nil && new.EntityID == "switch.fan" && new.State == "on" {
			changes.Add(1)
		}
	})
	defer remove()

	// A change whose event never reaches the client (as when it happens during an outage):
	// only the resync after reconnecting can reveal it.
	f.setState("switch.fan", "on", false)
	if s, _ := c.Mirror().Get("switch.fan"); s.State != "off" {
		t.Fatalf("mirror saw an event that was never sent: %+v", s)
	}
	before := f.connectCount()
	f.dropAll()
	testkit.Eventually(t, "reconnect", func() bool { return f.connectCount() > before })
	waitConnected(t, c)
	testkit.Eventually(t, "mirror resync", func() bool {
		s, ok := c.Mirror().Get("switch.fan")
		return ok && s.State == "on" && c.Mirror().Live()
	})
	testkit.Eventually(t, "listener told about the change found by resync", func() bool { return changes.Load() == 1 })

	f.setState("light.porch", "on", true)
	testkit.Eventually(t, "event on the re-established subscription", func() bool { return events.Load() >= 1 })
	if err := unsub(context.Background()); err != nil {
		t.Fatalf("unsubscribe after reconnect: %v", err)
	}
	if st := c.Status(context.Background()); st.Reconnects < 1 {
		t.Fatalf("status should count the reconnect: %+v", st)
	}
}

func TestWSKeepaliveDetectsDeadConnection(t *testing.T) {
	f := newFakeWS(t)
	c, err := New(Config{BaseURL: f.url(), Token: f.token})
	if err != nil {
		t.Fatal(err)
	}
	c.backoffBase, c.backoffCap = 5*time.Millisecond, 20*time.Millisecond
	c.pingInterval, c.pongTimeout = 20*time.Millisecond, 50*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer c.Close()
	c.Start(ctx)
	waitConnected(t, c)
	f.mu.Lock()
	f.swallowPings = true
	f.mu.Unlock()
	testkit.Eventually(t, "reconnect after unanswered ping", func() bool { return f.connectCount() >= 2 })
	f.mu.Lock()
	f.swallowPings = false
	f.mu.Unlock()
	waitConnected(t, c)
}

func TestWSUnavailableFailsFast(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here now: connection refused
	c := fastClient(t, "http://"+addr, "token")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	testkit.Eventually(t, "first attempt to fail", func() bool { return c.Status(ctx).WebSocket == "down" })
	for name, call := range map[string]func() error{
		"Call": func() error { return c.Call(ctx, "get_states", nil, nil) },
		"Subscribe": func() error {
			_, err := c.Subscribe(ctx, map[string]any{"type": "subscribe_events"}, func(json.RawMessage) {})
			return err
		},
		"REST": func() error { _, err := c.States(ctx); return err },
	} {
		if err := call(); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: got %v, want ErrUnavailable", name, err)
		} else if ctx.Err() != nil {
			t.Errorf("%s: waited for the context instead of failing fast", name)
		}
	}
	if st := c.Status(ctx); st.RESTReachable || st.RESTError == "" {
		t.Fatalf("status should report REST unreachable: %+v", st)
	}
}

func TestWSNotStartedAndClosed(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Call(context.Background(), "ping", nil, nil); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("before Start: %v", err)
	}
	c.Close()
	if err := c.Call(context.Background(), "ping", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := c.Subscribe(context.Background(), map[string]any{"type": "subscribe_events"}, func(json.RawMessage) {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Subscribe after Close: %v", err)
	}
}

func TestWSCloseFailsPendingCalls(t *testing.T) {
	f := newFakeWS(t)
	f.mu.Lock()
	f.swallowPings = true // a ping that is never answered stays pending
	f.mu.Unlock()
	c := fastClient(t, f.url(), f.token)
	waitConnected(t, c)
	done := make(chan error, 1)
	go func() { done <- c.Call(context.Background(), "ping", nil, nil) }()
	testkit.Eventually(t, "the call to be pending", func() bool { return pendingCalls(c) > 0 })
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("pending call after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("pending call hung after Close")
	}
}

func TestWSSubscribeRejected(t *testing.T) {
	f := newFakeWS(t)
	c := fastClient(t, f.url(), f.token)
	waitConnected(t, c)
	_, err := c.Subscribe(context.Background(), map[string]any{"type": "subscribe_nonsense"}, func(json.RawMessage) {})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "unknown_command" {
		t.Fatalf("got %v", err)
	}
	if ids := subscriptionIDs(c); len(ids) != 0 {
		t.Fatalf("rejected subscription still registered: %v", ids)
	}
	for _, msg := range []map[string]any{nil, {"event_type": "x"}, {"type": 5}, {"type": "subscribe_events", "id": 3}} {
		if _, err := c.Subscribe(context.Background(), msg, func(json.RawMessage) {}); err == nil {
			t.Errorf("Subscribe(%v) should be refused", msg)
		}
	}
}

// pendingCalls is how many calls wait for an answer on the current session.
func pendingCalls(c *Client) int {
	c.ws.mu.Lock()
	s := c.ws.sess
	c.ws.mu.Unlock()
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// TestWSCallAsConnectionDrops: a restart (a backup restore, homeassistant.restart) drops the
// connection just after answering; a call made in that moment must go out on the reconnected
// session, not fail as "not reachable" while Home Assistant is back a few milliseconds later.
func TestWSCallAsConnectionDrops(t *testing.T) {
	f := newFakeWS(t)
	c := fastClient(t, f.url(), f.token)
	for i := range 30 {
		waitConnected(t, c)
		c.ws.mu.Lock()
		s := c.ws.sess
		c.ws.mu.Unlock()
		s.fail(io.EOF) // what the reader does when the server closes the connection
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var states []State
		err := c.Call(ctx, "get_states", nil, &states)
		cancel()
		if err != nil || len(states) == 0 {
			t.Fatalf("call %d right after the connection dropped: %v (%d states)", i, err, len(states))
		}
	}
}
