package hatools_test

import (
	"testing"
	"time"
)

func TestManageCalendarEvents(t *testing.T) {
	e := admStart(t, admOpts{})
	loc, _ := time.LoadLocation("Europe/Amsterdam")
	day := time.Now().In(loc).AddDate(0, 0, 10)
	at := func(d time.Time, h, m int) string {
		return time.Date(d.Year(), d.Month(), d.Day(), h, m, 0, 0, loc).Format(time.RFC3339)
	}
	find := func(summary string, from time.Time, days int) []map[string]any {
		r := e.ok(t, "ha_get_calendar_events", map[string]any{"entity_ids": []string{"calendar.family"}, "start": at(from, 0, 0), "days": days, "search": summary})
		return admItems(t, r, "items")
	}

	created := e.ok(t, "ha_manage_calendar_events", map[string]any{"action": "create", "entity_id": "calendar.family",
		"event": map[string]any{"summary": "Dentist", "start": at(day, 9, 0), "end": at(day, 9, 45), "location": "Main street 1"}})
	if ev := created["event"].(map[string]any); ev["summary"] != "Dentist" || ev["start"] != time.Date(day.Year(), day.Month(), day.Day(), 9, 0, 0, 0, loc).UTC().Format(time.RFC3339) {
		t.Fatalf("created: %v", created)
	}
	evs := find("Dentist", day, 1)
	if len(evs) != 1 || evs[0]["uid"] == nil {
		t.Fatalf("created event not listed: %v", evs)
	}
	uid := evs[0]["uid"].(string)

	// Moving the start keeps the length and the other fields.
	e.ok(t, "ha_manage_calendar_events", map[string]any{"action": "update", "entity_id": "calendar.family", "uid": uid,
		"event": map[string]any{"start": at(day, 11, 0)}})
	evs = find("Dentist", day, 1)
	if len(evs) != 1 || evs[0]["end"] != time.Date(day.Year(), day.Month(), day.Day(), 11, 45, 0, 0, loc).UTC().Format(time.RFC3339) || evs[0]["location"] != "Main street 1" {
		t.Fatalf("moved event: %v", evs)
	}
	deleted := e.ok(t, "ha_manage_calendar_events", map[string]any{"action": "delete", "entity_id": "calendar.family", "uid": uid, "confirm": true})
	if ev := deleted["event"].(map[string]any); ev["summary"] != "Dentist" || ev["location"] != "Main street 1" {
		t.Fatalf("delete must return the event: %v", deleted)
	}
	if evs = find("Dentist", day, 1); len(evs) != 0 {
		t.Fatalf("deleted event still listed: %v", evs)
	}

	// A weekly series: one instance, then this and the later ones.
	e.ok(t, "ha_manage_calendar_events", map[string]any{"action": "create", "entity_id": "calendar.family",
		"event": map[string]any{"summary": "Choir", "start": at(day, 19, 0), "end": at(day, 21, 0), "rrule": "FREQ=WEEKLY;COUNT=4"}})
	evs = find("Choir", day, 28)
	if len(evs) != 4 || evs[1]["recurrence_id"] == nil {
		t.Fatalf("weekly series: %v", evs)
	}
	uid = evs[0]["uid"].(string)
	e.ok(t, "ha_manage_calendar_events", map[string]any{"action": "update", "entity_id": "calendar.family", "uid": uid,
		"recurrence_id": evs[1]["recurrence_id"], "event": map[string]any{"summary": "Choir (concert)"}})
	if got := find("concert", day, 28); len(got) != 1 {
		t.Errorf("one instance renamed: %v", got)
	}
	e.ok(t, "ha_manage_calendar_events", map[string]any{"action": "delete", "entity_id": "calendar.family", "uid": uid,
		"recurrence_id": evs[2]["recurrence_id"], "recurrence_range": "THISANDFUTURE", "confirm": true})
	if got := find("Choir", day, 28); len(got) != 2 {
		t.Errorf("after deleting the third and later: %v", got)
	}

	allDay := e.ok(t, "ha_manage_calendar_events", map[string]any{"action": "create", "entity_id": "calendar.family",
		"event": map[string]any{"summary": "School trip", "start": day.Format(time.DateOnly)}})
	if ev := allDay["event"].(map[string]any); ev["all_day"] != true || ev["end"] != day.AddDate(0, 0, 1).Format(time.DateOnly) {
		t.Errorf("all-day event defaults to one day: %v", allDay)
	}

	ev := map[string]any{"summary": "x", "start": at(day, 10, 0), "end": at(day, 11, 0)}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range ev {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"bad start", map[string]any{"action": "create", "entity_id": "calendar.family", "event": with("start", "next tuesday")}, "invalid_argument", "event.start"},
		{"end before start", map[string]any{"action": "create", "entity_id": "calendar.family", "event": with("end", at(day, 9, 0))}, "invalid_argument", "event.end"},
		{"mixed kinds", map[string]any{"action": "create", "entity_id": "calendar.family", "event": with("end", day.Format(time.DateOnly))}, "invalid_argument", "both dates"},
		{"hourly rule", map[string]any{"action": "create", "entity_id": "calendar.family", "event": with("rrule", "FREQ=HOURLY")}, "invalid_argument", "event.rrule"},
		{"no summary", map[string]any{"action": "create", "entity_id": "calendar.family", "event": with("summary", "")}, "invalid_argument", "event.summary"},
		{"no event", map[string]any{"action": "create", "entity_id": "calendar.family"}, "invalid_argument", "event"},
		{"read-only calendar", map[string]any{"action": "create", "entity_id": "calendar.holidays", "event": ev}, "not_supported", "does not support event creation"},
		{"unknown calendar", map[string]any{"action": "create", "entity_id": "calendar.moon", "event": ev}, "not_found", "calendar.moon"},
		{"not a calendar", map[string]any{"action": "create", "entity_id": "light.kitchen_ceiling", "event": ev}, "invalid_argument", "entity_id"},
		{"update without uid", map[string]any{"action": "update", "entity_id": "calendar.family", "event": ev}, "invalid_argument", "uid"},
		{"unknown uid", map[string]any{"action": "update", "entity_id": "calendar.family", "uid": "nope", "event": ev}, "invalid_argument", "nope"},
		{"range without instance", map[string]any{"action": "delete", "entity_id": "calendar.family", "uid": "x", "recurrence_range": "THISANDFUTURE", "confirm": true}, "invalid_argument", "recurrence_id"},
		{"delete unconfirmed", map[string]any{"action": "delete", "entity_id": "calendar.family", "uid": "x"}, "confirmation_required", "calendar.family"},
	} {
		t.Run(c.name, func(t *testing.T) { e.fails(t, "ha_manage_calendar_events", c.args, c.code, c.want) })
	}
}
