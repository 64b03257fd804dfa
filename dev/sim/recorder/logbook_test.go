package recorder

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func lb(e LogbookEntry) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s", e.When.Sub(histT0), e.EntityID, e.Name, e.State, e.Message, e.Domain, e.Icon, e.Source)
}

func logbookFixture(t *testing.T) *DB {
	db := newDB(t)
	ctx := context.Background()
	mustRecord(t, db,
		State{EntityID: "light.hall", State: "off", Attributes: map[string]any{"friendly_name": "Hall light", "icon": "mdi:lamp"}, LastUpdated: at(-time.Hour)},
		State{EntityID: "light.hall", State: "on", Attributes: map[string]any{"friendly_name": "Hall light", "icon": "mdi:lamp", "brightness": 9}, LastUpdated: at(time.Minute)},
		State{EntityID: "light.hall", State: "on", Attributes: map[string]any{"friendly_name": "Hall light", "icon": "mdi:lamp", "brightness": 99}, LastChanged: at(time.Minute), LastUpdated: at(2 * time.Minute)},
		State{EntityID: "sensor.power", State: "10", Attributes: map[string]any{"unit_of_measurement": "W"}, LastUpdated: at(-time.Hour)},
		State{EntityID: "sensor.power", State: "11", Attributes: map[string]any{"unit_of_measurement": "W"}, LastUpdated: at(3 * time.Minute)},
		State{EntityID: "sensor.washer_status", State: "idle", LastUpdated: at(-time.Hour)},
		State{EntityID: "sensor.washer_status", State: "washing", LastUpdated: at(4 * time.Minute)},
		State{EntityID: "counter.visits", State: "1", LastUpdated: at(-time.Hour)},
		State{EntityID: "counter.visits", State: "2", LastUpdated: at(5 * time.Minute)},
		State{EntityID: "switch.new_plug", State: "on", LastUpdated: at(6 * time.Minute)},
		State{EntityID: "light.hall", State: "off", Attributes: map[string]any{"friendly_name": "Hall light", "icon": "mdi:lamp"}, LastUpdated: at(10 * time.Minute)},
		State{EntityID: "light.hall", State: "on", LastUpdated: at(3 * time.Hour)},
	)
	for _, e := range []Event{
		{EventType: "homeassistant_start", TimeFired: at(30 * time.Second)},
		{EventType: "automation_triggered", Data: map[string]any{"name": "Hall motion", "entity_id": "automation.hall_motion", "source": "state of binary_sensor.hall"}, TimeFired: at(59 * time.Second)},
		{EventType: "call_service", Data: map[string]any{"domain": "light", "service": "turn_on", "service_data": map[string]any{"entity_id": "light.hall"}}, TimeFired: at(60 * time.Second)},
		{EventType: "script_started", Data: map[string]any{"name": "Bedtime", "entity_id": "script.bedtime"}, TimeFired: at(7 * time.Minute)},
		{EventType: "logbook_entry", Data: map[string]any{"name": "Washer", "message": "done", "entity_id": "sensor.washer_status"}, TimeFired: at(8 * time.Minute)},
		{EventType: "some_custom_event", TimeFired: at(9 * time.Minute)},
	} {
		if err := db.RecordEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func TestLogbook(t *testing.T) {
	db := logbookFixture(t)
	cases := []struct {
		name       string
		start, end time.Time
		ids        []string
		want       []string
	}{
		{"everything in the first hour", histT0, at(time.Hour), nil, []string{
			"30s||Home Assistant||started|homeassistant||",
			"59s|automation.hall_motion|Hall motion||triggered by state of binary_sensor.hall|automation||state of binary_sensor.hall",
			"1m0s|light.hall|Hall light|on|||mdi:lamp|",
			"4m0s|sensor.washer_status|washer status|washing||||",
			"7m0s|script.bedtime|Bedtime||started|script||",
			"8m0s|sensor.washer_status|Washer||done|sensor||",
			"10m0s|light.hall|Hall light|off|||mdi:lamp|",
		}},
		{"one entity", histT0, at(time.Hour), []string{"sensor.washer_status"}, []string{
			"4m0s|sensor.washer_status|washer status|washing||||",
			"8m0s|sensor.washer_status|Washer||done|sensor||",
		}},
		{"open end", at(9 * time.Minute), time.Time{}, []string{"light.hall"}, []string{
			"10m0s|light.hall|Hall light|off|||mdi:lamp|",
			"3h0m0s|light.hall|hall|on||||",
		}},
		{"bounds are exclusive", at(time.Minute), at(4 * time.Minute), nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := db.Logbook(context.Background(), c.start, c.end, c.ids)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, e := range got {
				lines = append(lines, lb(e))
				if e.ContextID == "" || len(e.ContextID) != 26 {
					t.Errorf("entry %s has context id %q", lb(e), e.ContextID)
				}
			}
			if g, w := strings.Join(lines, "\n"), strings.Join(c.want, "\n"); g != w {
				t.Errorf("got\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func TestLogbookValidation(t *testing.T) {
	db := newDB(t)
	for _, c := range []struct {
		start, end time.Time
		ids        []string
		want       string
	}{
		{time.Time{}, time.Time{}, nil, "start"},
		{histT0, histT0.Add(-time.Second), nil, "end"},
		{histT0, time.Time{}, []string{"light.ok", "Light.Bad"}, "entity_ids"},
	} {
		if _, err := db.Logbook(context.Background(), c.start, c.end, c.ids); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Logbook(%s, %s, %v) = %v, want error about %s", c.start, c.end, c.ids, err, c.want)
		}
	}
}
