package homeassistant

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestWSSubscribeEvents(t *testing.T) {
	t.Parallel()
	admin, user := connectedSimClient(t, false), connectedSimClient(t, true)
	ctx := context.Background()
	if _, err := admin.SubscribeEvents(ctx, "x", nil); err == nil {
		t.Error("a nil handler was accepted")
	}

	for i, tc := range []struct {
		name      string
		c         *Client
		eventType string // "" = every event
		refused   bool
	}{
		{"admin, one type", admin, "hamcp_ws_events_test", false},
		{"admin, every event", admin, "", false},
		{"user, allow-listed type", user, "call_service", false},
		{"user, custom type", user, "hamcp_ws_events_test", true},
		{"user, every event", user, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan Event, 64)
			unsub, err := tc.c.SubscribeEvents(ctx, tc.eventType, func(ev Event) { got <- ev })
			if tc.refused {
				if !errors.Is(err, ErrUnauthorized) {
					t.Fatalf("err = %v, want unauthorized", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer unsub(ctx)
			want, data := tc.eventType, map[string]any{"n": float64(i)}
			if want == "" {
				want = fmt.Sprintf("hamcp_ws_all_%d", i)
			}
			if want == "call_service" {
				if _, _, err := admin.CallService(ctx, "homeassistant", "update_entity", map[string]any{"entity_id": "sun.sun"}, false); err != nil {
					t.Fatal(err)
				}
			} else if err := admin.FireEvent(ctx, want, data); err != nil {
				t.Fatal(err)
			}
			deadline := time.After(10 * time.Second)
			for {
				select {
				case ev := <-got:
					if ev.EventType != want {
						continue // other tests' events, or state changes
					}
					if ev.TimeFired.IsZero() || ev.Context.ID == "" || ev.Origin == "" {
						t.Fatalf("event lacks time, context or origin: %+v", ev)
					}
					if want == "call_service" && ev.Data["domain"] != "homeassistant" || want != "call_service" && ev.Data["n"] != data["n"] {
						t.Fatalf("event data %v", ev.Data)
					}
					return
				case <-deadline:
					t.Fatalf("no %s event", want)
				}
			}
		})
	}
}
