package hubitattools_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

type logEntry struct {
	Time      string `json:"time"`
	Level     string `json:"level"`
	Component string `json:"component"`
	RuleID    string `json:"ruleId"`
	Message   string `json:"message"`
}

type logsOut struct {
	Entries         []logEntry `json:"entries"`
	Count           int        `json:"count"`
	TotalStored     int        `json:"totalStored"`
	MaxEntries      int        `json:"maxEntries"`
	CurrentLogLevel string     `json:"currentLogLevel"`
}

// TestDebugLogTools drives the level, the ring buffer's filters, the status and clearing through
// the tools, with entries written by other tools (hub admin) and by the Log API the rule engine uses.
func TestDebugLogTools(t *testing.T) {
	t.Parallel()
	st := privateStore(t)
	deps := defaultDeps()
	deps.Store = st
	s := served(withStore(st), withAdmin(true, false)).Session(t)

	var status struct {
		CurrentLogLevel string         `json:"currentLogLevel"`
		AvailableLevels []string       `json:"availableLevels"`
		TotalEntries    int            `json:"totalEntries"`
		MaxEntries      int            `json:"maxEntries"`
		EntriesByLevel  map[string]int `json:"entriesByLevel"`
		OldestEntry     string         `json:"oldestEntry"`
		Version         string         `json:"version"`
	}
	s.OK(t, "hubitat_get_logging_status", nil, &status)
	if status.CurrentLogLevel != "error" || status.TotalEntries != 0 || status.MaxEntries != 100 || len(status.AvailableLevels) != 4 || status.Version != testVersion {
		t.Fatalf("fresh status %+v", status)
	}
	// At the default level, info is not kept.
	s.OK(t, "hubitat_get_hub_health", nil, nil)
	var change struct{ PreviousLevel, NewLevel string }
	s.OK(t, "hubitat_set_log_level", map[string]any{"level": "debug"}, &change)
	if change.PreviousLevel != "error" || change.NewLevel != "debug" {
		t.Fatalf("level change %+v", change)
	}
	s.OK(t, "hubitat_get_hub_health", nil, nil) // logs info "Hub health check completed"
	ctx := context.Background()
	for i := range 3 {
		deps.LogRule(ctx, "warn", hubitattools.CompRule, "42", fmt.Sprintf("rule 42 step %d", i))
	}
	deps.LogRule(ctx, "error", hubitattools.CompRule, "7", "rule 7 failed")

	cases := []struct {
		name  string
		args  map[string]any
		count int
		last  string
	}{
		{"all", nil, 6, "rule 7 failed"},
		{"level exact", map[string]any{"level": "warn"}, 3, "rule 42 step 2"},
		{"level all", map[string]any{"level": "all"}, 6, "rule 7 failed"},
		{"server", map[string]any{"component": "server"}, 1, "Log level changed from error to: debug"},
		{"component substring", map[string]any{"component": "admin"}, 1, "Hub health check completed"},
		{"rule", map[string]any{"ruleId": "42", "limit": 2}, 2, "rule 42 step 2"},
		{"nothing", map[string]any{"component": "zigbee"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out logsOut
			s.OK(t, "hubitat_get_debug_logs", c.args, &out)
			if out.Count != c.count || len(out.Entries) != c.count || out.TotalStored != 6 || out.CurrentLogLevel != "debug" ||
				c.count > 0 && out.Entries[c.count-1].Message != c.last {
				t.Errorf("got %+v", out)
			}
		})
	}
	for _, e := range []tooltest.ErrCase{
		{Tool: "hubitat_get_debug_logs", Args: map[string]any{"limit": 201}, Code: "invalid_argument", Field: "limit", Contains: "200"},
		{Tool: "hubitat_get_debug_logs", Args: map[string]any{"level": "fatal"}, Code: "invalid_argument", Field: "level", Contains: "debug, info, warn, error, all"},
		{Tool: "hubitat_set_log_level", Args: map[string]any{"level": "all"}, Code: "invalid_argument", Field: "level"},
		{Tool: "hubitat_set_log_level", Args: map[string]any{}, Code: "invalid_argument", Field: "level", Contains: "required"},
	} {
		e.Check(t, s)
	}
	s.OK(t, "hubitat_get_logging_status", nil, &status)
	if status.TotalEntries != 6 || status.EntriesByLevel["warn"] != 3 || status.EntriesByLevel["info"] != 2 || status.OldestEntry == "" {
		t.Fatalf("status %+v", status)
	}
	var cl struct{ ClearedCount int }
	s.OK(t, "hubitat_clear_debug_logs", nil, &cl)
	if cl.ClearedCount != 6 {
		t.Fatalf("cleared %d", cl.ClearedCount)
	}
	var out logsOut
	s.OK(t, "hubitat_get_debug_logs", nil, &out)
	if out.Count != 1 || !strings.Contains(out.Entries[0].Message, "cleared (6 entries removed)") {
		t.Fatalf("after clear: %+v", out)
	}
	// The default limit is 50 of the newest.
	for i := range 80 {
		deps.Log(ctx, "error", hubitattools.CompServer, fmt.Sprintf("e%d", i))
	}
	s.OK(t, "hubitat_get_debug_logs", nil, &out)
	if out.Count != 50 || out.Entries[49].Message != "e79" || out.Entries[0].Message != "e30" || out.TotalStored != 81 {
		t.Fatalf("default limit: count %d, first %s, total %d", out.Count, out.Entries[0].Message, out.TotalStored)
	}
}

