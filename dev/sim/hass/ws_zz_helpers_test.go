package hass_test

import (
	"strings"
	"testing"
	"time"
)

func TestWSHelperCollections(t *testing.T) {
	w := dialAuthed(t, home.Token())
	list := w.ok(map[string]any{"id": 1, "type": "input_number/list"}).([]any)
	var night map[string]any
	for _, it := range list {
		if m := it.(map[string]any); m["id"] == "night_temperature" {
			night = m
		}
	}
	if night == nil || night["step"] != 0.5 || night["name"] != "Night temperature" {
		t.Fatalf("seeded input_number items: %v", list)
	}
	item := w.ok(map[string]any{"id": 2, "type": "input_number/create", "name": "Pool Temp Target", "min": 20, "max": 32, "step": 0.5}).(map[string]any)
	if item["id"] != "pool_temp_target" || item["mode"] != "slider" || item["max"] != 32.0 {
		t.Fatalf("created item: %v", item)
	}
	r := api(t, "GET", "/api/states/input_number.pool_temp_target", "")
	st := r.json(t).(map[string]any)
	if st["state"] != "20.0" || st["attributes"].(map[string]any)["editable"] != true {
		t.Fatalf("new helper's state: %v", st)
	}
	again := w.ok(map[string]any{"id": 3, "type": "input_number/create", "name": "Pool temp target", "min": 0, "max": 1}).(map[string]any)
	if again["id"] != "pool_temp_target_2" {
		t.Errorf("second item with the same name: %v", again)
	}
	upd := w.ok(map[string]any{"id": 4, "type": "input_number/update", "input_number_id": "pool_temp_target", "name": "Pool Temp Target", "min": 22, "max": 30}).(map[string]any)
	if upd["min"] != 22.0 || upd["step"] != 1.0 { // update replaces: step back at its default
		t.Errorf("updated item: %v", upd)
	}
	if st := api(t, "GET", "/api/states/input_number.pool_temp_target", "").json(t).(map[string]any); st["state"] != "22.0" {
		t.Errorf("value clamped into the new range: %v", st["state"])
	}
	w.ok(map[string]any{"id": 5, "type": "input_number/delete", "input_number_id": "pool_temp_target"})
	w.ok(map[string]any{"id": 6, "type": "input_number/delete", "input_number_id": "pool_temp_target_2"})
	time.Sleep(20 * time.Millisecond) // the trailing result of a failed delete must not confuse the next command
	if r := api(t, "GET", "/api/states/input_number.pool_temp_target", ""); r.status != 404 {
		t.Errorf("deleted helper's state still there: %d", r.status)
	}

	cases := []struct {
		name string
		msg  map[string]any
		code string
		text string
	}{
		{"missing name", map[string]any{"type": "input_boolean/create"}, "invalid_format", "required key not provided @ data['name']. Got None"},
		{"extra key", map[string]any{"type": "input_boolean/create", "name": "x", "colour": "red"}, "invalid_format", "extra keys not allowed @ data['colour']"},
		{"min not below max", map[string]any{"type": "input_number/create", "name": "x", "min": 10, "max": 5}, "invalid_format", "Maximum (10.0) is not greater than minimum (5.0)"},
		{"bad mode", map[string]any{"type": "input_number/create", "name": "x", "min": 1, "max": 5, "mode": "dial"}, "invalid_format", "value must be one of ['box', 'slider'] for dictionary value @ data['mode']. Got 'dial'"},
		{"empty options", map[string]any{"type": "input_select/create", "name": "x", "options": []any{}}, "invalid_format", "length of value must be at least 1"},
		{"duplicate options", map[string]any{"type": "input_select/create", "name": "x", "options": []any{"a", "a"}}, "home_assistant_error", "Duplicate options are not allowed"},
		{"initial not an option", map[string]any{"type": "input_select/create", "name": "x", "options": []any{"a"}, "initial": "b"}, "invalid_format", "initial state b is not part of the options: a"},
		{"datetime without date or time", map[string]any{"type": "input_datetime/create", "name": "x"}, "invalid_format", "Entity needs at least a date or a time"},
		{"overlapping schedule", map[string]any{"type": "schedule/create", "name": "x", "monday": []any{map[string]any{"from": "08:00", "to": "10:00"}, map[string]any{"from": "09:00", "to": "11:00"}}}, "invalid_format", "Overlapping times found in schedule"},
		{"unknown id", map[string]any{"type": "counter/update", "counter_id": "nope", "name": "x"}, "not_found", "Unable to find counter_id nope"},
		{"delete unknown id", map[string]any{"type": "timer/delete", "timer_id": "nope"}, "not_found", "Unable to find timer_id nope"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.msg["id"] = 100 + i
			m, _ := w.cmd(c.msg)
			if errCode(m) != c.code || !strings.Contains(errMsg(m), c.text) {
				t.Errorf("got %v, want %s containing %q", m, c.code, c.text)
			}
		})
	}

	sched := w.ok(map[string]any{"id": 200, "type": "schedule/create", "name": "Heating plan", "tuesday": []any{map[string]any{"from": "06:30", "to": "24:00:00"}}}).(map[string]any)
	if days := sched["tuesday"].([]any); days[0].(map[string]any)["from"] != "06:30:00" || sched["monday"] == nil {
		t.Errorf("schedule item: %v", sched)
	}
	timer := w.ok(map[string]any{"id": 201, "type": "timer/create", "name": "Tea", "duration": "0:04"}).(map[string]any)
	if timer["duration"] != "0:04:00" {
		t.Errorf("timer duration: %v", timer)
	}
	w.ok(map[string]any{"id": 202, "type": "schedule/delete", "schedule_id": sched["id"]})
	w.ok(map[string]any{"id": 203, "type": "timer/delete", "timer_id": timer["id"]})
}

