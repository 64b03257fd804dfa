package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/src/authn"
)

const sessionHeader = "Mcp-Session-Id"

// mcp routes a request on /mcp (and /mcp/, which connectors sometimes keep from a pasted URL) to
// the go-sdk, which answers every message. Every POST body's JSON-RPC envelope is checked here
// first, so an error there is answered as a JSON-RPC error object with the request's id, whatever
// the route:
//   - with an Mcp-Session-Id: the stateful session it names (credential-bound; sessions.go);
//   - initialize from a client that accepts event streams: a new stateful session — sessions
//     are what let hamcp ask the user for permissions through elicitation;
//   - MCP 2026-07-28 (an MCP-Protocol-Version header or _meta protocol version of that era): the
//     go-sdk's stateless handler, the only one that speaks it; server/discover lists only the
//     2025 versions (see below why);
//   - anything else (curl, n8n, initialize from a JSON-only client, batches): the single-POST
//     form, answered with plain JSON and no session (single.go, mcpserver.ServeSessionless).
func (s *Server) mcp(c echo.Context) error {
	r := c.Request()
	w := c.Response()
	sid := r.Header.Get(sessionHeader)
	if r.Method != http.MethodPost {
		if sid == "" {
			serveRPC(s.stateful, w, r, nil)
			return nil
		}
		return s.sessionRequest(c, sid, s.stateful)
	}
	body, ok := s.admitBody(c)
	if !ok {
		return nil
	}
	version := r.Header.Get("MCP-Protocol-Version")
	msgs, errs, isBatch, fatal := parseBody(body)
	if fatal != nil {
		writeRPCError(w, fatal.status(version), fatal)
		return nil
	}
	if sid != "" {
		if !s.checkSession(c, sid) {
			return nil
		}
		s.sessionPost(c, sid, msgs, errs, isBatch)
		return nil
	}
	first := msgs[0]
	if !isBatch && errs[0] == nil && first.method == "server/discover" && acceptsStream(r) {
		// server/discover goes to the stateful handler, which lists only the 2025 versions (the
		// ones a session speaks), so a client of both eras (the go-sdk's, the Inspector's "auto")
		// goes on with initialize and a session. Tools can ask a stateless client (input_required,
		// toolkit/mrtr.go), and the go-sdk client passes the permission prompts that way, but a
		// session still serves such a client better: its grants and denials belong to that one
		// conversation, while stateless requests have no conversation to scope them to and share
		// them with every other client of the token; and event subscriptions push their events
		// on the session. Clients that speak only 2026-07-28 are still served (below), and a
		// plain POST (curl, no event streams) gets the SDK's JSON answer for its version.
		return s.newStatefulSession(c)
	}
	if !isBatch && errs[0] == nil && (version >= version20260728 || first.metaVersion != "") {
		// The stateless handler answers 2026-07-28 requests itself (_meta and header checks,
		// SEP-2575 statuses, resultType, cache hints). Tools ask the user with input_required
		// results (toolkit/mrtr.go) when the request declares elicitation; otherwise permissions
		// fall back to the approval link. Grants are scoped to the token's grant key, as for the
		// single-POST form.
		serveRPC(s.modern, w, r, first.id)
		return nil
	}
	if !isBatch && errs[0] == nil && first.method == "initialize" && acceptsStream(r) {
		return s.newStatefulSession(c)
	}
	s.singlePost(c, msgs, errs, isBatch, version)
	return nil
}

// acceptsStream reports whether the client named text/event-stream in Accept: it can hold a
// stateful session. A client that accepts only JSON (n8n's HTTP node, curl) is answered in the
// single-POST form instead of being refused.
func acceptsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "text/event-stream") {
			return true
		}
	}
	return false
}

// checkSession answers a request addressed to session sid unless it comes with the session's
// credential.
func (s *Server) checkSession(c echo.Context, sid string) bool {
	if e := s.sessions.check(sid, credential(tokenInfo(c.Request()))); e != nil {
		writeRPCError(c.Response(), e.status, &rpcError{Code: codeInvalidRequest, Message: e.msg})
		return false
	}
	return true
}

// sessionPost serves a POST to a live session: the SDK's session transport answers it. Batches
// are answered as the session's protocol version allows (2025-03-26 only); a batch holding an
// invalid message is refused whole, since the SDK answers a batch on one stream and cannot mix in
// hamcp's errors.
func (s *Server) sessionPost(c echo.Context, sid string, msgs []rpcMsg, errs []*rpcError, isBatch bool) {
	r, w := c.Request(), c.Response()
	version := r.Header.Get("MCP-Protocol-Version")
	if version == "" {
		version = version20250326
	}
	if isBatch && version >= version20250618 {
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf(
			"invalid request: JSON-RPC batches are not part of MCP %s (this session's version); send one message per POST", version)})
		return
	}
	for i, e := range errs {
		if e == nil {
			continue
		}
		if isBatch {
			writeRPCError(w, http.StatusBadRequest, &rpcError{Code: e.Code, Message: fmt.Sprintf("batch message %d: %s", i+1, e.Message)})
			return
		}
		writeRPCError(w, e.status(version), e)
		return
	}
	serveRPC(s.stateful, w, r, msgs[0].id)
}

type toolEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema any    `json:"inputSchema"`
}

// toolList is GET /mcp/tools: the tools this token may use, as plain JSON.
func (s *Server) toolList(c echo.Context) error {
	tools := s.o.Builder.Tools(authn.ReadOnly(tokenInfo(c.Request())))
	out := make([]toolEntry, 0, len(tools))
	for _, t := range tools {
		d := t.Definition()
		out = append(out, toolEntry{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema})
	}
	return c.JSON(http.StatusOK, map[string]any{"tools": out, "count": len(out)})
}

// health is GET /mcp/health, unauthenticated: status, version and backend connectivity. It
// reveals nothing a stranger could use beyond whether the backends answer.
func (s *Server) health(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	defer cancel()
	status := "ok"
	backends := map[string]any{}
	for _, h := range s.o.Health {
		ok, detail := h.Check(ctx)
		if !ok {
			status = "degraded"
		}
		backends[h.Name] = map[string]any{"ok": ok, "detail": detail}
	}
	return c.JSON(http.StatusOK, map[string]any{"status": status, "version": s.o.Version, "backends": backends})
}

// errorHandler answers echo's own errors (404, 405, 413, 429…) with small JSON bodies.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code := http.StatusInternalServerError
	msg := "internal error"
	if he, ok := err.(*echo.HTTPError); ok {
		code = he.Code
		if m, ok := he.Message.(string); ok {
			msg = m
		} else {
			msg = http.StatusText(code)
		}
	} else {
		s.o.Logger.Error("request failed", "path", c.Path(), "err", err)
	}
	_ = refusal(c, code, msg)
}
