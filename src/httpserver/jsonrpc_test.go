package httpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// rpcAnswer is what a test reads back from /mcp.
type rpcAnswer struct {
	status int
	ctype  string
	body   string
}

func (a rpcAnswer) single(t *testing.T) (id string, code int) {
	t.Helper()
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &m); err != nil || m.JSONRPC != "2.0" {
		t.Fatalf("answer %d %q is not a JSON-RPC message: %v", a.status, a.body, err)
	}
	if m.Error == nil {
		return string(m.ID), 0
	}
	if m.Error.Message == "" {
		t.Errorf("error without message: %s", a.body)
	}
	return string(m.ID), m.Error.Code
}

func send(t *testing.T, url, token, body string, hdr map[string]string) rpcAnswer {
	t.Helper()
	resp := post(t, url, token, body, hdr)
	b, _ := io.ReadAll(resp.Body)
	return rpcAnswer{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

// TestProtocolErrorsAreJSONRPC sends every class of malformed message through the single-POST
// form and through a session, and checks the JSON-RPC code, the id and the HTTP status. The old
// code answered most of them with text/plain 400s (which the TypeScript client reports as a
// transport failure) and "params":"x" with a code-0 error.
func TestProtocolErrorsAreJSONRPC(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{})
	sid := initSession(t, base, "full")
	longID := `"` + strings.Repeat("x", 200) + `"`
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantCode   int
		wantID     string // "null" when the id could not be read
		// in a session (MCP 2025-06-18), when it differs
		sessionStatus int
		sessionCode   int
		sessionID     string // "null" unless given
	}{
		{name: "invalid JSON", body: `{"jsonrpc":"2.0","id":1,`, wantStatus: 400, wantCode: -32700, wantID: "null"},
		{name: "not an object", body: `"tools/list"`, wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "wrong version tag", body: `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, wantStatus: 400, wantCode: -32600, wantID: "7"},
		{name: "missing version tag", body: `{"id":"a","method":"tools/list"}`, wantStatus: 400, wantCode: -32600, wantID: `"a"`},
		{name: "missing id", body: `{"jsonrpc":"2.0","method":"tools/list"}`, wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "null id", body: `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "fractional id", body: `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "oversized id", body: `{"jsonrpc":"2.0","id":` + longID + `,"method":"tools/list"}`, wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "missing method", body: `{"jsonrpc":"2.0","id":2}`, wantStatus: 400, wantCode: -32600, wantID: "2"},
		// From here on the SDK judges, and answers a request like any other (200).
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":8,"method":"tools/frobnicate"}`, wantStatus: 200, wantCode: -32601, wantID: "8"},
		{name: "notification with id", body: `{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`, wantStatus: 200, wantCode: -32600, wantID: "3"},
		{name: "wrong params type", body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"x"}`, wantStatus: 200, wantCode: -32602, wantID: "9"},
		{name: "params as array", body: `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":[1]}`, wantStatus: 200, wantCode: -32602, wantID: "10"},
		{name: "missing params", body: `{"jsonrpc":"2.0","id":11,"method":"tools/call"}`, wantStatus: 200, wantCode: -32600, wantID: "11"},
		{name: "empty batch", body: `[]`, wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "batch over the cap", body: batch(21), wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "batch", body: `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"nope"}]`,
			wantStatus: 200, sessionStatus: 400, sessionCode: -32600},
		{name: "notification-only batch", body: `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]`,
			wantStatus: 202, sessionStatus: 400, sessionCode: -32600},
	}
	for _, tt := range tests {
		for _, mode := range []string{"single POST", "session"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				hdr := map[string]string{}
				wantStatus, wantCode, wantID := tt.wantStatus, tt.wantCode, tt.wantID
				if mode == "session" {
					hdr = withHdr(map[string]string{sessionHeader: sid})
					if tt.sessionStatus != 0 {
						wantStatus, wantCode, wantID = tt.sessionStatus, tt.sessionCode, tt.sessionID
						if wantID == "" {
							wantID = "null"
						}
					}
				}
				a := send(t, base+"/mcp", "full", tt.body, hdr)
				if a.status != wantStatus {
					t.Fatalf("status %d, want %d: %s", a.status, wantStatus, a.body)
				}
				if wantCode == 0 {
					return
				}
				if !strings.HasPrefix(a.ctype, "application/json") {
					t.Errorf("Content-Type %q", a.ctype)
				}
				id, code := a.single(t)
				if code != wantCode || id != wantID {
					t.Errorf("code %d id %s, want %d id %s: %s", code, id, wantCode, wantID, a.body)
				}
			})
		}
	}
}

