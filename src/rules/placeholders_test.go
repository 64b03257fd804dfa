package rules

import (
	"context"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
)

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	w0 := newWorld()
	motion := &hubitat.Event{Name: "motion", Value: val("active"), DeviceID: "2", DisplayName: "Porch Sensor",
		Date: w0.at(20, 7).Add(30 * time.Second).UTC()}
	noName := &hubitat.Event{Name: "switch", Value: val("off"), DeviceID: "1"}
	mode := &hubitat.Event{Name: "mode", Value: val("Away")}
	rule := &Rule{ID: "r", LocalVariables: map[string]any{"room": "hall", "device": "shadowed by the event", "n": 3}}
	cases := []struct {
		name  string
		text  string
		event *hubitat.Event
		at    time.Time
		want  string
	}{
		{"event fields", "%device% %name% is %value% since %time% on %date%", motion, time.Time{},
			"Porch Sensor motion is active since 20:07 on 2026-11-25"},
		{"event without a display name", "%device% went %value%", noName, time.Time{}, "Kitchen Light went off"},
		{"location event", "%device%: %name% → %value%", mode, time.Time{}, "Location: mode → Away"},
		{"event without a date uses the run's time", "%time%", mode, w0.at(19, 45), "19:45"},
		{"no event: event names fall to variables or stay", "%device% %value% %time%", nil, time.Time{}, "shadowed by the event %value% %time%"},
		{"now and mode", "at %now% in %mode%", nil, time.Time{}, "at 2026-11-25 21:30:00 in Night"},
		{"local, hub and rule variables", "%room% %houseState% %counter% %n%", nil, time.Time{}, "hall occupied 7 3"},
		{"unknown and failing names stay", "%nothing% %broken%", nil, time.Time{}, "%nothing% %broken%"},
		{"percent signs that are not placeholders", "50% off, 10% more; 100%", nil, time.Time{}, "50% off, 10% more; 100%"},
		{"adjacent", "%room%%room%", nil, time.Time{}, "hallhall"},
		{"empty", "", nil, time.Time{}, ""},
		{"a lone percent", "%", nil, time.Time{}, "%"},
		{"values are not expanded again", "%v%", nil, time.Time{}, "%room%"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			w.hubVars["v"] = "%room%"
			got := Expand(context.Background(), w, rule, Context{Event: tc.event, At: tc.at}, tc.text)
			if got != tc.want {
				t.Fatalf("Expand(%q) = %q, want %q", tc.text, got, tc.want)
			}
			if len(w.Writes()) != 0 {
				t.Fatalf("expanding wrote %q", w.Writes())
			}
		})
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"%device% is %value%", "100%", "%%%", "%a%b%c%", "%now%%mode%", "%" + string(rune(0xFFFD)) + "%"} {
		f.Add(s)
	}
	w := newWorld()
	rule := &Rule{LocalVariables: map[string]any{"a": "%b%"}}
	rc := Context{Event: &hubitat.Event{Name: "switch", Value: val("on"), DisplayName: "Lamp"}}
	f.Fuzz(func(t *testing.T, s string) {
		out := Expand(context.Background(), w, rule, rc, s)
		if placeholder.FindStringIndex(s) == nil && out != s {
			t.Fatalf("Expand(%q) = %q: a text without placeholders changed", s, out)
		}
	})
}
