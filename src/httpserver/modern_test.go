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
