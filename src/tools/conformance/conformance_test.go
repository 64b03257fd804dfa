package conformance

//lint:file-ignore SA1019 the conformance suite exercises sampling, roots and logging, deprecated by SEP-2577 but still in the protocol.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/completion"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/toolkit"
)

// session connects the go-sdk client to a server assembled the way hamcp assembles it (toolkit
// registry, mcpserver builder) with the fixtures, over the SDK's in-memory transport.
func session(t *testing.T, f *Fixtures, client *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	reg := toolkit.NewRegistry()
	reg.Add(f.Tools()...)
	b := mcpserver.New(mcpserver.Options{Name: "t", Version: "1", Registry: reg,
		Extensions: []mcpserver.Extension{f.Install}, Completion: completion.Handler(Completions()),
		Subscribe: func(context.Context, *mcp.SubscribeRequest) error { return nil }, Unsubscribe: func(context.Context, *mcp.UnsubscribeRequest) error { return nil }})
	st, ct := mcp.NewInMemoryTransports()
	ctx := t.Context()
	go func() { _ = b.Run(ctx, false, st, "") }()
	// The 2025 handshake, as the conformance suite's client speaks it: on 2026-07-28 a tool cannot
	// ask the client (sampling, elicitation) within the call, it answers input_required instead.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, client).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestFixtures(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := New(ctx)
	f.WatchEvery = 20 * time.Millisecond
	updated := make(chan string, 10)
	cs := session(t, f, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "echo " + req.Params.Messages[0].Content.(*mcp.TextContent).Text}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada"}}, nil
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	})
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != len(f.Tools())+len(rawTools()) {
		t.Fatalf("tools/list: %v %d", err, len(tools.Tools))
	}
	tests := []struct {
		tool  string
		args  map[string]any
		check func(r *mcp.CallToolResult) bool
	}{
		{"test_simple_text", nil, func(r *mcp.CallToolResult) bool { return !r.IsError && r.Content[0].(*mcp.TextContent).Text != "" }},
		{"test_image_content", nil, func(r *mcp.CallToolResult) bool { return r.Content[0].(*mcp.ImageContent).MIMEType == "image/png" }},
		{"test_audio_content", nil, func(r *mcp.CallToolResult) bool { return r.Content[0].(*mcp.AudioContent).MIMEType == "audio/wav" }},
		{"test_multiple_content_types", nil, func(r *mcp.CallToolResult) bool { return len(r.Content) == 3 }},
		{"test_error_handling", nil, func(r *mcp.CallToolResult) bool { return r.IsError }},
		{"test_sampling", map[string]any{"prompt": "hi"}, func(r *mcp.CallToolResult) bool {
			return r.Content[0].(*mcp.TextContent).Text == "LLM response: echo hi"
		}},
		{"test_elicitation", map[string]any{"message": "name?"}, func(r *mcp.CallToolResult) bool {
			return strings.Contains(r.Content[0].(*mcp.TextContent).Text, `action=accept, content={"username":"ada"}`)
		}},
		{"json_schema_2020_12_tool", map[string]any{"name": "x", "email": "e"}, func(r *mcp.CallToolResult) bool { return !r.IsError }},
		{"json_schema_2020_12_tool", map[string]any{"extra": 1}, func(r *mcp.CallToolResult) bool { return r.IsError }},
	}
	for _, tt := range tests {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil || !tt.check(r) {
			b, _ := json.Marshal(r)
			t.Errorf("%s: %v %s", tt.tool, err, b)
		}
	}
	for _, tool := range tools.Tools {
		if tool.Name != "json_schema_2020_12_tool" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		for _, want := range []string{`"$schema":"https://json-schema.org/draft/2020-12/schema"`, `"$defs":{"address"`, `"additionalProperties":false`, `"$ref":"#/$defs/address"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("schema lacks %s: %s", want, b)
			}
		}
	}
	for _, uri := range []string{StaticTextURI, StaticBinaryURI, WatchedURI, "test://template/123/data"} {
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 || (r.Contents[0].Text == "" && len(r.Contents[0].Blob) == 0) {
			t.Errorf("read %s: %v", uri, err)
		}
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: WatchedURI}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != WatchedURI {
			t.Errorf("updated %s", uri)
		}
	case <-time.After(5 * time.Second):
		t.Error("no update of the watched resource")
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a1", "arg2": "a2"}})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "arg1='a1', arg2='a2'") {
		t.Errorf("prompt: %v", err)
	}
	c, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_embedded_resource"},
		Argument: mcp.CompleteParamsArgument{Name: "resourceUri", Value: "test://static"}})
	if err != nil || strings.Join(c.Completion.Values, ",") != StaticBinaryURI+","+StaticTextURI {
		t.Errorf("complete: %v %+v", err, c)
	}
}

// TestInputRequiredFixtures: the SEP-2322 fixtures answer input_required, and on a 2025 session the
// go-sdk fulfils those by asking the client and calling again; a signed requestState survives the
// round trip and a tampered one is refused with a JSON-RPC error.
func TestInputRequiredFixtures(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cs := session(t, New(ctx), &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada", "ok": true, "context": "kitchen"}}, nil
		},
	})
	for tool, want := range map[string]string{
		"test_input_required_result_elicitation":    "Hello, ada!",
		"test_input_required_result_request_state":  "state-ok",
		"test_input_required_result_tampered_state": "state-ok",
	} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
		if err != nil || r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, want) {
			t.Errorf("%s: %v %+v", tool, err, r)
		}
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
	if err != nil || p.Messages[0].Content.(*mcp.TextContent).Text != "Context: kitchen" {
		t.Errorf("prompt: %v %+v", err, p)
	}

	h := confirmWithState("tampered_state")
	first, _ := h(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{}})
	yes := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}}
	for _, tt := range []struct {
		name, state string
		ok          bool
	}{
		{"as issued", first.RequestState, true},
		{"tampered", first.RequestState + "-TAMPERED", false},
		{"another tool's", seal("request_state"), false},
		{"unsigned", "tampered_state", false},
	} {
		r, err := h(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{RequestState: tt.state, InputResponses: yes}})
		if (err == nil) != tt.ok || (tt.ok && r.Content == nil) {
			t.Errorf("%s state: %v %+v", tt.name, err, r)
		}
	}
}
