package httpserver

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/mcpserver"
)

// Session binding: an MCP session (Streamable HTTP Mcp-Session-Id, legacy SSE sessionid)
// answers only to the exact credential that created it. The go-sdk only compares user ids, so
// another token of the same user — a read-only OAuth grant, a second HA token — could drive a
// full-access session and use its permission grants. Here every later request must carry the
// same credential (same OAuth grant and scope, same HA token, same ingress user) or gets 403.
// The same table caps how many sessions one client IP and one credential may hold.

// Default session caps: generous for a home (a few assistants, each reconnecting now and
// then), small enough that one client cannot exhaust memory with idle sessions.
const (
	DefaultMaxSessionsPerIP    = 64
	DefaultMaxSessionsPerToken = 32
)

// credential names the exact credential behind a request, secret-free: the same OAuth grant and
// scopes, the same HA token, the same ingress user (authn.Principal.Credential). "" means no
// credential at all (--no-auth on loopback).
func credential(ti *auth.TokenInfo) string { return authn.PrincipalOf(ti).Credential() }

type boundSession struct{ cred, ip string }

type sessionTable struct {
	perIP, perCred int

	mu     sync.Mutex
	bound  map[string]boundSession // transport session id → who created it
	byIP   map[string]int          // sessions held (or being created) per client IP
	byCred map[string]int          // … and per credential
}

func newSessionTable(perIP, perCred int) *sessionTable {
	return &sessionTable{perIP: perIP, perCred: perCred, bound: map[string]boundSession{}, byIP: map[string]int{},
		byCred: map[string]int{}}
}

// ids lists the sessions in the table.
func (t *sessionTable) ids() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.bound))
	for sid := range t.bound {
		out = append(out, sid)
	}
	return out
}

// sessionIdle is how long a session may go without a request before the SDK closes it.
const sessionIdle = 30 * time.Minute

// limitError is a refused session or connection: which limit, for the JSON answer.
type limitError struct {
	status int
	msg    string
}

func (e *limitError) answer(c echo.Context) error {
	c.Response().Header().Set("Retry-After", "60")
	return refusal(c, e.status, e.msg)
}

// slot is a session being created: counted against the caps from the start, so parallel
// initialize requests cannot overshoot them.
type slot struct {
	t      *sessionTable
	ip     string
	cred   string
	mu     sync.Mutex
	sid    string
	closed bool
}

// reserve takes one session slot for ip and cred, or says which cap is reached.
func (t *sessionTable) reserve(ip, cred string) (*slot, *limitError) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perIP > 0 && t.byIP[ip] >= t.perIP {
		return nil, &limitError{http.StatusTooManyRequests, fmt.Sprintf("too many MCP sessions from %s: the limit is %d open sessions per client IP; close unused sessions (DELETE /mcp) or wait for idle ones to expire after 30 minutes", ip, t.perIP)}
	}
	if cred != "" && t.perCred > 0 && t.byCred[cred] >= t.perCred {
		return nil, &limitError{http.StatusTooManyRequests, fmt.Sprintf("too many MCP sessions for this token: the limit is %d open sessions per token; close unused sessions (DELETE /mcp) or wait for idle ones to expire after 30 minutes", t.perCred)}
	}
	t.byIP[ip]++
	if cred != "" {
		t.byCred[cred]++
	}
	return &slot{t: t, ip: ip, cred: cred}, nil
}

// bind records the session id the transport gave the new session.
func (s *slot) bind(sid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.sid != "" || sid == "" {
		return
	}
	s.sid = sid
	s.t.mu.Lock()
	s.t.bound[sid] = boundSession{cred: s.cred, ip: s.ip}
	s.t.mu.Unlock()
}

