// Package httpserver serves MCP over HTTP with echo: Streamable HTTP at /mcp (stateful sessions
// and the sessionless single POST that curl and n8n use), the legacy HTTP+SSE transport at /sse,
// a plain tool list and a health check. It owns transport concerns only: logging, recovery, body
// limits, Origin and Host checks, rate limiting, bearer authentication and session binding; what
// a message means is the go-sdk's to answer (mcpserver).
package httpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/mcpserver"
)

// HealthCheck reports one backend's connectivity for /mcp/health.
type HealthCheck struct {
	Name  string
	Check func(ctx context.Context) (ok bool, detail any)
}

// Options configure the HTTP server.
type Options struct {
	Builder  *mcpserver.Builder
	Verifier authn.Verifier // nil only with NoAuth
	NoAuth   bool           // serve /mcp without authentication (demo on loopback only)
	Version  string
	Logger   *slog.Logger

	RateLimit      int      // requests per minute per client IP; 0 disables
	AllowedOrigins []string // exact origins allowed besides loopback pages on a loopback server
	ExternalURL    string   // its origin is always allowed
	TrustedProxies []*net.IPNet
	BodyLimit      int64 // bytes
	Health         []HealthCheck
	// ResourceMetadataURL, when set (OAuth enabled), is advertised in 401 challenges.
	ResourceMetadataURL string
	// Mount lets other features (OAuth) add routes to the same server.
	Mount []func(e *echo.Echo)
	// MountAuthed adds routes that need the same authentication as /mcp (permission approvals).
	MountAuthed []func(g *echo.Group)

	// Limits; zero means the Default… constant of the same name.
	MaxConnsPerIP       int
	MaxSessionsPerIP    int
	MaxSessionsPerToken int
	ReadHeaderTimeout   time.Duration
	BodyReadTimeout     time.Duration
	IdleTimeout         time.Duration
	StreamWriteTimeout  time.Duration
}

// Server is the running HTTP side of hamcp.
type Server struct {
	o        Options
	e        *echo.Echo
	stateful *mcp.StreamableHTTPHandler
	single   *mcp.StreamableHTTPHandler // notifications of the single-POST form
	modern   *mcp.StreamableHTTPHandler
	sse      *mcp.SSEHandler
	limiter  *ipLimiter
	sessions *sessionTable
	inFlight *ipCounter
}

