package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit"
)

// bin is the hamcp binary built once for the package: these tests run it as a user would.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hamcp-cmd-test-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "hamcp")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building hamcp: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs hamcp with args, stdin and a clean environment (HOME only, so no HAMCP_* leaks in).
func run(t *testing.T, stdin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("hamcp %v did not exit; stderr:\n%s", args, e.String())
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// TestCLI: help shows each subcommand's own options and real defaults; every error names the
// flag, environment variable or add-on option it is about.
func TestCLI(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "options.json"), []byte(`{"permission_database":"sometimes"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		env       []string
		args      []string
		code      int
		want, not []string // in stdout+stderr
	}{
		{name: "serve help", args: []string{"serve", "--help"},
			want: []string{"--listen VALUE", "(default :8099)", "--read-only\n", "--log-level debug|info|warning|error", "--permission-filesystem ask|allow|deny",
				"accepted: addons, automations", "--grant-ttl DURATION", "(default /data)", "HAMCP_RATE_LIMIT"}},
		{name: "stdio help has no HTTP options", args: []string{"stdio", "--help"},
			want: []string{"--demo", "--read-only", "--shutdown-grace DURATION", "--ha-url"},
			not:  []string{"--listen", "--rate-limit", "--allowed-origins", "--external-url", "--trusted-proxies", "--body-limit-kb"}},
		{name: "demo help shows the demo's defaults", args: []string{"demo", "--help"},
			want: []string{"(default 127.0.0.1:8099)", "--conformance", "--no-auth", "--rate-limit 0 turns them off", "--panel-listen VALUE"},
			not:  []string{"(default :8099)", "/data", "--ha-url", "--ha-token", "--supervisor-token"}},
		{name: "bool flag alone", args: []string{"stdio", "--read-only", "--ha-url", "x"}, code: 1,
			want: []string{`flag --ha-url: "x" must be an http:// or https:// URL`}, not: []string{"flag needs an argument"}},
		{name: "bad bool value", args: []string{"serve", "--read-only=maybe"}, code: 1, want: []string{`flag --read-only: "maybe" is not a boolean`}},
		{name: "bad duration", args: []string{"serve", "--grant-ttl", "soon"}, code: 1, want: []string{`flag --grant-ttl: "soon" is not a duration`}},
		{name: "bad environment variable", env: []string{"HAMCP_LOG_LEVEL=loud"}, args: []string{"stdio"}, code: 1,
			want: []string{`environment variable HAMCP_LOG_LEVEL: "loud" is not accepted; accepted values: debug, info, warning, error`}},
		{name: "bad add-on option", env: []string{"HAMCP_DATA_DIR=" + dataDir}, args: []string{"serve"}, code: 1,
			want: []string{"add-on option permission_database in " + filepath.Join(dataDir, "options.json"), `"sometimes" is not accepted`}},
		{name: "toolset checked by the app, named by its flag", args: []string{"stdio", "--demo", "--toolsets", "states,nope"}, code: 1,
			want: []string{`flag --toolsets: "nope" is not a toolset; accepted values:`}},
		{name: "option of another subcommand", args: []string{"stdio", "--listen", ":1"}, code: 1,
			want: []string{"unknown flag --listen; run 'hamcp stdio --help'"}},
		{name: "missing value", args: []string{"serve", "--listen"}, code: 1, want: []string{"a value is missing after --listen"}},
		{name: "stray argument", args: []string{"demo", "now"}, code: 1, want: []string{`unexpected argument "now"`}},
		{name: "the demo's panel stays on this machine", args: []string{"demo", "--listen", "127.0.0.1:0", "--panel-listen", "0.0.0.0:8098"}, code: 1,
			want: []string{`flag --panel-listen "0.0.0.0:8098": give a loopback address`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, "", tt.env, tt.args...)
			all := out + errOut
			if code != tt.code {
				t.Errorf("exit code %d, want %d\n%s", code, tt.code, all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(all, n) {
					t.Errorf("output has %q:\n%s", n, all)
				}
			}
		})
	}
}

