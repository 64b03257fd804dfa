package hatools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
)

// supervisorAPI is the Supervisor's {result,data} API: hamcp's own client inside the add-on,
// or Home Assistant's supervisor/api WebSocket passthrough when hamcp runs elsewhere with an
// administrator's token.
type supervisorAPI interface {
	Do(ctx context.Context, method, path string, body any, out any) error
}

func supervisorFor(d Deps) supervisorAPI {
	if d.Supervisor != nil {
		return d.Supervisor
	}
	return wsSupervisor{d.HA}
}

// errNoSupervisor: Home Assistant has no Supervisor behind it.
var errNoSupervisor = errors.New("no supervisor")

type wsSupervisor struct{ ha *homeassistant.Client }

// Do maps core's answers for a missing Supervisor, an unknown endpoint and a failed action to
// what hamcp's own client answers.
func (w wsSupervisor) Do(ctx context.Context, method, path string, body any, out any) error {
	err := w.ha.SupervisorAPI(ctx, method, path, body, out)
	var api *homeassistant.APIError
	if errors.As(err, &api) {
		switch {
		case api.Code == "unknown_command" || strings.Contains(api.Message, "Supervisor is not available"):
			return errNoSupervisor
		case strings.Contains(api.Message, "does not exist"):
			return &supervisor.APIError{Status: http.StatusNotFound, Message: api.Message}
		case api.Code == "unknown_error":
			return &supervisor.APIError{Status: http.StatusBadRequest, Message: api.Message}
		}
	}
	return err
}

// supErr is supError that also explains a missing Supervisor.
func supErr(err error, feature string, changed bool, next string) error {
	if errors.Is(err, errNoSupervisor) {
		return noSupervisor(feature)
	}
	return supError(err, changed, next)
}

// liveStates reads states from the mirror only while it is live, so a tool never answers from
// a stale copy while Home Assistant is down.
func liveStates(ctx context.Context, ha *homeassistant.Client) ([]homeassistant.State, error) {
	if m := ha.Mirror(); m != nil && m.Live() {
		return m.All(), nil
	}
	return ha.States(ctx)
}

type supervisorInfoArgs struct {
	Component string `json:"component,omitempty" jsonschema:"one part in full (default all, summarised)" validate:"omitempty,oneof=all supervisor core os host"`
}

type supervisorSummary struct {
	Supervisor  map[string]any    `json:"supervisor,omitempty"`
	Core        map[string]any    `json:"core,omitempty"`
	OS          map[string]any    `json:"os,omitempty"`
	Host        map[string]any    `json:"host,omitempty"`
	Updates     []map[string]any  `json:"updates,omitempty"`
	Issues      []map[string]any  `json:"issues,omitempty"`
	Suggestions []map[string]any  `json:"suggestions,omitempty"`
	Unhealthy   []string          `json:"unhealthy,omitempty"`
	Unsupported []string          `json:"unsupported,omitempty"`
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// infoFields are the members of each info object worth a model's attention.
var infoFields = map[string][]string{
	"supervisor": {"version", "version_latest", "update_available", "channel", "healthy", "supported", "auto_update"},
	"core":       {"version", "version_latest", "update_available", "machine", "arch", "boot", "watchdog", "port", "ssl"},
	"os":         {"version", "version_latest", "update_available", "board", "boot"},
	"host":       {"hostname", "operating_system", "kernel", "chassis", "deployment", "disk_total", "disk_used", "disk_free", "timezone", "startup_time"},
}

type integrationItem struct {
	EntryID    string  `json:"entry_id"`
	Domain     string  `json:"domain"`
	Title      string  `json:"title"`
	State      string  `json:"state"`
	DisabledBy *string `json:"disabled_by,omitempty"`
	Reason     *string `json:"reason,omitempty"`
	Source     string  `json:"source,omitempty"`
}

// failingStates are config entry states that mean the integration does not work.
var failingStates = map[string]bool{"setup_error": true, "setup_retry": true, "migration_error": true, "failed_unload": true}

// supervisorTools are the monitoring tools, in the order tools/list shows them.
func supervisorTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{getSupervisorInfo(d), getDiagnostics(d)}
}

