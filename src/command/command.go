// Package command runs shell commands for the command tool: in their own process group so a
// timeout or cancellation kills everything they started, with captured and capped output, and
// with an environment that does not hand hamcp's secrets to the command unless asked.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	killGrace        = 2 * time.Second
)

// SecretEnv are variables a command does not inherit unless the caller asks for the Supervisor
// token: with them a command could act as the add-on against the Supervisor and Home Assistant.
var SecretEnv = []string{"SUPERVISOR_TOKEN", "HASSIO_TOKEN", "HA_TOKEN", "HAMCP_HA_TOKEN", "HAMCP_SUPERVISOR_TOKEN"}

// Options shape one run.
type Options struct {
	Dir       string        // working directory (already confined by the caller)
	Timeout   time.Duration // default 30 s, max 600 s
	MaxOutput int           // bytes kept per stream (head and tail), default 64 KiB
	Shell     string        // default /bin/sh
	// KeepSupervisorToken passes SUPERVISOR_TOKEN through (for `ha` CLI commands that need it).
	KeepSupervisorToken bool
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

// Run runs cmdline with the shell and waits for it, its timeout, or ctx.
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

	cmd := exec.Command(shell, "-c", cmdline)
	cmd.Dir = o.Dir
	cmd.Env = environment(o.KeepSupervisorToken)
	cmd.Stdin = nil
	// Its own process group, so everything it spawns can be signalled together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
	var stopped bool
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-ticker.C:
			if o.Progress != nil {
				o.Progress(time.Since(start), stdout.lastLine())
			}
		case <-runCtx.Done():
			stopped = true
			killGroup(cmd.Process.Pid, syscall.SIGTERM)
			select {
			case waitErr = <-done:
			case <-time.After(killGrace):
				killGroup(cmd.Process.Pid, syscall.SIGKILL)
				waitErr = <-done
			}
			break loop
		}
	}
	// Anything the command left running in its group dies with it.
	killGroup(cmd.Process.Pid, syscall.SIGKILL)

	r := Result{Command: cmdline, Duration: time.Since(start)}
	r.DurationMS = r.Duration.Milliseconds()
	r.Stdout, r.StdoutTruncated = stdout.String()
	r.Stderr, r.StderrTruncated = stderr.String()
	r.ExitCode = cmd.ProcessState.ExitCode()
	if stopped {
		if errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			r.TimedOut = true
		} else {
			r.Cancelled = true
		}
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return r, waitErr
	}
	return r, nil
}

func killGroup(pid int, sig syscall.Signal) {
	_ = syscall.Kill(-pid, sig)
}

func environment(keepSupervisor bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		secret := false
		for _, s := range SecretEnv {
			if name == s && !(keepSupervisor && name == "SUPERVISOR_TOKEN") {
				secret = true
			}
		}
		if !secret {
			env = append(env, kv)
		}
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
