package hubitattools

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/redact"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetDebug is the toolset of the Hubitat debug log and bug report.
const SetDebug = "hubitat_debug"

// Components of the debug log, as upstream names them.
const (
	CompServer   = "server"
	CompHubAdmin = "hub-admin"
	CompDevice   = "device"
	CompRule     = "rule"
)

// Log writes one entry to the Hubitat debug log (upstream's mcpLog): a ring buffer of the newest
// hubstore.DebugLogCapacity entries at or above the level set with hubitat_set_log_level, kept in
// hamcp's store. The model reads it back, so message must be free of secrets: never a token, a
// password, a lock code or a command's arguments. A failure to write is dropped: logging never
// fails a call.
func (d Deps) Log(ctx context.Context, level, component, message string) {
	d.LogRule(ctx, level, component, "", message)
}

// LogRule is Log for an entry about one rule (the rule engine's entries). A rule's log action
// and its errors may quote what it saw or sent, so the message is redacted (package redact) here
// as well as where the entries are read.
func (d Deps) LogRule(ctx context.Context, level, component, ruleID, message string) {
	if d.Store == nil {
		return
	}
	_, _ = d.Store.AppendDebugLog(context.WithoutCancel(ctx), hubstore.DebugEntry{Time: d.now(), Level: level,
		Component: component, RuleID: ruleID, Message: redact.Text(message)})
}

func debugTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{getDebugLogs(d), clearDebugLogs(d), setLogLevel(d), getLoggingStatus(d), generateBugReport(d)}
}

// stamp is how the debug tools show a time: RFC 3339 in UTC, "" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

type debugLogsArgs struct {
	Limit     int    `json:"limit,omitempty" jsonschema:"how many of the newest matching entries (default 50, max 200)" validate:"omitempty,min=1,max=200"`
	Level     string `json:"level,omitempty" jsonschema:"only entries of exactly this level (default all)" validate:"omitempty,oneof=debug info warn error all"`
	Component string `json:"component,omitempty" jsonschema:"only entries whose component contains this text, e.g. server, hub-admin, device, rule" validate:"omitempty,max=100"`
	RuleID    string `json:"ruleId,omitempty" jsonschema:"only entries about this rule" validate:"omitempty,max=100"`
}

type debugEntry struct {
	Time      string `json:"time"`
	Level     string `json:"level"`
	Component string `json:"component,omitempty"`
	RuleID    string `json:"ruleId,omitempty"`
	Message   string `json:"message"`
	Details   string `json:"details,omitempty"`
}

type debugLogs struct {
	Entries         []debugEntry `json:"entries"`
	Count           int          `json:"count"`
	TotalStored     int          `json:"totalStored"`
	MaxEntries      int          `json:"maxEntries"`
	CurrentLogLevel string       `json:"currentLogLevel"`
}

func entriesOf(es []hubstore.DebugEntry) []debugEntry {
	out := make([]debugEntry, 0, len(es))
	for _, e := range es {
		out = append(out, debugEntry{Time: stamp(e.Time), Level: e.Level, Component: e.Component, RuleID: e.RuleID,
			Message: redact.Text(e.Message), Details: redact.Text(e.Details)})
	}
	return out
}

func storeError(err error) error {
	return &toolkit.Error{Code: "store_error", Message: "hamcp's store failed: " + err.Error(),
		Hint: "this is a problem with the add-on's /data folder; the add-on log says more"}
}

