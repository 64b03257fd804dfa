package recorder

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestListStatistics(t *testing.T) {
	db := openShared(t)
	got, err := db.ListStatistics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []StatMeta{
		{StatisticID: "sensor.house_energy", Source: "recorder", Unit: "kWh", HasSum: true, MeanType: MeanNone},
		{StatisticID: "sensor.kitchen_temperature", Source: "recorder", Unit: "°C", MeanType: MeanArithmetic},
		{StatisticID: "sensor.wind_direction", Source: "recorder", Unit: "°", MeanType: MeanCircular},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("meta[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	raw := rawDB(t, sharedDB(t))
	for id, want := range map[string]string{"sensor.house_energy": "energy", "sensor.kitchen_temperature": "temperature", "sensor.wind_direction": ""} {
		if got := scalar[string](t, raw, "SELECT COALESCE(unit_class, '') FROM statistics_meta WHERE statistic_id = ?", id); got != want {
			t.Errorf("unit_class of %s = %q, want %q", id, got, want)
		}
	}
}

func TestStatisticsPeriods(t *testing.T) {
	db := openShared(t)
	ctx := context.Background()
	ids := []string{"sensor.kitchen_temperature", "sensor.house_energy", "sensor.wind_direction", "sensor.outdoor_lux"}
	cases := []struct {
		period   string
		start    time.Time
		step     func(time.Time) time.Time
		aligned  func(time.Time) bool
		last     time.Time
		minCount int
	}{
		{"5minute", fixedNow.Add(-2 * time.Hour), func(t time.Time) time.Time { return t.Add(5 * time.Minute) },
			func(t time.Time) bool { return t.Minute()%5 == 0 && t.Second() == 0 }, time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC), 23},
		{"hour", fixedNow.Add(-48 * time.Hour), func(t time.Time) time.Time { return t.Add(time.Hour) },
			func(t time.Time) bool { return t.Minute() == 0 && t.Second() == 0 }, time.Date(2026, 3, 4, 14, 0, 0, 0, time.UTC), 47},
		{"day", fixedNow.AddDate(0, 0, -8), func(t time.Time) time.Time { return t.AddDate(0, 0, 1) },
			func(t time.Time) bool { return t.Hour() == 0 && t.Minute() == 0 }, time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), 8},
		{"week", fixedNow.AddDate(0, 0, -12), func(t time.Time) time.Time { return t.AddDate(0, 0, 7) },
			func(t time.Time) bool { return t.Weekday() == time.Monday && t.Hour() == 0 }, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), 2},
		{"month", fixedNow.AddDate(0, 0, -12), func(t time.Time) time.Time { return t.AddDate(0, 1, 0) },
			func(t time.Time) bool { return t.Day() == 1 && t.Hour() == 0 }, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 2},
	}
	for _, c := range cases {
		t.Run(c.period, func(t *testing.T) {
			got, err := db.Statistics(ctx, ids, c.start, time.Time{}, c.period)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := got["sensor.outdoor_lux"]; ok {
				t.Error("sensor without state_class must have no statistics")
			}
			for _, id := range ids[:3] {
				rows := got[id]
				if len(rows) < c.minCount {
					t.Fatalf("%s: %d rows, want >= %d", id, len(rows), c.minCount)
				}
				for i, r := range rows {
					if !c.aligned(r.Start) {
						t.Errorf("%s row %d starts at %s, not on a %s boundary", id, i, r.Start, c.period)
					}
					if i > 0 && !r.Start.Equal(c.step(rows[i-1].Start)) {
						t.Errorf("%s row %d at %s does not follow %s", id, i, r.Start, rows[i-1].Start)
					}
					checkRowShape(t, id, r)
				}
				if last := rows[len(rows)-1].Start; !last.Equal(c.last) {
					t.Errorf("%s last %s row starts %s, want %s", id, c.period, last, c.last)
				}
			}
		})
	}
}

