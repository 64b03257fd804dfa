package home

import (
	"encoding/json"
	"testing"
	"time"
)

func FuzzParseRRule(f *testing.F) {
	for _, s := range []string{"FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=4", "FREQ=MONTHLY;INTERVAL=2;UNTIL=20270101T000000Z", "RRULE:FREQ=YEARLY", "FREQ=", "BYDAY=XX"} {
		f.Add(s)
	}
	loc, _ := time.LoadLocation("Europe/Amsterdam")
	start := time.Date(2026, 1, 31, 9, 0, 0, 0, loc)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRRule(s, loc)
		if err != nil {
			return
		}
		occ := r.occurrences(start, start.AddDate(2, 0, 0), loc)
		for i := 1; i < len(occ); i++ {
			if !occ[i].After(occ[i-1]) {
				t.Fatalf("%q: occurrences not increasing: %v then %v", s, occ[i-1], occ[i])
			}
		}
		if r.opt.Count > 0 && len(occ) > r.opt.Count {
			t.Fatalf("%q: %d occurrences exceed COUNT %d", s, len(occ), r.opt.Count)
		}
		if _, err := parseRRule(r.String(), loc); err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", s, r.String(), err)
		}
	})
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-05-01", "2026-05-01T10:00:00", "2026-05-01 10:00:00.123+02:00", "2026-05-01T10:00Z", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := parseHATime(s, time.UTC)
		if err != nil {
			return
		}
		again, err := parseHATime(tm.Format(time.RFC3339Nano), time.UTC)
		if err != nil || !again.Equal(tm) {
			t.Fatalf("%q -> %v does not round-trip (%v, %v)", s, tm, again, err)
		}
	})
}

func FuzzJSONToNode(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"],"c":{"d":1.5}}`, `[]`, `"s"`, `{"a":`, `1e999`, `{"a":1}{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := jsonToNode([]byte(s))
		if err != nil {
			return
		}
		out, err := NodeJSON(n)
		if err != nil {
			t.Fatalf("%q: back to JSON: %v", s, err)
		}
		if !json.Valid(out) {
			t.Fatalf("%q produced invalid JSON %q", s, out)
		}
	})
}

// FuzzServiceData throws arbitrary JSON at service schemas: calls must fail
// cleanly or succeed, never panic or leave a non-JSON state behind.
func FuzzServiceData(f *testing.F) {
	h, err := New(Options{Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"entity_id":"light.hallway","brightness":12}`, `{"entity_id":["light.kitchen_ceiling"],"rgb_color":[1,2,3]}`,
		`{"entity_id":"all","hs_color":[400,1]}`, `{"area_id":"kitchen","xy_color":["a"]}`, `{"entity_id":"light.hallway","color_name":"nope"}`} {
		f.Add("light", "turn_on", s)
	}
	f.Add("climate", "set_temperature", `{"entity_id":"climate.office","temperature":"22"}`)
	f.Add("input_select", "set_options", `{"entity_id":"input_select.house_mode","options":[]}`)
	f.Add("homeassistant", "toggle", `{"label_id":["night"]}`)
	f.Fuzz(func(t *testing.T, domain, service, data string) {
		var m map[string]any
		if json.Unmarshal([]byte(data), &m) != nil {
			return
		}
		if domain == "homeassistant" && (service == "restart" || service == "stop") {
			return
		}
		res, err := h.CallService(ServiceCall{Domain: domain, Service: service, Data: m})
		if err != nil {
			return
		}
		for _, s := range res.Changed {
			if _, err := json.Marshal(s); err != nil {
				t.Fatalf("state %s does not serialize: %v", s.EntityID, err)
			}
		}
	})
}
