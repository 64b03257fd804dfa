package mcpserver

// Benchmarks of the go-sdk alone, for the upstream change docs/performance.md proposes: every
// message the SDK decodes goes through its internal json.Unmarshal, which builds a
// segmentio/encoding json.Decoder over the bytes it already holds; the decoder's first read
// allocates (and zeroes) a 32 KiB buffer, and one tools/call is decoded that way several times
// (the message, its method, its params). segmentio's json.Parse reads the same bytes in place.

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

var toolCallMsg = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"ha_get_entity_details","arguments":{"entity_id":"sun.sun"}}}`)

// BenchmarkSDKDecodeMessage is the SDK's public decoder (jsonrpc.DecodeMessage) on one tools/call.
func BenchmarkSDKDecodeMessage(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonrpc.DecodeMessage(toolCallMsg); err != nil {
			b.Fatal(err)
		}
	}
}

// wireMessage is the shape the SDK decodes a message into (jsonrpc2.wireDecode).
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
	ID         any             `json:"id,omitempty"`
}

// BenchmarkSegmentioParse is the proposed change: the same two decodes (message, then method)
// with segmentio's json.Parse and the flag the SDK sets on its decoders, no Decoder.
func BenchmarkSegmentioParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var w wireMessage
		if _, err := segjson.Parse(toolCallMsg, &w, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			b.Fatal(err)
		}
		var method string
		if _, err := segjson.Parse(w.Method, &method, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSDKToolCallInMemory is one tools/call between an SDK client and an SDK server over
// the SDK's in-memory transport: no HTTP, no hamcp, a tool that returns one text block.
func BenchmarkSDKToolCallInMemory(b *testing.B) {
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	type in struct {
		EntityID string `json:"entity_id"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ha_get_entity_details", Description: "d"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"entity_id":"` + a.EntityID + `","state":"above_horizon"}`}}}, nil, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "ha_get_entity_details", Arguments: map[string]any{"entity_id": "sun.sun"}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}
