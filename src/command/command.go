// Package command runs shell commands for the command tool so that they really end: at the timeout,
// on cancellation and on shutdown the whole process tree dies, including children that left the
// process group with setsid, and a grandchild that keeps stdout open cannot hold the call. A command
// sees only an allow-listed environment, never hamcp's secrets by default.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Limits.
const (
	DefaultTimeout   = 30 * time.Second
	MaxTimeout       = 600 * time.Second
	DefaultMaxOutput = 64 << 10 // per stream
	// killGrace is how long the tree has between SIGTERM and SIGKILL.
	killGrace = 2 * time.Second
	// waitDelay bounds how long Run waits, after the command ended or was told to stop, for its
	// output pipes to close: past it they are closed under whatever still holds them.
	waitDelay = killGrace + time.Second
)

// BaseEnv are the variables every command inherits from hamcp (when set). Everything else must be
// listed by the user (the command_env option): an allow-list, so a secret nobody thought of stays out.
var BaseEnv = []string{"PATH", "HOME", "LANG", "TZ", "TERM"}

// SecretEnv are variables that are never inherited through an allow-list: with them a command could act
// as the add-on against the Supervisor and Home Assistant. The Supervisor token reaches a command only
// through Options.Set, after the user granted it.
var SecretEnv = []string{"SUPERVISOR_TOKEN", "HASSIO_TOKEN", "HA_TOKEN", "HAMCP_HA_TOKEN", "HAMCP_SUPERVISOR_TOKEN"}

// secretPrefix: every HAMCP_* variable is one of hamcp's options, some of which are tokens and
// passwords (HAMCP_HUBITAT_TOKEN, HAMCP_HUBITAT_PASSWORD, …); none is ever inherited, so an option
// added later cannot leak through a user's allow-list.
const secretPrefix = "HAMCP_"

// isSecretEnv reports whether a variable is one of hamcp's credentials or options. Names are compared
// in upper case: the allow-list is the user's, and a near-miss spelling must not pass a secret.
func isSecretEnv(name string) bool {
	up := strings.ToUpper(name)
	return slices.Contains(SecretEnv, up) || strings.HasPrefix(up, secretPrefix)
}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckEnvNames validates the names a user allows through to commands (the command_env option).
func CheckEnvNames(names []string) error {
	for _, n := range names {
		switch {
		case !envName.MatchString(n):
			return fmt.Errorf("%q is not an environment variable name: use letters, digits and _ (e.g. MY_TOOL_HOME)", n)
		case isSecretEnv(n):
			return fmt.Errorf("command_env lists %s, which cannot be passed to every command: it is hamcp's own credential or option; remove it from command_env. A command gets the Supervisor token only with supervisor_token=true after the user grants the supervisor_token permission", n)
		}
	}
	return nil
}

// Options shape one run.
type Options struct {
	Dir       string        // working directory (already confined by the caller)
	Timeout   time.Duration // default 30 s, max 600 s
	MaxOutput int           // bytes kept per stream (head and tail), default 64 KiB
	Shell     string        // default /bin/sh
	// AllowEnv are more variable names inherited from hamcp's environment besides BaseEnv (the user's
	// command_env option; checked with CheckEnvNames).
	AllowEnv []string
	// Set are variables given to the command explicitly, e.g. SUPERVISOR_TOKEN once the user granted it.
	Set map[string]string
	// Progress is called about every interval while the command runs.
	Progress func(elapsed time.Duration, lastLine string)
	Interval time.Duration // default 2 s
}

// Result is what happened.
type Result struct {
	Command         string        `json:"command"`
	ExitCode        int           `json:"exit_code"`
	Stdout          string        `json:"stdout"`
	Stderr          string        `json:"stderr"`
	StdoutTruncated bool          `json:"stdout_truncated,omitempty"`
	StderrTruncated bool          `json:"stderr_truncated,omitempty"`
	TimedOut        bool          `json:"timed_out,omitempty"`
	Cancelled       bool          `json:"cancelled,omitempty"`
	Duration        time.Duration `json:"-"`
	DurationMS      int64         `json:"duration_ms"`
}