func getDebugLogs(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[debugLogsArgs, debugLogs]{
		Name: "hubitat_get_debug_logs", Toolset: SetDebug, Title: "Hubitat debug log",
		Description: "Read hamcp's Hubitat debug log: the newest entries (oldest first) of a ring buffer of " +
			fmt.Sprint(hubstore.DebugLogCapacity) + " written by the Hubitat tools and rules, with totals and the current level. " +
			"Filter by level (exact), component (substring: server, hub-admin, device, rule) or ruleId. " +
			"Only entries at or above the level hubitat_get_logging_status shows are kept (default error); " +
			"not the hub's own logs, and not Home Assistant's (ha_get_logs).",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a debugLogsArgs) (debugLogs, error) {
			limit := a.Limit
			if limit == 0 {
				limit = 50
			}
			level := a.Level
			if level == "all" {
				level = ""
			}
			es, err := d.Store.DebugLogs(ctx, hubstore.DebugQuery{Level: level, Component: a.Component, RuleID: a.RuleID, Limit: limit})
			if err != nil {
				return debugLogs{}, storeError(err)
			}
			st, err := d.Store.DebugLogStatus(ctx)
			if err != nil {
				return debugLogs{}, storeError(err)
			}
			return debugLogs{Entries: entriesOf(es), Count: len(es), TotalStored: st.Total, MaxEntries: st.Capacity, CurrentLogLevel: st.Level}, nil
		},
	})
}

type cleared struct {
	Success      bool `json:"success"`
	ClearedCount int  `json:"clearedCount"`
}

func clearDebugLogs(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, cleared]{
		Name: "hubitat_clear_debug_logs", Toolset: SetDebug, Title: "Clear the Hubitat debug log",
		Description: "Empty hamcp's Hubitat debug log and say how many entries it held. Read what you need with " +
			"hubitat_get_debug_logs first: the entries are gone for good. Changes nothing on the hub.",
		Destructive: true, Idempotent: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (cleared, error) {
			n, err := d.Store.ClearDebugLogs(ctx)
			if err != nil {
				return cleared{}, storeError(err)
			}
			d.Log(ctx, "info", CompServer, fmt.Sprintf("Debug logs cleared (%d entries removed)", n))
			return cleared{Success: true, ClearedCount: n}, nil
		},
	})
}

type setLogLevelArgs struct {
	Level string `json:"level" jsonschema:"the lowest level kept from now on" validate:"required,oneof=debug info warn error"`
}

type levelChange struct {
	Success       bool   `json:"success"`
	PreviousLevel string `json:"previousLevel"`
	NewLevel      string `json:"newLevel"`
}

func setLogLevel(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[setLogLevelArgs, levelChange]{
		Name: "hubitat_set_log_level", Toolset: SetDebug, Title: "Set the Hubitat debug log level",
		Description: "Set the lowest level hamcp's Hubitat debug log keeps: debug (everything), info, warn or error " +
			"(the default). Raise it back to error when done: with debug the " + fmt.Sprint(hubstore.DebugLogCapacity) +
			"-entry buffer fills quickly and pushes out older errors. Not the add-on's log_level option.",
		Idempotent: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a setLogLevelArgs) (levelChange, error) {
			prev, err := d.Store.DebugLogLevel(ctx)
			if err != nil {
				return levelChange{}, storeError(err)
			}
			// Logged under the lower of the two levels, so neither raising nor lowering hides it.
			note := fmt.Sprintf("Log level changed from %s to: %s", prev, a.Level)
			lowering := hubstore.DebugLevelRank(a.Level) < hubstore.DebugLevelRank(prev)
			if !lowering {
				d.Log(ctx, "info", CompServer, note)
			}
			if prev, err = d.Store.SetDebugLogLevel(ctx, a.Level); err != nil {
				return levelChange{}, storeError(err)
			}
			if lowering {
				d.Log(ctx, "info", CompServer, note)
			}
			return levelChange{Success: true, PreviousLevel: prev, NewLevel: a.Level}, nil
		},
	})
}

type loggingStatus struct {
	Version         string         `json:"version"`
	CurrentLogLevel string         `json:"currentLogLevel"`
	AvailableLevels []string       `json:"availableLevels"`
	TotalEntries    int            `json:"totalEntries"`
	MaxEntries      int            `json:"maxEntries"`
	EntriesByLevel  map[string]int `json:"entriesByLevel"`
	OldestEntry     string         `json:"oldestEntry,omitempty"`
	NewestEntry     string         `json:"newestEntry,omitempty"`
}

