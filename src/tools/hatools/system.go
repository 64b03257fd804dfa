package hatools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Toolset names of the administration groups.
const (
	SetConfig      = "config"      // configuration files, validate, reload, restart, backups
	SetAutomations = "automations" // automations and blueprints
	SetMonitoring  = "monitoring"  // system info, logs, Supervisor, integrations, diagnostics
	SetAddons      = "addons"      // Supervisor add-ons and HACS
)

// haWSError is haError for WebSocket commands: an unknown command means the integration that
// provides it is not installed or not loaded.
func haWSError(err error, feature string, changed bool, next string) error {
	var api *homeassistant.APIError
	if errors.As(err, &api) && api.Code == "unknown_command" {
		return &toolkit.Error{Code: "not_supported", Message: "Home Assistant does not offer " + feature + ": the integration behind it is not installed or not loaded", Hint: next, Changed: &changed}
	}
	return haError(err, changed, next)
}

// alsoTry adds advice to an error's hint, e.g. a tool that still works while Home Assistant is down.
func alsoTry(err error, hint string) error {
	te := toolkit.AsError(err)
	if te.Hint != "" {
		te.Hint += "; "
	}
	te.Hint += hint
	return te
}

// configCheck is the outcome of Home Assistant's configuration check.
type configCheck struct {
	Result    string `json:"result"` // valid | invalid
	Errors    string `json:"errors,omitempty"`
	Warnings  string `json:"warnings,omitempty"`
	CheckedBy string `json:"checked_by"` // home_assistant | supervisor
}

func (c configCheck) valid() bool { return c.Result == "valid" }

// checkConfig asks Home Assistant to check its configuration, or the Supervisor when Home
// Assistant is unreachable (the Supervisor checks in its own container, so it works while
// Home Assistant is down or failing to start).
func checkConfig(ctx context.Context, d Deps) (configCheck, error) {
	res, err := d.HA.CheckConfig(ctx)
	if err == nil {
		return configCheck{Result: res.Result, Errors: res.Errors, Warnings: res.Warnings, CheckedBy: "home_assistant"}, nil
	}
	if d.Supervisor == nil || !errors.Is(err, homeassistant.ErrUnavailable) {
		return configCheck{}, haError(err, false, "")
	}
	serr := d.Supervisor.CoreCheck(ctx)
	var api *supervisor.APIError
	switch {
	case serr == nil:
		return configCheck{Result: "valid", CheckedBy: "supervisor"}, nil
	case errors.As(serr, &api) && api.Status == 400:
		return configCheck{Result: "invalid", Errors: api.Message, CheckedBy: "supervisor"}, nil
	}
	return configCheck{}, supError(serr, false, "")
}

type validateArgs struct{}

// reloadServices maps what ha_reload_config accepts to the service that reloads it.
var reloadServices = map[string][2]string{
	"all": {"homeassistant", "reload_all"}, "core": {"homeassistant", "reload_core_config"},
	"automation": {"automation", "reload"}, "script": {"script", "reload"}, "scene": {"scene", "reload"},
	"group": {"group", "reload"}, "template": {"template", "reload"}, "person": {"person", "reload"},
	"zone": {"zone", "reload"}, "input_boolean": {"input_boolean", "reload"}, "input_button": {"input_button", "reload"},
	"input_datetime": {"input_datetime", "reload"}, "input_number": {"input_number", "reload"},
	"input_select": {"input_select", "reload"}, "input_text": {"input_text", "reload"}, "timer": {"timer", "reload"},
	"counter": {"counter", "reload"}, "schedule": {"schedule", "reload"}, "themes": {"frontend", "reload_themes"},
}

type reloadArgs struct {
	Domain string `json:"domain" jsonschema:"what to reload; core = customize and packages, all = everything reloadable" validate:"required,oneof=all core automation script scene group template person zone input_boolean input_button input_datetime input_number input_select input_text timer counter schedule themes" example:"automation"`
}

type reloadResult struct {
	Reloaded string `json:"reloaded"`
	Service  string `json:"service"`
}

type restartArgs struct {
	SafeMode bool `json:"safe_mode,omitempty" jsonschema:"restart into safe mode (custom integrations and dashboards off)"`
}

type restartResult struct {
	Restarting bool   `json:"restarting"`
	Via        string `json:"via"` // supervisor | service
	Note       string `json:"note"`
}