// TestStdioAnswersEverythingItRead pipes whole scripts into `hamcp stdio --demo`, as
// `printf … | hamcp stdio --demo` does: stdin ends right after the last request, and every
// request must still be answered before hamcp exits.
func TestStdioAnswersEverythingItRead(t *testing.T) {
	t.Parallel()
	const (
		initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}`
		initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	)
	call := func(id int, tool, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	}
	tests := []struct {
		name    string
		script  []string
		wantIDs []string
	}{
		{"initialize only", []string{initialize}, []string{"1"}},
		{"one tool call", []string{initialize, initialized, call(2, "ha_get_states", `{"domain":"light","limit":2}`)}, []string{"1", "2"}},
		{"several calls at once", []string{initialize, initialized,
			call(2, "ha_get_states", `{"limit":3}`), call(3, "ha_get_states", `{"domain":"sensor","limit":1}`), call(4, "ha_search_entities", `{"query":"kitchen"}`),
			`{"jsonrpc":"2.0","id":"five","method":"tools/list"}`}, []string{"1", "2", "3", "4", `"five"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, strings.Join(tt.script, "\n")+"\n", nil, "stdio", "--demo")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			var got []string
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 8<<20)
			for sc.Scan() {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatalf("not JSON on stdout: %q", sc.Text())
				}
				if m.Result == nil {
					t.Errorf("id %s answered with an error: %s", m.ID, m.Error)
				}
				got = append(got, string(m.ID))
			}
			slices.Sort(got)
			slices.Sort(tt.wantIDs)
			if !slices.Equal(got, tt.wantIDs) {
				t.Errorf("answered ids %v, want %v\nstderr:\n%s", got, tt.wantIDs, errOut)
			}
		})
	}
}

// TestDemoBanner: the banner's curl example sends a bearer header only when there is a token,
// and the banner says how to turn the rate limit off.
func TestDemoBanner(t *testing.T) {
	t.Parallel()
	// A port free a moment ago, for --panel-listen.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	panelAddr := ln.Addr().String()
	ln.Close()
	tests := []struct {
		name      string
		args      []string
		want, not []string
	}{
		{"no auth", []string{"--no-auth"}, []string{"(none: --no-auth)", "--rate-limit 0 turns it off", "curl -s http://127.0.0.1:",
			"behind hamcp_search_tools (tool_mode auto; --tool-mode all lists them all)"}, []string{"Bearer"}},
		{"every tool listed", []string{"--no-auth", "--tool-mode", "all"}, []string{"all listed (tool_mode all)"}, []string{"hamcp_search_tools"}},
		{"token, no rate limit", []string{"--rate-limit", "0"}, []string{"-H 'Authorization: Bearer ey", "Rate limit       off"}, []string{"Bearer  ", "Bearer '"}},
		{"panel on a chosen port", []string{"--no-auth", "--panel-listen", panelAddr}, []string{"hamcp panel      http://" + panelAddr + "/"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			info := filepath.Join(t.TempDir(), "info.json")
			cmd := exec.Command(bin, append([]string{"demo", "--listen", "127.0.0.1:0", "--info-file", info}, tt.args...)...)
			cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			testkit.EventuallyNoError(t, "the banner", func() error {
				if !strings.Contains(stderr.String(), "Press Ctrl+C") {
					return fmt.Errorf("none yet:\n%s", stderr.String())
				}
				return nil
			})
			banner := stderr.String()
			for _, w := range tt.want {
				if !strings.Contains(banner, w) {
					t.Errorf("banner lacks %q:\n%s", w, banner)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(banner, n) {
					t.Errorf("banner has %q:\n%s", n, banner)
				}
			}
		})
	}
}

// syncBuffer is a bytes.Buffer the child process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
