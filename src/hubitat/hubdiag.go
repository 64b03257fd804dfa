package hubitat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// MemoryPoint is one row of /hub/advanced/freeOSMemoryHistory (upstream: mcp-diagnostics-lib
// toolGetMemoryHistory), CSV "Date/time,Free OS,5m CPU avg,Total Java,Free Java,Direct Java",
// oldest first; the last three columns are missing on older firmware.
type MemoryPoint struct {
	Time         string   `json:"time"` // as the hub wrote it, in its own time zone
	FreeMemoryKB int64    `json:"freeMemoryKB"`
	CPULoad5m    *float64 `json:"cpuLoad5m,omitempty"`
	TotalJavaKB  *int64   `json:"totalJavaKB,omitempty"`
	FreeJavaKB   *int64   `json:"freeJavaKB,omitempty"`
	DirectJavaKB *int64   `json:"directJavaKB,omitempty"`
}

// MemoryHistory reads the hub's memory and CPU history, oldest first.
func (c *Client) MemoryHistory(ctx context.Context) ([]MemoryPoint, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/hub/advanced/freeOSMemoryHistory", nil)
	if err != nil {
		return nil, err
	}
	return ParseMemoryHistory(r.Text), nil
}

// ParseMemoryHistory reads the CSV; the header and rows whose memory is not a number are skipped.
func ParseMemoryHistory(text string) []MemoryPoint {
	out := []MemoryPoint{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) < 3 {
			continue
		}
		mem, err := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 64)
		if err != nil {
			continue
		}
		p := MemoryPoint{Time: strings.TrimSpace(f[0]), FreeMemoryKB: mem}
		if v, err := strconv.ParseFloat(strings.TrimSpace(f[2]), 64); err == nil && v == v && v < 1e9 && v > -1e9 {
			p.CPULoad5m = &v
		}
		if len(f) >= 6 {
			p.TotalJavaKB, p.FreeJavaKB, p.DirectJavaKB = intField(f[3]), intField(f[4]), intField(f[5])
		}
		out = append(out, p)
	}
	return out
}

func intField(s string) *int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

// RuntimeStat is one device's or app's line of the hub's Runtime Stats page.
type RuntimeStat struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Count         int64    `json:"count"`
	PctBusy       float64  `json:"pctBusy"`
	TotalMS       float64  `json:"totalMs"`
	AverageMS     *float64 `json:"averageMs,omitempty"`
	StateSize     int64    `json:"stateSize"`
	Events        *int64   `json:"events,omitempty"`
	States        *int64   `json:"states,omitempty"`
	HubActions    *int64   `json:"hubActions,omitempty"`
	PendingEvents *int64   `json:"pendingEvents,omitempty"`
	CloudCalls    *int64   `json:"cloudCalls,omitempty"`
	LargeState    bool     `json:"largeState,omitempty"`
}

// Job is one scheduled or running job on the hub.
type Job struct {
	ID        string `json:"id"`
	Name      string `json:"name"` // the app or device that scheduled it
	Method    string `json:"method"`
	NextRun   string `json:"nextRun,omitempty"`
	Recurring bool   `json:"recurring,omitempty"`
}

// RuntimeStats is /logs/json (upstream: mcp-diagnostics-lib fetchLogsJson, read by
// toolGetPerformanceStats and toolGetHubJobs): device and app statistics and the job lists.
type RuntimeStats struct {
	Uptime          string        `json:"uptime,omitempty"`
	DevicesRuntime  float64       `json:"devicesRuntimeMs"`
	DevicePct       float64       `json:"devicePctOfUptime"`
	AppsRuntime     float64       `json:"appsRuntimeMs"`
	AppPct          float64       `json:"appPctOfUptime"`
	Devices         []RuntimeStat `json:"-"`
	Apps            []RuntimeStat `json:"-"`
	ScheduledJobs   []Job         `json:"-"`
	RunningJobs     []Job         `json:"-"`
	HubActionsCount int           `json:"hubActions"`
}

