package rules

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/src/hubitat"
)

var london = mustZone("Europe/London")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func utc(y int, mo time.Month, d, h, m int) time.Time {
	return time.Date(y, mo, d, h, m, 0, 0, time.UTC)
}

// Clock times are wall-clock times in the hub's zone: 07:00 stays 07:00 across both of 2026's
// London changes (29 March, 25 October), so the UTC instants move by an hour.
func TestNextClockAcrossDST(t *testing.T) {
	t.Parallel()
	s := site{loc: london}
	tests := []struct {
		name  string
		at    string
		after time.Time
		want  time.Time
	}{
		{"day before spring", "07:00", utc(2026, 3, 28, 7, 0), utc(2026, 3, 29, 6, 0)},
		{"day of spring", "07:00", utc(2026, 3, 29, 6, 0), utc(2026, 3, 30, 6, 0)},
		{"day before autumn", "07:00", utc(2026, 10, 24, 6, 0), utc(2026, 10, 25, 7, 0)},
		{"later the same day", "23:59", utc(2026, 10, 25, 7, 0), utc(2026, 10, 25, 23, 59)},
		{"one digit hour", "7:05", utc(2026, 6, 1, 6, 0), utc(2026, 6, 1, 6, 5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := nextFire(Trigger{Type: "time", Time: tc.at}, tc.after, s)
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("next %s after %s = %s, %v; want %s", tc.at, tc.after, got.UTC(), err, tc.want)
			}
		})
	}
	if _, err := nextFire(Trigger{Type: "time", Time: "25:00"}, utc(2026, 6, 1, 0, 0), s); err == nil {
		t.Fatal("25:00 was scheduled")
	}
}

// A time that does not exist (01:30 on the spring day) or exists twice (01:30 on the autumn
// day) fires exactly once that day.
func TestClockTimeInDSTGapAndOverlapFiresOnce(t *testing.T) {
	t.Parallel()
	s := site{loc: london}
	for _, day := range []time.Time{utc(2026, 3, 29, 0, 0), utc(2026, 10, 25, 0, 0)} {
		var fired []time.Time
		at := day.Add(-time.Hour)
		for {
			next, err := nextFire(Trigger{Type: "time", Time: "01:30"}, at, s)
			if err != nil {
				t.Fatal(err)
			}
			if next.After(day.Add(30 * time.Hour)) {
				break
			}
			fired = append(fired, next)
			at = next
		}
		if len(fired) != 2 || fired[1].Sub(fired[0]) < 23*time.Hour {
			t.Fatalf("01:30 around %s fired at %v; want once on the day and once the next day", day.Format(time.DateOnly), fired)
		}
	}
}

// Periodic triggers follow upstream's cron in the hub's zone and keep real-time spacing across
// the spring change; every N days counts days of the month from the 1st, as */N does.
func TestNextPeriodic(t *testing.T) {
	t.Parallel()
	s := site{loc: london}
	tests := []struct {
		name     string
		interval int
		unit     string
		after    time.Time
		want     []time.Time
	}{
		{"15 minutes across the spring gap", 15, "minutes", utc(2026, 3, 29, 0, 50),
			[]time.Time{utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 15), utc(2026, 3, 29, 1, 30), utc(2026, 3, 29, 1, 45), utc(2026, 3, 29, 2, 0)}},
		{"7 minutes restarts at local midnight", 7, "minutes", utc(2026, 6, 1, 22, 50), // 23:50 BST
			[]time.Time{utc(2026, 6, 1, 22, 55), utc(2026, 6, 1, 23, 0), utc(2026, 6, 1, 23, 7)}},
		{"6 hours on the spring day", 6, "hours", utc(2026, 3, 28, 23, 0),
			[]time.Time{utc(2026, 3, 29, 0, 0), utc(2026, 3, 29, 5, 0), utc(2026, 3, 29, 11, 0), utc(2026, 3, 29, 17, 0), utc(2026, 3, 29, 23, 0)}},
		{"2 days at midnight", 2, "days", utc(2026, 3, 30, 10, 0),
			[]time.Time{utc(2026, 3, 30, 23, 0), utc(2026, 3, 31, 23, 0), utc(2026, 4, 2, 23, 0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.after
			for i, want := range tc.want {
				got, err := nextFire(Trigger{Type: "periodic", Interval: tc.interval, Unit: tc.unit}, at, s)
				if err != nil || !got.Equal(want) {
					t.Fatalf("firing %d after %s = %s, %v; want %s", i, at, got.UTC(), err, want)
				}
				at = got
			}
		})
	}
	for _, bad := range []Trigger{{Type: "periodic", Interval: 0}, {Type: "periodic", Interval: 5, Unit: "weeks"}} {
		if _, err := nextFire(bad, utc(2026, 6, 1, 0, 0), s); err == nil {
			t.Errorf("%+v was scheduled", bad)
		}
	}
}