// systemTools are the configuration-check, reload, restart, system-information and log tools, in
// the order tools/list shows them.
func systemTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{validateConfig(d), reloadConfig(d), restart(d), systemInfo(d), getLogs(d)}
}

// validateConfig is ha_validate_config.
func validateConfig(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[validateArgs, configCheck]{
		Name: "ha_validate_config", Toolset: SetConfig, Title: "Check the configuration",
		Description: "Run Home Assistant's configuration check (configuration.yaml and its includes): valid/invalid with HA's error text. " +
			"Use after editing YAML, before ha_reload_config or ha_restart.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a validateArgs) (configCheck, error) {
			return checkConfig(ctx, d)
		},
	})
}

// reloadConfig is ha_reload_config.
func reloadConfig(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[reloadArgs, reloadResult]{
		Name: "ha_reload_config", Toolset: SetConfig, Title: "Reload configuration",
		Description: "Reload one part of the YAML configuration without restarting, e.g. automation after editing automations.yaml. " +
			"Check first with ha_validate_config. Integrations set up in configuration.yaml need ha_restart instead.",
		Idempotent: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a reloadArgs) (reloadResult, error) {
			svc := reloadServices[a.Domain]
			name := svc[0] + "." + svc[1]
			if _, _, err := d.HA.CallService(ctx, svc[0], svc[1], nil, false); err != nil {
				var api *homeassistant.APIError
				if errors.As(err, &api) && api.Status == 400 {
					return reloadResult{}, &toolkit.Error{Code: "not_supported", Field: "domain",
						Message: "Home Assistant has no " + name + " service: the " + svc[0] + " integration is not set up",
						Hint:    "reload a domain that is in use, or all"}
				}
				return reloadResult{}, haError(err, false, "the YAML may be invalid: run ha_validate_config and read ha_get_logs (search "+a.Domain+")")
			}
			return reloadResult{Reloaded: a.Domain, Service: name}, nil
		},
	})
}

// restart is ha_restart, the one way to restart Home Assistant (it replaced the system toolset's
// ha_restart_homeassistant). A restart runs no code the model chose and reads no secret, so it needs
// no category: asking for command here would make the user hand over a root shell to restart. The
// user's yes to this restart (class restart) gates it, as it gates ha_call_service homeassistant.restart.
func restart(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[restartArgs, restartResult]{
		Name: "ha_restart", Toolset: SetConfig, Title: "Restart Home Assistant",
		Confirm: &toolkit.Confirm[restartArgs]{When: "always (`restart`)",
			Check: func(ctx context.Context, c *toolkit.Call, a restartArgs) (toolkit.Ask, error) {
				return plain(sensitive.Restart, "Restart Home Assistant? Everything is unavailable for a minute or more and running automations stop."), nil
			}},
		Description: "Restart Home Assistant Core (through the Supervisor when available): everything is unavailable for a minute or more and running automations stop. " +
			"An invalid configuration refuses it. The user confirms each restart. Prefer ha_reload_config when a reload is enough.",
		Destructive: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a restartArgs) (restartResult, error) {
			return d.restartCore(ctx, a.SafeMode)
		},
	})
}

// restartCore checks the configuration, then restarts through the Supervisor, or else the
// homeassistant.restart service.
func (d Deps) restartCore(ctx context.Context, safeMode bool) (restartResult, error) {
	check, err := checkConfig(ctx, d)
	if err != nil {
		return restartResult{}, err
	}
	if !check.valid() {
		no := false
		return restartResult{}, &toolkit.Error{Code: "invalid_configuration", Message: "Home Assistant's configuration is invalid, so it was not restarted: " + check.Errors,
			Hint: "fix the configuration (ha_read_config, ha_write_config) and check it with ha_validate_config", Changed: &no}
	}
	const note = "Home Assistant is restarting; tools will fail until it is back (usually under two minutes)"
	if d.Supervisor != nil {
		if err := d.Supervisor.CoreRestart(ctx, safeMode); err != nil {
			return restartResult{}, alsoTry(supError(err, false, ""), "or restart from Settings → System in Home Assistant")
		}
		return restartResult{Restarting: true, Via: "supervisor", Note: note}, nil
	}
	data := map[string]any{}
	if safeMode {
		data["safe_mode"] = true
	}
	_, _, err = d.HA.CallService(ctx, "homeassistant", "restart", data, false)
	if err != nil && !errors.Is(err, homeassistant.ErrUnavailable) {
		return restartResult{}, haError(err, false, "read ha_get_logs for the reason")
	}
	// A dropped connection here is the restart itself taking HA down mid-answer.
	return restartResult{Restarting: true, Via: "service", Note: note}, nil
}

