// Package systools is the system toolset: shell commands and disk usage. Commands need the
// user's command permission (and the supervisor_token one to get the add-on's token). Home
// Assistant's log and restarts are hatools' ha_get_logs and ha_restart.
package systools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/command"
	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetSystem is the toolset name.
const SetSystem = "system"

// Deps are the backends the system tools use.
type Deps struct {
	Files *fsguard.FS
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
	TimeoutSeconds  int    `json:"timeout_seconds,omitempty" jsonschema:"kill it after this many seconds (default 30)" validate:"omitempty,min=1,max=600"`
	SupervisorToken bool   `json:"supervisor_token,omitempty" jsonschema:"pass SUPERVISOR_TOKEN (for the ha CLI); needs the supervisor_token permission too"`
}

// Tools returns the system tools, in the order tools/list shows them.
func Tools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{executeCommand(d), getDiskUsage(d)}
}

// executeCommand is ha_execute_command.
func executeCommand(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[execArgs, command.Result]{
		Name: "ha_execute_command", Toolset: SetSystem, Title: "Run a shell command", Category: toolkit.Command,
		Conditional: &toolkit.Condition[execArgs]{Category: toolkit.SupervisorToken, When: "the argument supervisor_token is true",
			Applies: func(a execArgs) bool { return a.SupervisorToken }},
		Description: "Run a shell command inside the hamcp add-on container: exit code, stdout and stderr (64 KB each). It and everything it started are killed at the timeout; progress is sent while it runs. " +
			"The environment holds only PATH, HOME, LANG, TZ, TERM and variables the user allowed. " +
			"Needs the command permission. Prefer the dedicated tools (files, config, services); never run destructive commands (rm -rf, reboot) unless the user asked.",
		Destructive: true, OpenWorld: true,
		Summary: func(a execArgs) string {
			s := a.Command
			if len(s) > 200 {
				s = s[:200] + "…"
			}
			return s
		},
		Handler: func(ctx context.Context, c *toolkit.Call, a execArgs) (command.Result, error) {
			return d.execute(ctx, c, a)
		},
	})
}

func (d Deps) execute(ctx context.Context, c *toolkit.Call, a execArgs) (command.Result, error) {
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
}

// getDiskUsage is ha_get_disk_usage.
func getDiskUsage(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[struct{}, []fsguard.Usage]{
		Name: "ha_get_disk_usage", Toolset: SetSystem, Title: "Disk usage",
		Description: "Total, used and free bytes of the file system behind each allowed root (/config, /backup, /media, …). Use it before writing big files or making backups.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ struct{}) ([]fsguard.Usage, error) {
			u, err := d.Files.DiskUsage()
			if err != nil {
				return nil, &toolkit.Error{Code: "filesystem_error", Message: err.Error()}
			}
			return u, nil
		},
	})
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
