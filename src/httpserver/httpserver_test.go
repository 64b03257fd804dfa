package httpserver

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/toolkit"
)

// staticTokens accepts a fixed set of tokens; it stands in for the HA verifier, which is tested
// against the simulated home in src/app.
type staticTokens map[string]string

func (s staticTokens) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if user, ok := s[token]; ok {
		return &auth.TokenInfo{UserID: user, Scopes: []string{authn.ScopeFull}}, nil
	}
	return nil, authn.ErrInvalidToken
}

type pingArgs struct {
	Word string `json:"word,omitempty"`
}

func startServer(t *testing.T, o Options) string {
	t.Helper()
	reg := toolkit.NewRegistry()
	reg.Add(toolkit.Define(toolkit.Spec[pingArgs, map[string]string]{
		Name: "t_ping", Toolset: "t", Description: "answers pong", ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a pingArgs) (map[string]string, error) {
			return map[string]string{"pong": a.Word}, nil
		},
	}))
	o.Builder = mcpserver.New(mcpserver.Options{Name: "t", Version: "1", Registry: reg})
	if o.Verifier == nil {
		o.Verifier = staticTokens{"good": "alice", "other": "bob"}
	}
	return serve(t, New(o))
}

// serve runs s on a loopback port until the test ends and returns its base URL.
func serve(t testing.TB, s *Server) string {
	t.Helper()
	base, _ := serveStoppable(t, s)
	return base
}

// serveStoppable is serve with a stop that ends Serve at once and returns its error.
func serveStoppable(t testing.TB, s *Server) (base string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, time.Second) }()
	var once sync.Once
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), stop
}

