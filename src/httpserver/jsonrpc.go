package httpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// JSON-RPC error codes hamcp answers with on /mcp.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	// codeUnauthorized is the MCP convention for a missing or rejected bearer token.
	codeUnauthorized = -32001
)

// maxIDLen bounds a JSON-RPC id as sent (quotes included). Ids are echoed in answers and keyed
// in the SDK's in-flight table; no client needs more than a UUID or a counter.
const maxIDLen = 128

// Protocol versions whose transport rules differ.
const (
	version20250326 = "2025-03-26" // assumed when a request names none (Streamable HTTP spec)
	version20250618 = "2025-06-18" // JSON-RPC batches removed
	version20260728 = "2026-07-28" // stateless: _meta protocol version, server/discover, SEP-2575 statuses
	metaVersionKey  = "io.modelcontextprotocol/protocolVersion"
)

type msgKind uint8

const (
	kindRequest msgKind = iota
	kindNotification
	kindResponse // a client's answer to a server request (elicitation, sampling)
)

// rpcMsg is one JSON-RPC message of a POST body, as far as routing needs to know it.
type rpcMsg struct {
	raw         json.RawMessage
	kind        msgKind
	id          json.RawMessage
	method      string
	params      json.RawMessage // as sent; nil when absent
	metaVersion string          // params._meta's protocol version (2026-07-28 stateless requests)
}

// rpcError is a JSON-RPC error answer. A nil ID is sent as null: the id could not be read.
type rpcError struct {
	ID      json.RawMessage
	Code    int
	Message string
}

func (e *rpcError) MarshalJSON() ([]byte, error) {
	id := e.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	type body struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   body            `json:"error"`
	}{"2.0", id, body{e.Code, e.Message}})
}

// status is the HTTP status of a lone error answer. Before 2026-07-28 the Streamable HTTP
// transport answers a request it accepted with a normal response, an error response included
// (200): only input the server cannot accept — unparseable, not a valid request, or a message
// without an id to answer — gets 400. SEP-2575 (2026-07-28) gives method-not-found 404 and
// the other protocol errors 400.
func (e *rpcError) status(version string) int {
	if version >= version20260728 {
		if e.Code == codeMethodNotFound {
			return http.StatusNotFound
		}
		return http.StatusBadRequest
	}
	if e.ID != nil && (e.Code == codeMethodNotFound || e.Code == codeInvalidParams) {
		return http.StatusOK
	}
	return http.StatusBadRequest
}

func writeRPCError(w http.ResponseWriter, status int, e *rpcError) {
	b, _ := json.Marshal(e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// parseBody splits a POST body into its messages. fatal is set when the body as a whole cannot
// be accepted (not JSON, an empty batch); otherwise errs[i] is set for each message that is not
// a valid request, notification or response.
func parseBody(body []byte) (msgs []rpcMsg, errs []*rpcError, batch bool, fatal *rpcError) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, nil, false, &rpcError{Code: codeInvalidRequest, Message: "invalid request: the body is empty; POST one JSON-RPC message"}
	}
	if !json.Valid(trimmed) {
		return nil, nil, false, &rpcError{Code: codeParseError, Message: "parse error: the body is not valid JSON"}
	}
	raws := []json.RawMessage{trimmed}
	if trimmed[0] == '[' {
		batch = true
		raws = nil
		_ = json.Unmarshal(trimmed, &raws)
		if len(raws) == 0 {
			return nil, nil, true, &rpcError{Code: codeInvalidRequest, Message: "invalid request: an empty batch; send at least one JSON-RPC message"}
		}
	}
	msgs = make([]rpcMsg, len(raws))
	errs = make([]*rpcError, len(raws))
	for i, raw := range raws {
		msgs[i], errs[i] = inspect(raw)
	}
	return msgs, errs, batch, nil
}

