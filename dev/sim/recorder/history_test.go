package recorder

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

var histT0 = time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return histT0.Add(d) }

// historyFixture records a small, hand-checked history around histT0.
func historyFixture(t *testing.T) *DB {
	db := newDB(t)
	temp := map[string]any{"unit_of_measurement": "°C", "friendly_name": "Temp"}
	mustRecord(t, db,
		State{EntityID: "sensor.temp", State: "18", Attributes: temp, LastUpdated: at(-2 * time.Hour)},
		State{EntityID: "sensor.temp", State: "19", Attributes: temp, LastUpdated: at(-time.Hour)},
		State{EntityID: "climate.living", State: "heat", Attributes: map[string]any{"current_temperature": 19}, LastUpdated: at(-30 * time.Minute)},
		State{EntityID: "light.hall", State: "on", Attributes: map[string]any{"brightness": 100}, LastUpdated: at(30 * time.Minute)},
		State{EntityID: "sensor.temp", State: "20", Attributes: temp, LastUpdated: at(time.Hour)},
		State{EntityID: "climate.living", State: "heat", Attributes: map[string]any{"current_temperature": 20}, LastChanged: at(-30 * time.Minute), LastUpdated: at(time.Hour)},
		State{EntityID: "input_datetime.alarm", State: "07:00", Attributes: map[string]any{"has_time": true}, LastUpdated: at(time.Hour)},
		State{EntityID: "light.hall", State: "on", Attributes: map[string]any{"brightness": 200}, LastChanged: at(30 * time.Minute), LastUpdated: at(90 * time.Minute)},
		State{EntityID: "sensor.temp", State: "20", Attributes: map[string]any{"unit_of_measurement": "°C", "friendly_name": "Temperature"}, LastChanged: at(time.Hour), LastUpdated: at(2 * time.Hour)},
		State{EntityID: "climate.living", State: "off", Attributes: map[string]any{"current_temperature": 20}, LastUpdated: at(2 * time.Hour)},
		State{EntityID: "input_datetime.alarm", State: "07:30", Attributes: map[string]any{"has_time": true}, LastUpdated: at(2 * time.Hour)},
		State{EntityID: "light.hall", State: "off", Attributes: map[string]any{}, LastUpdated: at(150 * time.Minute)},
		State{EntityID: "sensor.temp", State: "21", Attributes: temp, LastUpdated: at(3 * time.Hour)},
		State{EntityID: "sensor.temp", State: "22", Attributes: temp, LastUpdated: at(5 * time.Hour)},
	)
	return db
}

// hr renders a history row as "state@lu/lc:attrs" with offsets from histT0
// and attrs shown as nil, {} or the number of keys.
func hr(r HistoryRow) string {
	a := "nil"
	if r.Attributes != nil {
		a = fmt.Sprint(len(r.Attributes))
	}
	return fmt.Sprintf("%s@%s/%s:%s", r.State, r.LastUpdated.Sub(histT0), r.LastChanged.Sub(histT0), a)
}