func post(t *testing.T, url, token, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const listCall = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

func TestHTTPGuards(t *testing.T) {
	base := startServer(t, Options{RateLimit: 1000, AllowedOrigins: []string{"https://panel.example.com"}})
	tests := []struct {
		name   string
		token  string
		hdr    map[string]string
		status int
	}{
		{"no token", "", nil, http.StatusUnauthorized},
		{"bad token", "nope", nil, http.StatusUnauthorized},
		{"good token sessionless", "good", nil, http.StatusOK},
		{"unknown origin", "good", map[string]string{"Origin": "https://evil.example.com"}, http.StatusForbidden},
		{"allowed origin", "good", map[string]string{"Origin": "https://panel.example.com"}, http.StatusOK},
		{"loopback origin on loopback", "good", map[string]string{"Origin": "http://localhost:6274"}, http.StatusOK},
		{"rebinding host", "good", map[string]string{"Host": "evil.example.com"}, http.StatusForbidden},
		{"token in query is not accepted", "", map[string]string{}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := base + "/mcp"
			if tt.name == "token in query is not accepted" {
				url += "?access_token=good"
			}
			resp := post(t, url, tt.token, listCall, tt.hdr)
			if resp.StatusCode != tt.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if tt.status == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without Bearer challenge: %q", resp.Header.Get("WWW-Authenticate"))
			}
			if tt.name == "bad token" && !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
				t.Errorf("bad token challenge lacks invalid_token: %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestSessionlessPostReturnsPlainJSON(t *testing.T) {
	base := startServer(t, Options{})
	for _, body := range []string{listCall, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_ping","arguments":{"word":"hi"}}}`} {
		resp := post(t, base+"/mcp", "good", body, nil)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("status %d type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		var msg struct {
			Result json.RawMessage `json:"result"`
			Error  any             `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || msg.Error != nil || len(msg.Result) == 0 {
			t.Fatalf("bad JSON-RPC answer: %v %+v", err, msg)
		}
		if resp.Header.Get(sessionHeader) != "" {
			t.Error("sessionless answer carries a session id")
		}
	}
}

func TestRateLimit(t *testing.T) {
	base := startServer(t, Options{RateLimit: 100})
	var last *http.Response
	for i := 1; i <= 101; i++ {
		last = post(t, base+"/mcp", "good", listCall, nil)
		if i <= 100 && last.StatusCode != 200 {
			t.Fatalf("request %d refused: %d", i, last.StatusCode)
		}
		if i <= 100 {
			// Give the connection back: 100 open connections would hit the per-IP cap.
			io.Copy(io.Discard, last.Body)
			last.Body.Close()
		}
	}
	if last.StatusCode != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
		t.Fatalf("101st request: %d Retry-After=%q", last.StatusCode, last.Header.Get("Retry-After"))
	}
	// health stays reachable for watchdogs.
	resp, err := http.Get(base + "/mcp/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health under rate limit: %v %v", err, resp)
	}
	resp.Body.Close()
}

func TestHealthAndToolList(t *testing.T) {
	base := startServer(t, Options{Version: "9.9", Health: []HealthCheck{{Name: "home_assistant", Check: func(context.Context) (bool, any) { return false, "down" }}}})
	resp, err := http.Get(base + "/mcp/health")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Status, Version string
		Backends        map[string]map[string]any
	}
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if resp.StatusCode != 200 || h.Status != "degraded" || h.Version != "9.9" || h.Backends["home_assistant"]["ok"] != false {
		t.Fatalf("health = %d %+v", resp.StatusCode, h)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/mcp/tools", nil)
	if r, _ := http.DefaultClient.Do(req); r.StatusCode != 401 {
		t.Fatalf("tool list without token: %d", r.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer good")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tl struct {
		Tools []toolEntry `json:"tools"`
	}
	json.NewDecoder(r.Body).Decode(&tl)
	r.Body.Close()
	if len(tl.Tools) != 1 || tl.Tools[0].Name != "t_ping" || tl.Tools[0].Description == "" || tl.Tools[0].InputSchema == nil {
		t.Fatalf("tool list = %+v", tl)
	}
}

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

func TestStatefulSessionsAndLegacySSE(t *testing.T) {
	base := startServer(t, Options{})
	ctx := context.Background()
	client := &http.Client{Transport: bearer{"good", http.DefaultTransport}}
	tests := []struct {
		name      string
		transport mcp.Transport
		version   string // asked for; "" lets the go-sdk client probe server/discover first
		want      string // negotiated
	}{
		{"streamable 2025-06-18", &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: client}, "2025-06-18", "2025-06-18"},
		// hamcp declines server/discover, so a client preferring 2026-07-28 holds a session.
		{"streamable, client prefers 2026-07-28", &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: client}, "", "2025-11-25"},
		{"streamable trailing slash", &mcp.StreamableClientTransport{Endpoint: base + "/mcp/", HTTPClient: client}, "", "2025-11-25"},
		{"legacy sse", &mcp.SSEClientTransport{Endpoint: base + "/sse", HTTPClient: client}, "", "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tt.transport, &mcp.ClientSessionOptions{ProtocolVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t_ping", Arguments: map[string]any{"word": tt.name}})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			if !strings.Contains(res.Content[0].(*mcp.TextContent).Text, tt.name) {
				t.Errorf("unexpected answer %v", res.Content[0])
			}
			if got := cs.InitializeResult().ProtocolVersion; got != tt.want {
				t.Errorf("negotiated %s, want %s", got, tt.want)
			}
			if _, ok := tt.transport.(*mcp.StreamableClientTransport); ok && cs.ID() == "" {
				t.Error("no session")
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Errorf("ping: %v", err)
			}
		})
	}
}

func TestSessionBoundToUser(t *testing.T) {
	base := startServer(t, Options{})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	resp := post(t, base+"/mcp", "good", init, map[string]string{"Accept": "application/json, text/event-stream"})
	sid := resp.Header.Get(sessionHeader)
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d sid=%q", resp.StatusCode, sid)
	}
	resp2 := post(t, base+"/mcp", "other", listCall, map[string]string{"Accept": "application/json, text/event-stream", sessionHeader: sid, "MCP-Protocol-Version": "2025-06-18"})
	if resp2.StatusCode != http.StatusForbidden {
		t.Fatalf("another user's token on a session: %d, want 403", resp2.StatusCode)
	}
}

func TestLimiterWindow(t *testing.T) {
	l := newIPLimiter(3, time.Minute)
	defer l.stop()
	now := time.Unix(1000, 0)
	for i := range 3 {
		if ok, _ := l.allow("1.2.3.4", now); !ok {
			t.Fatalf("request %d refused", i+1)
		}
	}
	ok, wait := l.allow("1.2.3.4", now)
	if ok || wait <= 0 || wait > 21*time.Second {
		t.Fatalf("4th: ok=%v wait=%v", ok, wait)
	}
	if ok, _ := l.allow("5.6.7.8", now); !ok {
		t.Fatal("another IP shares the bucket")
	}
	if ok, _ := l.allow("1.2.3.4", now.Add(21*time.Second)); !ok {
		t.Fatal("bucket did not refill")
	}
}
