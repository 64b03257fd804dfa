package httpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// modernCall is a 2026-07-28 request: no session, the version in _meta and in the header.
func modernCall(id int, method, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = "{" + meta + "," + params + "}"
	}
	b, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(b) + `,"method":"` + method + `","params":` + params + `}`
}

// TestStatelessProtocol: MCP 2026-07-28 requests are served without initialize or session
// (they used to be refused with -32022): lists with private cache hints, tool calls, and
// SEP-2575's statuses for protocol errors.
func TestStatelessProtocol(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{})
	modern := map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28"}
	withMethod := func(method, name string) map[string]string {
		m := map[string]string{"Mcp-Method": method}
		if name != "" {
			m["Mcp-Name"] = name
		}
		for k, v := range modern {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name       string
		body       string
		hdr        map[string]string
		wantStatus int
		wantCode   int
		want       []string // substrings of the answer
	}{
		// Only the 2025 versions (see Server.mcp why): clients of both eras go on with a session.
		{"discover", modernCall(1, "server/discover", ""), withMethod("server/discover", ""), 200, 0,
			[]string{`"supportedVersions":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`}},
		{"tools/list", modernCall(2, "tools/list", ""), withMethod("tools/list", ""), 200, 0,
			[]string{`"t_wait"`, `"ttlMs":300000`, `"cacheScope":"private"`, `"resultType":"complete"`}},
		{"tools/call", modernCall(3, "tools/call", `"name":"t_wait","arguments":{"millis":2}`), withMethod("tools/call", "t_wait"), 200, 0,
			[]string{`"waited":2`}},
		{"unknown method", modernCall(4, "tools/frobnicate", ""), withMethod("tools/frobnicate", ""), 404, -32601, nil},
		{"version header missing", modernCall(5, "tools/list", ""), map[string]string{"Accept": "application/json, text/event-stream"}, 400, -32020, nil},
		{"header and _meta disagree", modernCall(6, "tools/list", ""), map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}, 400, -32020, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := send(t, base+"/mcp", "full", tt.body, tt.hdr)
			if a.status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tt.wantStatus, a.body)
			}
			body := a.body
			if strings.HasPrefix(a.ctype, "text/event-stream") {
				// One event carries the answer.
				_, data, _ := strings.Cut(body, "data: ")
				body, _, _ = strings.Cut(data, "\n")
			}
			if tt.wantCode != 0 {
				if _, code := (rpcAnswer{a.status, "application/json", body}).single(t); code != tt.wantCode {
					t.Errorf("code %d, want %d: %s", code, tt.wantCode, body)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("answer lacks %s: %s", w, body)
				}
			}
		})
	}
}

// TestOlderClientsGetTheirVersionsResults: the 2026-07-28 cache fields (ttlMs, cacheScope) are
// in list results for clients of that version only; a client of 2024-11-05…2025-11-25,
// sessionless or in a session, gets the fields its version defines.
func TestOlderClientsGetTheirVersionsResults(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{})
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, v := range []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		_, _, b := answer(t, base+"/mcp", "full", list, map[string]string{"MCP-Protocol-Version": v})
		if !strings.Contains(string(b), `"tools"`) || strings.Contains(string(b), "ttlMs") || strings.Contains(string(b), "cacheScope") {
			t.Errorf("sessionless tools/list at %q: %.300s", v, b)
		}
	}
	sid := initSession(t, base, "full")
	_, _, b := answer(t, base+"/mcp", "full", list, withHdr(map[string]string{sessionHeader: sid}))
	if !strings.Contains(string(b), `"tools"`) || strings.Contains(string(b), "ttlMs") {
		t.Errorf("tools/list in a 2025-06-18 session: %.300s", b)
	}
	modern := map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	_, _, b = answer(t, base+"/mcp", "full", modernCall(1, "tools/list", ""), modern)
	if !strings.Contains(string(b), `"ttlMs"`) || !strings.Contains(string(b), `"cacheScope":"private"`) {
		t.Errorf("tools/list at 2026-07-28 lost its cache fields: %.300s", b)
	}
}

// TestPlainDiscoverGetsJSON: a server/discover POST with no 2026-07-28 header from a client that
// takes JSON only (curl) gets a JSON-RPC answer in JSON — the SDK's, for the version it speaks —
// not a refusal of its Accept header.
func TestPlainDiscoverGetsJSON(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{})
	for _, hdr := range []map[string]string{nil, {"Accept": "application/json"}} {
		s, ct, b := answer(t, base+"/mcp", "full", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, hdr)
		var a struct {
			ID    int `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if s != 200 || ct != "application/json" || json.Unmarshal(b, &a) != nil || a.ID != 1 || a.Error.Code != -32601 {
			t.Errorf("Accept %v: %d %s %s", hdr, s, ct, b)
		}
	}
}
