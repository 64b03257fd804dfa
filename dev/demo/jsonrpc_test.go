package demo_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestClaudeAndCurlAgainstTheDefaults: with the default configuration, what Claude's web app and
// curl/n8n send reaches hamcp as they expect. claude.ai's Origin gets the OAuth challenge (it got
// 403, so the connector never started OAuth), on /mcp and /mcp/ alike, with a JSON-RPC body;
// another page's Origin still gets 403; a JSON-only initialize is answered; a batch is answered in
// order, with real tools behind it.
func TestClaudeAndCurlAgainstTheDefaults(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, path := range []string{"/mcp", "/mcp/"} {
		for _, tt := range []struct {
			origin string
			want   int
		}{{"https://claude.ai", 401}, {"https://claude.com", 401}, {"https://evil.example", 403}} {
			resp := post(t, e.url+path, "", tt.origin, list)
			b, _ := io.ReadAll(resp.Body)
			status, hdr, body := resp.StatusCode, resp.Header, string(b)
			if status != tt.want {
				t.Fatalf("%s Origin %s: %d, want %d: %s", path, tt.origin, status, tt.want, body)
			}
			if status != 401 {
				continue
			}
			var m struct {
				JSONRPC string `json:"jsonrpc"`
				Error   struct{ Code int }
			}
			if !strings.Contains(hdr.Get("WWW-Authenticate"), "resource_metadata=") || json.Unmarshal([]byte(body), &m) != nil || m.JSONRPC != "2.0" || m.Error.Code != -32001 {
				t.Errorf("%s challenge: %q %s", path, hdr.Get("WWW-Authenticate"), body)
			}
		}
	}

	token := e.d.Info.Token
	// Go's client sends no Accept header: like n8n's HTTP node, it does not accept event streams.
	resp := post(t, e.url+"/mcp/", token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"0.1.0","capabilities":{},"clientInfo":{"name":"n8n","version":"1"}}}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"protocolVersion":"2025-11-25"`) || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("JSON-only initialize: %d %s", resp.StatusCode, b)
	}

	resp = post(t, e.url+"/mcp", token, "", `[
		{"jsonrpc":"2.0","id":"states","method":"tools/call","params":{"name":"ha_get_states","arguments":{"domain":"light","limit":"ten"}}},
		{"jsonrpc":"2.0","method":"notifications/initialized"},
		{"jsonrpc":"2.0","id":"nope","method":"tools/frobnicate"},
		{"jsonrpc":"2.0","id":"lights","method":"tools/call","params":{"name":"ha_get_states","arguments":{"domain":"light","limit":2}}}]`)
	b, _ = io.ReadAll(resp.Body)
	body := string(b)
	var out []struct {
		ID     string
		Result *struct {
			IsError bool
			Content []struct{ Text string }
		}
		Error *struct{ Code int }
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &out) != nil || len(out) != 3 {
		t.Fatalf("batch: %d %s", resp.StatusCode, body)
	}
	switch {
	case out[0].ID != "states" || out[0].Result == nil || !out[0].Result.IsError || !strings.Contains(out[0].Result.Content[0].Text, `"limit"`) || strings.Contains(out[0].Result.Content[0].Text, "Page"):
		t.Errorf("wrong argument type names the argument as sent: %s", body)
	case out[1].ID != "nope" || out[1].Error == nil || out[1].Error.Code != -32601:
		t.Errorf("unknown method in a batch: %s", body)
	case out[2].ID != "lights" || out[2].Result == nil || out[2].Result.IsError || !strings.Contains(out[2].Result.Content[0].Text, "light."):
		t.Errorf("tool call in a batch: %s", body)
	}
}
