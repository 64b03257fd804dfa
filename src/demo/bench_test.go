package demo_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/sim"
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
