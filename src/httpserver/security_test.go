package httpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/toolkit"
)

// credentials stands in for the verifier chain with what the real verifiers put in a TokenInfo:
// the OAuth verifier names the grant ("oauth:<family>") and its scope, the HA token verifier the
// token's fingerprint. All but "bob" belong to the same HA user.
var credentials = map[string]*auth.TokenInfo{
	"full":     (&authn.Principal{Kind: authn.KindOAuth, UserID: "alice", Scopes: []string{authn.ScopeFull}, GrantID: "family-1"}).TokenInfo(time.Time{}),
	"readonly": (&authn.Principal{Kind: authn.KindOAuth, UserID: "alice", Scopes: []string{authn.ScopeReadOnly}, GrantID: "family-2"}).TokenInfo(time.Time{}),
	"hatoken":  (&authn.Principal{Kind: authn.KindHAToken, UserID: "alice", Scopes: []string{authn.ScopeFull}, GrantID: authn.Fingerprint("hatoken")}).TokenInfo(time.Time{}),
	"hatoken2": (&authn.Principal{Kind: authn.KindHAToken, UserID: "alice", Scopes: []string{authn.ScopeFull}, GrantID: authn.Fingerprint("hatoken2")}).TokenInfo(time.Time{}),
	"bob":      (&authn.Principal{Kind: authn.KindHAToken, UserID: "bob", Scopes: []string{authn.ScopeFull}, GrantID: authn.Fingerprint("bob")}).TokenInfo(time.Time{}),
}

type credentialVerifier struct{}

func (credentialVerifier) Verify(_ context.Context, token string) (*auth.TokenInfo, error) {
	if ti, ok := credentials[token]; ok {
		cp := *ti
		return &cp, nil
	}
	return nil, authn.ErrInvalidToken
}

type waitArgs struct {
	Millis int `json:"millis"`
}

// startSecured starts a server with a slow tool (t_wait) on a real loopback socket.
func startSecured(t *testing.T, o Options) string {
	t.Helper()
	reg := toolkit.NewRegistry()
	reg.Add(toolkit.Define(toolkit.Spec[waitArgs, map[string]int]{
		Name: "t_wait", Toolset: "t", Description: "waits", ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a waitArgs) (map[string]int, error) {
			select {
			case <-time.After(time.Duration(a.Millis) * time.Millisecond):
			case <-ctx.Done():
			}
			return map[string]int{"waited": a.Millis}, nil
		},
	}))
	o.Builder = mcpserver.New(mcpserver.Options{Name: "t", Version: "1", Registry: reg})
	if o.Verifier == nil && !o.NoAuth {
		o.Verifier = credentialVerifier{}
	}
	return serve(t, New(o))
}

const initCall = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

var streamHdr = map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}

