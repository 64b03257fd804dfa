// Package systools is the system toolset: shell commands, Home Assistant's core log, disk usage
// and restarting Home Assistant. Commands and restarts need the user's command permission;
// the log needs the filesystem permission.
package systools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/command"
	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetSystem is the toolset name.
const SetSystem = "system"

// Deps are the backends the system tools use. Supervisor is nil outside the add-on.
type Deps struct {
	Files      *fsguard.FS
	HA         *homeassistant.Client
	Supervisor *supervisor.Client
	// Stop ends every running command when it is done: hamcp is shutting down (nil = never).
	Stop context.Context
	// CommandEnv are the variable names the user lets commands inherit (the command_env option).
	CommandEnv []string
	// SupervisorToken is given to a command only after the user granted the supervisor_token category.
	SupervisorToken string
}

type execArgs struct {
	Command         string `json:"command" jsonschema:"shell command line, run with /bin/sh -c" validate:"required" example:"ha core check"`
	Cwd             string `json:"cwd,omitempty" jsonschema:"working directory under an allowed root (default /config)"`
	TimeoutSeconds  int    `json:"timeout_seconds,omitempty" jsonschema:"kill the command after this many seconds (default 30, max 600)" validate:"omitempty,min=1,max=600"`
	SupervisorToken bool   `json:"supervisor_token,omitempty" jsonschema:"pass SUPERVISOR_TOKEN to the command (needed by the ha CLI); needs the user's supervisor_token permission on top of command"`
}

type logsArgs struct {
	Lines  int    `json:"lines,omitempty" jsonschema:"how many matching lines to return, newest first (default 100, max 2000)" validate:"omitempty,min=1,max=2000"`
	Filter string `json:"filter,omitempty" jsonschema:"only lines containing this text (case-insensitive), e.g. ERROR or zwave"`
	Source string `json:"source,omitempty" jsonschema:"core (default: the Home Assistant log via the Supervisor, or /config/home-assistant.log) or file"`
}

type logsResult struct {
	Source string   `json:"source"`
	Lines  []string `json:"lines"`
	Count  int      `json:"count"`
	Note   string   `json:"note,omitempty"`
}

type restartArgs struct {
	SafeMode bool `json:"safe_mode,omitempty" jsonschema:"restart in safe mode (custom integrations off)"`
}