// done ends the slot unless its session is still live: a request that created no session, or
// one that ended meanwhile, gives its place back.
func (s *slot) done(live func(sid string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.sid != "" && live(s.sid) {
		return
	}
	s.closed = true
	if s.sid != "" {
		s.t.end(s.sid)
		return
	}
	s.t.release(s.ip, s.cred)
}

// end forgets an ended session and gives its place back.
func (t *sessionTable) end(sid string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.bound[sid]
	if !ok {
		return
	}
	delete(t.bound, sid)
	t.releaseLocked(b.ip, b.cred)
}

func (t *sessionTable) release(ip, cred string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.releaseLocked(ip, cred)
}

func (t *sessionTable) releaseLocked(ip, cred string) {
	if t.byIP[ip]--; t.byIP[ip] <= 0 {
		delete(t.byIP, ip)
	}
	if cred != "" {
		if t.byCred[cred]--; t.byCred[cred] <= 0 {
			delete(t.byCred, cred)
		}
	}
}

// check answers a request addressed to session sid, or returns nil when cred may use it.
func (t *sessionTable) check(sid, cred string) *limitError {
	t.mu.Lock()
	b, ok := t.bound[sid]
	t.mu.Unlock()
	switch {
	case !ok:
		return &limitError{http.StatusNotFound, "session not found: it ended or expired; start a new session with initialize"}
	case b.cred != cred:
		return &limitError{http.StatusForbidden, "forbidden: this MCP session belongs to another credential; a session can only be used with the exact token (or OAuth grant) that created it — start your own session with initialize"}
	}
	return nil
}

// sessionRequest serves a request addressed to an existing session after checking that it
// comes with the session's credential.
func (s *Server) sessionRequest(c echo.Context, sid string, h http.Handler) error {
	if !s.checkSession(c, sid) {
		return nil
	}
	serveRPC(h, c.Response(), c.Request(), nil)
	if c.Request().Method == http.MethodDelete && c.Response().Status == http.StatusNoContent {
		// Give the slot back now rather than when the SDK's close reaches the end hook, so a
		// client that ends a session at the cap can start its next one straight away.
		s.sessions.end(sid)
	}
	return nil
}

// newStatefulSession serves a POST that creates a Streamable HTTP session (initialize): it
// holds a slot under the caps, binds the session id the SDK answers with to the request's
// credential before the client can see it, and gives the slot back if no session outlived
// the request.
func (s *Server) newStatefulSession(c echo.Context) error {
	sl, e := s.sessions.reserve(c.RealIP(), credential(tokenInfo(c.Request())))
	if e != nil {
		return e.answer(c)
	}
	resp := c.Response()
	resp.Before(func() { sl.bind(resp.Header().Get(sessionHeader)) })
	serveRPC(s.stateful, resp, c.Request(), nil)
	sl.done(func(sid string) bool { return s.o.Builder.Live("mcp:" + sid) })
	return nil
}

// legacySSE serves the deprecated HTTP+SSE transport. GET /sse opens a session (bound like a
// Streamable HTTP one, with its own random grant key) that lasts as long as the stream; POST
// /messages?sessionid=… must come with the same credential.
func (s *Server) legacySSE(c echo.Context) error {
	r := c.Request()
	if r.Method == http.MethodPost {
		sid := r.URL.Query().Get("sessionid")
		if sid == "" {
			return refusal(c, http.StatusBadRequest, "sessionid is required: use the endpoint the /sse stream announced")
		}
		if _, ok := s.admitBody(c); !ok {
			return nil
		}
		return s.sessionRequest(c, sid, s.sse)
	}
	if r.Method != http.MethodGet {
		s.sse.ServeHTTP(c.Response(), r)
		return nil
	}
	sl, e := s.sessions.reserve(c.RealIP(), credential(tokenInfo(r)))
	if e != nil {
		return e.answer(c)
	}
	resp := c.Response()
	resp.Writer = &endpointSniffer{ResponseWriter: resp.Writer, found: sl.bind}
	r = r.WithContext(mcpserver.WithConnKey(r.Context(), mcpserver.NewConnKey("sse")))
	s.sse.ServeHTTP(resp, r)
	// The stream is the session: when the GET ends, so does the session.
	sl.done(func(string) bool { return false })
	return nil
}

// endpointSniffer reads the session id out of the legacy transport's first event
// ("event: endpoint / data: /messages?sessionid=…") on its way to the client: the SDK chooses
// the id and tells no one else.
type endpointSniffer struct {
	http.ResponseWriter
	found func(sid string)
	buf   []byte
	done  bool
}

func (w *endpointSniffer) Write(p []byte) (int, error) {
	if !w.done {
		w.buf = append(w.buf, p...)
		if i := bytes.Index(w.buf, []byte("sessionid=")); i >= 0 {
			rest := w.buf[i+len("sessionid="):]
			if j := bytes.IndexAny(rest, "&\r\n"); j >= 0 {
				w.done = true
				w.found(string(rest[:j]))
				w.buf = nil
			}
		}
		if len(w.buf) > 4096 {
			w.done, w.buf = true, nil
		}
	}
	return w.ResponseWriter.Write(p)
}

func (w *endpointSniffer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *endpointSniffer) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }
