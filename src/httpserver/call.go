package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/toolkit"
)

// fastVersions are the MCP-Protocol-Version headers a single-POST tools/call may carry to be
// answered by callTool: none (curl, n8n) or a 2025 version the go-sdk server negotiates. Anything
// else goes to the SDK's handler, which answers it as the transport specifies.
var fastVersions = map[string]bool{"": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// callTool answers a sessionless tools/call itself and reports true, or reports false and leaves
// the request to the go-sdk's stateless handler (a protocol version it must judge, params it
// cannot read as a call). It is the hot path of HTTP automation: each POST through the SDK
// connected and tore down a server session and decoded the body twice more (issue 15); here the
// body was parsed once by parseBody (params included), and the tool runs on the handler
// the SDK server would have called (mcpserver.Builder.CallTool), answered with the same JSON.
func (s *Server) callTool(w http.ResponseWriter, r *http.Request, m rpcMsg, version string) bool {
	if s.viaSDK || m.kind != kindRequest || m.call == nil || !fastVersions[version] {
		return false
	}
	ti := tokenInfo(r)
	if ti == nil {
		// Only a --no-auth demo has no credential. The SDK's session gives such a call a grant
		// scope of its own; without one, grants would have nothing to be filed under.
		return false
	}
	req := &mcp.CallToolRequest{Params: m.call, Extra: &mcp.RequestExtra{TokenInfo: ti, Header: r.Header}}
	// Like the SDK's single-POST handler, a call is not cancelled when its client goes away: a
	// service call half sent to Home Assistant is worse than an answer nobody reads. Shutdown
	// waits for it within the grace period.
	ctx := context.WithoutCancel(r.Context())
	res, err := s.o.Builder.CallTool(ctx, authn.ReadOnly(ti), req)
	writeResult(w, m.id, res, err)
	return true
}

// sessionCall answers a tools/call in a live session itself when the tool is Standalone (a read
// that needs no grant, no confirmation and sends nothing to the client while it runs) and reports
// true; anything else goes through the SDK's session as before. The go-sdk's per-message cost —
// the body decoded three more times, each with a fresh 32 KiB buffer (docs/performance.md) — is
// most of a cached read's; here the tool runs on the handler the session's server installed,
// with the session itself in the request (its grant scope, its client), and the answer is plain
// JSON, which the Streamable HTTP transport allows for any POST. A call that asks for progress,
// a client that does not accept both answer forms, or a session the SDK has not heard from for a
// while (its idle timer only sees what it serves) goes the SDK's way.
func (s *Server) sessionCall(w http.ResponseWriter, r *http.Request, sid string, m rpcMsg) bool {
	if s.viaSDK || m.kind != kindRequest || m.call == nil || m.call.GetProgressToken() != nil ||
		!fastVersions[r.Header.Get("MCP-Protocol-Version")] || !jsonAndStream(r) || !s.sessions.sdkRecent(sid) {
		return false
	}
	ss := s.o.Builder.SessionByID(sid)
	if ss == nil || ss.InitializeParams() == nil {
		return false
	}
	ti := tokenInfo(r)
	t := s.o.Builder.Tool(authn.ReadOnly(ti), m.call.Name)
	if t == nil || !t.Standalone() {
		return false
	}
	req := &mcp.CallToolRequest{Session: ss, Params: m.call, Extra: &mcp.RequestExtra{TokenInfo: ti, Header: r.Header}}
	res := s.o.Builder.RunTool(toolkit.Detached(r.Context()), t, req)
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	writeResult(w, m.id, res, nil)
	return true
}

// jsonAndStream reports whether a POST is one the SDK's session transport would serve: JSON
// sent, and both answer forms accepted (a wildcard counts, as for the SDK).
func jsonAndStream(r *http.Request) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	var jsonOK, streamOK bool
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// resultBufs pools the buffers answers are encoded into.
var resultBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeResult writes {"jsonrpc":"2.0","id":…,"result":…} or the error answer, as the SDK does.
func writeResult(w http.ResponseWriter, id json.RawMessage, res *mcp.CallToolResult, err error) {
	if err != nil {
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			je = &jsonrpc.Error{Code: codeInternalError, Message: err.Error()}
		}
		writeRPCError(w, http.StatusOK, &rpcError{ID: id, Code: int(je.Code), Message: je.Message})
		return
	}
	// The result's own MarshalJSON, not json.Marshal of it: that would copy and re-compact the
	// whole answer once more (a sixth of a cached read's CPU).
	body, merr := res.MarshalJSON()
	if merr != nil {
		writeRPCError(w, http.StatusOK, &rpcError{ID: id, Code: codeInternalError, Message: "internal error: the result could not be encoded: " + merr.Error()})
		return
	}
	buf := resultBufs.Get().(*bytes.Buffer)
	buf.Reset()
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"result":`)
	buf.Write(body)
	buf.WriteByte('}')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	if buf.Cap() <= 64<<10 { // a rare huge answer is not kept
		resultBufs.Put(buf)
	}
}
