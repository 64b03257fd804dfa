package hatools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit"
)

type dtListener struct {
	Event     string `json:"event"`
	Listeners int    `json:"listener_count"`
}

func testEvents(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	var ls struct {
		Total int          `json:"total"`
		Items []dtListener `json:"items"`
	}
	dtOK(t, cs, "ha_list_event_listeners", map[string]any{"limit": 1000}, &ls)
	counts := map[string]int{}
	for _, l := range ls.Items {
		counts[l.Event] = l.Listeners
	}
	if counts["state_changed"] == 0 || counts["homeassistant_stop"] == 0 || counts["*"] == 0 {
		t.Errorf("listeners: %v", counts)
	}
	dtOK(t, cs, "ha_list_event_listeners", map[string]any{"search": "registry"}, &ls)
	for _, l := range ls.Items {
		if len(l.Event) < 8 || l.Event[len(l.Event)-8:] != "_updated" {
			t.Errorf("search registry returned %+v", l)
		}
	}

	var fired struct {
		Fired string `json:"fired"`
	}
	dtOK(t, cs, "ha_fire_event", map[string]any{"event_type": "hamcp_test_ping", "event_data": map[string]any{"n": 1}}, &fired)
	if fired.Fired != "hamcp_test_ping" {
		t.Errorf("fire: %+v", fired)
	}

	// A non-admin user's token: HA refuses REST event firing (401) and following arbitrary events.
	user := connectDataEnv(t, e.home, func(h *sim.Home) string { return h.UserToken() }, true)
	ucs := user.session(t, nil)
	dtErrCases(t, cs, []dtErrCase{
		// Home Assistant's own events are refused whatever is said: listeners take them as facts.
		{"state_changed refused", "ha_fire_event", map[string]any{"event_type": "state_changed", "confirm": true}, "invalid_argument", "event_type", "fires itself"},
		{"call_service refused", "ha_fire_event", map[string]any{"event_type": "call_service"}, "invalid_argument", "event_type", "fires itself"},
		{"automation_reloaded refused", "ha_fire_event", map[string]any{"event_type": "automation_reloaded"}, "invalid_argument", "event_type", "fires itself"},
		{"registry event refused", "ha_fire_event", map[string]any{"event_type": "entity_registry_updated", "confirm": true}, "invalid_argument", "event_type", "fires itself"},
		{"space in type", "ha_fire_event", map[string]any{"event_type": "my event"}, "invalid_argument", "event_type", ""},
		{"data not an object", "ha_fire_event", map[string]any{"event_type": "x", "event_data": []int{1}}, "invalid_argument", "event_data", ""},
	})
	dtErrCases(t, ucs, []dtErrCase{
		{"non-admin fire (HA 401)", "ha_fire_event", map[string]any{"event_type": "hamcp_test_ping"}, "backend_unauthorized", "", ""},
		{"non-admin follow (HA unauthorized)", "ha_subscribe_events", map[string]any{"event_type": "hamcp_secret"}, "backend_refused", "", "administrators"},
	})
	var sub struct {
		SubscriptionID string `json:"subscription_id"`
	}
	dtOK(t, ucs, "ha_subscribe_events", map[string]any{"event_type": "state_changed"}, &sub)
}

type dtSubStats struct {
	Subscriptions []struct {
		SubscriptionID string            `json:"subscription_id"`
		Matched        int64             `json:"matched"`
		Delivered      int64             `json:"delivered"`
		Dropped        int64             `json:"dropped"`
		Recent         []json.RawMessage `json:"recent"`
	} `json:"subscriptions"`
}

