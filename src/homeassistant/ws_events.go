package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Event is one event of HA's event bus as subscribe_events delivers it.
type Event struct {
	EventType string         `json:"event_type"`
	Data      map[string]any `json:"data"`
	Origin    string         `json:"origin"`
	TimeFired time.Time      `json:"time_fired"`
	Context   Context        `json:"context"`
}

// SubscribeEvents follows one event type ("" = every event, which HA allows only
// administrators; others get an APIError with Code "unauthorized") and calls handler with each
// event, in order, on a goroutine of its own. Like Subscribe, it survives reconnects; events
// that do not decode are skipped.
func (c *Client) SubscribeEvents(ctx context.Context, eventType string, handler func(Event)) (unsubscribe func(context.Context) error, err error) {
	if handler == nil {
		return nil, errors.New("homeassistant: SubscribeEvents needs a handler")
	}
	msg := map[string]any{"type": "subscribe_events"}
	if eventType != "" {
		msg["event_type"] = eventType
	}
	return c.Subscribe(ctx, msg, func(raw json.RawMessage) {
		var ev Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			c.log.Debug("skipping an event that does not decode", "event_type", eventType, "error", err)
			return
		}
		handler(ev)
	})
}
