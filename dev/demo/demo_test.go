package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/demo"
	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/app"
	"github.com/hamcp/hamcp/src/config"
)

// env is one running demo (simulated home + hamcp over HTTP) shared by the tests in this file.
type env struct {
	d   *demo.Demo
	url string // http://127.0.0.1:PORT
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startDemo starts the demo without recorder history: generating it costs seconds of CPU per
// demo under the race detector (8–12 s on a busy 2-core machine, against under one without), and
// most tests never read it. Tests that do use startDemoWithHistory.
func startDemo(t testing.TB, mutate func(*config.Config)) *env {
	return startDemoWith(t, sim.Options{HistoryDays: -1}, mutate)
}

// startDemoWithHistory starts the demo with a day of generated recorder history, enough for the
// history, statistics and SQL tools to find rows.
func startDemoWithHistory(t testing.TB, mutate func(*config.Config)) *env {
	return startDemoWith(t, sim.Options{HistoryDays: 1}, mutate)
}

func startDemoWith(t testing.TB, so sim.Options, mutate func(*config.Config)) *env {
	t.Helper()
	cfg, err := config.Load(config.Sources{NoOptionsFile: true, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	cfg.RateLimit = 0
	// The demo's Hubitat hub takes tools/list past auto's budget; these tests call tools directly.
	cfg.ToolMode = "all"
	if mutate != nil {
		mutate(cfg)
	}
	// Like the demo binary, OAuth runs at the server's own URL.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ExternalURL = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	d, err := demo.Start(ctx, cfg, so, quietLogger())
	if err != nil {
		cancel()
		ln.Close()
		t.Fatal(err)
	}
	d.App.WaitReady(ctx, 10*time.Second)
	done := make(chan error, 1)
	go func() { done <- d.App.ServeHTTP(ctx, ln, app.Options{}) }()
	t.Cleanup(func() {
		cancel()
		<-done
		d.Close()
	})
	return &env{d: d, url: "http://" + ln.Addr().String()}
}

type bearer struct {
	token string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func (e *env) client(t testing.TB, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{e.d.Info.Token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "1"}, opts).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callJSON(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	if out != nil && !res.IsError {
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), out); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	return res
}

func text(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

func TestDemoEndToEnd(t *testing.T) {
	t.Parallel()
	e := startDemoWithHistory(t, nil)
	cs := e.client(t, nil)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tool := range tools.Tools {
		have[tool.Name] = true
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("%s lacks description or schema", tool.Name)
		}
	}
	for _, want := range []string{"ha_get_states", "ha_get_entity_details", "ha_call_service", "ha_get_history", "ha_get_permissions", "ha_get_audit_log"} {
		if !have[want] {
			t.Errorf("tools/list lacks %s", want)
		}
	}

	var lights struct {
		Total int `json:"total"`
		Items []struct {
			EntityID string `json:"entity_id"`
			State    string `json:"state"`
		} `json:"items"`
	}
	callJSON(t, cs, "ha_get_states", map[string]any{"domain": "light"}, &lights)
	if lights.Total < 3 {
		t.Fatalf("demo home has %d lights", lights.Total)
	}
	target := lights.Items[0].EntityID
	want := "on"
	if lights.Items[0].State == "on" {
		want = "off"
	}
	var changed struct {
		Changed []struct{ EntityID, State string } `json:"changed"`
	}
	res := callJSON(t, cs, "ha_call_service", map[string]any{"domain": "light", "service": "turn_" + want, "entity_id": []string{target}}, &changed)
	if res.IsError {
		t.Fatalf("call_service: %s", text(res))
	}
	// The mirror follows the state_changed event, on a goroutine of its own.
	testkit.EventuallyNoError(t, target+" state after call_service", func() error {
		var ent struct{ State string }
		if callJSON(t, cs, "ha_get_entity_details", map[string]any{"entity_id": target}, &ent); ent.State != want {
			return fmt.Errorf("%q, want %q", ent.State, want)
		}
		return nil
	})

	var hist struct {
		Entities []struct {
			EntityID string `json:"entity_id"`
			Rows     []struct{ State, At string }
		} `json:"entities"`
	}
	res = callJSON(t, cs, "ha_get_history", map[string]any{"entity_ids": []string{target}, "hours": 48}, &hist)
	if res.IsError || len(hist.Entities) != 1 || len(hist.Entities[0].Rows) < 2 {
		t.Fatalf("history: %s", text(res))
	}

	for _, bad := range []map[string]any{{"entity_id": "Not An Id"}, {}} {
		res = callJSON(t, cs, "ha_get_entity_details", bad, nil)
		if !res.IsError || !strings.Contains(text(res), "entity_id") {
			t.Errorf("bad args %v: %s", bad, text(res))
		}
	}
	res = callJSON(t, cs, "ha_get_entity_details", map[string]any{"entity_id": "light.does_not_exist"}, nil)
	if !res.IsError || !strings.Contains(text(res), "not_found") {
		t.Errorf("unknown entity: %s", text(res))
	}
	res = callJSON(t, cs, "ha_call_service", map[string]any{"domain": "lock", "service": "unlock", "entity_id": []string{"lock.front_door"}}, nil)
	if !res.IsError || !strings.Contains(text(res), "confirm") {
		t.Errorf("unlock without confirm: %s", text(res))
	}
}

func TestResourcesPromptsCompletion(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	updated := make(chan string, 16)
	cs := e.client(t, &mcp.ClientOptions{ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		select {
		case updated <- req.Params.URI:
		default:
		}
	}})
	ctx := context.Background()
	rl, err := cs.ListResources(ctx, nil)
	if err != nil || len(rl.Resources) == 0 {
		t.Fatalf("resources/list: %v %v", err, rl)
	}
	var states []struct {
		EntityID string `json:"entity_id"`
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hass://entities"})
	if err != nil || json.Unmarshal([]byte(rr.Contents[0].Text), &states) != nil || len(states) < 60 {
		t.Fatalf("read hass://entities: %v, %d entities", err, len(states))
	}
	light := ""
	for _, s := range states {
		if strings.HasPrefix(s.EntityID, "light.") {
			light = s.EntityID
			break
		}
	}
	uri := "hass://entities/" + light
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	callJSON(t, cs, "ha_call_service", map[string]any{"domain": "light", "service": "toggle", "entity_id": []string{light}}, nil)
	select {
	case got := <-updated:
		if got != uri {
			t.Errorf("update for %s, want %s", got, uri)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/resources/updated after a state change")
	}

	pl, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(pl.Prompts) < 5 {
		t.Fatalf("prompts/list: %v %d", err, len(pl.Prompts))
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "troubleshoot_entity", Arguments: map[string]string{"entity_id": light}})
	if err != nil || !strings.Contains(gp.Messages[0].Content.(*mcp.TextContent).Text, light) {
		t.Fatalf("prompts/get: %v", err)
	}
	cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "troubleshoot_entity"}, Argument: mcp.CompleteParamsArgument{Name: "entity_id", Value: "light."}})
	if err != nil || len(cr.Completion.Values) == 0 || !strings.HasPrefix(cr.Completion.Values[0], "light.") {
		t.Fatalf("completion: %v %+v", err, cr)
	}
}