type systemInfoArgs struct{}

type systemInfoResult struct {
	Version      string            `json:"version"`
	State        string            `json:"state"`
	LocationName string            `json:"location_name"`
	TimeZone     string            `json:"time_zone"`
	Country      string            `json:"country,omitempty"`
	Language     string            `json:"language,omitempty"`
	Currency     string            `json:"currency,omitempty"`
	Latitude     float64           `json:"latitude"`
	Longitude    float64           `json:"longitude"`
	Elevation    float64           `json:"elevation"`
	Units        map[string]string `json:"units"`
	Components   int               `json:"components"`
	Integrations int               `json:"integrations"`
	Entities     int               `json:"entities,omitempty"`
	SafeMode     bool              `json:"safe_mode,omitempty"`
	RecoveryMode bool              `json:"recovery_mode,omitempty"`
	ConfigDir    string            `json:"config_dir"`
	ExternalURL  string            `json:"external_url,omitempty"`
	InternalURL  string            `json:"internal_url,omitempty"`
	Install      *installInfo      `json:"install,omitempty"`
}

type installInfo struct {
	Type            string  `json:"type"`
	Hostname        string  `json:"hostname,omitempty"`
	OperatingSystem string  `json:"operating_system,omitempty"`
	OSVersion       string  `json:"os_version,omitempty"`
	Board           string  `json:"board,omitempty"`
	Kernel          string  `json:"kernel,omitempty"`
	Machine         string  `json:"machine,omitempty"`
	Arch            string  `json:"arch,omitempty"`
	DiskTotalGB     float64 `json:"disk_total_gb,omitempty"`
	DiskFreeGB      float64 `json:"disk_free_gb,omitempty"`
	Error           string  `json:"error,omitempty"`
}

// systemInfo is ha_system_info.
func systemInfo(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[systemInfoArgs, systemInfoResult]{
		Name: "ha_system_info", Toolset: SetMonitoring, Title: "System information",
		Description: "Home Assistant's version, run state, location, time zone, units, and how many integrations and entities it has; with the Supervisor also host and OS. " +
			"For updates and Supervisor issues use ha_get_supervisor_info; for problems ha_get_diagnostics.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a systemInfoArgs) (systemInfoResult, error) {
			return d.describeSystem(ctx)
		},
	})
}

func (d Deps) describeSystem(ctx context.Context) (systemInfoResult, error) {
	cfg, err := d.HA.Config(ctx)
	if err != nil {
		return systemInfoResult{}, alsoTry(haError(err, false, ""), "ha_get_supervisor_info still works through the Supervisor while Home Assistant is down")
	}
	out := systemInfoResult{Version: cfg.Version, State: cfg.State, LocationName: cfg.LocationName, TimeZone: cfg.TimeZone,
		Language: cfg.Language, Currency: cfg.Currency, Latitude: cfg.Latitude, Longitude: cfg.Longitude, Elevation: cfg.Elevation,
		Units: cfg.UnitSystem, Components: len(cfg.Components), SafeMode: cfg.SafeMode, RecoveryMode: cfg.RecoveryMode, ConfigDir: cfg.ConfigDir}
	if cfg.Country != nil {
		out.Country = *cfg.Country
	}
	if cfg.ExternalURL != nil {
		out.ExternalURL = *cfg.ExternalURL
	}
	if cfg.InternalURL != nil {
		out.InternalURL = *cfg.InternalURL
	}
	domains := map[string]bool{}
	for _, comp := range cfg.Components {
		// "sensor.template"-style entries are platforms of an integration already counted.
		dom, _, _ := strings.Cut(comp, ".")
		domains[dom] = true
	}
	out.Integrations = len(domains)
	if m := d.HA.Mirror(); m != nil && m.Ready() {
		out.Entities = m.Len()
	}
	if d.Supervisor != nil {
		out.Install = hostSummary(ctx, d.Supervisor)
	}
	return out, nil
}