// Sunrise and sunset are computed for the hub's own calendar day in its own zone (also far
// from UTC), agree with NOAA's solar calculator within two minutes, and follow the DST change.
func TestSunTimes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		tz        string
		lat, lon  float64
		day       time.Time
		rise, set string // local wall clock, from NOAA's solar calculator equations
	}{
		{"London before spring", "Europe/London", 51.5074, -0.1278, utc(2026, 3, 28, 12, 0), "05:45", "18:27"},
		{"London spring day", "Europe/London", 51.5074, -0.1278, utc(2026, 3, 29, 12, 0), "06:42", "19:28"},
		{"London autumn day", "Europe/London", 51.5074, -0.1278, utc(2026, 10, 25, 12, 0), "06:42", "16:47"},
		{"Boston midsummer", "America/New_York", 42.3601, -71.0589, utc(2026, 6, 21, 16, 0), "05:08", "20:25"},
		{"Honolulu (UTC-10)", "Pacific/Honolulu", 21.3069, -157.8583, utc(2026, 1, 15, 22, 0), "07:11", "18:10"},
		{"Sydney (UTC+11)", "Australia/Sydney", -33.8688, 151.2093, utc(2026, 1, 15, 1, 0), "06:00", "20:09"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := siteFrom(tc.tz, tc.lat, tc.lon)
			rise, set, err := s.sun(tc.day)
			if err != nil {
				t.Fatal(err)
			}
			local := tc.day.In(s.loc)
			for _, c := range []struct {
				got  time.Time
				want string
			}{{rise, tc.rise}, {set, tc.set}} {
				w, _ := time.ParseInLocation("2006-01-02 15:04", local.Format(time.DateOnly)+" "+c.want, s.loc)
				if d := c.got.Sub(w).Abs(); d > 2*time.Minute {
					t.Errorf("got %s, NOAA %s (off by %s)", c.got.Format(time.DateTime+" MST"), w.Format(time.DateTime+" MST"), d)
				}
			}
		})
	}
}

func TestNextSunOffsetsAndPolarNight(t *testing.T) {
	t.Parallel()
	s := siteFrom("Europe/London", 51.5074, -0.1278)
	_, set28, _ := s.sun(utc(2026, 3, 28, 12, 0))
	got, err := nextFire(Trigger{Type: "time", Sunset: true, Offset: -30}, utc(2026, 3, 28, 12, 0), s)
	if err != nil || !got.Equal(set28.Add(-30*time.Minute)) {
		t.Fatalf("sunset-30 = %s, %v", got, err)
	}
	// After today's sunset-30 has passed: tomorrow's, an hour later on the wall clock (BST).
	next, err := nextFire(Trigger{Type: "time", Sunset: true, Offset: -30}, got, s)
	if err != nil || next.In(london).Hour() != got.In(london).Hour()+1 || next.Sub(got) < 24*time.Hour {
		t.Fatalf("next sunset-30 = %s after %s, %v", next.In(london), got.In(london), err)
	}

	// Tromsø has no sunrise from late November to mid January: the next one is in January.
	polar := siteFrom("Europe/Oslo", 69.6492, 18.9553)
	rise, err := nextFire(Trigger{Type: "time", Sunrise: true}, utc(2026, 12, 1, 12, 0), polar)
	if err != nil || rise.Year() != 2027 || rise.Month() != time.January {
		t.Fatalf("next Tromsø sunrise = %s, %v", rise, err)
	}
	if _, err := nextFire(Trigger{Type: "time", Sunrise: true}, utc(2026, 12, 1, 12, 0), siteFrom("Europe/London", 0, 0)); err == nil {
		t.Fatal("a hub without coordinates scheduled a sunrise")
	}
}

