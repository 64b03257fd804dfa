package hatools_test

import (
	"strings"
	"testing"
	"time"
)

type dtCalEvent struct {
	Calendar string `json:"calendar"`
	Summary  string `json:"summary"`
	Start    string `json:"start"`
	End      string `json:"end"`
	AllDay   bool   `json:"all_day"`
	Location string `json:"location"`
}

func testCalendars(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	var cals struct {
		Total int `json:"total"`
		Items []struct {
			EntityID string `json:"entity_id"`
			Next     string `json:"next_event"`
		} `json:"items"`
	}
	dtOK(t, cs, "ha_list_calendars", nil, &cals)
	if cals.Total != 3 {
		t.Fatalf("calendars: %+v", cals)
	}
	for _, c := range cals.Items {
		if c.EntityID == "calendar.family" && c.Next == "" {
			t.Errorf("family calendar has no next event: %+v", c)
		}
	}

	var evs struct {
		Total int          `json:"total"`
		Items []dtCalEvent `json:"items"`
	}
	dtOK(t, cs, "ha_get_calendar_events", map[string]any{"limit": 1000}, &evs)
	seen := map[string]dtCalEvent{}
	var prev time.Time
	for _, ev := range evs.Items {
		seen[ev.Summary] = ev
		if ev.AllDay {
			continue
		}
		at, err := time.Parse(time.RFC3339, ev.Start)
		if err != nil || !strings.HasSuffix(ev.Start, "Z") {
			t.Errorf("timed event start is not UTC ISO-8601: %+v", ev)
		}
		if at.Before(prev) {
			t.Errorf("events out of order at %+v", ev)
		}
		prev = at
	}
	if d := seen["Dentist"]; d.Calendar != "calendar.family" || d.Location == "" {
		t.Errorf("dentist: %+v", d)
	}
	if b := seen["Alex's birthday"]; !b.AllDay || len(b.Start) != len("2006-01-02") {
		t.Errorf("birthday: %+v", b)
	}
	if seen["Quarterly review"].Calendar != "calendar.work" {
		t.Errorf("work events missing: %v", seen)
	}
	dtOK(t, cs, "ha_get_calendar_events", map[string]any{"entity_ids": []string{"calendar.work"}, "search": "standup", "days": 14}, &evs)
	if evs.Total < 5 {
		t.Errorf("14 days of standups: %d", evs.Total)
	}
	for _, ev := range evs.Items {
		if ev.Summary != "Standup" || ev.Calendar != "calendar.work" {
			t.Errorf("filter let through %+v", ev)
		}
	}

	dtErrCases(t, cs, []dtErrCase{
		{"unknown calendar (HA 400)", "ha_get_calendar_events", map[string]any{"entity_ids": []string{"calendar.attic"}}, "not_found", "", "ha_list_calendars"},
		{"end before start", "ha_get_calendar_events", map[string]any{"start": "2030-01-02T00:00:00Z", "end": "2030-01-01T00:00:00Z"}, "invalid_argument", "end", ""},
		{"too many days", "ha_get_calendar_events", map[string]any{"days": 400}, "invalid_argument", "days", ""},
		{"bad entity id", "ha_get_calendar_events", map[string]any{"entity_ids": []string{"Family"}}, "invalid_argument", "entity_ids", ""},
	})
}
