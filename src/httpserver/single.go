package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/mcpserver"
)

// singlePost answers the session-less single-POST form with plain JSON. Each request goes to the
// go-sdk server (mcpserver.Builder.ServeSessionless), which dispatches it as in a session; a
// notification goes to the SDK's stateless handler. A
// batch (at most MaxBatch messages, each already counted against the rate limit by
// admitMessages) is answered message by message, in order, in one JSON array; notifications and
// responses get no entry, and a batch with nothing to answer gets 202 with no body, as the
// Streamable HTTP transport (2025-03-26, the revision with batches) says.
func (s *Server) singlePost(c echo.Context, msgs []rpcMsg, errs []*rpcError, isBatch bool, version string) {
	r, w := c.Request(), c.Response()
	if ct := r.Header.Get("Content-Type"); ct != "" {
		// A missing Content-Type is taken as JSON (curl scripts); another one is refused. A page
		// can send text/plain or a form without a CORS preflight: on a --no-auth server that
		// must not run anything.
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeRPCError(w, http.StatusUnsupportedMediaType, &rpcError{Code: codeInvalidRequest, Message: "Content-Type must be application/json"})
			return
		}
	}
	if !mcpserver.SupportsVersion(version) {
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf(
			"Bad Request: Unsupported protocol version %q (supported versions: %s)", truncate(version, 32), strings.Join(mcp.SupportedProtocolVersions(), ","))})
		return
	}
	if isBatch && version >= version20250618 {
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: "invalid request: JSON-RPC batches are not part of MCP " + version + "; send one message per POST"})
		return
	}
	var out [][]byte
	for i, m := range msgs {
		if errs[i] != nil {
			if !isBatch {
				writeRPCError(w, errs[i].status(version), errs[i])
				return
			}
			b, _ := errs[i].MarshalJSON()
			out = append(out, b)
			continue
		}
		switch m.kind {
		case kindResponse:
			continue // an answer to a question a sessionless server never asks
		case kindNotification:
			// Nothing to answer unless the SDK refuses it (an unknown method, a request sent
			// without its id): its stateless handler judges that.
			if !isBatch {
				serveRPC(s.single, w, s.singleRequest(r, m.raw), nil)
				return
			}
			rec := &bufferedResponse{header: http.Header{}}
			serveRPC(s.single, rec, s.singleRequest(r, m.raw), nil)
			continue
		}
		a, err := s.serveOne(r, m, version)
		if err != nil {
			a.JSON, _ = (&rpcError{ID: m.id, Code: codeInternalError, Message: "internal error: " + err.Error()}).MarshalJSON()
			a.ErrorCode = codeInternalError
		}
		out = append(out, a.JSON)
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK) // the SDK's answer, an error included, as its own handler sends it
	if !isBatch {
		_, _ = w.Write(out[0])
		return
	}
	_, _ = w.Write([]byte("["))
	_, _ = w.Write(bytes.Join(out, []byte(",")))
	_, _ = w.Write([]byte("]"))
}

// singleRequest is r carrying one message, with the headers the SDK's transport requires: curl
// and n8n rarely send them, and the single form always answers JSON.
func (s *Server) singleRequest(r *http.Request, raw json.RawMessage) *http.Request {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(raw))
	r2.ContentLength = int64(len(raw))
	r2.Header.Set("Accept", "application/json, text/event-stream")
	r2.Header.Set("Content-Type", "application/json") // singlePost checked it
	return r2
}

// bufferedResponse collects the SDK's answer to one notification of a batch, which is dropped:
// a batch answers requests only.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }
func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
func (b *bufferedResponse) Flush() {}

// serveOne hands one message to the SDK. Like the SDK's single-POST handler, a call is not
// cancelled when its client goes away: a service call half sent to Home Assistant is worse than
// an answer nobody reads. Shutdown waits for it within the grace period.
func (s *Server) serveOne(r *http.Request, m rpcMsg, version string) (mcpserver.SessionlessAnswer, error) {
	ti := tokenInfo(r)
	return s.o.Builder.ServeSessionless(context.WithoutCancel(r.Context()), mcpserver.SessionlessMessage{
		ReadOnly: authn.ReadOnly(ti),
		Version:  version,
		ID:       m.id,
		Method:   m.method,
		Params:   m.params,
		Extra:    &mcp.RequestExtra{TokenInfo: ti, Header: r.Header},
		// Only a --no-auth demo has no credential; its calls get a session, and so a grant
		// scope, of their own.
		Shared: ti != nil,
	})
}