// RuntimeStats reads /logs/json.
func (c *Client) RuntimeStats(ctx context.Context) (RuntimeStats, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/logs/json", nil)
	if err != nil {
		return RuntimeStats{}, err
	}
	return ParseRuntimeStats(r.Body)
}

type wireStat struct {
	ID               json.RawMessage `json:"id"`
	Name             string          `json:"name"`
	Count            json.RawMessage `json:"count"`
	Pct              json.RawMessage `json:"pct"`
	Total            json.RawMessage `json:"total"`
	Average          json.RawMessage `json:"average"`
	StateSize        json.RawMessage `json:"stateSize"`
	LargeState       bool            `json:"largeState"`
	HubActionCount   json.RawMessage `json:"hubActionCount"`
	PendingEvents    json.RawMessage `json:"pendingEventsCount"`
	CloudCallCount   json.RawMessage `json:"cloudCallCount"`
	CustomAttributes struct {
		EventsCount json.RawMessage `json:"eventsCount"`
		StatesCount json.RawMessage `json:"statesCount"`
	} `json:"customAttributes"`
}

type wireJob struct {
	ID         json.RawMessage `json:"id"`
	Name       string          `json:"name"`
	MethodName string          `json:"methodName"`
	NextRun    json.RawMessage `json:"nextRun"`
	Recurring  bool            `json:"recurring"`
}