// Tools returns the system tools.
func Tools(d Deps) []*toolkit.Tool {
	execute := toolkit.Define(toolkit.Spec[execArgs, command.Result]{
		Name: "ha_execute_command", Toolset: SetSystem, Title: "Run a shell command", Category: toolkit.Command,
		Conditional: &toolkit.Condition[execArgs]{Category: toolkit.SupervisorToken, When: "the argument supervisor_token is true",
			Applies: func(a execArgs) bool { return a.SupervisorToken }},
		Description: "Run a shell command on the Home Assistant host (inside the hamcp add-on container) and return its exit code, stdout and stderr (each capped at 64 KB with a truncation marker). " +
			"Default timeout 30 s (max 600 s); the command and everything it started are killed at the timeout. Progress notifications are sent while it runs. " +
			"Working directory under the allowed roots. The environment holds only PATH, HOME, LANG, TZ, TERM and the variables the user allowed. " +
			"Needs the user's command permission, and with supervisor_token=true also the supervisor_token permission. Prefer the dedicated tools (files, config, services) when they can do the job; " +
			"never run destructive commands (rm -rf, formatting, reboot) without the user's explicit request.",
		Destructive: true, OpenWorld: true,
		Summary: func(a execArgs) string {
			s := a.Command
			if len(s) > 200 {
				s = s[:200] + "…"
			}
			return s
		},
		Handler: func(ctx context.Context, c *toolkit.Call, a execArgs) (command.Result, error) {
			cwd := a.Cwd
			if cwd == "" {
				cwd = "/config"
			}
			dir, err := realDir(d.Files, cwd)
			if err != nil {
				return command.Result{}, err
			}
			timeout := time.Duration(a.TimeoutSeconds) * time.Second
			if timeout == 0 {
				timeout = command.DefaultTimeout
			}
			var set map[string]string
			if a.SupervisorToken { // the gate has checked the user's supervisor_token grant
				if d.SupervisorToken == "" {
					return command.Result{}, &toolkit.Error{Code: "not_supported", Field: "supervisor_token", Message: "there is no Supervisor token: hamcp is not running as a Home Assistant add-on"}
				}
				set = map[string]string{"SUPERVISOR_TOKEN": d.SupervisorToken}
			}
			if d.Stop != nil { // hamcp shutting down kills the command's tree instead of orphaning it
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				defer context.AfterFunc(d.Stop, cancel)()
			}
			res, err := command.Run(ctx, a.Command, command.Options{
				Dir: dir, Timeout: timeout, AllowEnv: d.CommandEnv, Set: set,
				Progress: func(elapsed time.Duration, last string) {
					c.Progress(ctx, elapsed.Seconds(), timeout.Seconds(), last)
				},
			})
			if err != nil {
				return command.Result{}, &toolkit.Error{Code: "command_error", Field: "command", Message: err.Error()}
			}
			return res, nil
		},
	})

	logs := toolkit.Define(toolkit.Spec[logsArgs, logsResult]{
		Name: "ha_read_logs", Toolset: SetSystem, Title: "Home Assistant log", Category: toolkit.Filesystem,
		Description: "Read Home Assistant's core log, newest lines first, optionally only lines containing filter (e.g. ERROR, an integration name). " +
			"Use it to troubleshoot failing integrations or automations. lines defaults to 100. Needs the filesystem permission.",
		ReadOnly: true,
		Summary:  func(a logsArgs) string { return fmt.Sprintf("lines=%d filter=%q", a.Lines, a.Filter) },
		Handler: func(ctx context.Context, c *toolkit.Call, a logsArgs) (logsResult, error) {
			n := a.Lines
			if n == 0 {
				n = 100
			}
			text, source, err := readCoreLog(ctx, d, a.Source)
			if err != nil {
				return logsResult{}, err
			}
			lines := newestMatching(text, a.Filter, n)
			r := logsResult{Source: source, Lines: lines, Count: len(lines)}
			if len(lines) == 0 && a.Filter != "" {
				r.Note = "no line matches the filter"
			}
			return r, nil
		},
	})

	disk := toolkit.Define(toolkit.Spec[struct{}, []fsguard.Usage]{
		Name: "ha_get_disk_usage", Toolset: SetSystem, Title: "Disk usage",
		Description: "Show total, used and free space (bytes) of the file system behind each allowed root (/config, /backup, /media, …). Use it before writing big files or making backups.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ struct{}) ([]fsguard.Usage, error) {
			u, err := d.Files.DiskUsage()
			if err != nil {
				return nil, &toolkit.Error{Code: "filesystem_error", Message: err.Error()}
			}
			return u, nil
		},
	})

	restart := toolkit.Define(toolkit.Spec[restartArgs, map[string]string]{
		Name: "ha_restart_homeassistant", Toolset: SetSystem, Title: "Restart Home Assistant", Category: toolkit.Command,
		Confirm: &toolkit.Confirm[restartArgs]{When: "always (`restart`)",
			Check: func(ctx context.Context, c *toolkit.Call, a restartArgs) (toolkit.Ask, error) {
				return toolkit.Ask{Classes: []string{string(sensitive.Restart)},
					Question: "Restart Home Assistant? It is unavailable for a minute or more and automations pause."}, nil
			}},
		Description: "Restart Home Assistant Core (through the Supervisor in the add-on, otherwise the homeassistant.restart service). Home Assistant is unavailable for a minute or more and automations pause. " +
			"The user confirms each restart. Validate the configuration before restarting after config changes. Needs the command permission.",
		Destructive: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a restartArgs) (map[string]string, error) {
			if d.Supervisor != nil {
				if err := d.Supervisor.CoreRestart(ctx, a.SafeMode); err != nil {
					return nil, toolkit.Backend("the Supervisor", err, false, "try again, or restart from Settings → System in Home Assistant")
				}
				return map[string]string{"status": "restarting", "via": "supervisor"}, nil
			}
			if _, _, err := d.HA.CallService(ctx, "homeassistant", "restart", map[string]any{"safe_mode": a.SafeMode}, false); err != nil && !errors.Is(err, homeassistant.ErrUnavailable) {
				return nil, toolkit.Backend("Home Assistant", err, false, "")
			}
			return map[string]string{"status": "restarting", "via": "homeassistant.restart"}, nil
		},
	})
	return []*toolkit.Tool{execute, logs, disk, restart}
}