func getLoggingStatus(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, loggingStatus]{
		Name: "hubitat_get_logging_status", Toolset: SetDebug, Title: "Hubitat debug log status",
		Description: "The Hubitat debug log's level, how many entries it holds per level and at most, and the times of " +
			"its oldest and newest entries. Cheap; call hubitat_get_debug_logs for the entries themselves.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (loggingStatus, error) {
			st, err := d.Store.DebugLogStatus(ctx)
			if err != nil {
				return loggingStatus{}, storeError(err)
			}
			return loggingStatus{Version: d.Version, CurrentLogLevel: st.Level, AvailableLevels: hubstore.DebugLevels,
				TotalEntries: st.Total, MaxEntries: st.Capacity, EntriesByLevel: st.ByLevel,
				OldestEntry: stamp(st.Oldest), NewestEntry: stamp(st.Newest)}, nil
		},
	})
}

// IssuesURL is where hamcp's bugs are reported: a report is about hamcp's code, not the Groovy app
// whose tools it reproduces.
const IssuesURL = "https://github.com/hamcp/hamcp/issues/new"

// maxTitle is the longest title a report takes (bugReportArgs.Title's max).
const maxTitle = 200

// maxPrefillURL keeps the prefilled new-issue link under the length browsers and GitHub accept.
const maxPrefillURL = 7000

type bugReportArgs struct {
	Title            string `json:"title" jsonschema:"one line saying what went wrong" validate:"required,max=200"`
	Expected         string `json:"expected" jsonschema:"what should have happened" validate:"required,max=4000"`
	Actual           string `json:"actual" jsonschema:"what happened instead, with the error text" validate:"required,max=4000"`
	StepsToReproduce string `json:"stepsToReproduce,omitempty" jsonschema:"the tool calls or actions that lead to it" validate:"omitempty,max=4000"`
	RuleID           string `json:"ruleId,omitempty" jsonschema:"the rule involved, if any: its debug log entries are added" validate:"omitempty,max=100"`
}

type bugReport struct {
	Success      bool   `json:"success"`
	Report       string `json:"report"`
	SubmitURL    string `json:"submitUrl"`
	PrefilledURL string `json:"prefilledUrl"`
	Instructions string `json:"instructions"`
}

func generateBugReport(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[bugReportArgs, bugReport]{
		Name: "hubitat_generate_bug_report", Toolset: SetDebug, Title: "Hubitat bug report",
		Description: "Write a bug report about hamcp's Hubitat tools as a Markdown issue body: environment (versions, hub model " +
			"and firmware when the hub answers, options), your description, and the last 10 warn/error entries of the " +
			"debug log; plus the GitHub new-issue link. hamcp sends nothing anywhere: show the report to the user, who " +
			"reads it for anything private and submits it. Only when the user wants to report a bug, not for device problems.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a bugReportArgs) (bugReport, error) {
			body, err := d.bugReport(ctx, a)
			if err != nil {
				return bugReport{}, err
			}
			return bugReport{Success: true, Report: body, SubmitURL: IssuesURL, PrefilledURL: prefilled(a.Title, body),
				Instructions: "Show the report to the user. They open prefilledUrl (or submitUrl and paste the report), " +
					"check it holds nothing private, add screenshots or context, and submit it themselves."}, nil
		},
	})
}

