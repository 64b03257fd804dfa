package command

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// alive lists the processes whose command line contains marker (zombies have none, so only live ones).
func alive(t *testing.T, marker string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(b), marker) {
			out = append(out, pid)
		}
	}
	return out
}

// An attacker's command tries to outlive its call: a setsid child in its own session, a double fork
// re-parented away from the shell, a grandchild that keeps stdout open, a child that ignores SIGTERM.
// Each must end with the call, the call must return in time, and /proc must show nothing left.
func TestWholeTreeEnds(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatal("setsid (util-linux) is needed to reproduce detached children:", err)
	}
	tests := []struct {
		name    string
		cmd     string // %[1]s is a unique sleep length that marks the run's processes
		timeout time.Duration
		cancel  time.Duration // cancel the context after this long (hamcp shutting down); 0 = never
		within  time.Duration
		check   func(r Result) bool
	}{
		{"setsid child at the timeout", "setsid sleep %[1]s & sleep %[1]s", time.Second, 0, 2500 * time.Millisecond,
			func(r Result) bool { return r.TimedOut }},
		{"double fork at the timeout", "(sleep %[1]s &) ; sleep %[1]s", time.Second, 0, 2500 * time.Millisecond,
			func(r Result) bool { return r.TimedOut }},
		{"held stdout after a quick exit", "setsid sleep %[1]s & echo done", 30 * time.Second, 0, 2 * time.Second,
			func(r Result) bool { return !r.TimedOut && r.Stdout == "done\n" && r.ExitCode == 0 }},
		{"held pipe by a daemonised grandchild", "setsid sh -c 'sleep %[1]s' >&2 & exit 7", 30 * time.Second, 0, 2 * time.Second,
			func(r Result) bool { return r.ExitCode == 7 }},
		{"SIGTERM ignored", "trap '' TERM; setsid sh -c \"trap '' TERM; sleep %[1]s\" & sleep %[1]s", 300 * time.Millisecond, 0, 4 * time.Second,
			func(r Result) bool { return r.TimedOut }},
		{"shutdown cancels", "setsid sleep %[1]s & sleep %[1]s", 30 * time.Second, 500 * time.Millisecond, 2 * time.Second,
			func(r Result) bool { return r.Cancelled && !r.TimedOut }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := fmt.Sprintf("%d.%06d", 60+rand.IntN(30), rand.IntN(1_000_000))
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				timer := time.AfterFunc(tt.cancel, cancel)
				defer timer.Stop()
			}
			start := time.Now()
			r, err := Run(ctx, fmt.Sprintf(tt.cmd, marker), Options{Timeout: tt.timeout, Dir: t.TempDir()})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(r) {
				t.Errorf("result %+v", r)
			}
			if took > tt.within {
				t.Errorf("the call took %v, want under %v", took, tt.within)
			}
			if left := alive(t, marker); len(left) > 0 {
				t.Errorf("processes %v outlived the call", left)
			}
		})
	}
}

// The reaper itself is not left behind either, and what the shell reported comes back unchanged.
func TestReaperPassesExitStatus(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]int{"exit 0": 0, "exit 42": 42, "kill -KILL $$": 137, "/nonexistent/x": 127} {
		r, err := Run(context.Background(), cmd, Options{Dir: t.TempDir()})
		if err != nil || r.ExitCode != want {
			t.Errorf("%q: exit %d (want %d), %v", cmd, r.ExitCode, want, err)
		}
	}
}

// A pid file written by a detached child names a process that no longer exists after the call.
func TestDetachedPidGone(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	r, err := Run(context.Background(), "setsid sh -c 'echo $$ > "+pidFile+"; exec sleep 60' & sleep 0.3; exit 0", Options{Timeout: 5 * time.Second})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("%v %+v", err, r)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strings.TrimSpace(string(b))); err == nil {
		t.Errorf("detached child %s is still alive", strings.TrimSpace(string(b)))
	}
}

// hamcp itself killed outright (SIGKILL, OOM killer) cannot cancel anything; the reaper learns of it from
// the kernel (Pdeathsig) and ends the tree. The "hamcp" here is this test binary run as a helper.
func TestTreeEndsWhenHamcpIsKilled(t *testing.T) {
	if marker := os.Getenv("HAMCP_TEST_RUN_FOREVER"); marker != "" {
		Run(context.Background(), "setsid sleep "+marker+" & sleep "+marker, Options{Timeout: MaxTimeout})
		return
	}
	t.Parallel()
	marker := fmt.Sprintf("%d.%06d", 60+rand.IntN(30), rand.IntN(1_000_000))
	helper := exec.Command(os.Args[0], "-test.run=^TestTreeEndsWhenHamcpIsKilled$")
	helper.Env = append(os.Environ(), "HAMCP_TEST_RUN_FOREVER="+marker)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(alive(t, marker)) < 4 { // reaper, shell and both sleeps
		if time.Now().After(deadline) {
			helper.Process.Kill()
			t.Fatal("the helper's command did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	helper.Process.Kill()
	helper.Wait()
	deadline = time.Now().Add(3 * time.Second)
	for left := alive(t, marker); len(left) > 0; left = alive(t, marker) {
		if time.Now().After(deadline) {
			t.Fatalf("processes %v outlived hamcp", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
