package httpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"
)

// singlePost answers the session-less single-POST form with plain JSON. A batch (at most
// MaxBatch messages, each already counted against the rate limit by admitMessages) is answered
// message by message, in order, in one JSON array; notifications and invalid messages that
// carry no id get no entry, and a batch with nothing to answer gets 202 with no body, as the
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
	if !isBatch {
		if errs[0] != nil {
			writeRPCError(w, errs[0].status(version), errs[0])
			return
		}
		if m := msgs[0]; m.kind == kindResponse || (m.kind == kindNotification && !m.known) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if s.callTool(w, r, msgs[0], version) {
			return
		}
		serveRPC(s.single, w, s.singleRequest(r, msgs[0].raw), msgs[0].id)
		return
	}
	if version >= version20260728 {
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: "invalid request: JSON-RPC batches are not part of MCP " + version + "; send one message per POST"})
		return
	}
	var out [][]byte
	for i, m := range msgs {
		if errs[i] != nil {
			b, _ := json.Marshal(errs[i])
			out = append(out, b)
			continue
		}
		if m.kind == kindResponse || (m.kind == kindNotification && !m.known) {
			continue
		}
		rec := &bufferedResponse{header: http.Header{}}
		serveRPC(s.single, rec, s.singleRequest(r, m.raw), m.id)
		if m.kind == kindRequest {
			if b := bytes.TrimSpace(rec.body.Bytes()); len(b) > 0 {
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("["))
	_, _ = w.Write(bytes.Join(out, []byte(",")))
	_, _ = w.Write([]byte("]"))
}

// singleRequest is r carrying one message, with the headers the transport requires: curl and
// n8n rarely send them, and the single form always answers JSON.
func (s *Server) singleRequest(r *http.Request, raw json.RawMessage) *http.Request {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(raw))
	r2.ContentLength = int64(len(raw))
	r2.Header.Set("Accept", "application/json, text/event-stream")
	r2.Header.Set("Content-Type", "application/json") // singlePost checked it
	return r2
}

// bufferedResponse collects one answer of a batch.
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