// TestSinglePOSTBatches: every message answered in order, notifications and responses left
// out, 202 when nothing needs an answer, and each message counted against the rate limit.
func TestSinglePOSTBatches(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{})
	a := send(t, base+"/mcp", "full", `[
		{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"t_wait","arguments":{"millis":1}}},
		{"jsonrpc":"2.0","method":"notifications/initialized"},
		{"jsonrpc":"2.0","id":"a","method":"ping"},
		{"jsonrpc":"2.0","id":"c","method":"tools/frobnicate"},
		{"jsonrpc":"2.0","id":4,"result":{}},
		{"jsonrpc":"1.0","id":"d","method":"ping"},
		{"jsonrpc":"2.0","id":"e","method":"tools/call","params":"x"}]`, nil)
	if a.status != 200 || !strings.HasPrefix(a.ctype, "application/json") {
		t.Fatalf("batch: %d %s %s", a.status, a.ctype, a.body)
	}
	var out []struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			StructuredContent map[string]int `json:"structuredContent"`
		} `json:"result"`
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &out); err != nil {
		t.Fatalf("batch answer is not an array: %v %s", err, a.body)
	}
	want := []struct {
		id   string
		code int
	}{{`"b"`, 0}, {`"a"`, 0}, {`"c"`, -32601}, {`"d"`, -32600}, {`"e"`, -32602}}
	if len(out) != len(want) {
		t.Fatalf("%d answers, want %d: %s", len(out), len(want), a.body)
	}
	for i, w := range want {
		code := 0
		if out[i].Error != nil {
			code = out[i].Error.Code
		}
		if string(out[i].ID) != w.id || code != w.code {
			t.Errorf("answer %d: id %s code %d, want id %s code %d", i, out[i].ID, code, w.id, w.code)
		}
	}
	if out[0].Result == nil || out[0].Result.StructuredContent["waited"] != 1 {
		t.Errorf("tool call in a batch: %s", a.body)
	}

	// A 2026-07-28 client has no batches.
	if a := send(t, base+"/mcp", "full", batch(2), map[string]string{"MCP-Protocol-Version": "2026-07-28"}); a.status != 400 {
		t.Errorf("batch in 2026-07-28: %d %s", a.status, a.body)
	}

	// Each message costs one request of the rate limit (the limiter's arithmetic is in
	// TestBatchCountsEveryMessage): a 10-message batch on a limit of 10 leaves nothing.
	limited := startSecured(t, Options{RateLimit: 10})
	if a := send(t, limited+"/mcp", "full", batch(10), nil); a.status != 200 || strings.Count(a.body, `"tools"`) != 10 {
		t.Fatalf("10-message batch: %d %s", a.status, a.body)
	}
	if a := send(t, limited+"/mcp", "full", listCall, nil); a.status != http.StatusTooManyRequests {
		t.Errorf("request after a batch that spent the limit: %d", a.status)
	}
}