func TestWSCalendarEventSchema(t *testing.T) {
	w := dialAuthed(t, home.Token())
	day := time.Now().AddDate(0, 0, 30).Format("2006-01-02")
	ev := func(kv ...any) map[string]any {
		m := map[string]any{"summary": "x", "dtstart": day + "T10:00:00", "dtend": day + "T11:00:00"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	cases := []struct {
		name  string
		event map[string]any
		text  string
	}{
		{"missing summary", ev("summary", nil), "required key not provided @ data['event']['summary']. Got None"},
		{"extra key", ev("colour", "red"), "extra keys not allowed @ data['event']['colour']"},
		{"bad date", ev("dtstart", "tomorrow"), "Could not parse date for dictionary value @ data['event']['dtstart']. Got 'tomorrow'"},
		{"mixed kinds", ev("dtstart", day), "Expected all values to be the same type: ('dtstart', 'dtend') for dictionary value @ data['event']"},
		{"mixed zones", ev("dtstart", day+"T10:00:00+00:00"), "Expected all values to have the same timezone"},
		{"end before start", ev("dtend", day+"T09:00:00"), "Expected minimum event duration of 0:00:01 ("},
		{"hourly rule", ev("rrule", "FREQ=HOURLY"), "Invalid frequency for rule: FREQ=HOURLY for dictionary value @ data['event']['rrule']"},
		{"rule without freq", ev("rrule", "COUNT=3"), "rrule did not contain FREQ"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, _ := w.cmd(map[string]any{"id": 10 + i, "type": "calendar/event/create", "entity_id": "calendar.family", "event": c.event})
			if errCode(m) != "invalid_format" || !strings.Contains(errMsg(m), c.text) {
				t.Errorf("got %v, want invalid_format containing %q", m, c.text)
			}
		})
	}
	m, _ := w.cmd(map[string]any{"id": 50, "type": "calendar/event/delete", "entity_id": "not an id", "uid": "x"})
	if errCode(m) != "invalid_format" || !strings.Contains(errMsg(m), "is an invalid entity ID") {
		t.Errorf("bad entity id: %v", m)
	}
}