func checkRowShape(t *testing.T, id string, r StatRow) {
	t.Helper()
	if id == "sensor.house_energy" {
		if r.Sum == nil || r.State == nil || r.Mean != nil {
			t.Errorf("%s at %s: want state+sum only, got %+v", id, r.Start, r)
		}
		return
	}
	if r.Mean == nil || r.Min == nil || r.Max == nil || r.Sum != nil {
		t.Fatalf("%s at %s: want mean/min/max only", id, r.Start)
	}
	if id == "sensor.kitchen_temperature" && (*r.Mean < *r.Min-1e-9 || *r.Mean > *r.Max+1e-9) {
		t.Errorf("%s at %s: mean %f outside [%f, %f]", id, r.Start, *r.Mean, *r.Min, *r.Max)
	}
	if id == "sensor.wind_direction" && (*r.Mean < 0 || *r.Mean >= 360) {
		t.Errorf("%s at %s: circular mean %f outside [0, 360)", id, r.Start, *r.Mean)
	}
}

// TestStatisticsAgreeWithStates recomputes one hour of statistics from the
// raw states rows: time-weighted mean, min and max over the values held in
// the hour, and for the energy meter the running increase.
func TestStatisticsAgreeWithStates(t *testing.T) {
	db := openShared(t)
	raw := rawDB(t, sharedDB(t))
	hour := time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC)
	got, err := db.Statistics(context.Background(), []string{"sensor.kitchen_temperature", "sensor.house_energy"}, hour, hour.Add(time.Hour), "hour")
	if err != nil {
		t.Fatal(err)
	}
	values := func(id string, from, to time.Time) (float64, []float64, []float64) {
		before := scalar[string](t, raw, `SELECT state FROM states JOIN states_meta USING (metadata_id) WHERE states_meta.entity_id = ? AND last_updated_ts < ? ORDER BY last_updated_ts DESC LIMIT 1`, id, toTS(from))
		v0, _ := strconv.ParseFloat(before, 64)
		rows, err := raw.Query(`SELECT state, last_updated_ts FROM states JOIN states_meta USING (metadata_id) WHERE states_meta.entity_id = ? AND last_updated_ts >= ? AND last_updated_ts < ? ORDER BY last_updated_ts`, id, toTS(from), toTS(to))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var vs, ts []float64
		for rows.Next() {
			var s string
			var at float64
			if err := rows.Scan(&s, &at); err != nil {
				t.Fatal(err)
			}
			v, _ := strconv.ParseFloat(s, 64)
			vs, ts = append(vs, v), append(ts, at)
		}
		return v0, vs, ts
	}

	temp := got["sensor.kitchen_temperature"]
	if len(temp) != 1 {
		t.Fatalf("temperature hour rows = %d", len(temp))
	}
	v0, vs, ts := values("sensor.kitchen_temperature", hour, hour.Add(time.Hour))
	lo, hi := v0, v0
	weighted, prevV, prevT := 0.0, v0, toTS(hour)
	for i, v := range vs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		weighted += prevV * (ts[i] - prevT)
		prevV, prevT = v, ts[i]
	}
	weighted += prevV * (toTS(hour.Add(time.Hour)) - prevT)
	mean := weighted / 3600
	if *temp[0].Min != lo || *temp[0].Max != hi {
		t.Errorf("min/max = %f/%f, states say %f/%f", *temp[0].Min, *temp[0].Max, lo, hi)
	}
	if math.Abs(*temp[0].Mean-mean) > 1e-6 {
		t.Errorf("mean = %f, time-weighted mean of states = %f", *temp[0].Mean, mean)
	}

	energy := got["sensor.house_energy"]
	prev, err := db.Statistics(context.Background(), []string{"sensor.house_energy"}, hour.Add(-time.Hour), hour, "hour")
	if err != nil {
		t.Fatal(err)
	}
	_, evs, _ := values("sensor.house_energy", hour, hour.Add(time.Hour))
	if last := evs[len(evs)-1]; *energy[0].State != last {
		t.Errorf("energy state = %f, last reading in hour = %f", *energy[0].State, last)
	}
	pe := prev["sensor.house_energy"][0]
	if d1, d2 := *energy[0].Sum-*pe.Sum, *energy[0].State-*pe.State; math.Abs(d1-d2) > 1e-6 || d1 <= 0 {
		t.Errorf("sum grew %f but meter grew %f", d1, d2)
	}
}

