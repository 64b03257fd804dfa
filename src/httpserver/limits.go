package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
)

// Hard limits of the HTTP listener. Each one stops a client from holding more of the add-on
// than a home needs: memory (sessions, batches), connections, or a goroutine per stalled body.
const (
	// MaxBatch is the most JSON-RPC messages one POST may carry.
	MaxBatch = 20
	// DefaultMaxConnsPerIP caps the concurrent connections (and in-flight requests, open SSE
	// streams included) of one client IP.
	DefaultMaxConnsPerIP = 64
	// DefaultReadHeaderTimeout is how long a client has to send a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyReadTimeout is how long a client has to send a request's body, from the moment
	// its headers arrived. 4 MB (the body limit) takes well under a second on a home network.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultIdleTimeout closes keep-alive connections that carry no request.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultStreamWriteTimeout is how long one write of an answer or stream event may wait for
	// a client to read (streamWriter).
	DefaultStreamWriteTimeout = 30 * time.Second
	// refusedBodyGrace is how long the rest of a refused request's body may take (refuse).
	refusedBodyGrace = time.Second
)

// countMessages returns how many JSON-RPC messages body holds: the number of elements of a
// top-level array (a batch), otherwise 1. It stops counting once past max. Malformed JSON counts
// as one message: the transport answers it with a parse error.
func countMessages(body []byte, max int) int {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return 1
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return 1
	}
	n := 0
	for dec.More() && n <= max {
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
		n++
	}
	if n == 0 {
		return 1
	}
	return n
}

// admitMessages is the gate every POSTed JSON-RPC body passes before a transport sees it: a
// batch over MaxBatch is refused (-32600, HTTP 400), and each message beyond the first costs one
// more request of the client's rate limit (the request itself paid for one), so a batch of 20
// calls counts as 20 requests. It reports whether the body may go on; when not, the answer
// has been written.
func (s *Server) admitMessages(c echo.Context, body []byte) bool {
	n := countMessages(body, MaxBatch)
	if n > MaxBatch {
		_ = c.JSON(http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
			"code":    -32600,
			"message": fmt.Sprintf("invalid request: a batch may hold at most %d JSON-RPC messages; split it into several requests", MaxBatch),
		}})
		return false
	}
	if n == 1 || s.limiter == nil {
		return true
	}
	ok, wait := s.limiter.allowN(c.RealIP(), time.Now(), n-1)
	if !ok {
		s.rateLimited(c, wait, fmt.Sprintf("rate limit exceeded: this batch of %d messages counts as %d requests", n, n))
		return false
	}
	return true
}

// admitBody reads a POST body (within the body limit and read deadline), puts it back for the
// transport, and passes it through admitMessages. It returns the body and whether the request
// may go on; when not, the answer has been written.
func (s *Server) admitBody(c echo.Context) ([]byte, bool) {
	r := c.Request()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		var he *echo.HTTPError
		switch {
		case errors.As(err, &mbe), errors.As(err, &he):
			s.tooLarge(c)
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.refuse(c)
			_ = refusal(c, http.StatusRequestTimeout, "the request body did not arrive in time")
		default:
			_ = refusal(c, http.StatusBadRequest, "the request body could not be read")
		}
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, s.admitMessages(c, body)
}

// tooLarge answers a body over the limit.
func (s *Server) tooLarge(c echo.Context) {
	s.refuse(c) // the rest of the body is not read
	_ = refusal(c, http.StatusRequestEntityTooLarge, "request body too large: the limit is "+strconv.FormatInt(s.o.BodyLimit>>10, 10)+" KB (body_limit_kb)")
}

