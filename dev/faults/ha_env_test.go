package faults

import (
	"context"
	"encoding/json"

	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/app"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/permission"
)

// haEnv is hamcp serving MCP over HTTP on loopback against a simulated Home Assistant of the
// test's own: faults are switched for a whole HA, so tests that break HA cannot share one.
type haEnv struct {
	home *sim.Home
	app  *app.App
	url  string // hamcp's base URL
}

// haOptions are what a test changes about the fixture.
type haOptions struct {
	haTimeout time.Duration // app.Options.HATimeout
}

func haStart(t *testing.T, o haOptions) *haEnv {
	t.Helper()
	home, err := sim.Start(context.Background(), sim.Options{Seed: 15, HistoryDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Sources{NoOptionsFile: true, Env: func(string) string { return "" }})
	if err != nil {
		home.Close()
		t.Fatal(err)
	}
	cfg.RateLimit = 0
	cfg.ToolMode = "all"
	cfg.HAURL, cfg.HAToken, cfg.HAAuthURL = home.URL(), home.Token(), home.URL()
	cfg.FSBase = home.Sandbox().Root
	cfg.DataDir = t.TempDir()
	cfg.ShutdownGrace = time.Second
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, app.Options{Logger: logger, HATimeout: o.haTimeout})
	if err != nil {
		cancel()
		home.Close()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		a.Close()
		home.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.ServeHTTP(ctx, ln, app.Options{}) }()
	t.Cleanup(func() {
		cancel()
		<-done
		a.Close()
		home.Close()
	})
	e := &haEnv{home: home, app: a, url: "http://" + ln.Addr().String()}
	if !a.WaitReady(ctx, 10*time.Second) {
		t.Fatal("the state mirror never filled")
	}
	return e
}

// haBearer sends a token with every request, as an MCP client configured with one does.
type haBearer string

func (b haBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// client opens an MCP session with the HA administrator's token (checked by HA, then cached).
func (e *haEnv) client(t *testing.T) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: haBearer(e.home.Token())}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fault-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// haResult is one tool call as the model sees it, and how long it took.
type haResult struct {
	text    string
	isError bool
	code    string // the tool error's code, when isError
	took    time.Duration
	err     error // a protocol error (not a tool error)
}

func haCall(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) haResult {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	r := haResult{took: time.Since(start), err: err}
	if err != nil {
		return r
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			r.text += tc.Text
		}
	}
	r.isError = res.IsError
	if r.isError {
		var te struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal([]byte(r.text), &te)
		r.code = te.Error
	}
	return r
}

// mustOK calls a tool that must succeed.
func haMustOK(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := haCall(ctx, cs, tool, args)
	if r.err != nil || r.isError {
		t.Fatalf("%s: %v %s", tool, r.err, r.text)
	}
	return r.text
}

// grant asks for a permission category with a first call of tool and has the user approve it
// in the panel, as the add-on's sidebar does (Home Assistant's ingress vouches for the user).
func (e *haEnv) grant(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) {
	t.Helper()
	r := haCall(context.Background(), cs, tool, args)
	var te struct {
		Error   string         `json:"error"`
		Details map[string]any `json:"details"`
	}
	if r.err != nil || !r.isError || json.Unmarshal([]byte(r.text), &te) != nil || te.Error != "permission_required" {
		t.Fatalf("%s before a grant: %v %s", tool, r.err, r.text)
	}
	id, _ := te.Details["request_id"].(string)
	if err := e.app.Permissions.Approve(context.Background(), id, permission.Approver{Via: permission.ViaPanel, UserID: "panel-user"}); err != nil {
		t.Fatal(err)
	}
}

// haHealth reads /mcp/health: its status and Home Assistant's part.
func (e *haEnv) health(t *testing.T) (status string, ha map[string]any) {
	t.Helper()
	resp, err := http.Get(e.url + "/mcp/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Status   string                    `json:"status"`
		Backends map[string]map[string]any `json:"backends"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h.Status, h.Backends["home_assistant"]
}

// haStatus is hamcp's own view of its link to HA.
func (e *haEnv) haStatus() homeassistant.Status {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return e.app.HA.Status(ctx)
}

// haConnected reports whether hamcp's WebSocket to HA is up.
func (e *haEnv) haConnected() bool { return e.haStatus().WebSocketConnected }

// haUnreachable checks a failed call's error as the model reads it: the backend is named as
// unreachable, and the words include what happened. A call that never reached HA says nothing
// changed; one that was sent and lost its answer says nothing about it (HA may have carried it
// out) and tells the model to read the state before repeating it.
func haUnreachable(t *testing.T, what string, r haResult, words ...string) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: protocol error %v, want a tool error", what, r.err)
	}
	if !r.isError || r.code != "backend_unavailable" || !strings.Contains(r.text, "Home Assistant is not reachable") {
		t.Fatalf("%s: want backend_unavailable naming Home Assistant, got %s", what, r.text)
	}
	sent := strings.Contains(r.text, "no answer came")
	switch {
	case sent && (strings.Contains(r.text, `"changed"`) || !strings.Contains(r.text, "read the state before repeating it")):
		t.Fatalf("%s: a call HA received may have taken effect; the error must not say whether, and must say to check: %s", what, r.text)
	case !sent && !strings.Contains(r.text, `"changed":false`):
		t.Fatalf("%s: a call that never reached HA must say nothing changed: %s", what, r.text)
	}
	for _, w := range words {
		if !strings.Contains(r.text, w) {
			t.Fatalf("%s: error lacks %q: %s", what, w, r.text)
		}
	}
}