func (d Deps) bugReport(ctx context.Context, a bugReportArgs) (string, error) {
	level, err := d.Store.DebugLogLevel(ctx)
	if err != nil {
		return "", storeError(err)
	}
	logs, err := d.Store.DebugLogs(ctx, hubstore.DebugQuery{})
	if err != nil {
		return "", storeError(err)
	}
	var recent []string
	for _, e := range logs {
		if e.Level == "warn" || e.Level == "error" {
			line := fmt.Sprintf("[%s] %s: %s", stamp(e.Time), strings.ToUpper(e.Level), redact.Text(e.Message))
			if e.RuleID != "" {
				line += " (Rule: " + e.RuleID + ")"
			}
			recent = append(recent, line)
		}
	}
	recent = recent[max(0, len(recent)-10):]

	firmware, model, tz := "unknown (hub not reachable)", "unknown", "unknown"
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if info, err := d.Hub.HubInfo(hctx); err == nil {
		firmware, model, tz = info.Firmware, info.Model, info.TimeZone
	}
	st := d.Hub.Status()
	var b strings.Builder
	fmt.Fprintf(&b, "# Bug Report: %s\n\n**Generated:** %s\n**hamcp Version:** %s\n\n", oneLine(a.Title), stamp(d.now()), d.Version)
	fmt.Fprintf(&b, "## Environment\n- **Hub Model:** %s\n- **Hub Firmware:** %s\n- **Time Zone:** %s\n", model, firmware, tz)
	fmt.Fprintf(&b, "- **Live events:** %s (%s)\n- **Devices in cache:** %d\n", st.Link, orNone(st.Via), st.Devices)
	fmt.Fprintf(&b, "- **Hub admin read / write:** %v / %v\n- **Current Log Level:** %s\n\n", d.AdminRead, d.AdminWrite, level)
	fmt.Fprintf(&b, "## Bug Description\n\n### Expected Behavior\n%s\n\n### Actual Behavior\n%s\n\n", a.Expected, a.Actual)
	if a.StepsToReproduce != "" {
		fmt.Fprintf(&b, "### Steps to Reproduce\n%s\n\n", a.StepsToReproduce)
	}
	if a.RuleID != "" {
		ruleLogs, err := d.Store.DebugLogs(ctx, hubstore.DebugQuery{RuleID: a.RuleID, Limit: 10})
		if err != nil {
			return "", storeError(err)
		}
		fmt.Fprintf(&b, "## Related Rule\n- **Rule ID:** %s\n- **Debug log entries:** %d\n", oneLine(a.RuleID), len(ruleLogs))
		for _, e := range ruleLogs {
			fmt.Fprintf(&b, "  - [%s] %s: %s\n", stamp(e.Time), strings.ToUpper(e.Level), redact.Text(e.Message))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Recent Error/Warning Logs\n")
	if len(recent) > 0 {
		b.WriteString("```\n" + strings.Join(recent, "\n") + "\n```\n")
	} else {
		b.WriteString("_No recent errors logged_\n")
	}
	b.WriteString("\n## Additional Context\n_Add any other context about the problem here._\n")
	return b.String(), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// prefilled is the new-issue link with the title and as much of the body as fits.
func prefilled(title, body string) string {
	// A run of bytes that are not UTF-8 becomes one U+FFFD up front: cutting by runes below would
	// otherwise turn each such byte into its own replacement character, and the link would carry
	// something that is not a prefix of the report (found by FuzzBugReportLink).
	body = strings.ToValidUTF8(body, "\uFFFD")
	// The title is cut to the tool's own bound here too, so the link's length never depends on
	// it (found by FuzzBugReportLink).
	t := []rune(oneLine(strings.ToValidUTF8(title, "\uFFFD")))
	base := IssuesURL + "?title=" + url.QueryEscape("[Hubitat] "+string(t[:min(len(t), maxTitle)])) + "&body="
	q := url.QueryEscape(body)
	if len(base)+len(q) <= maxPrefillURL {
		return base + q
	}
	note := "\n\n_(cut to fit the link: paste the full report from hamcp)_"
	runes := []rune(body)
	runes = runes[:min(len(runes), maxPrefillURL)] // every character escapes to at least one byte
	lo, hi := 0, len(runes)
	for lo < hi { // the longest prefix whose escaped form fits
		mid := (lo + hi + 1) / 2
		if len(base)+len(url.QueryEscape(string(runes[:mid])+note)) <= maxPrefillURL {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return base + url.QueryEscape(string(runes[:lo])+note)
}