// hostSummary describes the machine from the Supervisor; a failure is reported inside it, since
// the rest of the answer still stands.
func hostSummary(ctx context.Context, s *supervisor.Client) *installInfo {
	in := &installInfo{Type: "supervised"}
	host, err := s.HostInfo(ctx)
	if err != nil {
		in.Error = "host information unavailable: " + err.Error()
		return in
	}
	in.Hostname, in.OperatingSystem, in.Kernel = host.Hostname, host.OperatingSystem, host.Kernel
	in.DiskTotalGB, in.DiskFreeGB = host.DiskTotal, host.DiskFree
	if strings.HasPrefix(host.OperatingSystem, "Home Assistant OS") {
		in.Type = "os"
		if osi, err := s.OSInfo(ctx); err == nil {
			in.OSVersion, in.Board = osi.Version, osi.Board
		}
	}
	if core, err := s.CoreInfo(ctx); err == nil {
		in.Machine, in.Arch = core.Machine, core.Arch
	}
	return in
}

// supError turns a Supervisor client error into one the model can act on.
func supError(err error, changed bool, next string) error {
	var api *supervisor.APIError
	switch {
	case errors.Is(err, supervisor.ErrUnavailable):
		return toolkit.Unavailable("the Supervisor", err, "the Supervisor only exists on Home Assistant OS and Supervised installs; check the host if it should be there")
	case errors.Is(err, supervisor.ErrUnauthorized):
		return &toolkit.Error{Code: "backend_unauthorized", Message: "the Supervisor refused hamcp's token: " + err.Error(),
			Hint: "the add-on needs hassio_api: true and hassio_role: manager", Changed: &changed}
	case errors.As(err, &api) && api.Status == 404:
		return toolkit.NotFound("the Supervisor has no such object: "+api.Message, next)
	}
	var ha *homeassistant.APIError
	if errors.As(err, &ha) || errors.Is(err, homeassistant.ErrUnavailable) || errors.Is(err, homeassistant.ErrUnauthorized) {
		return haError(err, changed, next)
	}
	return toolkit.Backend("the Supervisor", err, changed, next)
}

// noSupervisor is the error for Supervisor features on an install without one.
func noSupervisor(feature string) error {
	return &toolkit.Error{Code: "not_supported", Message: feature + " needs the Home Assistant Supervisor, which this installation does not have (it runs on Home Assistant OS and Supervised installs)",
		Hint: fmt.Sprintf("on a Container or Core install, manage %s on the host instead", feature)}
}

type logsArgs struct {
	Lines     int    `json:"lines,omitempty" jsonschema:"entries to return, newest first (default 100)" validate:"omitempty,min=1,max=1000"`
	Offset    int    `json:"offset,omitempty" jsonschema:"matching entries to skip (next_offset)" validate:"omitempty,min=0"`
	Level     string `json:"level,omitempty" jsonschema:"lowest level to include (default all)" validate:"omitempty,oneof=debug info warning error critical"`
	Search    string `json:"search,omitempty" jsonschema:"text in logger, message or traceback, e.g. an integration"`
	Filter    string `json:"filter,omitempty" jsonschema:"same as search"`
	Traceback bool   `json:"traceback,omitempty" jsonschema:"whole tracebacks (default: first 3 lines)"`
	Merge     *bool  `json:"merge,omitempty" jsonschema:"merge repeats of a message into one entry with a count (default true)"`
}

type logsResult struct {
	Source     string     `json:"source"` // home_assistant | supervisor | file
	Total      int        `json:"total"`
	Count      int        `json:"count"`
	Offset     int        `json:"offset"`
	NextOffset *int       `json:"next_offset,omitempty"`
	Entries    []logEntry `json:"entries"`
	Note       string     `json:"note,omitempty"`
}

// logFetchLines bounds how much of the Supervisor's journal is read when it stands in for
// Home Assistant's own log.
const logFetchLines = 5000