// inspect checks one message against JSON-RPC 2.0: what a message is (request, notification,
// answer) and its id, which every error answer must echo. Methods and their params are the
// SDK's to judge.
func inspect(raw json.RawMessage) (rpcMsg, *rpcError) {
	m := rpcMsg{raw: raw}
	var f map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &f) != nil {
		return m, &rpcError{Code: codeInvalidRequest, Message: "invalid request: a JSON-RPC message must be a JSON object"}
	}
	idRaw, hasID := f["id"]
	idProblem := ""
	if hasID {
		idProblem = checkID(idRaw)
		if idProblem == "" {
			m.id = idRaw
		}
	}
	if v := string(f["jsonrpc"]); v != `"2.0"` {
		got := "it is missing"
		if v != "" {
			got = "got " + truncate(v, 20)
		}
		return m, &rpcError{ID: m.id, Code: codeInvalidRequest, Message: `invalid request: "jsonrpc" must be "2.0" (` + got + ")"}
	}
	if idProblem != "" {
		return m, &rpcError{Code: codeInvalidRequest, Message: "invalid request: " + idProblem}
	}
	methodRaw, hasMethod := f["method"]
	if !hasMethod {
		_, hasResult := f["result"]
		_, hasError := f["error"]
		if hasID && (hasResult || hasError) {
			m.kind = kindResponse
			return m, nil
		}
		return m, &rpcError{ID: m.id, Code: codeInvalidRequest, Message: `invalid request: "method" is required`}
	}
	if json.Unmarshal(methodRaw, &m.method) != nil || m.method == "" {
		return m, &rpcError{ID: m.id, Code: codeInvalidRequest, Message: `invalid request: "method" must be a non-empty string`}
	}
	m.kind = kindRequest
	if !hasID {
		m.kind = kindNotification
	}
	params, hasParams := f["params"]
	if hasParams {
		m.params = params // null included: the SDK tells null from absent
	}
	if hasParams && string(params) != "null" {
		var p struct {
			Meta json.RawMessage `json:"_meta"`
		}
		var meta map[string]any
		if params[0] != '{' || json.Unmarshal(params, &p) != nil || !decodeMeta(p.Meta, &meta) {
			return m, &rpcError{ID: m.id, Code: codeInvalidParams, Message: `invalid params: "params" must be a JSON object`}
		}
		m.metaVersion, _ = meta[metaVersionKey].(string)
	}
	return m, nil
}

// decodeMeta reads params._meta (absent or null: none); false when it is not an object.
func decodeMeta(raw json.RawMessage, meta *map[string]any) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return true
	}
	return json.Unmarshal(raw, meta) == nil
}

// checkID says what is wrong with a JSON-RPC id, or "" when it is one MCP allows.
func checkID(id json.RawMessage) string {
	if len(id) > maxIDLen {
		return fmt.Sprintf(`"id" is %d bytes long; the limit is %d`, len(id), maxIDLen)
	}
	switch {
	case id[0] == '"':
		return ""
	case string(id) == "null":
		return `"id" must not be null (MCP); send a string or an integer`
	}
	var n json.Number
	if json.Unmarshal(id, &n) != nil {
		return `"id" must be a string or an integer`
	}
	if _, err := n.Int64(); err != nil {
		return `"id" must be a string or an integer that fits 64 bits`
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// rpcErrorWriter turns the plain-text errors the go-sdk transport writes with http.Error
// (wrong Accept or Content-Type, unknown session, …) into JSON-RPC error objects, so every
// answer on /mcp is JSON-RPC. Everything else passes through untouched, streams included.
type rpcErrorWriter struct {
	http.ResponseWriter
	id          json.RawMessage
	status      int
	text        bytes.Buffer
	rewriting   bool
	wroteHeader bool
}

func (w *rpcErrorWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.rewriting, w.status = true, code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *rpcErrorWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.rewriting {
		if w.text.Len() < 1024 {
			w.text.Write(p)
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *rpcErrorWriter) Flush() {
	if !w.rewriting {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *rpcErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the JSON-RPC form of a plain-text error, if there was one.
func (w *rpcErrorWriter) finish() {
	if !w.rewriting {
		return
	}
	w.Header().Del("Content-Length")
	w.Header().Del("X-Content-Type-Options")
	code := codeInvalidRequest
	if w.status >= 500 {
		code = codeInternalError
	}
	writeRPCError(w.ResponseWriter, w.status, &rpcError{ID: w.id, Code: code, Message: strings.TrimSpace(w.text.String())})
}

// serveRPC serves r with h, answering the SDK's plain-text errors as JSON-RPC (with id, when
// the request had one).
func serveRPC(h http.Handler, w http.ResponseWriter, r *http.Request, id json.RawMessage) {
	rw := &rpcErrorWriter{ResponseWriter: w, id: id}
	h.ServeHTTP(rw, r)
	rw.finish()
}

// codeServerBusy is hamcp's JSON-RPC code for a request refused because its client is over a
// limit (HTTP 429); JSON-RPC leaves -32000…-32099 to the server.
const codeServerBusy = -32000

// rpcPath reports whether answers on this path are JSON-RPC: the MCP endpoints. /mcp/health and
// /mcp/tools are plain JSON APIs, and OAuth's and the panel's routes have their own forms.
func rpcPath(p string) bool {
	return p == "/mcp" || p == "/mcp/" || p == "/sse" || p == "/messages"
}

// refusal answers a request refused before any message was read (too large, too slow, too many,
// a forbidden Origin): a JSON-RPC error on the MCP endpoints, so every answer there has one
// shape, and {"error": msg} elsewhere.
func refusal(c echo.Context, status int, msg string) error {
	if !rpcPath(c.Request().URL.Path) {
		return c.JSON(status, map[string]any{"error": msg})
	}
	code := codeInvalidRequest
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		code = codeServerBusy
	case status >= 500:
		code = codeInternalError
	}
	writeRPCError(c.Response(), status, &rpcError{Code: code, Message: msg})
	return nil
}