func testLiveEvents(t *testing.T, e *dataEnv) {
	ctx := context.Background()
	//lint:ignore SA1019 the test drives the deprecated (SEP-2577) MCP logging that live events use.
	logs := make(chan *mcp.LoggingMessageParams, 256)
	cs := e.session(t, logs)
	//lint:ignore SA1019 the test drives the deprecated (SEP-2577) MCP logging that live events use.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	var sub struct {
		SubscriptionID string `json:"subscription_id"`
		Delivery       string `json:"delivery"`
	}
	dtOK(t, cs, "ha_subscribe_events", map[string]any{"event_type": "state_changed", "entity_id": "light.garage*"}, &sub)
	dtOK(t, cs, "ha_call_service", map[string]any{"domain": "light", "service": "toggle", "entity_id": []string{"light.garage", "light.hallway"}}, nil)
	var got map[string]any
	select {
	case m := <-logs:
		if m.Logger != "hamcp/events" {
			t.Fatalf("notification from logger %q", m.Logger)
		}
		raw, _ := json.Marshal(m.Data)
		_ = json.Unmarshal(raw, &got)
	case <-time.After(5 * time.Second):
		t.Fatal("no event notification within 5 s")
	}
	if got["subscription_id"] != sub.SubscriptionID || got["entity_id"] != "light.garage" || got["old_state"] == got["new_state"] {
		t.Errorf("notification: %v", got)
	}
	var stats dtSubStats
	testkit.Eventually(t, "delivery counted", func() bool {
		dtOK(t, cs, "ha_get_subscription_stats", map[string]any{"include_events": true}, &stats)
		return len(stats.Subscriptions) == 1 && stats.Subscriptions[0].Delivered == 1
	})
	if s := stats.Subscriptions[0]; s.Matched != 1 || len(s.Recent) != 1 {
		t.Errorf("the hallway light passed the filter: %+v", s)
	}

	// Rate limit: a burst of events beyond the session's rate is counted as dropped.
	dtOK(t, cs, "ha_subscribe_events", map[string]any{"event_type": "hamcp_burst"}, &sub)
	burst := sub.SubscriptionID
	for i := 0; i < 60; i++ {
		if err := e.ha.FireEvent(ctx, "hamcp_burst", map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, "the burst counted", func() bool {
		dtOK(t, cs, "ha_get_subscription_stats", nil, &stats)
		for _, s := range stats.Subscriptions {
			if s.SubscriptionID == burst {
				return s.Matched == 60 && s.Delivered+s.Dropped == 60 && s.Dropped > 0
			}
		}
		return false
	})
	var ended struct {
		Matched int64 `json:"matched"`
	}
	dtOK(t, cs, "ha_unsubscribe_events", map[string]any{"subscription_id": burst}, &ended)
	if ended.Matched != 60 {
		t.Errorf("final counts: %+v", ended)
	}

	// The cap, then cleanup when the session ends: HA forgets the subscriptions.
	for i := 0; i < 9; i++ {
		dtOK(t, cs, "ha_subscribe_events", map[string]any{"event_type": fmt.Sprintf("hamcp_probe_%d", i)}, nil)
	}
	dtErrCases(t, cs, []dtErrCase{
		{"over the cap", "ha_subscribe_events", map[string]any{"event_type": "hamcp_one_more"}, "limit_reached", "", "ha_unsubscribe_events"},
		{"bad pattern", "ha_subscribe_events", map[string]any{"event_type": "state_changed", "entity_id": "light.[x"}, "invalid_argument", "entity_id", ""},
		{"match-all refused", "ha_subscribe_events", map[string]any{"event_type": "*"}, "invalid_argument", "event_type", ""},
		{"unknown subscription", "ha_unsubscribe_events", map[string]any{"subscription_id": "sub_999"}, "not_found", "", ""},
	})
	probes := func() int {
		evs, err := e.ha.Events(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range evs {
			if len(ev.Event) > 12 && ev.Event[:12] == "hamcp_probe_" {
				n += ev.ListenerCount
			}
		}
		return n
	}
	if n := probes(); n != 9 {
		t.Fatalf("HA has %d probe listeners, want 9", n)
	}
	_ = cs.Close()
	testkit.Eventually(t, "HA dropping the ended session's subscriptions", func() bool { return probes() == 0 })
}