// New builds the echo app with every route and middleware.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.BodyLimit <= 0 {
		o.BodyLimit = 4 << 20
	}
	o.MaxConnsPerIP = orDefault(o.MaxConnsPerIP, DefaultMaxConnsPerIP)
	o.MaxSessionsPerIP = orDefault(o.MaxSessionsPerIP, DefaultMaxSessionsPerIP)
	o.MaxSessionsPerToken = orDefault(o.MaxSessionsPerToken, DefaultMaxSessionsPerToken)
	o.ReadHeaderTimeout = orDefault(o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	o.BodyReadTimeout = orDefault(o.BodyReadTimeout, DefaultBodyReadTimeout)
	o.IdleTimeout = orDefault(o.IdleTimeout, DefaultIdleTimeout)
	o.StreamWriteTimeout = orDefault(o.StreamWriteTimeout, DefaultStreamWriteTimeout)
	s := &Server{o: o, sessions: newSessionTable(o.MaxSessionsPerIP, o.MaxSessionsPerToken), inFlight: newIPCounter(o.MaxConnsPerIP)}
	o.Builder.OnSessionEnded(func(key string) {
		if sid, ok := strings.CutPrefix(key, "mcp:"); ok {
			s.sessions.end(sid)
		}
	})
	getServer := func(r *http.Request) *mcp.Server {
		return o.Builder.Server(authn.ReadOnly(tokenInfo(r)))
	}
	s.stateful = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:              o.Logger,
		MaxRequestBodyBytes: o.BodyLimit,
		SessionTimeout:      sessionIdle,
	})
	s.single = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              o.Logger,
		MaxRequestBodyBytes: o.BodyLimit,
	})
	// MCP 2026-07-28 is only served by a stateless handler (go-sdk); unlike the single-POST
	// form it may answer with an event stream, which carries progress and log notifications
	// and subscriptions/listen.
	s.modern = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       o.Logger,
		MaxRequestBodyBytes:          o.BodyLimit,
		PropagateRequestCancellation: true,
	})
	s.sse = mcp.NewSSEHandler(func(r *http.Request) *mcp.Server {
		return o.Builder.LegacyServer(authn.ReadOnly(tokenInfo(r)))
	}, &mcp.SSEOptions{MaxRequestBodyBytes: o.BodyLimit})

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = ipExtractor(o.TrustedProxies)
	e.HTTPErrorHandler = s.errorHandler
	e.Use(middleware.Recover())
	e.Use(s.requestLog)
	e.Use(s.hostGuard)
	e.Use(s.originGuard)
	if o.RateLimit > 0 {
		s.limiter = newIPLimiter(o.RateLimit, time.Minute)
		e.Use(s.rateLimit)
	}
	e.Use(s.inFlightLimit)
	e.Use(s.bodyDeadline)
	e.Use(s.bodyLimit)

	e.GET("/mcp/health", s.health)
	authed := e.Group("", s.writeDeadlines, s.refuseUnauthenticated, s.authenticate, authenticated)
	authed.GET("/mcp/tools", s.toolList)
	authed.Any("/mcp", s.mcp)
	authed.Any("/mcp/", s.mcp) // a connector URL pasted with a trailing slash
	authed.Any("/sse", s.legacySSE)
	authed.Any("/messages", s.legacySSE)
	for _, m := range o.Mount {
		m(e)
	}
	for _, m := range o.MountAuthed {
		m(authed)
	}
	s.e = e
	return s
}

// authenticatedKey marks, in the echo context, a request that got past authenticate.
const authenticatedKey = "hamcp.authenticated"

// refuseUnauthenticated makes every answer authenticate gives itself (no or a bad token, a
// forbidden one, a verifier that cannot be reached) a refusal that ends the connection (refuse):
// an answer written before the request got past authenticate is one of those.
func (s *Server) refuseUnauthenticated(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Before(func() {
			if c.Get(authenticatedKey) == nil {
				s.refuse(c)
			}
		})
		return next(c)
	}
}

// authenticated marks a request that got past authenticate.
func authenticated(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Set(authenticatedKey, true)
		return next(c)
	}
}

// Serve serves on ln until ctx ends, then shuts down gracefully: new requests are refused and
// in-flight calls get grace to finish before connections are closed.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	// No ReadTimeout or WriteTimeout: they would cut open SSE streams. Reads are bounded by the
	// connection's read guard from accept until a request passes the guards, then by a
	// per-request body deadline (bodyDeadline); answers get a deadline per write (streamWriter).
	cl := newConnLimitListener(ln, s.o.MaxConnsPerIP, s.o.TrustedProxies, s.o.ReadHeaderTimeout+s.o.BodyReadTimeout, s.o.BodyReadTimeout)
	srv := &http.Server{Handler: s.e, ReadHeaderTimeout: s.o.ReadHeaderTimeout, IdleTimeout: s.o.IdleTimeout,
		ConnState: cl.connState, ConnContext: cl.connContext, ErrorLog: slog.NewLogLogger(s.o.Logger.Handler(), slog.LevelWarn)}
	ln = cl
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		s.o.Logger.Warn("shutdown grace period ended; closing remaining connections", "grace", grace)
		err = srv.Close()
	}
	// Sessions a client never ended (no DELETE) would keep the SDK's per-session goroutines and
	// their grants past the server's life: end them, as a restart ends them for the client.
	for _, sid := range s.sessions.ids() {
		if ss := s.o.Builder.SessionByID(sid); ss != nil {
			_ = ss.Close()
		}
	}
	s.o.Builder.CloseSessionless()
	if s.limiter != nil {
		s.limiter.stop()
	}
	if err2 := <-errc; err2 != nil && !errors.Is(err2, http.ErrServerClosed) {
		return err2
	}
	return err
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