// getLogs is ha_get_logs, the one log tool (it replaced the system toolset's ha_read_logs, whose
// direct read of home-assistant.log is now its last fallback). The filesystem grant covers every
// call: the log holds secrets whichever way it is read.
func getLogs(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[logsArgs, logsResult]{
		Name: "ha_get_logs", Toolset: SetMonitoring, Title: "Home Assistant log", Category: toolkit.Filesystem,
		Description: "Read Home Assistant's log, newest first: time, level, logger, message and the start of any traceback; repeats merged with a count. " +
			"Narrow with level (warning = warnings and worse) and search; paged (lines, offset). " +
			"While HA is down it reads the Supervisor's journal or /config/home-assistant.log. Needs the filesystem permission.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a logsArgs) (logsResult, error) {
			text, source, loc, err := d.readLog(ctx)
			if err != nil {
				return logsResult{}, err
			}
			return pickLogEntries(parseLog(text, loc), a, source), nil
		},
	})
}

// pickLogEntries filters entries (oldest first) newest first, merges repeats and pages them.
func pickLogEntries(all []logEntry, a logsArgs, source string) logsResult {
	search := strings.ToLower(strings.TrimSpace(a.Search + " " + a.Filter))
	minLevel := levelRank(strings.ToUpper(a.Level))
	merge := boolOr(a.Merge, true)
	var picked []logEntry
	seen := map[string]int{} // message key → index in picked
	for i := len(all) - 1; i >= 0; i-- {
		e := all[i]
		if a.Level != "" && levelRank(e.Level) < minLevel {
			continue
		}
		if search != "" && !e.matches(search) {
			continue
		}
		if merge {
			key := e.Level + "\x00" + e.Logger + "\x00" + e.Message
			if at, ok := seen[key]; ok {
				picked[at].Count++
				picked[at].First = e.Time
				continue
			}
			seen[key] = len(picked)
		}
		picked = append(picked, e.trimmed(a.Traceback))
	}
	page := toolkit.Paginate(picked, toolkit.Page{Limit: a.Lines, Offset: a.Offset})
	out := logsResult{Source: source, Total: page.Total, Count: page.Count, Offset: page.Offset, NextOffset: page.NextOffset, Entries: page.Items}
	switch source {
	case "supervisor":
		out.Note = "from the Supervisor's journal: Home Assistant keeps no log file on HA OS and Supervised installs (or it is down)"
	case "file":
		out.Note = "read from /config/home-assistant.log while Home Assistant is unreachable; times taken as UTC"
	}
	return out
}

// readLog fetches the log text from Home Assistant, or from the Supervisor when Home Assistant
// is down or does not serve /api/error_log (HA OS and Supervised installs log to the journal
// only), with the zone its times are in. Outside the add-on the Supervisor's journal is
// reached through core (homeassistant.Client.Log). When neither answers, the log file itself
// is read: on a Container or Core install it is the only record of why HA does not start.
func (d Deps) readLog(ctx context.Context) (text, source string, loc *time.Location, err error) {
	text, source, loc, err = d.readLogOnline(ctx)
	if err == nil || d.Files == nil || toolkit.AsError(err).Code != "backend_unavailable" {
		return text, source, loc, err
	}
	if file, ferr := readLogFile(d.Files); ferr == nil {
		return file, "file", time.UTC, nil
	}
	return "", "", nil, err
}

func (d Deps) readLogOnline(ctx context.Context) (text, source string, loc *time.Location, err error) {
	if d.Supervisor == nil {
		text, from, err := d.HA.Log(ctx, logFetchLines)
		if err != nil {
			return "", "", nil, haError(err, false, "")
		}
		loc = time.UTC
		if cfg, cerr := d.HA.Config(ctx); cerr == nil {
			loc = zoneOr(cfg.TimeZone)
		}
		if from == "supervisor" {
			return text, "supervisor", loc, nil
		}
		return text, "home_assistant", loc, nil
	}
	text, err = d.HA.ErrorLog(ctx)
	if err == nil {
		loc = time.UTC
		if cfg, cerr := d.HA.Config(ctx); cerr == nil {
			loc = zoneOr(cfg.TimeZone)
		}
		return text, "home_assistant", loc, nil
	}
	var api *homeassistant.APIError
	fallback := errors.Is(err, homeassistant.ErrUnavailable) || errors.As(err, &api) && api.Status == 404
	if !fallback {
		return "", "", nil, haError(err, false, "")
	}
	text, serr := d.Supervisor.Logs(ctx, "/core/logs", logFetchLines)
	if serr != nil {
		return "", "", nil, supError(serr, false, "")
	}
	loc = time.UTC
	if info, ierr := d.Supervisor.SupervisorInfo(ctx); ierr == nil {
		loc = zoneOr(info.Timezone)
	}
	return text, "supervisor", loc, nil
}

