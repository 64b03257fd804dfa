package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit"
)

func TestSimMirrorPrimedAndFollowsServiceCalls(t *testing.T) {
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	waitConnected(t, c)
	testkit.Eventually(t, "mirror ready", c.Mirror().Ready)
	ctx := context.Background()

	rest, err := c.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Mirror().Len(); got != len(rest) {
		t.Fatalf("mirror has %d entities, REST %d", got, len(rest))
	}
	light := firstEntity(t, rest, "light")
	var seen atomic.Int64
	remove := c.Mirror().OnStateChanged(func(old, new *State) {
		if new != nil && new.EntityID == light.EntityID {
			seen.Add(1)
		}
	})
	defer remove()

	for _, svc := range []string{"turn_off", "turn_on", "toggle"} {
		changed, _, err := c.CallService(ctx, "light", svc, map[string]any{"entity_id": light.EntityID}, false)
		if err != nil {
			t.Fatalf("%s: %v", svc, err)
		}
		want := ""
		for _, s := range changed {
			if s.EntityID == light.EntityID {
				want = s.State
			}
		}
		if want == "" {
			want = "off" // turn_off of an already-off light changes nothing
			if svc != "turn_off" {
				t.Fatalf("%s changed nothing", svc)
			}
		}
		testkit.Eventually(t, "mirror to follow "+svc, func() bool {
			s, ok := c.Mirror().Get(light.EntityID)
			return ok && s.State == want
		})
	}
	if seen.Load() == 0 {
		t.Fatal("listener saw no change")
	}
	var cfg CoreConfig
	if err := c.Call(ctx, "get_config", nil, &cfg); err != nil || cfg.Version == "" {
		t.Fatalf("get_config over WS: %+v, %v", cfg, err)
	}
	st := c.Status(ctx)
	if !st.RESTReachable || !st.WebSocketConnected || !st.MirrorReady || !st.MirrorLive || st.HAVersion == "" || st.Entities != len(rest) {
		t.Fatalf("status: %+v", st)
	}
}

func TestSimSubscriptionDelivery(t *testing.T) {
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	waitConnected(t, c)
	ctx := context.Background()

	got := make(chan json.RawMessage, 16)
	unsub, err := c.Subscribe(ctx, map[string]any{"type": "subscribe_events", "event_type": "hamcp_sub_test"}, func(raw json.RawMessage) { got <- raw })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "fire_event", map[string]any{"event_type": "hamcp_sub_test", "event_data": map[string]any{"n": 1}}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case raw := <-got:
		var ev struct {
			EventType string `json:"event_type"`
			Data      struct{ N int }
		}
		if err := json.Unmarshal(raw, &ev); err != nil || ev.EventType != "hamcp_sub_test" || ev.Data.N != 1 {
			t.Fatalf("event %s: %v", raw, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event delivered")
	}
	if err := unsub(ctx); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
	if err := unsub(ctx); err != nil {
		t.Fatalf("second unsubscribe must be a no-op: %v", err)
	}
	// After unsubscribing, a new event must not reach the handler; a fresh subscription proves
	// the event was sent.
	probe := make(chan struct{}, 1)
	unsub2, err := c.Subscribe(ctx, map[string]any{"type": "subscribe_events", "event_type": "hamcp_sub_test"}, func(json.RawMessage) { probe <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer unsub2(ctx)
	if err := c.Call(ctx, "fire_event", map[string]any{"event_type": "hamcp_sub_test"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-probe:
	case <-time.After(10 * time.Second):
		t.Fatal("probe subscription got nothing")
	}
	select {
	case raw := <-got:
		t.Fatalf("event after unsubscribe: %s", raw)
	default:
	}
}

func TestSimErrorsAndConcurrency(t *testing.T) {
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	waitConnected(t, c)
	ctx := context.Background()

	tests := []struct {
		name, msgType string
		payload       any
		code          string
	}{
		{"unknown command", "hamcp/nothing", nil, "unknown_command"},
		{"unknown service", "call_service", map[string]any{"domain": "light", "service": "explode"}, "not_found"},
		{"unknown subscription", "unsubscribe_events", map[string]any{"subscription": 424242}, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Call(ctx, tt.msgType, tt.payload, nil)
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Code != tt.code {
				t.Fatalf("got %v, want code %s", err, tt.code)
			}
		})
	}

	// Mixed commands whose results have different shapes: a reply routed to the wrong caller
	// would fail to decode or come back empty.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 6; i++ {
				var err error
				switch (w + i) % 3 {
				case 0:
					err = c.Call(ctx, "ping", nil, nil)
				case 1:
					var cfg CoreConfig
					if err = c.Call(ctx, "get_config", nil, &cfg); err == nil && cfg.Version == "" {
						err = errors.New("get_config answered with something else")
					}
				case 2:
					var states []State
					if err = c.Call(ctx, "get_states", nil, &states); err == nil && len(states) < 50 {
						err = errors.New("get_states answered with something else")
					}
				}
				if err != nil {
					errs <- err
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
}

func TestSimBadToken(t *testing.T) {
	h := simHome(t)
	c := fastClient(t, h.URL(), "not-a-token")
	testkit.Eventually(t, "attempt to fail", func() bool { return c.Status(context.Background()).WebSocket == "down" })
	if err := c.Call(context.Background(), "ping", nil, nil); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("got %v, want ErrUnauthorized", err)
	}
}

func TestSimDownAndBack(t *testing.T) {
	h := ownHome(t)
	c := fastClient(t, h.URL(), h.Token())
	waitConnected(t, c)
	testkit.Eventually(t, "mirror ready", c.Mirror().Ready)
	ctx := context.Background()

	var events atomic.Int64
	if _, err := c.Subscribe(ctx, map[string]any{"type": "subscribe_events", "event_type": "hamcp_back"}, func(json.RawMessage) { events.Add(1) }); err != nil {
		t.Fatal(err)
	}

	if err := h.SetDown(true); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "client to see HA down", func() bool { return !c.Mirror().Live() })
	testkit.Eventually(t, "a failed reconnect", func() bool { return c.Status(ctx).WebSocket == "down" })
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for name, call := range map[string]func() error{
		"REST": func() error { return c.Ping(callCtx) },
		"WS":   func() error { return c.Call(callCtx, "ping", nil, nil) },
	} {
		if err := call(); !errors.Is(err, ErrUnavailable) || callCtx.Err() != nil {
			t.Fatalf("%s while down: %v (ctx %v)", name, err, callCtx.Err())
		}
	}
	st := c.Status(ctx)
	if st.RESTReachable || st.WebSocketConnected || st.MirrorLive || !st.MirrorReady {
		t.Fatalf("status while down: %+v", st)
	}
	// The mirror keeps serving the last known states while HA is away.
	if _, ok := c.Mirror().Get("sun.sun"); !ok {
		t.Fatal("mirror lost its content while down")
	}

	if err := h.SetDown(false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "reconnect and resync", c.Mirror().Live)
	waitConnected(t, c)
	if err := c.Call(ctx, "fire_event", map[string]any{"event_type": "hamcp_back"}, nil); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "event on the re-established subscription", func() bool { return events.Load() == 1 })
}

func TestSimThroughSupervisorProxy(t *testing.T) {
	h := simHome(t)
	c := fastClient(t, h.SupervisorURL()+"/core", h.SupervisorToken())
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("REST through the proxy: %v", err)
	}
	waitConnected(t, c)
	testkit.Eventually(t, "mirror through the proxy", c.Mirror().Ready)
	if c.Mirror().Len() < 50 {
		t.Fatalf("mirror has %d entities", c.Mirror().Len())
	}
}