// The engine schedules a rule's time triggers (several of them: a clock time, sunset-30 and
// every 6 hours) in the hub's zone, read from the hub, across the spring change.
func TestEngineScheduleAcrossSpringChange(t *testing.T) {
	t.Parallel()
	h, c := ownHub(t, simhub.Options{Location: simhub.Location{Name: "London", Latitude: 51.5074, Longitude: -0.1278, TimeZone: "Europe/London", TemperatureScale: "C"}})
	start := utc(2026, 3, 28, 0, 0)
	te := startEngine(t, h, c, start)
	r := te.create(Rule{Name: "scheduled", Triggers: []Trigger{
		{Type: "time", Time: "07:00"},
		{Type: "time", Sunset: true, Offset: -30},
		{Type: "periodic", Interval: 6, Unit: "hours"},
	}, Actions: []Action{hubCmd("3", "on")}})
	if d := te.diag(r.ID); d.LocationError != "" || d.Triggers[1].Next == nil || !d.Triggers[0].Armed {
		t.Fatalf("diagnostics: %+v", d)
	}
	s := siteFrom("Europe/London", 51.5074, -0.1278)
	_, set28, _ := s.sun(utc(2026, 3, 28, 12, 0))
	_, set29, _ := s.sun(utc(2026, 3, 29, 12, 0))
	want := []time.Time{
		utc(2026, 3, 28, 6, 0), utc(2026, 3, 28, 7, 0), utc(2026, 3, 28, 12, 0), set28.Add(-30 * time.Minute), utc(2026, 3, 28, 18, 0),
		utc(2026, 3, 29, 0, 0), utc(2026, 3, 29, 5, 0), utc(2026, 3, 29, 6, 0), utc(2026, 3, 29, 11, 0), utc(2026, 3, 29, 17, 0),
		set29.Add(-30 * time.Minute), utc(2026, 3, 29, 23, 0),
	}
	end := utc(2026, 3, 30, 0, 0)
	var got []time.Time
	for {
		p := te.clock.Pending()
		if len(p) == 0 || p[0].After(end) {
			break
		}
		te.clock.AdvanceTo(p[0])
		testkit.Eventually(t, "the run", func() bool { d := te.idle(r.ID); return d.Rule.ExecutionCount == len(got)+1 })
		got = append(got, *te.diag(r.ID).Rule.LastTriggered)
	}
	if len(got) != len(want) {
		t.Fatalf("fired at %v; want %v", got, want)
	}
	for i := range want {
		if got[i].Sub(want[i]).Abs() >= time.Millisecond { // the store keeps milliseconds
			t.Errorf("firing %d at %s; want %s", i, got[i], want[i])
		}
	}
	// Disabling stops the schedule.
	if _, err := te.SetEnabled(context.Background(), r.ID, false); err != nil {
		t.Fatal(err)
	}
	if p := te.clock.Pending(); len(p) != 0 {
		t.Fatalf("timers left after disabling: %v", p)
	}
}

// FuzzNextFire: whatever a stored trigger holds, the scheduler answers an error or an instant
// strictly after the given one and within the search bounds (never a loop, never the past).
func FuzzNextFire(f *testing.F) {
	f.Add("time", "07:00", false, false, 0, 0, "", "Europe/London", 51.5, -0.12, int64(1774828800))
	f.Add("time", "", true, false, -30, 0, "", "Europe/Oslo", 69.65, 18.96, int64(1796083200))
	f.Add("time", "", false, true, 180, 0, "", "Pacific/Honolulu", 21.3, -157.9, int64(1768435200))
	f.Add("periodic", "", false, false, 0, 7, "minutes", "Europe/London", 0.0, 0.0, int64(1774745400))
	f.Add("periodic", "", false, false, 0, 31, "days", "America/New_York", 42.4, -71.1, int64(1790000000))
	f.Add("periodic", "", false, false, 0, 1000, "hours", "UTC", 0.0, 0.0, int64(0))
	f.Fuzz(func(t *testing.T, typ, clock string, rise, set bool, offset, interval int, unit, tz string, lat, lon float64, unix int64) {
		if unix < -1<<40 || unix > 1<<40 || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			return // the hub reports neither
		}
		after := time.Unix(unix, 0)
		s := siteFrom(tz, lat, lon)
		next, err := nextFire(Trigger{Type: typ, Time: clock, Sunrise: rise, Sunset: set, Offset: offset, Interval: interval, Unit: unit}, after, s)
		if err != nil {
			return
		}
		if !next.After(after) || next.Sub(after) > (maxSunSearch+2)*24*time.Hour+time.Duration(max(offset, -offset))*time.Minute {
			t.Fatalf("next %s after %s", next, after)
		}
	})
}

