package recorder

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

func FuzzParsePeriod(f *testing.F) {
	for _, s := range []string{"5minute", "hour", "day", "week", "month", "", "Hour", "5minutes", "year"} {
		f.Add(s)
	}
	valid := map[string]bool{"5minute": true, "hour": true, "day": true, "week": true, "month": true}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePeriod(s)
		if valid[s] != (err == nil) {
			t.Fatalf("parsePeriod(%q) = %v, %v", s, p, err)
		}
		if err != nil && !strings.Contains(err.Error(), "period") {
			t.Fatalf("error does not name the field: %v", err)
		}
		if err == nil {
			// A period start never moves forward in time.
			now := time.Date(2026, 5, 17, 13, 45, 0, 0, time.UTC)
			if p.start(now).After(now) {
				t.Fatalf("%s start after t", s)
			}
		}
	})
}

var entityIDShape = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9_]*[a-z0-9])?\.[a-z0-9](?:[a-z0-9_]*[a-z0-9])?$`)

func FuzzValidEntityID(f *testing.F) {
	for _, s := range []string{"light.kitchen", "sensor.a_b", "sensor._a", "a__b.c", "a.b.c", "Light.x", "x.", ".x", "sensor.ä", "1.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := validEntityID(s)
		want := entityIDShape.MatchString(s) && !strings.Contains(s[:max(strings.IndexByte(s, '.'), 0)], "__") && len(s) <= 255
		if got != want {
			t.Fatalf("validEntityID(%q) = %v, want %v", s, got, want)
		}
	})
}

func FuzzParseULID(f *testing.F) {
	for _, s := range []string{"01ARZ3NDEKTSV4RRFFQ69G5FAV", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01arz3ndektsv4rrffq69g5fav", "", "U1ARZ3NDEKTSV4RRFFQ69G5FAV"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseULID(s)
		if err != nil {
			return
		}
		if len(b) != 16 {
			t.Fatalf("parseULID(%q) gave %d bytes", s, len(b))
		}
		if got := ulidString(b); got != strings.ToUpper(s) {
			t.Fatalf("round trip of %q = %q", s, got)
		}
	})
}

// FuzzEntitySpec checks that any spec the validator accepts can be streamed
// without panics, stays in order and honours its declared states.
func FuzzEntitySpec(f *testing.F) {
	f.Add("sensor.t", "numeric", "", 0.0, 10.0, "measurement", int64(60), 5)
	f.Add("sensor.e", "numeric", "", 100.0, 200.0, "total_increasing", int64(1), 50)
	f.Add("sensor.w", "numeric", "", 0.0, 360.0, "measurement_angle", int64(0), 9)
	f.Add("light.l", "binary", "", 0.0, 0.0, "", int64(0), 30)
	f.Add("lock.d", "binary", "locked,unlocked", 0.0, 0.0, "", int64(0), 3)
	f.Add("select.m", "enum", "a,b,c", 0.0, 0.0, "", int64(0), 12)
	f.Add("sun.sun", "static", "", 0.0, 0.0, "", int64(0), 1)
	f.Fuzz(func(t *testing.T, id, kind, values string, lo, hi float64, class string, everySec int64, n int) {
		spec := EntitySpec{EntityID: id, Kind: kind, Min: lo, Max: hi, StateClass: class, Every: time.Duration(everySec) * time.Second}
		if values != "" {
			spec.Values = strings.Split(values, ",")
		}
		if spec.validate() != nil || n < 1 || n > 200 || hi-lo > 1e12 || lo < -1e12 {
			return
		}
		allowed := map[string]bool{}
		for _, v := range spec.Values {
			allowed[v] = true
		}
		s := newStream(spec, 0, 1, 0, int64(time.Hour/time.Microsecond), n)
		var prev int64 = -1
		count := 0
		for s.next() {
			count++
			if s.cur.ts <= prev {
				t.Fatalf("timestamps not increasing: %d after %d", s.cur.ts, prev)
			}
			prev = s.cur.ts
			if len(spec.Values) > 0 && kind != "numeric" && !allowed[s.cur.state] {
				t.Fatalf("state %q not among %v", s.cur.state, spec.Values)
			}
			if len(s.cur.state) > maxStateLen {
				t.Fatalf("state too long: %d", len(s.cur.state))
			}
		}
		if count != n {
			t.Fatalf("stream produced %d samples, want %d", count, n)
		}
	})
}

// FuzzHistoryOptions feeds arbitrary entity ids and windows to History: it
// must either reject them with a field-naming error or answer.
func FuzzHistoryOptions(f *testing.F) {
	f.Add("sensor.temp", int64(0), int64(3600), true, true)
	f.Add("bad id", int64(10), int64(5), false, false)
	f.Add("light.hall,sensor.temp", int64(-7200), int64(0), true, false)
	db, err := Create(f.TempDir() + "/h.db")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	for i, s := range []string{"20", "21", "22"} {
		if err := db.RecordState(context.Background(), State{EntityID: "sensor.temp", State: s, LastUpdated: histT0.Add(time.Duration(i) * time.Hour)}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, ids string, startOff, endOff int64, startState, sig bool) {
		o := HistoryOptions{EntityIDs: strings.Split(ids, ","), Start: histT0.Add(time.Duration(startOff%1e6) * time.Second),
			IncludeStartState: startState, SignificantChangesOnly: sig}
		if endOff != 0 {
			o.End = histT0.Add(time.Duration(endOff%1e6) * time.Second)
		}
		got, err := db.History(context.Background(), o)
		if err != nil {
			if !strings.Contains(err.Error(), "entity_ids") && !strings.Contains(err.Error(), "end") && !strings.Contains(err.Error(), "start") {
				t.Fatalf("error without a field name: %v", err)
			}
			return
		}
		for id, rows := range got {
			for i, r := range rows {
				if r.EntityID != id || r.LastUpdated.Before(o.Start) || (!o.End.IsZero() && !r.LastUpdated.Before(o.End)) {
					t.Fatalf("row %d of %s outside the window: %+v", i, id, r)
				}
			}
		}
	})
}