// bodyLimit refuses a body whose declared length is over the limit before reading any of it,
// and caps one sent without a length (chunked) so reading it fails at the limit (admitBody and
// the transports then answer with tooLarge's message).
func (s *Server) bodyLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.ContentLength > s.o.BodyLimit {
			s.tooLarge(c)
			return nil
		}
		if r.Body != nil && r.Body != http.NoBody {
			// A transport that meets the limit answers on its own; the rest of the body is
			// dropped all the same.
			r.Body = &limitedBody{ReadCloser: http.MaxBytesReader(c.Response(), r.Body, s.o.BodyLimit), over: func() { s.cutRead(c) }}
		}
		return next(c)
	}
}

// limitedBody calls over once reading it fails at the body limit.
type limitedBody struct {
	io.ReadCloser
	over func()
	once sync.Once
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		b.once.Do(b.over)
	}
	return n, err
}

// streamWriter gives every write of an answer — a JSON body, an SSE event of a stream that stays
// open for hours — StreamWriteTimeout to reach the client. A client that stops reading fills the
// socket's buffers, and its next write fails instead of blocking forever; the transport then ends
// the stream and its session, and what it had queued for that client is freed (six unread
// legacy SSE streams held 150 MB of queued answers before). It is a
// deadline per write, set right before it, so a stream that is merely quiet is never cut.
type streamWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *streamWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.ResponseWriter.Write(p)
}

func (w *streamWriter) Flush() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	_ = w.rc.Flush()
}

func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeDeadlines wraps the answer of every MCP route in a streamWriter.
func (s *Server) writeDeadlines(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		resp := c.Response()
		resp.Writer = &streamWriter{ResponseWriter: resp.Writer, rc: http.NewResponseController(resp.Writer), timeout: s.o.StreamWriteTimeout}
		return next(c)
	}
}

func (s *Server) rateLimited(c echo.Context, wait time.Duration, msg string) {
	s.refuse(c)
	secs := 60
	if wait > 0 && wait < time.Hour {
		secs = int(math.Ceil(wait.Seconds()))
	}
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	_ = refusal(c, http.StatusTooManyRequests, msg+"; retry after "+strconv.Itoa(secs)+"s")
}

// bodyDeadline gives a request's body BodyReadTimeout to arrive, so a client dribbling a byte
// every few seconds is disconnected instead of holding a connection and a goroutine forever.
// It runs right after the Host, Origin, rate and in-flight guards: up to here the connection's
// read guard (armed when the connection was accepted, and again when each request's headers
// arrived) bounds the request, and a refusal cuts it short (refuse). A request that passed the
// guards gets the body deadline instead, lifted as soon as the body has been read, or no read
// deadline at all when it carries no body — so none can reach an open SSE stream (GET /mcp,
// GET /sse, a POST answered as a stream); for the same reason the server has no WriteTimeout.
func (s *Server) bodyDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		gc := guardedConnOf(r)
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			if gc != nil {
				gc.setGuard(time.Time{})
			}
			return next(c)
		}
		deadline := time.Now().Add(s.o.BodyReadTimeout)
		if gc != nil {
			gc.setGuard(deadline)
			r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { gc.setGuard(time.Time{}) }}
			return next(c)
		}
		// Served on a listener of someone else's (Handler): the plain per-request deadline.
		rc := http.NewResponseController(c.Response())
		if rc.SetReadDeadline(deadline) == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		}
		return next(c)
	}
}

// refuse makes an answer that turns a request away (bad Host or Origin, rate limited, over a
// cap or the body limit, unauthenticated) end its connection. Go's server would otherwise read
// up to 256 KiB of the refused request's unread body, however slowly the client sends it,
// before reusing the connection; Connection: close alone does not stop that read. So the
// connection's read guard is cut to refusedBodyGrace: the rest of a normal client's body, already
// on its way, is still read and the connection ends cleanly, while a client dribbling its body
// is dropped and holds no place under the per-IP caps.
func (s *Server) refuse(c echo.Context) {
	c.Response().Header().Set("Connection", "close")
	s.cutRead(c)
}

