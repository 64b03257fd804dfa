package httpserver

import (
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
	return l.allowN(ip, now, 1)
}

// allowN is allow for n requests at once (the messages of a batch). More than the burst never
// fits: the answer is then a wait of a whole window.
func (l *ipLimiter) allowN(ip string, now time.Time, n int) (bool, time.Duration) {
	l.mu.Lock()
	b, ok := l.buckets[ip]
	if !ok {
		b = &bucket{l: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[ip] = b
	}
	b.seen = now
	l.mu.Unlock()
	r := b.l.ReserveN(now, n)
	if !r.OK() {
		return false, time.Duration(float64(time.Second) * float64(l.burst) / float64(l.limit))
	}
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
			s.rateLimited(c, wait, "rate limit exceeded")
			return nil
		}
		return next(c)
	}
}
