package httpserver

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// hostGuard is DNS-rebinding protection: a request that arrived on a loopback address must
// name a loopback host. A page on evil.example.com that resolves to 127.0.0.1 is refused.
func (s *Server) hostGuard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopbackAddr(la.String()) && !isLoopbackHost(r.Host) {
			s.refuse(c)
			return refusal(c, http.StatusForbidden, "forbidden: Host "+strconv.Quote(r.Host)+" is not allowed on a loopback listener")
		}
		return next(c)
	}
}

// originGuard refuses browser requests from origins the user did not allow (403) on the MCP and
// API endpoints. Requests without Origin (curl, n8n, native clients) pass; so do pages on
// loopback when hamcp itself is reached on loopback (the MCP Inspector), the configured external
// URL, and allowed_origins. OAuth's browser pages are not guarded here: their forms carry CSRF
// tokens bound to the login, and browsers send "Origin: null" after the redirect chain through
// Home Assistant's login.
func (s *Server) originGuard(next echo.HandlerFunc) echo.HandlerFunc {
	allowed := map[string]bool{}
	for _, o := range s.o.AllowedOrigins {
		allowed[strings.TrimSuffix(strings.ToLower(o), "/")] = true
	}
	if s.o.ExternalURL != "" {
		if u, err := url.Parse(s.o.ExternalURL); err == nil {
			allowed[strings.ToLower(u.Scheme+"://"+u.Host)] = true
		}
	}
	return func(c echo.Context) error {
		r := c.Request()
		origin := r.Header.Get("Origin")
		if origin == "" || !guardedPath(r.URL.Path) || allowed[strings.ToLower(origin)] {
			return next(c)
		}
		if u, err := url.Parse(origin); err == nil && isLoopbackHost(u.Host) && isLoopbackHost(r.Host) {
			return next(c)
		}
		s.refuse(c)
		return refusal(c, http.StatusForbidden, "forbidden: Origin "+strconv.Quote(origin)+" is not allowed; add it to allowed_origins if this page should use hamcp")
	}
}

func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isLoopbackAddr(addr string) bool { return isLoopbackHost(addr) }

// ipExtractor believes X-Forwarded-For only from trusted proxies (the add-on's ingress).
func ipExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// requestLog logs one line per request. It never logs headers or query strings, which may
// carry tokens or codes, nor a routed path's parameters: it names the route ("/hubitat/events/:secret"),
// because a path segment can be a credential (the hub's push address) and logs travel further
// than hamcp.
func (s *Server) requestLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		status := c.Response().Status
		level := slog.LevelDebug
		if status >= 500 {
			level = slog.LevelWarn
		}
		path := c.Path()
		if path == "" {
			path = c.Request().URL.Path
		}
		s.o.Logger.Log(c.Request().Context(), level, "http",
			"method", c.Request().Method, "path", path, "status", status,
			"ip", c.RealIP(), "took", time.Since(start).Round(time.Millisecond))
		return nil
	}
}

// guardedPath reports whether a path is an MCP or API endpoint.
func guardedPath(p string) bool {
	return p == "/mcp" || strings.HasPrefix(p, "/mcp/") || p == "/sse" || p == "/messages" || strings.HasPrefix(p, "/api/")
}