// getSupervisorInfo is ha_get_supervisor_info.
func getSupervisorInfo(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[supervisorInfoArgs, supervisorSummary]{
		Name: "ha_get_supervisor_info", Toolset: SetMonitoring, Title: "Supervisor, Core, OS and host",
		Description: "Versions and updates of Supervisor, Core, OS and add-ons, host details, and the Supervisor's issues and suggestions. Needs HA OS or Supervised; in the add-on, works while HA is down.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a supervisorInfoArgs) (supervisorSummary, error) {
			api := supervisorFor(d)
			if a.Component != "" && a.Component != "all" {
				return supervisorPart(ctx, api, a.Component)
			}
			return supervisorOverview(ctx, api)
		},
	})
}

// supervisorPart is one part's info object in full.
func supervisorPart(ctx context.Context, api supervisorAPI, component string) (supervisorSummary, error) {
	var raw map[string]any
	if err := api.Do(ctx, http.MethodGet, "/"+component+"/info", nil, &raw); err != nil {
		return supervisorSummary{}, supErr(err, "Supervisor information", false, "")
	}
	out := supervisorSummary{}
	switch component {
	case "supervisor":
		delete(raw, "addons")
		out.Supervisor = raw
	case "core":
		out.Core = raw
	case "os":
		out.OS = raw
	case "host":
		out.Host = raw
	}
	return out, nil
}

// configEntries lists config entries in the compact form (WS config_entries/get).
func configEntries(ctx context.Context, ha *homeassistant.Client, domain string) ([]integrationItem, error) {
	entries, err := ha.ConfigEntries(ctx, domain)
	if err != nil {
		return nil, haWSError(err, "the integrations list", false, "")
	}
	raw := make([]integrationItem, len(entries))
	for i, e := range entries {
		raw[i] = integrationItem(e)
		if raw[i].Source == "user" {
			raw[i].Source = ""
		}
	}
	sort.SliceStable(raw, func(i, j int) bool { return raw[i].Domain < raw[j].Domain })
	return raw, nil
}

// supervisorOverview summarises every part; a part that fails is named in unavailable while
// the rest still answers, except when the Supervisor is missing or unreachable altogether.
func supervisorOverview(ctx context.Context, api supervisorAPI) (supervisorSummary, error) {
	out := supervisorSummary{Unavailable: map[string]string{}}
	parts := map[string]*map[string]any{"supervisor": &out.Supervisor, "core": &out.Core, "os": &out.OS, "host": &out.Host}
	var addonUpdates []map[string]any
	for _, name := range []string{"supervisor", "core", "os", "host"} {
		var raw map[string]any
		err := api.Do(ctx, http.MethodGet, "/"+name+"/info", nil, &raw)
		if err != nil {
			if name == "supervisor" {
				return supervisorSummary{}, supErr(err, "Supervisor information", false, "")
			}
			out.Unavailable[name] = err.Error()
			continue
		}
		if name == "supervisor" {
			list, _ := raw["addons"].([]any)
			for _, item := range list {
				m, _ := item.(map[string]any)
				if up, _ := m["update_available"].(bool); up {
					addonUpdates = append(addonUpdates, map[string]any{"kind": "addon", "slug": m["slug"], "name": m["name"],
						"version": m["version"], "version_latest": m["version_latest"]})
				}
			}
		}
		*parts[name] = pick(raw, infoFields[name])
		if up, _ := raw["update_available"].(bool); up && name != "host" {
			out.Updates = append(out.Updates, map[string]any{"kind": name, "version": raw["version"], "version_latest": raw["version_latest"]})
		}
	}
	out.Updates = append(out.Updates, addonUpdates...)
	var res supervisor.ResolutionInfo
	if err := api.Do(ctx, http.MethodGet, "/resolution/info", nil, &res); err != nil {
		out.Unavailable["resolution"] = err.Error()
	} else {
		for _, is := range res.Issues {
			out.Issues = append(out.Issues, resolutionItem(is))
		}
		for _, s := range res.Suggestions {
			out.Suggestions = append(out.Suggestions, resolutionItem(s))
		}
		out.Unhealthy, out.Unsupported = res.Unhealthy, res.Unsupported
	}
	if len(out.Unavailable) == 0 {
		out.Unavailable = nil
	}
	return out, nil
}