// hubWithoutLogin is a hub behind Hub Security and a client without its login: Maker API works,
// the admin routes (the hub's location among them) do not.
func hubWithoutLogin(t *testing.T) (*simhub.Hub, *hubitat.Client) {
	t.Helper()
	h := simhub.New(simhub.Options{Username: "admin", Password: "pw"})
	url, err := h.Start(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	c, err := hubitat.New(hubitat.Options{URL: url, AppID: h.AppID(), Token: h.Token()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Start(context.Background())
	testkit.Eventually(t, "the cache", func() bool { return c.Cache().Live() })
	return h, c
}

// A hub that does not give its location (Hub Security on, no login configured): clock times
// run in UTC, sun triggers are not armed and say why, and the engine asks again later.
func TestEngineWithoutHubLocation(t *testing.T) {
	t.Parallel()
	h, c := hubWithoutLogin(t)

	start := utc(2026, 6, 1, 6, 0)
	te := startEngine(t, h, c, start)
	r := te.create(Rule{Name: "no location", Triggers: []Trigger{{Type: "time", Time: "07:00"}, {Type: "time", Sunrise: true}},
		Actions: []Action{hubCmd("3", "on")}})
	d := te.diag(r.ID)
	if d.LocationError == "" || !d.Triggers[0].Armed || !d.Triggers[0].Next.Equal(utc(2026, 6, 1, 7, 0)) ||
		d.Triggers[1].Armed || !strings.Contains(d.Triggers[1].Detail, "latitude and longitude") {
		t.Fatalf("diagnostics without a location: %+v", d)
	}
	if p := te.clock.Pending(); !slices.Contains(p, start.Add(siteRetry)) {
		t.Fatalf("no retry of the location among the timers %v", p)
	}
}

// A hub that gives no location (no admin login here) with Home Assistant beside it: schedules
// run in Home Assistant's time zone and sun triggers arm from its coordinates, and diagnostics
// say where they came from. When Home Assistant cannot say either, the error says both.
func TestEngineTakesHomeAssistantsPlace(t *testing.T) {
	t.Parallel()
	h, c := hubWithoutLogin(t)

	start := utc(2026, 6, 1, 6, 0)
	for _, tc := range []struct {
		name  string
		place func(context.Context) (Place, error)
		check func(d Diagnostics) string
	}{
		{"Home Assistant's place", func(context.Context) (Place, error) {
			return Place{TimeZone: "America/New_York", Latitude: 40.7128, Longitude: -74.006}, nil
		}, func(d Diagnostics) string {
			if d.LocationError != "" || !strings.Contains(d.LocationSource, "Home Assistant") || !strings.Contains(d.LocationSource, "could not read the hub's location") {
				return "location"
			}
			if !d.Triggers[0].Next.Equal(utc(2026, 6, 1, 11, 0)) { // 07:00 in New York (EDT)
				return "07:00 in New York"
			}
			if !d.Triggers[1].Armed || d.Triggers[1].Next == nil || d.Triggers[1].Next.UTC().Hour() != 9 { // sunrise about 05:27 EDT
				return "sunrise"
			}
			return ""
		}},
		{"Home Assistant unreachable too", func(context.Context) (Place, error) {
			return Place{}, errors.New("home assistant is not reachable")
		}, func(d Diagnostics) string {
			if !strings.Contains(d.LocationError, "could not read the hub's location") || d.LocationSource != "" || d.Triggers[1].Armed {
				return "location"
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := startEngineWith(t, h, c, openTestStore(t, t.TempDir()), fakeclock.New(start), func(o *Options) { o.HomePlace = tc.place })
			r := te.create(Rule{Name: "place", Triggers: []Trigger{{Type: "time", Time: "07:00"}, {Type: "time", Sunrise: true}},
				Actions: []Action{hubCmd("3", "on")}})
			if d := te.diag(r.ID); tc.check(d) != "" {
				t.Fatalf("%s wrong: %+v %+v", tc.check(d), d.LocationError, d)
			}
		})
	}
}
