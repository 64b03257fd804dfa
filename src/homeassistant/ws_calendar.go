package homeassistant

import (
	"context"
	"encoding/json"
)

// Calendar events are written over the WebSocket (components/calendar/__init__.py
// handle_calendar_event_create/update/delete); each answers null. Errors: Code "not_found" ("Entity
// not found"), "not_supported" ("Calendar does not support event creation|update|deletion"),
// "invalid_format" (the event refused by WEBSOCKET_EVENT_SCHEMA), "failed" (the calendar refused it,
// e.g. an unknown uid).

// CalendarEventInput is the "event" object: dtstart/dtend both dates (YYYY-MM-DD, end exclusive) or
// both date-times.
type CalendarEventInput struct {
	Summary     string `json:"summary"`
	DTStart     string `json:"dtstart"`
	DTEnd       string `json:"dtend"`
	Description string `json:"description,omitempty"`
	Location    string `json:"location,omitempty"`
	RRule       string `json:"rrule,omitempty"`
}

// RecurrenceThisAndFuture is the recurrence_range that reaches an instance and every later one.
const RecurrenceThisAndFuture = "THISANDFUTURE"

// CreateCalendarEvent adds an event (WebSocket calendar/event/create).
func (c *Client) CreateCalendarEvent(ctx context.Context, entityID string, ev CalendarEventInput) error {
	var out json.RawMessage
	return c.Call(ctx, "calendar/event/create", map[string]any{"entity_id": entityID, "event": ev}, &out)
}

// UpdateCalendarEvent changes an event, or with recurrenceID one instance of a recurring one (and
// with rng THISANDFUTURE the later ones too) (WebSocket calendar/event/update).
func (c *Client) UpdateCalendarEvent(ctx context.Context, entityID, uid, recurrenceID, rng string, ev CalendarEventInput) error {
	msg := eventRef(entityID, uid, recurrenceID, rng)
	msg["event"] = ev
	var out json.RawMessage
	return c.Call(ctx, "calendar/event/update", msg, &out)
}

// DeleteCalendarEvent removes an event, or instances of a recurring one (WebSocket
// calendar/event/delete).
func (c *Client) DeleteCalendarEvent(ctx context.Context, entityID, uid, recurrenceID, rng string) error {
	var out json.RawMessage
	return c.Call(ctx, "calendar/event/delete", eventRef(entityID, uid, recurrenceID, rng), &out)
}

func eventRef(entityID, uid, recurrenceID, rng string) map[string]any {
	msg := map[string]any{"entity_id": entityID, "uid": uid}
	if recurrenceID != "" {
		msg["recurrence_id"] = recurrenceID
		if rng != "" {
			msg["recurrence_range"] = rng
		}
	}
	return msg
}