func resolutionItem(r supervisor.ResolutionItem) map[string]any {
	m := map[string]any{"type": r.Type, "context": r.Context}
	if r.Reference != nil {
		m["reference"] = *r.Reference
	}
	return m
}

// pick keeps the named members of an object.
func pick(m map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			out[k] = v
		}
	}
	return out
}

type diagnosticsArgs struct{}

type diagnostics struct {
	Summary      []string          `json:"summary"`
	Entities     entityHealth      `json:"entities"`
	Integrations integrationHealth `json:"integrations"`
	Repairs      []map[string]any  `json:"repairs,omitempty"`
	Supervisor   map[string]any    `json:"supervisor,omitempty"`
	Recorder     map[string]any    `json:"recorder,omitempty"`
	Config       *configCheck      `json:"config,omitempty"`
	NotChecked   map[string]string `json:"not_checked,omitempty"`
}

type entityHealth struct {
	Total               int            `json:"total"`
	Unavailable         int            `json:"unavailable"`
	Unknown             int            `json:"unknown"`
	UnavailableByDomain map[string]int `json:"unavailable_by_domain,omitempty"`
	Sample              []string       `json:"unavailable_sample,omitempty"`
}

type integrationHealth struct {
	Total    int               `json:"total"`
	Disabled int               `json:"disabled"`
	Failing  []integrationItem `json:"failing,omitempty"`
}

// Bounds on the lists a health summary carries.
const (
	maxDiagnosticSample = 10
	maxDiagnosticItems  = 20
)

// getDiagnostics is ha_get_diagnostics.
func getDiagnostics(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[diagnosticsArgs, diagnostics]{
		Name: "ha_get_diagnostics", Toolset: SetMonitoring, Title: "Health check",
		Description: "Health summary: unavailable entities, failed integrations and why, repair and Supervisor issues, recorder, configuration check. Start troubleshooting here, then ha_get_logs.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a diagnosticsArgs) (diagnostics, error) {
			return d.diagnose(ctx)
		},
	})
}

// diagnose gathers the health summary; a part that cannot be read is named in not_checked
// while the rest still answers.
func (d Deps) diagnose(ctx context.Context) (diagnostics, error) {
	all, err := liveStates(ctx, d.HA)
	if err != nil {
		return diagnostics{}, alsoTry(haError(err, false, ""), "ha_get_supervisor_info and ha_get_logs still work through the Supervisor while Home Assistant is down")
	}
	out := diagnostics{Entities: entitySummary(all), NotChecked: map[string]string{}}
	entries, err := configEntries(ctx, d.HA, "")
	if err != nil {
		return diagnostics{}, err
	}
	out.Integrations.Total = len(entries)
	for _, e := range entries {
		if e.DisabledBy != nil {
			out.Integrations.Disabled++
		}
		if failingStates[e.State] && len(out.Integrations.Failing) < maxDiagnosticItems {
			out.Integrations.Failing = append(out.Integrations.Failing, e)
		}
	}
	out.Repairs = repairIssues(ctx, d.HA, out.NotChecked)
	if rec, err := d.HA.RecorderInfo(ctx); err != nil {
		out.NotChecked["recorder"] = toolkit.AsError(haWSError(err, "recorder information", false, "")).Message
	} else {
		out.Recorder = map[string]any{"recording": rec.Recording, "thread_running": rec.ThreadRunning, "migration_in_progress": rec.MigrationInProgress}
		if rec.Backlog != nil {
			out.Recorder["backlog"] = *rec.Backlog
		}
	}
	if check, err := checkConfig(ctx, d); err != nil {
		out.NotChecked["config"] = toolkit.AsError(err).Message
	} else {
		out.Config = &check
	}
	if d.Supervisor != nil {
		sup, err := supervisorHealth(ctx, d.Supervisor)
		if err != nil {
			out.NotChecked["supervisor"] = err.Error()
		}
		out.Supervisor = sup
	}
	if len(out.NotChecked) == 0 {
		out.NotChecked = nil
	}
	out.Summary = summarise(out)
	return out, nil
}

