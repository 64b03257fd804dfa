package hatools_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func testNotifications(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	ctx := context.Background()
	// Watch through Home Assistant's own APIs what the tool causes.
	calls := make(chan map[string]any, 16)
	stop, err := e.ha.Subscribe(ctx, map[string]any{"type": "subscribe_events", "event_type": "call_service"}, func(raw json.RawMessage) {
		var ev struct {
			Data map[string]any `json:"data"`
		}
		if json.Unmarshal(raw, &ev) == nil && ev.Data["domain"] == "notify" {
			calls <- ev.Data
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop(ctx) }()
	panel := make(chan string, 16)
	stopPanel, err := e.ha.Subscribe(ctx, map[string]any{"type": "persistent_notification/subscribe"}, func(raw json.RawMessage) {
		var u struct {
			Type          string `json:"type"`
			Notifications map[string]struct {
				Message string `json:"message"`
			} `json:"notifications"`
		}
		if json.Unmarshal(raw, &u) == nil && u.Type == "added" {
			for _, n := range u.Notifications {
				panel <- n.Message
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stopPanel(ctx) }()

	var sent struct {
		Sent string `json:"sent"`
	}
	dtOK(t, cs, "ha_send_notification", map[string]any{"service": "persistent_notification", "message": "Filter needs cleaning", "title": "Dryer"}, &sent)
	if sent.Sent != "persistent_notification.create" {
		t.Errorf("sent: %+v", sent)
	}
	select {
	case msg := <-panel:
		if msg != "Filter needs cleaning" {
			t.Errorf("panel got %q", msg)
		}
	case <-time.After(5 * time.Second):
		t.Error("no persistent notification appeared")
	}
	dtOK(t, cs, "ha_send_notification", map[string]any{"service": "notify.mobile_app_alex_phone", "message": "Washing done", "data": map[string]any{"push": map[string]any{"sound": "default"}}}, &sent)
	select {
	case d := <-calls:
		sd, _ := d["service_data"].(map[string]any)
		if d["service"] != "mobile_app_alex_phone" || sd["message"] != "Washing done" {
			t.Errorf("service call: %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Error("no notify call seen")
	}

	dtErrCases(t, cs, []dtErrCase{
		{"unknown service (HA 400)", "ha_send_notification", map[string]any{"service": "pager", "message": "hi"}, "invalid_argument", "service", "mobile_app_alex_phone"},
		{"malformed service name", "ha_send_notification", map[string]any{"service": "Sam's Phone", "message": "hi"}, "invalid_argument", "service", "persistent_notification"},
		{"empty message", "ha_send_notification", map[string]any{"service": "notify", "message": ""}, "invalid_argument", "message", ""},
		{"missing service", "ha_send_notification", map[string]any{"message": "hi"}, "invalid_argument", "service", ""},
	})
}