// realDir turns an alias path into a real directory that stays inside its root even through symlinks.
func realDir(f *fsguard.FS, alias string) (string, error) {
	res, err := f.Resolve(alias)
	if err != nil {
		return "", &toolkit.Error{Code: "path_not_allowed", Field: "cwd", Message: err.Error()}
	}
	dir := filepath.Join(res.Root.Path, filepath.FromSlash(res.Rel))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", &toolkit.Error{Code: "not_found", Field: "cwd", Message: alias + " does not exist"}
	}
	rootReal, err := filepath.EvalSymlinks(res.Root.Path)
	if err != nil {
		return "", &toolkit.Error{Code: "not_found", Field: "cwd", Message: err.Error()}
	}
	if real != rootReal && !strings.HasPrefix(real, rootReal+string(filepath.Separator)) {
		return "", &toolkit.Error{Code: "path_not_allowed", Field: "cwd", Message: alias + " leads outside " + res.Root.Alias}
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", &toolkit.Error{Code: "not_a_directory", Field: "cwd", Message: alias + " is not a directory"}
	}
	return real, nil
}

// readCoreLog reads the HA log from the Supervisor (add-on) or the log file in /config.
func readCoreLog(ctx context.Context, d Deps, source string) (string, string, error) {
	if d.Supervisor != nil && source != "file" {
		text, err := d.Supervisor.Logs(ctx, "/core/logs", 5000)
		if err == nil {
			return text, "supervisor /core/logs", nil
		}
		if source == "core" {
			return "", "", toolkit.Backend("the Supervisor", err, false, "try source=file")
		}
	}
	data, info, err := d.Files.ReadFile("/config/home-assistant.log", 0, 8<<20)
	if err != nil {
		// HA OS and Supervised installs keep no log file: ask Home Assistant, which serves
		// its file log or, through its hassio view, the Supervisor's journal.
		if source != "file" && d.HA != nil {
			text, from, herr := d.HA.Log(ctx, 5000)
			switch {
			case herr == nil && from == "supervisor":
				return text, "supervisor /core/logs (through Home Assistant)", nil
			case herr == nil:
				return text, "Home Assistant /api/error_log", nil
			}
			err = errors.Join(err, herr)
		}
		return "", "", &toolkit.Error{Code: "not_found", Message: "no Home Assistant log found: " + err.Error(), Hint: "Home Assistant may log to the journal only; in the add-on the Supervisor source is used"}
	}
	if info.Size > int64(len(data)) {
		// Keep the newest part of a big log.
		data, _, err = d.Files.ReadFile("/config/home-assistant.log", info.Size-8<<20, 8<<20)
		if err != nil {
			return "", "", &toolkit.Error{Code: "filesystem_error", Message: err.Error()}
		}
	}
	return string(data), "/config/home-assistant.log", nil
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// newestMatching returns up to n lines containing filter, newest first.
func newestMatching(text, filter string, n int) []string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	f := strings.ToLower(filter)
	out := make([]string, 0, min(n, len(lines)))
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := ansi.ReplaceAllString(lines[i], "")
		if l == "" || (f != "" && !strings.Contains(strings.ToLower(l), f)) {
			continue
		}
		out = append(out, l)
	}
	return out
}