func TestHistorySemantics(t *testing.T) {
	db := historyFixture(t)
	all := []string{"sensor.temp", "light.hall", "climate.living", "input_datetime.alarm", "sensor.unknown", "sensor.temp"}
	base := HistoryOptions{EntityIDs: all, Start: histT0, End: at(4 * time.Hour), IncludeStartState: true, SignificantChangesOnly: true}
	cases := []struct {
		name string
		mod  func(*HistoryOptions)
		want map[string]string
	}{
		{"defaults", func(*HistoryOptions) {}, map[string]string{
			"sensor.temp":          "19@0s/0s:2 20@1h0m0s/1h0m0s:2 21@3h0m0s/3h0m0s:2",
			"light.hall":           "on@30m0s/30m0s:1 off@2h30m0s/2h30m0s:0",
			"climate.living":       "heat@0s/0s:1 heat@1h0m0s/1h0m0s:1 off@2h0m0s/2h0m0s:1",
			"input_datetime.alarm": "07:00@1h0m0s/1h0m0s:1 07:30@2h0m0s/2h0m0s:1",
		}},
		{"all changes", func(o *HistoryOptions) { o.SignificantChangesOnly = false }, map[string]string{
			"sensor.temp":          "19@0s/0s:2 20@1h0m0s/1h0m0s:2 20@2h0m0s/1h0m0s:2 21@3h0m0s/3h0m0s:2",
			"light.hall":           "on@30m0s/30m0s:1 on@1h30m0s/30m0s:1 off@2h30m0s/2h30m0s:0",
			"climate.living":       "heat@0s/0s:1 heat@1h0m0s/-30m0s:1 off@2h0m0s/2h0m0s:1",
			"input_datetime.alarm": "07:00@1h0m0s/1h0m0s:1 07:30@2h0m0s/2h0m0s:1",
		}},
		{"skip initial state", func(o *HistoryOptions) { o.IncludeStartState = false }, map[string]string{
			"sensor.temp":          "20@1h0m0s/1h0m0s:2 21@3h0m0s/3h0m0s:2",
			"light.hall":           "on@30m0s/30m0s:1 off@2h30m0s/2h30m0s:0",
			"climate.living":       "heat@1h0m0s/1h0m0s:1 off@2h0m0s/2h0m0s:1",
			"input_datetime.alarm": "07:00@1h0m0s/1h0m0s:1 07:30@2h0m0s/2h0m0s:1",
		}},
		{"minimal response", func(o *HistoryOptions) { o.MinimalResponse = true; o.SignificantChangesOnly = false }, map[string]string{
			"sensor.temp":          "19@0s/0s:2 20@1h0m0s/1h0m0s:nil 21@3h0m0s/3h0m0s:nil",
			"light.hall":           "on@30m0s/30m0s:1 off@2h30m0s/2h30m0s:nil",
			"climate.living":       "heat@0s/0s:1 heat@1h0m0s/-30m0s:1 off@2h0m0s/2h0m0s:1",
			"input_datetime.alarm": "07:00@1h0m0s/1h0m0s:1 07:30@2h0m0s/2h0m0s:1",
		}},
		{"no attributes", func(o *HistoryOptions) { o.NoAttributes = true }, map[string]string{
			"sensor.temp":          "19@0s/0s:0 20@1h0m0s/1h0m0s:0 21@3h0m0s/3h0m0s:0",
			"light.hall":           "on@30m0s/30m0s:0 off@2h30m0s/2h30m0s:0",
			"climate.living":       "heat@0s/0s:0 heat@1h0m0s/1h0m0s:0 off@2h0m0s/2h0m0s:0",
			"input_datetime.alarm": "07:00@1h0m0s/1h0m0s:0 07:30@2h0m0s/2h0m0s:0",
		}},
		{"open end", func(o *HistoryOptions) { o.End = time.Time{}; o.EntityIDs = []string{"sensor.temp"} }, map[string]string{
			"sensor.temp": "19@0s/0s:2 20@1h0m0s/1h0m0s:2 21@3h0m0s/3h0m0s:2 22@5h0m0s/5h0m0s:2",
		}},
		{"window before any light", func(o *HistoryOptions) { o.End = at(10 * time.Minute) }, map[string]string{
			"sensor.temp":    "19@0s/0s:2",
			"climate.living": "heat@0s/0s:1",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base
			c.mod(&o)
			got, err := db.History(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Errorf("entities = %d, want %d (%v)", len(got), len(c.want), keys(got))
			}
			for id, want := range c.want {
				var parts []string
				for _, r := range got[id] {
					if r.EntityID != id {
						t.Errorf("row entity %s under key %s", r.EntityID, id)
					}
					parts = append(parts, hr(r))
				}
				if g := strings.Join(parts, " "); g != want {
					t.Errorf("%s:\n got %s\nwant %s", id, g, want)
				}
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestHistoryAttributesContent(t *testing.T) {
	db := historyFixture(t)
	got, err := db.History(context.Background(), HistoryOptions{EntityIDs: []string{"light.hall"}, Start: histT0, SignificantChangesOnly: false})
	if err != nil {
		t.Fatal(err)
	}
	rows := got["light.hall"]
	if len(rows) != 3 || rows[1].Attributes["brightness"] != float64(200) {
		t.Fatalf("dimming row attributes = %v", rows)
	}
}

func TestHistoryValidation(t *testing.T) {
	db := newDB(t)
	for _, c := range []struct {
		o    HistoryOptions
		want string
	}{
		{HistoryOptions{Start: histT0}, "entity_ids"},
		{HistoryOptions{EntityIDs: []string{"bad id"}, Start: histT0}, "entity_ids"},
		{HistoryOptions{EntityIDs: []string{"light.a"}}, "start"},
		{HistoryOptions{EntityIDs: []string{"light.a"}, Start: histT0, End: histT0}, "end"},
	} {
		if _, err := db.History(context.Background(), c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("History(%+v) = %v, want error about %s", c.o, err, c.want)
		}
	}
}

// TestHistoryOnGeneratedDB checks generated history reads back coherently:
// time order, start row clamped to the window, light dimming rows hidden
// when only significant changes are asked for.
func TestHistoryOnGeneratedDB(t *testing.T) {
	db := openShared(t)
	start := fixedNow.Add(-30 * time.Hour)
	ids := []string{"sensor.kitchen_temperature", "light.kitchen", "sun.sun"}
	sig, err := db.History(context.Background(), HistoryOptions{EntityIDs: ids, Start: start, End: fixedNow, IncludeStartState: true, SignificantChangesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	full, err := db.History(context.Background(), HistoryOptions{EntityIDs: ids, Start: start, End: fixedNow, IncludeStartState: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		rows := sig[id]
		if len(rows) == 0 {
			t.Fatalf("%s: no history", id)
		}
		if !rows[0].LastUpdated.Equal(start) {
			t.Errorf("%s: first row at %s, want clamped to %s", id, rows[0].LastUpdated, start)
		}
		for i := 1; i < len(rows); i++ {
			if !rows[i].LastUpdated.After(rows[i-1].LastUpdated) {
				t.Fatalf("%s: rows out of order at %d", id, i)
			}
		}
	}
	if len(sig["sun.sun"]) != 1 || sig["sun.sun"][0].State != "above_horizon" {
		t.Errorf("static sun.sun history = %v, want one start row", sig["sun.sun"])
	}
	if a, b := len(sig["light.kitchen"]), len(full["light.kitchen"]); a >= b {
		t.Errorf("light.kitchen: significant rows %d should be fewer than all rows %d (dimming)", a, b)
	}
	for _, r := range sig["light.kitchen"][1:] {
		if !r.LastChanged.Equal(r.LastUpdated) {
			t.Errorf("significant row has last_changed %s != last_updated %s", r.LastChanged, r.LastUpdated)
		}
	}
}
