package command

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		cmd   string
		opts  Options
		check func(t *testing.T, r Result)
	}{
		{"exit code and streams", "echo out; echo err >&2; exit 3", Options{}, func(t *testing.T, r Result) {
			if r.ExitCode != 3 || r.Stdout != "out\n" || r.Stderr != "err\n" {
				t.Errorf("%+v", r)
			}
		}},
		{"working directory", "pwd", Options{Dir: dir}, func(t *testing.T, r Result) {
			if strings.TrimSpace(r.Stdout) != dir {
				t.Errorf("pwd = %q", r.Stdout)
			}
		}},
		{"output capped with marker", "head -c 100000 /dev/zero | tr '\\0' a", Options{MaxOutput: 1000}, func(t *testing.T, r Result) {
			if !r.StdoutTruncated || !strings.Contains(r.Stdout, "bytes truncated") || len(r.Stdout) > 1100 {
				t.Errorf("truncated=%v len=%d", r.StdoutTruncated, len(r.Stdout))
			}
		}},
		{"timeout kills", "sleep 30", Options{Timeout: 300 * time.Millisecond}, func(t *testing.T, r Result) {
			if !r.TimedOut || r.Duration > 5*time.Second {
				t.Errorf("%+v", r)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), tt.cmd, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
}

func TestRunRefusals(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		opts Options
	}{{"", Options{}}, {"  ", Options{}}, {"echo \x00", Options{}}, {"true", Options{Timeout: 601 * time.Second}}} {
		if _, err := Run(context.Background(), c.cmd, c.opts); err == nil {
			t.Errorf("%q accepted", c.cmd)
		}
	}
}

// A timed-out command's children die with it: the whole process group is killed.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	r, err := Run(context.Background(), "sleep 60 & echo $! > "+pidFile+"; wait", Options{Timeout: 300 * time.Millisecond})
	if err != nil || !r.TimedOut {
		t.Fatalf("%v %+v", err, r)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still alive after the command timed out", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCancelAndProgress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ticks atomic.Int32
	go func() {
		time.Sleep(400 * time.Millisecond)
		cancel()
	}()
	r, err := Run(ctx, "for i in 1 2 3 4 5 6 7 8 9; do echo line$i; sleep 0.1; done; sleep 30", Options{Interval: 50 * time.Millisecond, Progress: func(time.Duration, string) { ticks.Add(1) }})
	if err != nil || !r.Cancelled || r.TimedOut {
		t.Fatalf("%v %+v", err, r)
	}
	if ticks.Load() < 2 {
		t.Errorf("progress called %d times", ticks.Load())
	}
}

// The environment is an allow-list: a variable nobody listed (here an unknown secret) never reaches the
// command, and the Supervisor token only through Set. Not parallel: it sets hamcp's own environment.
func TestEnvironmentIsAllowListed(t *testing.T) {
	t.Setenv("SECRET_X", "1")
	t.Setenv("SUPERVISOR_TOKEN", "sup-secret")
	t.Setenv("HA_TOKEN", "ha-secret")
	t.Setenv("MY_TOOL_HOME", "/opt/tool")
	t.Setenv("TZ", "Europe/Paris")
	vars := func(o Options) map[string]string {
		t.Helper()
		r, err := Run(context.Background(), "env", o)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
			k, v, _ := strings.Cut(l, "=")
			out[k] = v
		}
		return out
	}
	env := vars(Options{})
	for _, leaked := range []string{"SECRET_X", "SUPERVISOR_TOKEN", "HA_TOKEN", "MY_TOOL_HOME", "HAMCP_COMMAND_REAPER"} {
		if _, ok := env[leaked]; ok {
			t.Errorf("%s reached the command without being allowed", leaked)
		}
	}
	if env["TZ"] != "Europe/Paris" || env["PATH"] == "" {
		t.Errorf("base variables missing: %v", env)
	}
	env = vars(Options{AllowEnv: []string{"MY_TOOL_HOME"}, Set: map[string]string{"SUPERVISOR_TOKEN": "granted"}})
	if env["MY_TOOL_HOME"] != "/opt/tool" || env["SUPERVISOR_TOKEN"] != "granted" || env["SECRET_X"] != "" || env["HA_TOKEN"] != "" {
		t.Errorf("allowed and set variables wrong: %v", env)
	}
	if _, err := Run(context.Background(), "env", Options{AllowEnv: []string{"SUPERVISOR_TOKEN"}}); err == nil {
		t.Error("SUPERVISOR_TOKEN accepted in the allow-list")
	}
}

func TestCheckEnvNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		names []string
		ok    bool
	}{
		{nil, true}, {[]string{"MY_VAR", "_X1"}, true},
		{[]string{"1BAD"}, false}, {[]string{"A=B"}, false}, {[]string{""}, false},
		{[]string{"SUPERVISOR_TOKEN"}, false}, {[]string{"HASSIO_TOKEN"}, false}, {[]string{"HA_TOKEN"}, false},
		// hamcp's options, some of them tokens and passwords, in any spelling.
		{[]string{"HAMCP_HUBITAT_TOKEN"}, false}, {[]string{"hamcp_hubitat_password"}, false}, {[]string{"supervisor_token"}, false},
	} {
		if err := CheckEnvNames(c.names); (err == nil) != c.ok {
			t.Errorf("CheckEnvNames(%q) = %v", c.names, err)
		}
	}
}

func FuzzCapped(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), 8)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 2 || max > 4096 {
			return
		}
		c := newCapped(max)
		for i := 0; i < len(data); i += 7 {
			c.Write(data[i:min(i+7, len(data))])
		}
		s, trunc := c.String()
		if !trunc && s != string(data) {
			t.Fatalf("untruncated output differs")
		}
		if trunc && !strings.Contains(s, "truncated") {
			t.Fatal("no marker")
		}
		_ = c.lastLine()
	})
}