func withHdr(extra map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range streamHdr {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// initSession creates a Streamable HTTP session with token and returns its id.
func initSession(t *testing.T, base, token string) string {
	t.Helper()
	resp := post(t, base+"/mcp", token, initCall, streamHdr)
	sid := resp.Header.Get(sessionHeader)
	if resp.StatusCode != http.StatusOK || sid == "" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("initialize with %q: %d sid=%q %s", token, resp.StatusCode, sid, b)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	post(t, base+"/mcp", token, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, withHdr(map[string]string{sessionHeader: sid})).Body.Close()
	return sid
}

func do(t *testing.T, method, url, token string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// jsonError returns the message of a JSON error answer: a JSON-RPC error object (every
// answer on /mcp) or {"error": "…"} (limits, other endpoints).
func jsonError(t *testing.T, resp *http.Response) string {
	t.Helper()
	var m struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || len(m.Error) == 0 {
		t.Fatalf("answer %d is not a JSON error: %v", resp.StatusCode, err)
	}
	var rpc struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(m.Error, &rpc) == nil && rpc.Code != 0 && rpc.Message != "" {
		return rpc.Message
	}
	var msg string
	if json.Unmarshal(m.Error, &msg) != nil || msg == "" {
		t.Fatalf("answer %d: error %s is neither a JSON-RPC error nor a message", resp.StatusCode, m.Error)
	}
	return msg
}

// TestSessionBoundToCredential reproduces the hijack: a read-only OAuth token (or a second HA
// token) of the same user sent a full-access session's Mcp-Session-Id and got its tools and
// grants, because the SDK only compares user ids.
func TestSessionBoundToCredential(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{})
	sid := initSession(t, base, "full")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, attacker := range []string{"readonly", "hatoken", "bob"} {
		t.Run(attacker, func(t *testing.T) {
			t.Parallel()
			requests := map[string]func() *http.Response{
				"POST": func() *http.Response {
					return post(t, base+"/mcp", attacker, list, withHdr(map[string]string{sessionHeader: sid}))
				},
				"GET": func() *http.Response {
					return do(t, http.MethodGet, base+"/mcp", attacker, withHdr(map[string]string{sessionHeader: sid}))
				},
				"DELETE": func() *http.Response {
					return do(t, http.MethodDelete, base+"/mcp", attacker, withHdr(map[string]string{sessionHeader: sid}))
				},
			}
			for name, send := range requests {
				resp := send()
				if resp.StatusCode != http.StatusForbidden {
					// Not reading the body: a hijacked GET is an endless stream.
					t.Fatalf("%s with another credential: %d, want 403", name, resp.StatusCode)
				}
				if msg := jsonError(t, resp); !strings.Contains(msg, "another credential") {
					t.Errorf("%s: unclear error %q", name, msg)
				}
			}
		})
	}
	t.Run("owner", func(t *testing.T) {
		resp := post(t, base+"/mcp", "full", list, withHdr(map[string]string{sessionHeader: sid}))
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "t_wait") {
			t.Fatalf("owner's own session: %d %s", resp.StatusCode, b)
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		resp := post(t, base+"/mcp", "full", list, withHdr(map[string]string{sessionHeader: "NOTASESSION"}))
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("unknown session id: %d", resp.StatusCode)
		}
	})
}

// openSSE opens a legacy SSE stream and returns the POST endpoint it announces.
func openSSE(t *testing.T, base, token string, hdr map[string]string) (endpoint string, resp *http.Response) {
	t.Helper()
	resp = do(t, http.MethodGet, base+"/sse", token, hdr)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /sse: %d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return base + data, resp
		}
	}
	t.Fatalf("no endpoint event: %v", sc.Err())
	return "", nil
}

func TestLegacySSESessionBoundToCredential(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{})
	endpoint, _ := openSSE(t, base, "full", nil)
	for _, tt := range []struct {
		token  string
		status int
	}{{"readonly", http.StatusForbidden}, {"bob", http.StatusForbidden}, {"full", http.StatusAccepted}} {
		resp := post(t, endpoint, tt.token, initCall, nil)
		if resp.StatusCode != tt.status {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("POST %s with %q: %d, want %d: %s", endpoint, tt.token, resp.StatusCode, tt.status, b)
		}
	}
}

func TestNoAuthSessionsStillWork(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{NoAuth: true})
	sid := initSession(t, base, "")
	resp := post(t, base+"/mcp", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, withHdr(map[string]string{sessionHeader: sid}))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("no-auth session: %d", resp.StatusCode)
	}
	endpoint, _ := openSSE(t, base, "", nil)
	if resp := post(t, endpoint, "", initCall, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("no-auth legacy SSE: %d", resp.StatusCode)
	}
}

func TestSessionCaps(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{MaxSessionsPerToken: 2, MaxSessionsPerIP: 3})
	a1 := initSession(t, base, "hatoken")
	initSession(t, base, "hatoken")
	resp := post(t, base+"/mcp", "hatoken", initCall, streamHdr)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(jsonError(t, resp), "2 open sessions per token") {
		t.Fatalf("3rd session of one token: %d", resp.StatusCode)
	}
	initSession(t, base, "hatoken2")
	resp = post(t, base+"/mcp", "bob", initCall, streamHdr)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(jsonError(t, resp), "3 open sessions per client IP") {
		t.Fatalf("4th session from one IP: %d", resp.StatusCode)
	}
	// A legacy SSE stream is a session too.
	if resp := do(t, http.MethodGet, base+"/sse", "bob", nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("SSE session over the IP cap: %d", resp.StatusCode)
	}
	// Ending a session gives its place back.
	if resp := do(t, http.MethodDelete, base+"/mcp", "hatoken", withHdr(map[string]string{sessionHeader: a1})); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	initSession(t, base, "hatoken")
}

