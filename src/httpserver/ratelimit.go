package httpserver

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// ipLimiter is a token bucket per client IP: `per` requests per window, refilled evenly, so
// the 101st request inside a minute at the default is refused. Idle buckets are dropped.
type ipLimiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	limit   rate.Limit
	burst   int
	done    chan struct{}
}

type bucket struct {
	l    *rate.Limiter
	seen time.Time
}

func newIPLimiter(per int, window time.Duration) *ipLimiter {
	l := &ipLimiter{buckets: map[string]*bucket{}, limit: rate.Limit(float64(per) / window.Seconds()), burst: per, done: make(chan struct{})}
	go l.sweep(window)
	return l
}

// allow reports whether ip may make a request now and, if not, how long until it may.
func (l *ipLimiter) allow(ip string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	b, ok := l.buckets[ip]
	if !ok {
		b = &bucket{l: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[ip] = b
	}
	b.seen = now
	l.mu.Unlock()
	r := b.l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

func (l *ipLimiter) sweep(window time.Duration) {
	t := time.NewTicker(window)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case now := <-t.C:
			l.mu.Lock()
			for ip, b := range l.buckets {
				// A bucket idle for a whole window is full again; forgetting it changes nothing.
				if now.Sub(b.seen) > window {
					delete(l.buckets, ip)
				}
			}
			l.mu.Unlock()
		}
	}
}

func (l *ipLimiter) stop() { close(l.done) }

func (s *Server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().URL.Path == "/mcp/health" {
			return next(c)
		}
		ok, wait := s.limiter.allow(c.RealIP(), time.Now())
		if !ok {
			secs := int(math.Ceil(wait.Seconds()))
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			return c.JSON(http.StatusTooManyRequests, map[string]any{"error": "rate limit exceeded; retry after " + strconv.Itoa(secs) + "s"})
		}
		return next(c)
	}
}
