package rules

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
)

// A hub in UTC, so a rule's "07:00" is 07:00 on the fake clock.
func utcHub(t *testing.T) (*simhub.Hub, *hubitat.Client) {
	return ownHub(t, simhub.Options{Location: simhub.Location{Name: "Greenwich", Latitude: 51.48, Longitude: 0, TimeZone: "UTC", TemperatureScale: "C"}})
}

// restart stops te and starts a new engine on the same store at `at`, as the add-on coming back.
func restart(t *testing.T, te *testEngine, at time.Time) *testEngine {
	t.Helper()
	if err := te.Close(); err != nil {
		t.Fatal(err)
	}
	return startEngineOn(t, te.sim, te.hub, te.st, fakeclock.New(at))
}

func sevenAM(te *testEngine) Rule {
	return te.create(Rule{Name: "porch at seven", Triggers: []Trigger{{Type: "time", Time: "07:00"}}, Actions: []Action{hubCmd("3", "on")}})
}

func notesContain(d Diagnostics, s string) bool {
	for _, n := range d.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Down from 06:55 to 07:10: the 07:00 trigger runs once at start, and a second restart does not
// run it again.
func TestMissedTimeTriggerRunsOnceWithinTheWindow(t *testing.T) {
	t.Parallel()
	h, c := utcHub(t)
	te := startEngineOn(t, h, c, openTestStore(t, t.TempDir()), fakeclock.New(utc(2026, 5, 4, 6, 50)))
	r := sevenAM(te)
	te.clock.Set(utc(2026, 5, 4, 6, 55))
	if err := h.SetAttribute(13, "motion", "active", false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the event to be seen", func() bool { return te.Availability().LastSeenEvent != nil })

	te = restart(t, te, utc(2026, 5, 4, 7, 10))
	d := te.idle(r.ID)
	testkit.Eventually(t, "the missed run", func() bool { d = te.idle(r.ID); return d.Rule.ExecutionCount == 1 })
	if !notesContain(d, "ran once at start, 10m late") {
		t.Fatalf("notes %q", d.Notes)
	}
	a := d.Availability
	if a.PreviousStop == nil || !a.PreviousStop.Equal(utc(2026, 5, 4, 6, 55)) || a.DownFor != "15m" || a.LastSeenEvent == nil || !strings.Contains(a.Note, "not on the hub") {
		t.Fatalf("availability %+v", a)
	}
	if v, _ := h.Attribute(3, "switch"); v != "on" {
		t.Fatalf("the porch light is %q", v)
	}

	te = restart(t, te, utc(2026, 5, 4, 7, 12))
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 1 || notesContain(d, "ran once") {
		t.Fatalf("ran again after a second restart: %d runs, notes %q", d.Rule.ExecutionCount, d.Notes)
	}
	// The schedule goes on: tomorrow's 07:00 runs as usual.
	te.clock.AdvanceTo(utc(2026, 5, 5, 7, 0))
	testkit.Eventually(t, "tomorrow's run", func() bool { return te.idle(r.ID).Rule.ExecutionCount == 2 })
}

// Down from 06:55 to 10:00: the 07:00 trigger is three hours late and is skipped, and said so.
func TestMissedTimeTriggerSkippedWhenLate(t *testing.T) {
	t.Parallel()
	h, c := utcHub(t)
	te := startEngineOn(t, h, c, openTestStore(t, t.TempDir()), fakeclock.New(utc(2026, 5, 4, 6, 50)))
	r := sevenAM(te)
	te.clock.Set(utc(2026, 5, 4, 6, 55))
	te = restart(t, te, utc(2026, 5, 4, 10, 0))
	d := te.idle(r.ID)
	if d.Rule.ExecutionCount != 0 || !notesContain(d, "was skipped: 3h late, more than 15m") {
		t.Fatalf("%d runs, notes %q", d.Rule.ExecutionCount, d.Notes)
	}
	if d.Availability.DownFor != "3h5m" {
		t.Fatalf("availability %+v", d.Availability)
	}
	if v, _ := h.Attribute(3, "switch"); v == "on" {
		t.Fatal("the porch light came on three hours late")
	}
}

// hamcp fired 07:00 and then died before its next heartbeat (the last one at 06:59): the
// restart at 07:03 sees 07:00 inside the downtime, but it has run, so it does not run again.
func TestFiredTimeTriggerNotRunAgainAfterACrash(t *testing.T) {
	t.Parallel()
	h, c := utcHub(t)
	st := openTestStore(t, t.TempDir())
	te := startEngineOn(t, h, c, st, fakeclock.New(utc(2026, 5, 4, 6, 59)))
	r := sevenAM(te)
	te.clock.AdvanceTo(utc(2026, 5, 4, 7, 0))
	testkit.Eventually(t, "the 07:00 run", func() bool { return te.idle(r.ID).Rule.ExecutionCount == 1 })
	if err := te.Close(); err != nil {
		t.Fatal(err)
	}
	setHeartbeat(t, st, utc(2026, 5, 4, 6, 59)) // the crash: no heartbeat after the firing

	te = startEngineOn(t, h, c, st, fakeclock.New(utc(2026, 5, 4, 7, 3)))
	if d := te.idle(r.ID); d.Rule.ExecutionCount != 1 || len(d.Notes) != 0 {
		t.Fatalf("ran twice: %d runs, notes %q", d.Rule.ExecutionCount, d.Notes)
	}
}

// A periodic trigger's missed runs are noted, not made up.
func TestMissedPeriodicRunsAreNotedOnly(t *testing.T) {
	t.Parallel()
	h, c := utcHub(t)
	te := startEngineOn(t, h, c, openTestStore(t, t.TempDir()), fakeclock.New(utc(2026, 5, 4, 6, 50)))
	r := te.create(Rule{Name: "every 15", Triggers: []Trigger{{Type: "periodic", Interval: 15, Unit: "minutes"}}, Actions: []Action{hubCmd("3", "on")}})
	te.clock.Set(utc(2026, 5, 4, 6, 55))
	te = restart(t, te, utc(2026, 5, 4, 8, 5))
	d := te.idle(r.ID)
	if d.Rule.ExecutionCount != 0 || !notesContain(d, "missed 5 run(s)") {
		t.Fatalf("%d runs, notes %q", d.Rule.ExecutionCount, d.Notes)
	}
}

// The first start knows no downtime, and runs nothing it did not schedule.
func TestFirstStartHasNoDowntime(t *testing.T) {
	t.Parallel()
	h, c := utcHub(t)
	te := startEngineOn(t, h, c, openTestStore(t, t.TempDir()), fakeclock.New(utc(2026, 5, 4, 7, 5)))
	r := sevenAM(te)
	d := te.idle(r.ID)
	if d.Availability.PreviousStop != nil || d.Availability.DownFor != "" || d.Rule.ExecutionCount != 0 || !d.Availability.RunningSince.Equal(utc(2026, 5, 4, 7, 5)) {
		t.Fatalf("%+v, %d runs", d.Availability, d.Rule.ExecutionCount)
	}
}

func TestRoundDur(t *testing.T) {
	for d, want := range map[time.Duration]string{30 * time.Second: "30s", 5 * time.Minute: "5m", time.Hour: "1h",
		3*time.Hour + 5*time.Minute: "3h5m", 90 * time.Second: "1m30s", -time.Second: "0s"} {
		if got := roundDur(d); got != want {
			t.Errorf("roundDur(%s) = %q, want %q", d, got, want)
		}
	}
}

func setHeartbeat(t *testing.T, st *hubstore.Store, at time.Time) {
	t.Helper()
	if _, err := st.DB().ExecContext(context.Background(), `UPDATE hubitat_settings SET value = ? WHERE key = ?`,
		strconv.FormatInt(at.UnixMilli(), 10), keyHeartbeat); err != nil {
		t.Fatal(err)
	}
}