func batch(n int) string {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)
	}
	return "[" + strings.Join(msgs, ",") + "]"
}

// TestBatchCountsEveryMessage reproduces the rate-limit bypass: a batch of many calls counted
// as one request. Batches over MaxBatch are refused outright.
func TestBatchCountsEveryMessage(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{RateLimit: 25})
	resp := post(t, base+"/mcp", "full", batch(21), nil)
	var rpc struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&rpc)
	if resp.StatusCode != http.StatusBadRequest || rpc.Error.Code != -32600 || !strings.Contains(rpc.Error.Message, "20") {
		t.Fatalf("21-message batch: %d %+v", resp.StatusCode, rpc)
	}
	resp.Body.Close()
	// 1 (the refused batch) + 20 = 21 of 25 tokens spent.
	resp = post(t, base+"/mcp", "full", batch(20), nil)
	if resp.StatusCode == http.StatusTooManyRequests {
		t.Fatalf("20-message batch refused by the rate limit")
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for i := 1; i <= 5; i++ {
		resp := post(t, base+"/mcp", "full", listCall, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if want := i <= 4; (resp.StatusCode == http.StatusOK) != want {
			t.Fatalf("single request %d after the batch: %d (a 20-message batch must cost 20 requests)", i, resp.StatusCode)
		}
	}
	// Session requests and legacy SSE posts go through the same gate.
	base = startSecured(t, Options{})
	sid := initSession(t, base, "full")
	if resp := post(t, base+"/mcp", "full", batch(21), withHdr(map[string]string{sessionHeader: sid})); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("21-message batch in a session: %d", resp.StatusCode)
	}
	endpoint, _ := openSSE(t, base, "full", nil)
	if resp := post(t, endpoint, "full", batch(21), nil); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("21-message batch on legacy SSE: %d", resp.StatusCode)
	}
}

func TestCountMessages(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		body string
		want int
	}{
		{listCall, 1}, {"", 1}, {"[", 1}, {"[]", 1}, {"not json", 1}, {" \n" + batch(3), 3},
		{batch(20), 20}, {batch(500), MaxBatch + 1}, {`[1,2,`, 2},
	} {
		if got := countMessages([]byte(tt.body), MaxBatch); got != tt.want {
			t.Errorf("countMessages(%.30q) = %d, want %d", tt.body, got, tt.want)
		}
	}
}

func FuzzCountMessages(f *testing.F) {
	for _, s := range []string{listCall, batch(3), "[", "[[]]", `[{"a":[1,2]},"x"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n := countMessages(body, MaxBatch)
		if n < 1 || n > MaxBatch+1 {
			t.Fatalf("countMessages = %d", n)
		}
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) == nil && len(arr) > 0 && n != min(len(arr), MaxBatch+1) {
			t.Fatalf("countMessages = %d for a batch of %d", n, len(arr))
		}
	})
}

// rawConn opens a TCP connection and sends head (request line and headers).
func rawConn(t *testing.T, base, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedWithin reports whether the server closes c within d (reading whatever it answers).
func closedWithin(c net.Conn, d time.Duration) (bool, string) {
	c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false, string(b)
	}
	return true, string(b)
}

// TestSlowClientsAreDisconnected: a client dribbling its body (or its headers) held a
// connection forever. Open streams must not be cut by the same timeouts.
func TestSlowClientsAreDisconnected(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	base := startSecured(t, Options{BodyReadTimeout: timeout, ReadHeaderTimeout: timeout, IdleTimeout: timeout})
	t.Run("slow body", func(t *testing.T) {
		t.Parallel()
		c := rawConn(t, base, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer full\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{")
		dribble(t, c)
		start := time.Now()
		closed, answer := closedWithin(c, 3*time.Second)
		if !closed {
			t.Fatalf("slow body still connected after 3s (answer %q)", answer)
		}
		if time.Since(start) > 2*time.Second {
			t.Errorf("slow body dropped after %v", time.Since(start))
		}
		if answer != "" && !strings.Contains(answer, "408") {
			t.Errorf("answer to a slow body: %q", answer)
		}
	})
	t.Run("slow headers", func(t *testing.T) {
		t.Parallel()
		c := rawConn(t, base, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		if closed, _ := closedWithin(c, 3*time.Second); !closed {
			t.Fatal("slow headers still connected after 3s")
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		t.Parallel()
		c := rawConn(t, base, "GET /mcp/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		if closed, answer := closedWithin(c, 3*time.Second); !closed || !strings.Contains(answer, "200 OK") {
			t.Fatalf("idle connection after an answer: closed=%v %q", closed, answer)
		}
	})
	t.Run("streams outlive the timeouts", func(t *testing.T) {
		t.Parallel()
		sid := initSession(t, base, "full")
		stream := do(t, http.MethodGet, base+"/mcp", "full", withHdr(map[string]string{sessionHeader: sid}))
		if stream.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %d", stream.StatusCode)
		}
		_, sse := openSSE(t, base, "full", nil)
		ended := make(chan string, 2)
		for name, body := range map[string]io.Reader{"GET /mcp": stream.Body, "GET /sse": sse.Body} {
			go func() {
				_, err := io.Copy(io.Discard, body)
				ended <- fmt.Sprintf("%s ended: %v", name, err)
			}()
		}
		// A POST whose answer streams for longer than every timeout.
		resp := post(t, base+"/mcp", "full", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_wait","arguments":{"millis":700}}}`,
			withHdr(map[string]string{sessionHeader: sid}))
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `\"waited\":700`) {
			t.Fatalf("streamed answer after 700ms: %d %s", resp.StatusCode, b)
		}
		select {
		case msg := <-ended:
			t.Fatalf("an open stream was cut: %s", msg)
		default:
		}
	})
}