// TestSessionBatchesFollowTheVersion: 2025-03-26 sessions take batches; later versions refuse them.
func TestSessionBatchesFollowTheVersion(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{})
	sid := initSession(t, base, "full")
	old := withHdr(map[string]string{sessionHeader: sid, "MCP-Protocol-Version": "2025-03-26"})
	a := send(t, base+"/mcp", "full", `[{"jsonrpc":"2.0","id":"x","method":"tools/list"},{"jsonrpc":"2.0","id":"y","method":"ping"}]`, old)
	if a.status != 200 || !strings.Contains(a.body, `"id":"x"`) || !strings.Contains(a.body, `"id":"y"`) {
		t.Fatalf("batch in a 2025-03-26 session: %d %s", a.status, a.body)
	}
	a = send(t, base+"/mcp", "full", batch(2), withHdr(map[string]string{sessionHeader: sid}))
	if _, code := a.single(t); a.status != 400 || code != -32600 || !strings.Contains(a.body, "2025-06-18") {
		t.Fatalf("batch in a 2025-06-18 session: %d %s", a.status, a.body)
	}
}

// TestTransportErrorsAreJSONRPC: what the go-sdk transport refuses with text/plain, hamcp
// answers as JSON-RPC error objects; 401 carries -32001 beside the challenge.
func TestTransportErrorsAreJSONRPC(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"})
	sid := initSession(t, base, "full")
	tests := []struct {
		name       string
		method     string
		token      string
		body       string
		hdr        map[string]string
		wantStatus int
		wantCode   int
	}{
		{"no token", http.MethodPost, "", listCall, nil, 401, -32001},
		{"bad token", http.MethodPost, "nope", listCall, nil, 401, -32001},
		{"unknown session", http.MethodPost, "full", listCall, withHdr(map[string]string{sessionHeader: "gone"}), 404, -32600},
		{"another credential's session", http.MethodPost, "bob", listCall, withHdr(map[string]string{sessionHeader: sid}), 403, -32600},
		{"wrong content type", http.MethodPost, "full", listCall, withHdr(map[string]string{sessionHeader: sid, "Content-Type": "text/plain"}), 415, -32600},
		{"unsupported version header", http.MethodPost, "full", listCall, withHdr(map[string]string{sessionHeader: sid, "MCP-Protocol-Version": "1999-01-01"}), 400, -32600},
		{"initialize with a wrong content type", http.MethodPost, "full", initCall, map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "text/plain"}, 415, -32600},
		{"GET without session", http.MethodGet, "full", "", map[string]string{"Accept": "text/event-stream"}, 400, -32600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var resp *http.Response
			if tt.method == http.MethodPost {
				resp = post(t, base+"/mcp", tt.token, tt.body, tt.hdr)
			} else {
				resp = do(t, tt.method, base+"/mcp", tt.token, tt.hdr)
			}
			b, _ := io.ReadAll(resp.Body)
			a := rpcAnswer{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
			if a.status != tt.wantStatus || !strings.HasPrefix(a.ctype, "application/json") {
				t.Fatalf("%d %s %s, want %d JSON", a.status, a.ctype, a.body, tt.wantStatus)
			}
			if _, code := a.single(t); code != tt.wantCode {
				t.Errorf("code %d, want %d: %s", code, tt.wantCode, a.body)
			}
			if tt.wantStatus == 401 && !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
				t.Errorf("401 without challenge: %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

// TestSinglePOSTInitialize: a client that accepts only JSON (n8n, curl) gets initialize
// answered with plain JSON, no session, and a version hamcp speaks whatever it asked for.
func TestSinglePOSTInitialize(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{})
	for _, tt := range []struct{ asked, want string }{
		{"0.1.0", "2025-11-25"},
		{"2024-11-05", "2024-11-05"},
		{"2025-06-18", "2025-06-18"},
		{"2026-07-28", "2025-11-25"}, // 2026-07-28 has no initialize: the newest version that does
	} {
		for _, accept := range []string{"application/json", "", "*/*"} {
			t.Run(tt.asked+"/"+accept, func(t *testing.T) {
				t.Parallel()
				body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + tt.asked + `","capabilities":{},"clientInfo":{"name":"n8n","version":"1"}}}`
				resp := post(t, base+"/mcp/", "full", body, map[string]string{"Accept": accept})
				var m struct {
					Result struct {
						ProtocolVersion string `json:"protocolVersion"`
						ServerInfo      struct{ Name string }
					} `json:"result"`
				}
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || json.Unmarshal(b, &m) != nil {
					t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
				}
				if m.Result.ProtocolVersion != tt.want || m.Result.ServerInfo.Name != "t" {
					t.Errorf("negotiated %q, want %q: %s", m.Result.ProtocolVersion, tt.want, b)
				}
				if sid := resp.Header.Get(sessionHeader); sid != "" {
					t.Errorf("a JSON-only initialize opened session %q", sid)
				}
			})
		}
	}
}

// TestClaudeOriginReachesChallenge: a browser-origin request from Claude's web app, when that
// origin is allowed (the default configuration), gets the OAuth challenge, not 403; and /mcp/
// is /mcp.
func TestClaudeOriginReachesChallenge(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{AllowedOrigins: []string{"https://claude.ai", "https://claude.com"}})
	for _, path := range []string{"/mcp", "/mcp/"} {
		for _, tt := range []struct {
			origin string
			want   int
		}{{"https://claude.ai", 401}, {"https://claude.com", 401}, {"https://CLAUDE.ai", 401}, {"https://evil.example", 403}} {
			a := send(t, base+path, "", listCall, map[string]string{"Origin": tt.origin})
			if a.status != tt.want {
				t.Errorf("%s Origin %s: %d, want %d: %s", path, tt.origin, a.status, tt.want, a.body)
			}
		}
		if a := send(t, base+path, "full", listCall, map[string]string{"Origin": "https://claude.ai"}); a.status != 200 || !strings.Contains(a.body, "t_wait") {
			t.Errorf("%s with a token: %d %s", path, a.status, a.body)
		}
	}
}

// FuzzParseBody: whatever arrives, parsing never panics, every message gets a verdict, and
// every error answer is valid JSON-RPC.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{listCall, batch(3), `[]`, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"x"}`,
		`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `{"id":{"a":1}}`, `[1,"x",null]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, errs, _, fatal := parseBody(body)
		check := func(e *rpcError) {
			b, err := json.Marshal(e)
			if err != nil || !json.Valid(b) || e.Code == 0 || e.Message == "" {
				t.Fatalf("bad error answer %s: %v", b, err)
			}
			if s := e.status("2025-06-18"); s != 200 && s != 400 {
				t.Fatalf("status %d", s)
			}
		}
		if fatal != nil {
			check(fatal)
			return
		}
		if len(msgs) == 0 || len(msgs) != len(errs) {
			t.Fatalf("%d messages, %d verdicts", len(msgs), len(errs))
		}
		for i, e := range errs {
			if e != nil {
				check(e)
				continue
			}
			if msgs[i].kind == kindRequest && (msgs[i].method == "" || checkID(msgs[i].id) != "") {
				t.Fatalf("accepted request %s", msgs[i].raw)
			}
		}
	})
}

// TestSimpleRequestsAreRefused: a page (here on an allowed Origin) can POST without a CORS
// preflight only as text/plain or a form. On a --no-auth server that must not run anything:
// only JSON (or no Content-Type, as curl scripts send) is taken, one message or a batch.
func TestSimpleRequestsAreRefused(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{NoAuth: true, AllowedOrigins: []string{"https://claude.ai"}})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_wait","arguments":{"millis":1}}}`
	for _, body := range []string{call, "[" + call + "]"} {
		for _, ctype := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
			a := send(t, base+"/mcp", "", body, map[string]string{"Origin": "https://claude.ai", "Content-Type": ctype})
			if a.status != http.StatusUnsupportedMediaType || strings.Contains(a.body, "waited") {
				t.Errorf("%s as %s: %d %s", body[:1], ctype, a.status, a.body)
			}
		}
	}
	if a := send(t, base+"/mcp", "", call, map[string]string{"Content-Type": ""}); a.status != 200 || !strings.Contains(a.body, "waited") {
		t.Errorf("without Content-Type: %d %s", a.status, a.body)
	}
}
