package demo_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
)

// benchCall measures one tools/call round trip through a connected client.
func benchCall(b *testing.B, cs *mcp.ClientSession, tool string, args map[string]any) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
	}
}

// BenchmarkToolCallHTTP: a stateful Streamable HTTP session (SSE responses) against the
// simulated home over loopback, calling a tool served from the state mirror.
func BenchmarkToolCallHTTP(b *testing.B) {
	e := startDemo(b, nil)
	benchCall(b, e.client(b, nil), "ha_get_entity_details", map[string]any{"entity_id": "sun.sun"})
}

// BenchmarkToolCallHTTPServiceCall: a tool call that itself goes to Home Assistant (call_service over REST).
func BenchmarkToolCallHTTPServiceCall(b *testing.B) {
	e := startDemo(b, nil)
	benchCall(b, e.client(b, nil), "ha_call_service", map[string]any{"domain": "light", "service": "toggle", "entity_id": []string{"light.kitchen_ceiling"}})
}

// BenchmarkToolCallStdio: the real hamcp binary as a child process over stdin/stdout.
func BenchmarkToolCallStdio(b *testing.B) {
	cmd := exec.Command(hamcpBinary(b), "stdio", "--demo", "--log-level", "error")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchCall(b, cs, "ha_get_entity_details", map[string]any{"entity_id": "sun.sun"})
}

// BenchmarkGetStatesCached and BenchmarkGetStatesFromHA compare ha_get_states served from
// hamcp's live state mirror with the same call read from Home Assistant (fresh=true), on a
// 3,000-entity simulated home, through a real MCP HTTP session.
func BenchmarkGetStatesCached(b *testing.B) {
	e := startDemoWith(b, sim.Options{HistoryDays: -1, ExtraSensors: 2900}, nil)
	benchCall(b, e.client(b, nil), "ha_get_states", map[string]any{"domain": "sensor", "limit": 20})
}

func BenchmarkGetStatesFromHA(b *testing.B) {
	e := startDemoWith(b, sim.Options{HistoryDays: -1, ExtraSensors: 2900}, nil)
	benchCall(b, e.client(b, nil), "ha_get_states", map[string]any{"domain": "sensor", "limit": 20, "fresh": true})
}

// BenchmarkCachedReadRaw is the cached read (ha_get_entity_details on sun.sun) over loopback
// HTTP with a plain client that reuses its connection, so B/op is hamcp's allocation per call
// plus the client's: the "canned answer" sub-benchmark is that client against a handler that
// only writes the same answer, the client's share to subtract. "session, progress token" asks for
// progress, which the SDK's session answers as an event stream rather than plain JSON.
func BenchmarkCachedReadRaw(b *testing.B) {
	e := startDemo(b, nil)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ha_get_entity_details","arguments":{"entity_id":"sun.sun"}}}`
	withProgress := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"ha_get_entity_details","arguments":{"entity_id":"sun.sun"}}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	do := func(b *testing.B, url, sid, body string) []byte {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+e.d.Info.Token)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"result"`)) || bytes.Contains(out, []byte(`"isError":true`)) {
			b.Fatalf("status %d: %s", resp.StatusCode, out)
		}
		return out
	}
	answer := do(b, e.url+"/mcp", "", call)
	canned := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	defer canned.Close()
	cs := e.client(b, nil) // opens a session the plain client then uses
	sid := cs.ID()
	run := func(url, sid, body string) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				do(b, url, sid, body)
			}
		}
	}
	b.Run("canned answer", run(canned.URL, "", call))
	b.Run("sessionless", run(e.url+"/mcp", "", call))
	b.Run("session", run(e.url+"/mcp", sid, call))
	b.Run("session, progress token", run(e.url+"/mcp", sid, withProgress))
}

// BenchmarkServiceCallAddedLatency compares a light toggle sent to the simulated Home Assistant
// directly (POST /api/services/light/toggle, what the backend takes) with the same toggle as a
// sessionless ha_call_service through hamcp (which also waits for the state change to reach its
// mirror, so it can answer with the new state): the difference is what hamcp adds.
func BenchmarkServiceCallAddedLatency(b *testing.B) {
	e := startDemo(b, nil)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(b *testing.B, url, token, body string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || bytes.Contains(out, []byte(`"isError":true`)) {
			b.Fatalf("status %d: %s", resp.StatusCode, out)
		}
	}
	b.Run("Home Assistant directly", func(b *testing.B) {
		for b.Loop() {
			post(b, e.d.Info.HAURL+"/api/services/light/toggle", e.d.Info.HAToken, `{"entity_id":"light.kitchen_ceiling"}`)
		}
	})
	b.Run("through hamcp", func(b *testing.B) {
		call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ha_call_service","arguments":{"domain":"light","service":"toggle","entity_id":["light.kitchen_ceiling"]}}}`
		for b.Loop() {
			post(b, e.url+"/mcp", e.d.Info.Token, call)
		}
	})
}