// Run runs cmdline with the shell and waits for it, its timeout, or ctx. When it returns, nothing the
// command started is left running.
func Run(ctx context.Context, cmdline string, o Options) (Result, error) {
	if strings.TrimSpace(cmdline) == "" {
		return Result{}, errors.New("the command is empty")
	}
	if strings.ContainsRune(cmdline, 0) {
		return Result{}, errors.New("the command contains a NUL byte")
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if timeout > MaxTimeout {
		return Result{}, fmt.Errorf("timeout %s is over the maximum %s", timeout, MaxTimeout)
	}
	if err := CheckEnvNames(o.AllowEnv); err != nil {
		return Result{}, err
	}
	maxOut := o.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	shell := o.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	path, args, extraEnv := launcher(shell, cmdline)
	cmd := exec.CommandContext(runCtx, path, args...)
	cmd.Dir = o.Dir
	cmd.Env = append(environment(os.Environ(), o.AllowEnv, o.Set), extraEnv...)
	cmd.Stdin = nil
	cmd.SysProcAttr = sysProcAttr()
	// Stopping asks politely: the reaper (or the process group, where there is none) gets SIGTERM and
	// has killGrace before everything is SIGKILLed.
	cmd.Cancel = func() error { return terminate(cmd.Process.Pid) }
	cmd.WaitDelay = waitDelay
	stdout, stderr := newCapped(maxOut), newCapped(maxOut)
	cmd.Stdout, cmd.Stderr = stdout, stderr

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("starting the command: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	interval := o.Interval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-ticker.C:
			if o.Progress != nil {
				o.Progress(time.Since(start), stdout.lastLine())
			}
		}
	}
	// Whatever is still in the group dies too (the backstop where the reaper could not run).
	killGroup(cmd.Process.Pid, syscall.SIGKILL)

	r := Result{Command: cmdline, Duration: time.Since(start)}
	r.DurationMS = r.Duration.Milliseconds()
	r.Stdout, r.StdoutTruncated = stdout.String()
	r.Stderr, r.StderrTruncated = stderr.String()
	r.ExitCode = exitCode(cmd.ProcessState)
	if runCtx.Err() != nil {
		if errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			r.TimedOut = true
		} else {
			r.Cancelled = true
		}
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) && runCtx.Err() == nil {
		return r, waitErr
	}
	return r, nil
}

// exitCode is the shell's exit code, or 128+signal when a signal ended it (as a shell reports it).
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func killGroup(pid int, sig syscall.Signal) {
	_ = syscall.Kill(-pid, sig)
}

// environment builds a command's variables from the allow-list only: BaseEnv, then allow (names the
// user listed), then set. Secret names are never inherited, whatever the lists say.
func environment(from, allow []string, set map[string]string) []string {
	have := map[string]string{}
	for _, kv := range from {
		name, val, _ := strings.Cut(kv, "=")
		have[name] = val
	}
	var env []string
	seen := map[string]bool{}
	for _, name := range append(slices.Clone(BaseEnv), allow...) {
		val, ok := have[name]
		if !ok || seen[name] || isSecretEnv(name) {
			continue
		}
		seen[name] = true
		env = append(env, name+"="+val)
	}
	if !seen["PATH"] {
		env = append(env, "PATH="+defaultPath)
	}
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		env = append(env, name+"="+set[name])
	}
	return env
}

// capped keeps the first and last halves of a stream up to max bytes, counting what it drops.
type capped struct {
	mu      sync.Mutex
	max     int
	head    []byte
	tail    []byte
	dropped int64
}

func newCapped(max int) *capped { return &capped{max: max} }

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	half := c.max / 2
	if room := half - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - (c.max - half); over > 0 {
		c.dropped += int64(over)
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	return n, nil
}

// String returns the kept output with a marker where bytes were dropped.
func (c *capped) String() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == 0 {
		return string(c.head) + string(c.tail), false
	}
	return fmt.Sprintf("%s\n…[%d bytes truncated]…\n%s", c.head, c.dropped, c.tail), true
}

func (c *capped) lastLine() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf := c.tail
	if len(buf) == 0 {
		buf = c.head
	}
	buf = bytes.TrimRight(buf, "\n")
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	}
	if len(buf) > 200 {
		buf = buf[len(buf)-200:]
	}
	return string(buf)
}