// TestGenerateBugReport: a Markdown report with the environment, the user's text and the last 10
// warn/error entries, and links to hamcp's issue tracker; nothing is sent anywhere.
func TestGenerateBugReport(t *testing.T) {
	t.Parallel()
	st := privateStore(t)
	deps := defaultDeps()
	deps.Store = st
	ctx := context.Background()
	for i := range 14 {
		deps.LogRule(ctx, "error", hubitattools.CompRule, "9", fmt.Sprintf("failure %d", i))
	}
	s := served(withStore(st)).Session(t)
	var r struct {
		Success      bool   `json:"success"`
		Report       string `json:"report"`
		SubmitURL    string `json:"submitUrl"`
		PrefilledURL string `json:"prefilledUrl"`
	}
	s.OK(t, "hubitat_generate_bug_report", map[string]any{"title": "Porch light  ignores\nrules", "expected": "light on at sunset",
		"actual": "nothing happens", "stepsToReproduce": "1. create a rule", "ruleId": "9"}, &r)
	for _, want := range []string{"# Bug Report: Porch light ignores rules", "**hamcp Version:** " + testVersion, "2.4.1.177", "C-8 Pro",
		"### Expected Behavior\nlight on at sunset", "### Steps to Reproduce\n1. create a rule", "**Rule ID:** 9", "failure 13", "Hub admin read / write:** false / false"} {
		if !strings.Contains(r.Report, want) {
			t.Errorf("report lacks %q:\n%s", want, r.Report)
		}
	}
	recent := r.Report[strings.Index(r.Report, "## Recent Error/Warning Logs"):]
	if strings.Contains(recent, "failure 3]") || strings.Contains(recent, "failure 3\n") || !strings.Contains(recent, "failure 4") {
		t.Errorf("not the last 10 warn/error entries:\n%s", recent)
	}
	if r.SubmitURL != hubitattools.IssuesURL || !strings.HasPrefix(r.PrefilledURL, hubitattools.IssuesURL+"?") {
		t.Errorf("links %s %s", r.SubmitURL, r.PrefilledURL)
	}
	u, err := url.Parse(r.PrefilledURL)
	if err != nil || u.Query().Get("body") != r.Report || u.Query().Get("title") != "[Hubitat] Porch light ignores rules" {
		t.Errorf("prefilled link does not carry the report: %v", err)
	}
	if strings.Contains(r.Report+r.PrefilledURL, hubPassword) || strings.Contains(r.Report+r.PrefilledURL, hub.Token()) {
		t.Error("the report holds a secret")
	}
	// A long report still gives a link of bounded length.
	long := strings.Repeat("ü and more text ", 250)
	s.OK(t, "hubitat_generate_bug_report", map[string]any{"title": "long", "expected": long, "actual": long, "stepsToReproduce": long}, &r)
	if len(r.PrefilledURL) > 7000 || !strings.Contains(r.Report, long) {
		t.Errorf("long report: link %d bytes", len(r.PrefilledURL))
	}
	if u, err := url.Parse(r.PrefilledURL); err != nil || !strings.Contains(u.Query().Get("body"), "cut to fit") {
		t.Errorf("cut link: %v", err)
	}
	for _, e := range []tooltest.ErrCase{
		{Tool: "hubitat_generate_bug_report", Args: map[string]any{"expected": "x", "actual": "y"}, Code: "invalid_argument", Field: "title"},
		{Tool: "hubitat_generate_bug_report", Args: map[string]any{"title": "t", "actual": "y"}, Code: "invalid_argument", Field: "expected"},
		{Tool: "hubitat_generate_bug_report", Args: map[string]any{"title": strings.Repeat("t", 201), "expected": "x", "actual": "y"}, Code: "invalid_argument", Field: "title"},
	} {
		e.Check(t, s)
	}
}

// TestDebugLogSurvivesRestart: the ring buffer and its level live in hamcp's store, not in memory.
func TestDebugLogSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/hamcp.db"
	st, hs := openHubStore(t, path)
	served(withStore(hs)).Session(t).OK(t, "hubitat_set_log_level", map[string]any{"level": "info"}, nil)
	st.Close()
	st2, hs2 := openHubStore(t, path)
	t.Cleanup(func() { st2.Close() })
	var out logsOut
	served(withStore(hs2)).Session(t).OK(t, "hubitat_get_debug_logs", nil, &out)
	if out.CurrentLogLevel != "info" || out.Count != 1 || !strings.Contains(out.Entries[0].Message, "Log level changed from error to: info") {
		t.Fatalf("after reopen %+v", out)
	}
	if _, err := time.Parse(time.RFC3339, out.Entries[0].Time); err != nil {
		t.Errorf("entry time %q: %v", out.Entries[0].Time, err)
	}
}
