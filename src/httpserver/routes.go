package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/src/authn"
)

const sessionHeader = "Mcp-Session-Id"

// mcp routes a request on /mcp. A POST that carries no session id and is not an initialize
// request is the single-request form (curl, n8n): it is answered by a stateless handler with
// plain JSON. Everything else belongs to a stateful session — including the 2026-07-28
// stateless protocol (server/discover, _meta protocol version), which the stateful handler
// declines so those clients fall back to an initialize handshake: sessions are what let hamcp
// ask the user for permissions through elicitation.
func (s *Server) mcp(c echo.Context) error {
	r := c.Request()
	if r.Method == http.MethodPost && !s.admitBody(c) {
		return nil
	}
	if sid := r.Header.Get(sessionHeader); sid != "" {
		return s.sessionRequest(c, sid, s.stateful)
	}
	if r.Method != http.MethodPost {
		s.stateful.ServeHTTP(c.Response(), r)
		return nil
	}
	body, _ := io.ReadAll(r.Body) // admitBody left it in memory
	r.Body = io.NopCloser(bytes.NewReader(body))
	if isSingleRequest(r, body) {
		// curl and n8n rarely send the Accept header the transport requires; the single
		// form always answers JSON, so accept that on their behalf.
		if !strings.Contains(r.Header.Get("Accept"), "application/json") || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			r.Header.Set("Accept", "application/json, text/event-stream")
		}
		if r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/json")
		}
		s.single.ServeHTTP(c.Response(), r)
		return nil
	}
	return s.newStatefulSession(c)
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
	_ = c.JSON(code, map[string]any{"error": msg})
}

// isSingleRequest reports whether a session-less POST is the curl/n8n single-request form.
func isSingleRequest(r *http.Request, body []byte) bool {
	var probe struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &probe) != nil {
		return false
	}
	switch probe.Method {
	case "", "initialize", "server/discover":
		return false
	}
	if _, modern := probe.Params.Meta["io.modelcontextprotocol/protocolVersion"]; modern {
		return false
	}
	return r.Header.Get("MCP-Protocol-Version") < "2026-07-28"
}