// cutRead gives the rest of the request's body refusedBodyGrace (at most BodyReadTimeout).
func (s *Server) cutRead(c echo.Context) {
	grace := min(refusedBodyGrace, s.o.BodyReadTimeout)
	until := time.Now().Add(grace)
	if gc := guardedConnOf(c.Request()); gc != nil {
		gc.cutGuard(until)
		return
	}
	_ = http.NewResponseController(c.Response()).SetReadDeadline(until)
}

type deadlineBody struct {
	io.ReadCloser
	lift func()
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
}

// ipCounter counts something concurrent (connections, requests) per client IP under a cap.
type ipCounter struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newIPCounter(max int) *ipCounter { return &ipCounter{max: max, n: map[string]int{}} }

func (k *ipCounter) acquire(ip string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n[ip] >= k.max {
		return false
	}
	k.n[ip]++
	return true
}

func (k *ipCounter) release(ip string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n[ip]--; k.n[ip] <= 0 {
		delete(k.n, ip)
	}
}

func tooManyConns(ip string, max int) string {
	return fmt.Sprintf("too many concurrent connections from %s: the limit is %d per client IP; close idle connections or streams and retry", ip, max)
}

// inFlightLimit caps the requests one client IP has in flight, open SSE streams included. Behind
// a trusted proxy (HA ingress) every client shares the proxy's connections, so this is the cap
// that tells them apart; for direct clients it matches the connection cap.
func (s *Server) inFlightLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().URL.Path == "/mcp/health" {
			return next(c)
		}
		ip := c.RealIP()
		if !s.inFlight.acquire(ip) {
			c.Response().Header().Set("Retry-After", "5")
			s.refuse(c)
			return refusal(c, http.StatusTooManyRequests, tooManyConns(ip, s.inFlight.max))
		}
		defer s.inFlight.release(ip)
		return next(c)
	}
}

// connLimitListener caps the TCP connections of one peer IP. At the cap, a new connection
// takes the place of that peer's oldest idle keep-alive connection (clients reopen those
// transparently); if none is idle it is refused with a short JSON 429 so a client sees why.
// Trusted proxies are not capped here (their clients are, by inFlightLimit).
//
// Every connection it hands out, trusted or not, carries a read guard (guardedConn) armed at
// accept: firstGuard for the first request's headers and body, then requestGuard from the
// moment each request's headers have arrived (connState), until the request passes the guards
// (bodyDeadline) or is refused (refuse).
type connLimitListener struct {
	net.Listener
	max          int
	trusted      []*net.IPNet
	firstGuard   time.Duration
	requestGuard time.Duration

	mu       sync.Mutex
	byIP     map[string][]*countedConn // oldest first
	refusing chan struct{}             // bounds the goroutines answering refused connections
}

func newConnLimitListener(ln net.Listener, max int, trusted []*net.IPNet, firstGuard, requestGuard time.Duration) *connLimitListener {
	return &connLimitListener{Listener: ln, max: max, trusted: trusted, firstGuard: firstGuard, requestGuard: requestGuard,
		byIP: map[string][]*countedConn{}, refusing: make(chan struct{}, 64)}
}

func (l *connLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		guard := time.Now().Add(l.firstGuard)
		host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
		ip := net.ParseIP(host)
		if ip == nil || l.isTrusted(ip) {
			cc := &countedConn{guardedConn: guardedConn{Conn: c}, ip: host}
			cc.setGuard(guard)
			return cc, nil
		}
		if cc := l.admit(c, host); cc != nil {
			cc.setGuard(guard)
			return cc, nil
		}
		select {
		case l.refusing <- struct{}{}:
			go func() {
				defer func() { <-l.refusing }()
				refuseConn(c, tooManyConns(host, l.max))
			}()
		default: // a flood: no goroutine per refusal, just close
			_ = c.Close()
		}
	}
}

// admit counts c against host's cap, evicting host's oldest idle connection when at the cap.
func (l *connLimitListener) admit(c net.Conn, host string) *countedConn {
	l.mu.Lock()
	conns := l.byIP[host]
	var evict *countedConn
	if len(conns) >= l.max {
		for _, old := range conns {
			if old.idle.Load() {
				evict = old
				break
			}
		}
		if evict == nil {
			l.mu.Unlock()
			return nil
		}
		l.removeLocked(evict)
	}
	cc := &countedConn{guardedConn: guardedConn{Conn: c}, l: l, ip: host}
	l.byIP[host] = append(l.byIP[host], cc)
	l.mu.Unlock()
	if evict != nil {
		_ = evict.Conn.Close()
	}
	return cc
}

func (l *connLimitListener) removeLocked(cc *countedConn) {
	conns := l.byIP[cc.ip]
	for i, c := range conns {
		if c == cc {
			conns = append(conns[:i:i], conns[i+1:]...)
			break
		}
	}
	if len(conns) == 0 {
		delete(l.byIP, cc.ip)
	} else {
		l.byIP[cc.ip] = conns
	}
}

// connState is the http.Server's ConnState hook: it tells idle keep-alive connections apart,
// and arms a connection's read guard when a request's headers have arrived (StateActive comes
// before the handler runs).
func (l *connLimitListener) connState(c net.Conn, st http.ConnState) {
	cc, ok := c.(*countedConn)
	if !ok {
		return
	}
	cc.idle.Store(st == http.StateIdle)
	switch st {
	case http.StateActive:
		cc.setGuard(time.Now().Add(l.requestGuard))
	case http.StateHijacked:
		cc.setGuard(time.Time{})
	}
}

// connContext is the http.Server's ConnContext hook: it lets a request reach its connection's
// read guard.
func (l *connLimitListener) connContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*countedConn); ok {
		return context.WithValue(ctx, guardedConnKey{}, &cc.guardedConn)
	}
	return ctx
}

func (l *connLimitListener) isTrusted(ip net.IP) bool {
	for _, n := range l.trusted {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

func refuseConn(c net.Conn, msg string) {
	defer c.Close()
	body, _ := json.Marshal(map[string]string{"error": msg})
	_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 5\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

type countedConn struct {
	guardedConn
	l    *connLimitListener // nil: not counted (a trusted proxy)
	ip   string
	idle atomic.Bool
	once sync.Once
}

func (c *countedConn) Close() error {
	if c.l != nil {
		c.once.Do(func() {
			c.l.mu.Lock()
			c.l.removeLocked(c)
			c.l.mu.Unlock()
		})
	}
	return c.Conn.Close()
}

// guardedConn keeps a read deadline of hamcp's own, the guard, under the ones net/http sets.
// net/http sets and clears the connection's read deadline itself (for each request's headers,
// while idle, around its background read), which would wipe a deadline set once; here every
// read deadline it asks for is clipped to the guard, so the guard holds until hamcp lifts it.
type guardedConn struct {
	net.Conn
	mu    sync.Mutex
	want  time.Time // the read deadline net/http (or a handler) last asked for
	guard time.Time // zero: lifted
}

type guardedConnKey struct{}

func guardedConnOf(r *http.Request) *guardedConn {
	gc, _ := r.Context().Value(guardedConnKey{}).(*guardedConn)
	return gc
}

func (c *guardedConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.want = t
	return c.applyLocked()
}

func (c *guardedConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

// setGuard arms the guard at t, or lifts it when t is zero.
func (c *guardedConn) setGuard(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.guard = t
	_ = c.applyLocked()
}

// cutGuard moves the guard to t unless it already ends sooner.
func (c *guardedConn) cutGuard(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.guard.IsZero() || t.Before(c.guard) {
		c.guard = t
	}
	_ = c.applyLocked()
}

func (c *guardedConn) applyLocked() error {
	t := c.want
	if !c.guard.IsZero() && (t.IsZero() || c.guard.Before(t)) {
		t = c.guard
	}
	return c.Conn.SetReadDeadline(t)
}