// TestConnectionCaps: one client IP cannot hold more than MaxConnsPerIP connections; behind a
// trusted proxy the cap counts each forwarded client IP apart.
func TestConnectionCaps(t *testing.T) {
	t.Parallel()
	t.Run("direct", func(t *testing.T) {
		t.Parallel()
		base := startSecured(t, Options{MaxConnsPerIP: 3})
		for range 3 {
			rawConn(t, base, "")
		}
		c := rawConn(t, base, "")
		closed, answer := closedWithin(c, 3*time.Second)
		if !closed || !strings.Contains(answer, "429") || !strings.Contains(answer, "limit is 3 per client IP") {
			t.Fatalf("4th connection: closed=%v %q", closed, answer)
		}
	})
	t.Run("idle keep-alive connections give way", func(t *testing.T) {
		t.Parallel()
		base := startSecured(t, Options{MaxConnsPerIP: 3})
		health := "GET /mcp/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
		var idle []net.Conn
		for range 3 {
			c := rawConn(t, base, health)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			idle = append(idle, c)
		}
		// The server marks a connection idle just after writing its answer; allow it that moment.
		var status string
		for range 100 {
			c := rawConn(t, base, health)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			if status = resp.Status; resp.StatusCode == http.StatusOK {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if !strings.HasPrefix(status, "200") {
			t.Fatalf("new connection while the others idle: %s", status)
		}
		// The server marks a connection idle only after its handler returns, so the oldest one
		// may still count as busy when the new one arrives: then the next idle one gives way.
		closed := make(chan bool, len(idle))
		for _, c := range idle {
			go func() { ok, _ := closedWithin(c, 500*time.Millisecond); closed <- ok }() // evicted before the new one was answered
		}
		n := 0
		for range idle {
			if <-closed {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d idle connections were closed for the new one, want 1", n)
		}
	})
	t.Run("behind a trusted proxy", func(t *testing.T) {
		t.Parallel()
		_, loop, _ := net.ParseCIDR("127.0.0.1/32")
		base := startSecured(t, Options{MaxConnsPerIP: 2, TrustedProxies: []*net.IPNet{loop}})
		for range 2 {
			openSSE(t, base, "full", map[string]string{"X-Forwarded-For": "10.0.0.1"})
		}
		resp := do(t, http.MethodGet, base+"/sse", "full", map[string]string{"X-Forwarded-For": "10.0.0.1"})
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(jsonError(t, resp), "10.0.0.1") {
			t.Fatalf("3rd stream of one forwarded client: %d", resp.StatusCode)
		}
		openSSE(t, base, "full", map[string]string{"X-Forwarded-For": "10.0.0.2"})
	})
}