// TestStatisticsReduction checks day/week/month rows against an independent
// fold of the hourly rows.
func TestStatisticsReduction(t *testing.T) {
	db := openShared(t)
	ctx := context.Background()
	zone := time.FixedZone("UTC+5", 5*3600)
	start := time.Date(2026, 2, 25, 0, 0, 0, 0, zone)
	ids := []string{"sensor.kitchen_temperature", "sensor.house_energy", "sensor.wind_direction"}
	hourly, err := db.Statistics(ctx, ids, start, time.Time{}, "hour")
	if err != nil {
		t.Fatal(err)
	}
	daily, err := db.Statistics(ctx, ids, start, time.Time{}, "day")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		byDay := map[time.Time][]StatRow{}
		for _, r := range hourly[id] {
			y, m, d := r.Start.In(zone).Date()
			k := time.Date(y, m, d, 0, 0, 0, 0, zone)
			byDay[k] = append(byDay[k], r)
		}
		if len(daily[id]) != len(byDay) {
			t.Fatalf("%s: %d day rows, want %d", id, len(daily[id]), len(byDay))
		}
		for _, d := range daily[id] {
			hs := byDay[d.Start]
			if len(hs) == 0 {
				t.Fatalf("%s: day row %s matches no local day", id, d.Start)
			}
			last := hs[len(hs)-1]
			switch id {
			case "sensor.house_energy":
				if *d.Sum != *last.Sum || *d.State != *last.State {
					t.Errorf("%s %s: sum/state %f/%f, want last hour's %f/%f", id, d.Start, *d.Sum, *d.State, *last.Sum, *last.State)
				}
			case "sensor.kitchen_temperature":
				var sum, lo, hi = 0.0, math.Inf(1), math.Inf(-1)
				for _, h := range hs {
					sum += *h.Mean
					lo, hi = math.Min(lo, *h.Min), math.Max(hi, *h.Max)
				}
				if math.Abs(*d.Mean-sum/float64(len(hs))) > 1e-9 || *d.Min != lo || *d.Max != hi {
					t.Errorf("%s %s: got %f [%f,%f], want %f [%f,%f]", id, d.Start, *d.Mean, *d.Min, *d.Max, sum/float64(len(hs)), lo, hi)
				}
			case "sensor.wind_direction":
				var s, c float64
				for _, h := range hs {
					s += math.Sin(*h.Mean * math.Pi / 180)
					c += math.Cos(*h.Mean * math.Pi / 180)
				}
				want := math.Mod(math.Atan2(s, c)*180/math.Pi+360, 360)
				if math.Abs(*d.Mean-want) > 1e-6 {
					t.Errorf("%s %s: circular mean %f, want %f", id, d.Start, *d.Mean, want)
				}
			}
		}
	}
}

func TestStatisticsShortTermRetention(t *testing.T) {
	raw := rawDB(t, sharedDB(t))
	oldest := scalar[float64](t, raw, "SELECT min(start_ts) FROM statistics_short_term")
	if limit := toTS(fixedNow.AddDate(0, 0, -10)); oldest < limit {
		t.Errorf("short-term statistics start %s, older than purge_keep_days (10)", fromTS(oldest))
	}
	if hourlyOldest := scalar[float64](t, raw, "SELECT min(start_ts) FROM statistics"); hourlyOldest > toTS(fixedNow.AddDate(0, 0, -11)) {
		t.Errorf("long-term statistics start %s, want the whole 12-day history", fromTS(hourlyOldest))
	}
}

func TestStatisticsValidation(t *testing.T) {
	db := openShared(t)
	for _, c := range []struct {
		ids        []string
		start, end time.Time
		period     string
		want       string
	}{
		{[]string{"sensor.a"}, fixedNow, time.Time{}, "year", "period"},
		{nil, fixedNow, time.Time{}, "hour", "statistic_ids"},
		{[]string{"sensor.a"}, time.Time{}, time.Time{}, "hour", "start"},
		{[]string{"sensor.a"}, fixedNow, fixedNow.Add(-time.Hour), "hour", "end"},
	} {
		if _, err := db.Statistics(context.Background(), c.ids, c.start, c.end, c.period); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Statistics(%v, %s) = %v, want error about %s", c.ids, c.period, err, c.want)
		}
	}
}
