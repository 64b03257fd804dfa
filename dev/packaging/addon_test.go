package packaging

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
)

// buildDir holds the add-on binary the package's tests share; TestMain removes it.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hamcp-addon-build-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const testVersion = "0.0.0-packaging-test"

// addonBinary builds hamcp once, exactly as the Dockerfile's build stage does: by running
// addon/compile-hamcp.sh (TestDockerfileStages checks the Dockerfile runs that script).
var addonBinary = sync.OnceValues(func() (string, error) {
	r, err := repo()
	if err != nil {
		return "", err
	}
	out := filepath.Join(buildDir, "hamcp")
	cmd := exec.Command("./addon/compile-hamcp.sh", out)
	cmd.Dir = r
	cmd.Env = append(os.Environ(), "BUILD_VERSION="+testVersion)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("addon/compile-hamcp.sh: %v\n%s", err, msg)
	}
	return out, nil
})

func binary(t *testing.T) string { t.Helper(); return must(t, addonBinary) }

// TestAddonBinaryIsStatic: the base image is Alpine (musl), so the binary must need no C library:
// no program interpreter, no shared libraries, built without cgo, -trimpath and without the
// simulated home.
func TestAddonBinaryIsStatic(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the add-on binary has a PT_INTERP program header: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the add-on binary needs shared libraries %v", libs)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "-tags": "nosim"} {
		if settings[k] != want {
			t.Errorf("build setting %s = %q, want %q", k, settings[k], want)
		}
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("add-on binary: %.1f MB", float64(fi.Size())/(1<<20))
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), testVersion) {
		t.Errorf("hamcp version = %q (%v), want BUILD_VERSION %s", out, err, testVersion)
	}
	// The simulated home is left out: the demo explains instead of starting.
	out, err = exec.Command(bin, "demo").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nosim") {
		t.Errorf("hamcp demo in the add-on build: %v %q, want an error naming the nosim build", err, out)
	}
}

var servingLine = regexp.MustCompile(`hamcp serving.*mcp=http://([0-9.:]+)/mcp`)

var panelLine = regexp.MustCompile(`hamcp panel listening" addr=([0-9.:]+)`)

// TestAddonStartPath runs the add-on's start path with the real binary: `hamcp serve` as run.sh
// starts it, SUPERVISOR_TOKEN in the environment, the options the Supervisor writes on install
// (config.yaml's options block) in the data directory's options.json, and the simulated home's
// Supervisor standing in for http://supervisor (Home Assistant through its /core proxy).
func TestAddonStartPath(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	home, err := sim.Start(ctx, sim.Options{HistoryDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { home.Close() })

	data := t.TempDir()
	opts := manifest(t).Options
	// One option away from its default proves hamcp read this options.json.
	opts["disabled_tools"] = []string{"ha_get_supervisor_info"}
	raw, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "options.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "serve")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"SUPERVISOR_TOKEN=" + home.SupervisorToken(),
		// What the container fixes: http://supervisor, /data, folders mounted at /.
		"HAMCP_SUPERVISOR_URL=" + home.SupervisorURL(),
		"HAMCP_DATA_DIR=" + data,
		"HAMCP_FS_BASE=" + home.Sandbox().Root,
		"HAMCP_LISTEN=127.0.0.1:0",
		// The panel's ingress listener (config.yaml's ingress_port in the container).
		"HAMCP_INGRESS_LISTEN=127.0.0.1:0",
		// Users' tokens are checked against HA itself, which the container reaches as homeassistant.
		"HAMCP_HA_AUTH_URL=" + home.URL(),
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logs bytes.Buffer
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	log := func() string { logMu.Lock(); defer logMu.Unlock(); return logs.String() }
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-ctx.Done():
		t.Fatalf("hamcp serve did not start in add-on mode:\n%s", log())
	}

	// Health: served, and Home Assistant answers through the Supervisor proxy.
	var health struct {
		Status   string
		Version  string
		Backends map[string]struct{ OK bool }
	}
	for {
		health.Status = ""
		if err := getJSON(ctx, base+"/mcp/health", &health); err == nil && health.Status == "ok" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/mcp/health never ok: %+v\n%s", health, log())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if health.Version != testVersion {
		t.Errorf("/mcp/health version %q, want %q", health.Version, testVersion)
	}

	// Tool calls through MCP (the single-POST form n8n uses), with a user's long-lived token.
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"ha_get_states", map[string]any{"domain": "light"}, "light."},   // HA through /core/api and /core/websocket
		{"ha_manage_addons", map[string]any{"action": "list"}, `"slug"`}, // the Supervisor API (hassio_role manager)
	} {
		text, err := callTool(ctx, base+"/mcp", home.Token(), tc.tool, tc.args)
		if err != nil {
			t.Errorf("%s: %v\n%s", tc.tool, err, log())
			continue
		}
		if !strings.Contains(text, tc.want) {
			t.Errorf("%s answered %.300s, want it to mention %s", tc.tool, text, tc.want)
		}
	}
	if _, err := callTool(ctx, base+"/mcp", home.Token(), "ha_get_supervisor_info", map[string]any{}); err == nil {
		t.Error("ha_get_supervisor_info answered although options.json disables it")
	}
	if _, err := callTool(ctx, base+"/mcp", "not-a-token", "ha_get_states", map[string]any{}); err == nil {
		t.Error("a call without a valid token was served")
	}

	// The panel listens for the ingress proxy and answers nobody else: in the add-on, not even
	// loopback (a command the model runs in the container must not speak for the user).
	var panelAddr string
	for deadline := time.Now().Add(10 * time.Second); panelAddr == ""; time.Sleep(20 * time.Millisecond) {
		if m := panelLine.FindStringSubmatch(log()); m != nil {
			panelAddr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the panel's ingress listener never started:\n%s", log())
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+panelAddr+"/approvals", nil)
	req.Header.Set("X-Remote-User-Id", "forged")
	req.Header.Set("X-Forwarded-For", "172.30.32.2")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("the panel from loopback with forged ingress headers: %v %v, want 403", err, resp)
	} else {
		resp.Body.Close()
	}

	// SIGTERM (the Supervisor stopping the add-on) ends hamcp cleanly.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("hamcp serve exited with %v after SIGTERM:\n%s", err, log())
	}
	if out := log(); strings.Contains(out, home.SupervisorToken()) || strings.Contains(out, home.Token()) {
		t.Error("the add-on log contains a token")
	}
}

func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// callTool sends one JSON-RPC tools/call as a single POST and returns the result's text.
func callTool(ctx context.Context, url, token, tool string, args map[string]any) (string, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, raw)
	}
	var rpc struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		return "", fmt.Errorf("not a JSON-RPC answer: %.300s", raw)
	}
	if rpc.Error != nil {
		return "", fmt.Errorf("JSON-RPC error: %s", rpc.Error.Message)
	}
	if rpc.Result == nil || len(rpc.Result.Content) == 0 {
		return "", fmt.Errorf("no result: %.300s", raw)
	}
	if rpc.Result.IsError {
		return "", fmt.Errorf("tool error: %s", rpc.Result.Content[0].Text)
	}
	return rpc.Result.Content[0].Text, nil
}
