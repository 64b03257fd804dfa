package hubitattools_test

import (
	"context"
	"strings"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

// hamcp's rules stop while the add-on is down: hubitat_create_rule and hubitat_update_rule say
// so, and hubitat_get_rule_diagnostics says when hamcp last ran, how long it was down, the last
// hub event it saw, and what became of a time trigger that fell meanwhile.
func TestRuleToolsTellOfDowntime(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Location: simhub.Location{Name: "Greenwich", Latitude: 51.48, TimeZone: "UTC", TemperatureScale: "C"}}, hubitat.Options{})
	st := privateStore(t)
	day := func(hh, mm int) time.Time { return time.Date(2026, 5, 4, hh, mm, 0, 0, time.UTC) }

	// The first run of the add-on: rules for 07:00 and 06:52, made through the tools, which say
	// that rules do not run while the add-on is down.
	first := startRulesEngine(t, c, st, day(6, 50))
	s := served(withClient(c), func(d *hubitattools.Deps) { d.Rules = first }).Session(t)
	var saved struct {
		RuleID       string `json:"ruleId"`
		Availability string `json:"availability"`
	}
	s.OK(t, "hubitat_create_rule", obj("name", "Porch at seven", "triggers", list(obj("type", "time", "time", "07:00")),
		"actions", list(obj("type", "device_command", "deviceId", "3", "command", "on"))), &saved)
	if !strings.Contains(saved.Availability, "not on the hub") || !strings.Contains(saved.Availability, "15 minutes") {
		t.Fatalf("create says %q", saved.Availability)
	}
	porch := saved.RuleID
	s.OK(t, "hubitat_create_rule", obj("name", "Hall at 06:52", "triggers", list(obj("type", "time", "time", "06:52")),
		"actions", list(obj("type", "device_command", "deviceId", "2", "command", "on"))), &saved)
	hall := saved.RuleID
	var updated struct {
		Availability string `json:"availability"`
	}
	s.OK(t, "hubitat_update_rule", obj("ruleId", hall, "description", "early"), &updated)
	if updated.Availability != rules.AvailabilityNote {
		t.Fatalf("update says %q", updated.Availability)
	}
	if err := h.SetAttribute(13, "motion", "active", false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the engine to see the event", func() bool { return first.Availability().LastSeenEvent != nil })
	if err := first.Close(); err != nil { // the add-on stops at 06:50
		t.Fatal(err)
	}

	// It comes back at 07:10: 07:00 is 10 minutes late and runs once; 06:52 is 18 minutes late
	// and is skipped.
	second := startRulesEngine(t, c, st, day(7, 10))
	s = served(withClient(c), func(d *hubitattools.Deps) { d.Rules = second }).Session(t)
	var diag rules.Diagnostics
	testkit.Eventually(t, "the missed 07:00 run", func() bool {
		s.OK(t, "hubitat_get_rule_diagnostics", obj("ruleId", porch), &diag)
		return diag.Rule.ExecutionCount == 1 && !diag.Running
	})
	a := diag.Availability
	if a.DownFor != "20m" || a.PreviousStop == nil || !a.PreviousStop.Equal(day(6, 50)) || !a.RunningSince.Equal(day(7, 10)) || a.LastSeenEvent == nil {
		t.Fatalf("availability %+v", a)
	}
	if len(diag.Notes) != 1 || !strings.Contains(diag.Notes[0], "ran once at start, 10m late") {
		t.Fatalf("porch notes %q", diag.Notes)
	}
	s.OK(t, "hubitat_get_rule_diagnostics", obj("ruleId", hall), &diag)
	if diag.Rule.ExecutionCount != 0 || len(diag.Notes) != 1 || !strings.Contains(diag.Notes[0], "skipped: 18m late") {
		t.Fatalf("hall: %d runs, notes %q", diag.Rule.ExecutionCount, diag.Notes)
	}
}

func startRulesEngine(t *testing.T, c *hubitat.Client, st *hubstore.Store, at time.Time) *rules.Engine {
	t.Helper()
	e := rules.New(rules.Options{Hub: c, Store: st, ServerVersion: testVersion, Clock: fakeclock.New(at)})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
