package toolkit

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Contents lets a handler return MCP content blocks directly (images, audio, embedded resources)
// instead of a JSON value.
type Contents interface {
	MCPContent() []mcp.Content
}

// Text is a plain-text result (logs, file contents) sent as one text block without JSON quoting.
type Text string

// shape turns a handler's output into a result; the *Error is non-nil when the result is one.
func (env *Env) shape(t *Tool, out any, err error) (*mcp.CallToolResult, *Error) {
	if err != nil {
		return errorResult(AsError(err))
	}
	limit := env.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	switch v := out.(type) {
	case Contents:
		return &mcp.CallToolResult{Content: v.MCPContent()}, nil
	case Text:
		if len(v) > limit {
			return errorResult(tooLarge(t, len(v), limit))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(v)}}}, nil
	}
	b, merr := json.Marshal(out)
	if merr != nil {
		return errorResult(&Error{Code: "error", Message: "could not encode the result: " + merr.Error()})
	}
	if len(b) > limit {
		return errorResult(tooLarge(t, len(b), limit))
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	// structuredContent must be an object; lists and scalars travel as text only.
	if len(b) > 0 && b[0] == '{' {
		res.StructuredContent = json.RawMessage(b)
	}
	return res, nil
}

func tooLarge(t *Tool, size, limit int) *Error {
	return &Error{
		Code:    "too_large",
		Message: fmt.Sprintf("the result of %s is %d KB, over the %d KB limit for one response", t.def.Name, (size+1023)/1024, limit/1024),
		Hint:    "narrow the call: a smaller limit with offset paging, fewer fields, a filter (domain, area, search) or a shorter time range",
	}
}

func errorResult(e *Error) (*mcp.CallToolResult, *Error) {
	b, _ := json.Marshal(e)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, e
}