// ParseRuntimeStats reads a /logs/json reply; numbers may come as numbers or strings.
func ParseRuntimeStats(b []byte) (RuntimeStats, error) {
	var w struct {
		Uptime              json.RawMessage   `json:"uptime"`
		TotalDevicesRuntime json.RawMessage   `json:"totalDevicesRuntime"`
		DevicePct           json.RawMessage   `json:"devicePct"`
		TotalAppsRuntime    json.RawMessage   `json:"totalAppsRuntime"`
		AppPct              json.RawMessage   `json:"appPct"`
		DeviceStats         []wireStat        `json:"deviceStats"`
		AppStats            []wireStat        `json:"appStats"`
		Jobs                []wireJob         `json:"jobs"`
		RunningJobs         []wireJob         `json:"runningJobs"`
		HubCommands         []json.RawMessage `json:"hubCommands"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return RuntimeStats{}, fmt.Errorf("hubitat /logs/json: expected the runtime stats object: %w", err)
	}
	s := RuntimeStats{Uptime: textOf(w.Uptime), DevicesRuntime: num(w.TotalDevicesRuntime), DevicePct: num(w.DevicePct),
		AppsRuntime: num(w.TotalAppsRuntime), AppPct: num(w.AppPct), HubActionsCount: len(w.HubCommands)}
	s.Devices, s.Apps = statsOf(w.DeviceStats), statsOf(w.AppStats)
	s.ScheduledJobs, s.RunningJobs = jobsOf(w.Jobs), jobsOf(w.RunningJobs)
	return s, nil
}

func statsOf(ws []wireStat) []RuntimeStat {
	out := make([]RuntimeStat, 0, len(ws))
	for _, w := range ws {
		st := RuntimeStat{ID: idString(w.ID), Name: w.Name, Count: int64(num(w.Count)), PctBusy: num(w.Pct), TotalMS: num(w.Total),
			StateSize: int64(num(w.StateSize)), LargeState: w.LargeState, AverageMS: optNum(w.Average),
			Events: optInt(w.CustomAttributes.EventsCount), States: optInt(w.CustomAttributes.StatesCount),
			HubActions: optInt(w.HubActionCount), PendingEvents: optInt(w.PendingEvents), CloudCalls: optInt(w.CloudCallCount)}
		out = append(out, st)
	}
	return out
}

func jobsOf(ws []wireJob) []Job {
	out := make([]Job, 0, len(ws))
	for _, w := range ws {
		out = append(out, Job{ID: idString(w.ID), Name: w.Name, Method: w.MethodName, NextRun: textOf(w.NextRun), Recurring: w.Recurring})
	}
	return out
}

func num(r json.RawMessage) float64 {
	f, _ := parseNumber(r)
	return f
}

func optNum(r json.RawMessage) *float64 {
	if f, ok := parseNumber(r); ok {
		return &f
	}
	return nil
}

func optInt(r json.RawMessage) *int64 {
	if f, ok := parseNumber(r); ok {
		v := int64(f)
		return &v
	}
	return nil
}

// textOf is a JSON string as it is, or any other JSON value's text.
func textOf(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	return string(r)
}

// SortStats orders stats by one of pct, count, stateSize, totalMs or name (upstream's sortBy),
// biggest first except for names.
func SortStats(st []RuntimeStat, by string) {
	key := func(s RuntimeStat) float64 {
		switch by {
		case "count":
			return float64(s.Count)
		case "stateSize":
			return float64(s.StateSize)
		case "totalMs":
			return s.TotalMS
		}
		return s.PctBusy
	}
	sort.SliceStable(st, func(i, j int) bool {
		if by == "name" {
			return strings.ToLower(st[i].Name) < strings.ToLower(st[j].Name)
		}
		return key(st[i]) > key(st[j])
	})
}

// HubAlerts is the hub's own health verdict from /hub2/hubData (upstream: mcp-system-lib
// _healthAlertsFromHub2 and _platformUpdateFromHub2): safe mode, the alert flags that are on,
// the hub's messages, and whether a platform update waits.
type HubAlerts struct {
	SafeMode         bool     `json:"safeMode"`
	Active           []string `json:"active"`
	Messages         []string `json:"messages,omitempty"`
	UpdateAvailable  *bool    `json:"platformUpdateAvailable,omitempty"` // nil: the hub did not say
	UpdateVersion    string   `json:"platformUpdateVersion,omitempty"`
	FirmwareVersion  string   `json:"firmwareVersion,omitempty"`
	DatabaseSizeMB   *float64 `json:"databaseSizeMB,omitempty"`
	AlertsUnreadable string   `json:"alertsUnreadable,omitempty"`
}

// HubAlerts reads /hub2/hubData's alerts.
func (c *Client) HubAlerts(ctx context.Context) (HubAlerts, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/hub2/hubData", nil)
	if err != nil {
		return HubAlerts{}, err
	}
	return ParseHubAlerts(r.Body)
}

// ParseHubAlerts reads the alerts of a /hub2/hubData reply. An alerts block of an unknown shape
// leaves UpdateAvailable nil, so that it never reads as "no update".
func ParseHubAlerts(b []byte) (HubAlerts, error) {
	var w struct {
		SafeMode json.RawMessage            `json:"safeMode"`
		Version  string                     `json:"version"`
		Alerts   map[string]json.RawMessage `json:"alerts"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return HubAlerts{}, fmt.Errorf("hubitat /hub2/hubData: malformed reply: %w", err)
	}
	a := HubAlerts{SafeMode: string(w.SafeMode) == "true", FirmwareVersion: w.Version, Active: []string{}}
	if w.Alerts == nil {
		a.AlertsUnreadable = "the hub sent no alerts block"
		return a, nil
	}
	for k, v := range w.Alerts {
		switch k {
		case "platformUpdateAvailable":
			if s := string(v); s == "true" || s == "false" {
				on := s == "true"
				a.UpdateAvailable = &on
			}
		case "platformUpdateVersion":
			a.UpdateVersion = textOf(v)
		case "headerMessages":
			var msgs []string
			if json.Unmarshal(v, &msgs) == nil {
				a.Messages = msgs
			}
		case "databaseSize":
			a.DatabaseSizeMB = optNum(v)
		default:
			if string(v) == "true" {
				a.Active = append(a.Active, k)
			}
		}
	}
	sort.Strings(a.Active)
	return a, nil
}