// supervisorHealth is the Supervisor's own findings: issues, unhealthy and unsupported
// reasons; nil when there are none.
func supervisorHealth(ctx context.Context, sup *supervisor.Client) (map[string]any, error) {
	res, err := sup.ResolutionInfo(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	var issues []map[string]any
	for _, is := range res.Issues {
		issues = append(issues, resolutionItem(is))
	}
	if len(issues) > 0 {
		out["issues"] = issues
	}
	if len(res.Unhealthy) > 0 {
		out["unhealthy"] = res.Unhealthy
	}
	if len(res.Unsupported) > 0 {
		out["unsupported"] = res.Unsupported
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func entitySummary(all []homeassistant.State) entityHealth {
	h := entityHealth{Total: len(all), UnavailableByDomain: map[string]int{}}
	for _, s := range all {
		switch s.State {
		case "unavailable":
			h.Unavailable++
			h.UnavailableByDomain[s.Domain()]++
			if len(h.Sample) < maxDiagnosticSample {
				h.Sample = append(h.Sample, s.EntityID)
			}
		case "unknown":
			h.Unknown++
		}
	}
	sort.Strings(h.Sample)
	if len(h.UnavailableByDomain) == 0 {
		h.UnavailableByDomain = nil
	}
	return h
}

// repairIssues lists open (not ignored) repair issues, most severe first.
func repairIssues(ctx context.Context, ha *homeassistant.Client, notChecked map[string]string) []map[string]any {
	issues, err := ha.RepairIssues(ctx)
	if err != nil {
		notChecked["repairs"] = toolkit.AsError(haWSError(err, "repairs", false, "")).Message
		return nil
	}
	rank := map[string]int{"critical": 0, "error": 1, "warning": 2}
	sort.SliceStable(issues, func(i, j int) bool { return rank[issues[i].Severity] < rank[issues[j].Severity] })
	var out []map[string]any
	for _, is := range issues {
		if is.Ignored || len(out) >= maxDiagnosticItems {
			continue
		}
		m := map[string]any{"domain": is.Domain, "issue_id": is.IssueID, "severity": is.Severity, "key": is.TranslationKey, "fixable": is.IsFixable}
		if is.BreaksInHAVersion != nil {
			m["breaks_in"] = *is.BreaksInHAVersion
		}
		out = append(out, m)
	}
	return out
}

// summarise states the findings in a few lines, worst first.
func summarise(dg diagnostics) []string {
	var out []string
	if dg.Config != nil && !dg.Config.valid() {
		out = append(out, "the configuration is invalid: "+dg.Config.Errors)
	}
	for _, e := range dg.Integrations.Failing {
		line := fmt.Sprintf("%s (%s) is %s", e.Domain, e.Title, e.State)
		if e.Reason != nil {
			line += ": " + *e.Reason
		}
		out = append(out, line)
	}
	if n := dg.Entities.Unavailable; n > 0 {
		domains := make([]string, 0, len(dg.Entities.UnavailableByDomain))
		for dom, c := range dg.Entities.UnavailableByDomain {
			domains = append(domains, fmt.Sprintf("%s %d", dom, c))
		}
		sort.Strings(domains)
		out = append(out, fmt.Sprintf("%d of %d entities unavailable (%s)", n, dg.Entities.Total, strings.Join(domains, ", ")))
	}
	if n := len(dg.Repairs); n > 0 {
		out = append(out, fmt.Sprintf("%d open repair issue(s)", n))
	}
	if issues, ok := dg.Supervisor["issues"].([]map[string]any); ok && len(issues) > 0 {
		out = append(out, fmt.Sprintf("%d Supervisor issue(s)", len(issues)))
	}
	if dg.Recorder != nil && dg.Recorder["recording"] == false {
		out = append(out, "the recorder is not recording")
	}
	if len(out) == 0 {
		out = append(out, "no problems found")
	}
	return out
}
