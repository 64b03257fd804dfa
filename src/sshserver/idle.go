package sshserver

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// idleConn closes the connection once no bytes have moved in either direction for timeout.
// It works below SSH, so a client's keep-alive messages count as activity, which is how a user
// who wants a long-lived idle session keeps one (ServerAliveInterval).
type idleConn struct {
	net.Conn
	timeout time.Duration
	start   time.Time    // monotonic base for last
	last    atomic.Int64 // nanoseconds since start of the latest read or write
	expired atomic.Bool

	mu     sync.Mutex
	timer  *time.Timer
	closed bool
}

func newIdleConn(c net.Conn, timeout time.Duration) *idleConn {
	ic := &idleConn{Conn: c, timeout: timeout, start: time.Now()}
	ic.mu.Lock()
	ic.timer = time.AfterFunc(timeout, ic.check)
	ic.mu.Unlock()
	return ic
}

func (c *idleConn) touch() { c.last.Store(int64(time.Since(c.start))) }

func (c *idleConn) check() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	idle := time.Since(c.start) - time.Duration(c.last.Load())
	if idle < c.timeout {
		c.timer.Reset(c.timeout - idle)
		return
	}
	c.expired.Store(true)
	c.closed = true
	_ = c.Conn.Close()
}

func (c *idleConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *idleConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *idleConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer.Stop()
	if c.closed {
		return nil
	}
	c.closed = true
	return c.Conn.Close()
}

// idledOut reports whether the idle timeout closed the connection.
func (c *idleConn) idledOut() bool { return c.expired.Load() }