// logFileMax is how much of the end of home-assistant.log a direct read takes.
const logFileMax = 8 << 20

// readLogFile reads the newest logFileMax bytes of /config/home-assistant.log through the file guard.
func readLogFile(files *fsguard.FS) (string, error) {
	const path = "/config/home-assistant.log"
	data, info, err := files.ReadFile(path, 0, logFileMax)
	if err == nil && info.Size > int64(len(data)) {
		data, _, err = files.ReadFile(path, info.Size-logFileMax, logFileMax)
	}
	return string(data), err
}

func zoneOr(name string) *time.Location {
	if l, err := time.LoadLocation(name); err == nil && name != "" {
		return l
	}
	return time.UTC
}

// logEntry is one record of Home Assistant's log; Detail holds the lines that followed it
// (a traceback).
type logEntry struct {
	Time    string `json:"time"`
	Level   string `json:"level"`
	Logger  string `json:"logger,omitempty"`
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"`
	// Count and First describe merged repeats: how many more times the message was logged,
	// and when it was first.
	Count int    `json:"repeats,omitempty"`
	First string `json:"first,omitempty"`
}

// Bounds on one entry in a result: messages are rarely longer, tracebacks often are.
const (
	maxLogMessage     = 600
	tracebackPreview  = 3
	maxTracebackLines = 60
)

var (
	// "2026-05-01 12:00:00.123 WARNING (MainThread) [homeassistant.core] message"
	logLineRe = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) (DEBUG|INFO|WARNING|ERROR|CRITICAL|FATAL) \(([^)]*)\) \[([^\]]*)\] ?(.*)$`)
	ansiRe    = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
)

// parseLog splits log text into entries, oldest first. Lines that do not start a record belong
// to the one before; times are read in loc and given in UTC.
func parseLog(text string, loc *time.Location) []logEntry {
	var out []logEntry
	var detail []string
	flush := func() {
		if len(out) > 0 && len(detail) > 0 {
			out[len(out)-1].Detail = strings.Join(detail, "\n")
		}
		detail = detail[:0]
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.IndexByte(line, 0x1b) >= 0 {
			line = ansiRe.ReplaceAllString(line, "")
		}
		line = strings.TrimRight(line, "\r")
		// The regexp only runs on lines shaped like "YYYY-MM-DD hh:mm:ss…", which tracebacks are not.
		if len(line) > 20 && line[4] == '-' && line[10] == ' ' && line[13] == ':' {
			if m := logLineRe.FindStringSubmatch(line); m != nil {
				flush()
				out = append(out, logEntry{Time: logTime(m[1], loc), Level: m[2], Logger: m[4], Message: m[5]})
				continue
			}
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(out) == 0 {
			// Text before the first record (a truncated start): keep it as a record of its own.
			out = append(out, logEntry{Message: line})
			continue
		}
		if len(detail) < maxTracebackLines {
			detail = append(detail, line)
		}
	}
	flush()
	return out
}

func logTime(s string, loc *time.Location) string {
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", s, loc)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// logLevels ranks levels; an entry without a level ranks lowest.
var logLevels = map[string]int{"DEBUG": 1, "INFO": 2, "WARNING": 3, "ERROR": 4, "CRITICAL": 5, "FATAL": 5}

func levelRank(l string) int { return logLevels[l] }

func (e logEntry) matches(search string) bool {
	for _, s := range []string{e.Logger, e.Message, e.Detail} {
		if strings.Contains(strings.ToLower(s), search) {
			return true
		}
	}
	return false
}

// trimmed bounds an entry for output: a long message is cut, a traceback shortened unless asked
// for, and the logger's common prefix dropped.
func (e logEntry) trimmed(fullTraceback bool) logEntry {
	e.Logger = strings.TrimPrefix(e.Logger, "homeassistant.components.")
	if len(e.Message) > maxLogMessage {
		e.Message = truncateUTF8(e.Message, maxLogMessage) + "…"
	}
	if e.Detail != "" && !fullTraceback {
		lines := strings.Split(e.Detail, "\n")
		if len(lines) > tracebackPreview {
			e.Detail = strings.Join(lines[:tracebackPreview], "\n") + fmt.Sprintf("\n… %d more lines (traceback=true shows them)", len(lines)-tracebackPreview)
		}
	}
	return e
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
