package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/toolkit"
)

// CallTool answers a tools/call outside the go-sdk's request machinery, on the same handler the
// server installed for the tool and with the same answer: the tools a session of this variant
// could call, "unknown tool" (invalid params) for any other name, and never a null content list.
// httpserver uses it for the sessionless single POST, where the SDK's stateless handler would
// connect a throwaway server session for each request (a session, a jsonrpc2 connection and its
// goroutines, the body decoded twice more), and for Standalone tools in a live session
// (req.Session set, ctx toolkit.Detached). The grant scope is RequestKey's: the session's, or
// without one the bearer token's; with no session nothing reaches the client, as the SDK's
// JSON-only answer sends nothing but the result.
func (b *Builder) CallTool(ctx context.Context, readOnly bool, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	t := b.Tool(readOnly, req.Params.Name)
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Params.Name)}
	}
	return b.RunTool(ctx, t, req), nil
}

// RunTool is CallTool for a tool already looked up with Tool.
func (b *Builder) RunTool(ctx context.Context, t *toolkit.Tool, req *mcp.CallToolRequest) *mcp.CallToolResult {
	res := t.Handle(ctx, b.o.Env, req)
	if res != nil && res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return res
}

// Tool returns the tool tools/call reaches by this name on the server of this variant, or nil.
func (b *Builder) Tool(readOnly bool, name string) *toolkit.Tool {
	b.mu.Lock()
	tools, ok := b.called[readOnly]
	b.mu.Unlock()
	if !ok {
		b.Server(readOnly)
		b.mu.Lock()
		tools = b.called[readOnly]
		b.mu.Unlock()
	}
	return tools[name] // never written after the server is built
}