func post(t testing.TB, url, token, origin, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestHTTPAuthAgainstSimulatedHA(t *testing.T) {
	t.Parallel()
	// A small limit: reaching it takes a few dozen tools/list calls, not a few hundred.
	const rateLimit = 20
	e := startDemo(t, func(c *config.Config) { c.RateLimit = rateLimit })
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	tests := []struct {
		name, token, origin string
		status              int
	}{
		{"no token", "", "", 401},
		{"token HA rejects", "not-a-real-token", "", 401},
		{"HA long-lived token", e.d.Info.Token, "", 200},
		{"HA non-admin user token", e.d.Info.UserToken, "", 403},
		{"unknown origin", e.d.Info.Token, "https://evil.example.com", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, e.url+"/mcp", tt.token, tt.origin, list)
			if resp.StatusCode != tt.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if tt.status == 200 {
				var msg struct {
					Result struct{ Tools []any } `json:"result"`
				}
				if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || len(msg.Result.Tools) == 0 {
					t.Fatalf("sessionless tools/list: %v", err)
				}
			}
		})
	}
	// The rate limit counts every request from this IP, including the ones above. The bucket
	// refills at rateLimit per minute, so on a slow (race-instrumented) run a few more than
	// rateLimit+1 may pass; 4×rateLimit is a bound no refill reaches within the loop.
	var last int
	for i := 0; i < 4*rateLimit; i++ {
		last = post(t, e.url+"/mcp", e.d.Info.Token, "", list).StatusCode
		if last == 429 {
			break
		}
	}
	if last != 429 {
		t.Fatalf("no 429 within %d requests at a limit of %d per minute (last %d)", 4*rateLimit, rateLimit, last)
	}
	resp, err := http.Get(e.url + "/mcp/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v", err)
	}
	var h struct {
		Status   string
		Backends map[string]struct{ OK bool }
	}
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if h.Status != "ok" || !h.Backends["home_assistant"].OK {
		t.Fatalf("health = %+v", h)
	}
}

func TestHADown(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	cs := e.client(t, nil)
	e.d.Home.SetDown(true)
	defer e.d.Home.SetDown(false)
	res := callJSON(t, cs, "ha_call_service", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []string{"light.kitchen_ceiling"}}, nil)
	if !res.IsError || !strings.Contains(text(res), "not reachable") {
		t.Fatalf("call_service with HA down: %s", text(res))
	}
	resp, err := http.Get(e.url + "/mcp/health")
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Status string }
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if h.Status != "degraded" {
		t.Fatalf("health with HA down: %q", h.Status)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// hamcpBinary builds the real binary once for tests that run it as a process.
func hamcpBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hamcp-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "hamcp")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/hamcp/hamcp/src/cmd/hamcp").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building hamcp: %v %s", buildErr, binPath)
	}
	return binPath
}

func TestStdioDemoProcess(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(hamcpBinary(t), "stdio", "--demo", "--log-level", "error")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var lights struct{ Total int }
	res := callJSON(t, cs, "ha_get_states", map[string]any{"domain": "light", "limit": 2}, &lights)
	if res.IsError || lights.Total == 0 {
		t.Fatalf("stdio ha_get_states: %s", text(res))
	}
}

func TestDemoCommandInfoFileAndNoAuthRefusal(t *testing.T) {
	t.Parallel()
	bin := hamcpBinary(t)
	out, err := exec.Command(bin, "demo", "--no-auth", "--listen", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loopback") {
		t.Fatalf("--no-auth on 0.0.0.0 was not refused: %v %s", err, out)
	}
	info := filepath.Join(t.TempDir(), "info.json")
	cmd := exec.Command(bin, "demo", "--listen", "127.0.0.1:0", "--info-file", info, "--log-level", "error")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	var got map[string]any
	testkit.Eventually(t, "the info file", func() bool {
		b, err := os.ReadFile(info)
		return err == nil && json.Unmarshal(b, &got) == nil
	})
	for _, k := range []string{"mcp_url", "token", "ha_url", "ha_token", "sandbox_dir"} {
		if s, _ := got[k].(string); s == "" {
			t.Errorf("info file lacks %s: %v", k, got)
		}
	}
	resp := post(t, got["mcp_url"].(string), got["token"].(string), "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("curl-style tools/list against the demo binary: %d", resp.StatusCode)
	}
}
