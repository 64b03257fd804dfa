package hass

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Faults makes the simulated Home Assistant fail the way a real one does, on the wire, so a
// client under test meets the same bytes and timings it would meet in a home: answers that come
// late (a busy event loop, a slow integration), REST answers that are aiohttp's 500 page and
// WebSocket commands that end in HA's unknown_error (a handler raising), and connections that
// just end (DropClients). HA restarts are sim.Home.SetDown. The zero state is a healthy HA.
type Faults struct {
	mu      sync.Mutex
	delay   time.Duration
	failing bool
	// service is a "domain.service" whose calls fail as when its handler raises (a device that
	// does not answer): HA's home_assistant_error over the WebSocket, a 500 over REST.
	service string
	changed chan struct{} // closed and replaced on every change, so held requests re-check

	held atomic.Int64 // requests and commands waiting out a delay right now
}

func newFaults() *Faults { return &Faults{changed: make(chan struct{})} }

// Faults is this server's fault switchboard.
func (s *Server) Faults() *Faults { return s.faults }

// SetDelay holds every REST request and every WebSocket command for d before HA handles it
// (0 ends it, and requests already held proceed at once). WebSocket commands wait in order on
// their connection, as HA reads them; a client that hangs up stops its request waiting.
func (f *Faults) SetDelay(d time.Duration) {
	f.mu.Lock()
	f.delay = d
	f.wakeLocked()
	f.mu.Unlock()
}

// SetFailing makes REST requests answer 500 with aiohttp's body and WebSocket commands (ping
// aside, which HA's connection answers itself) answer unknown_error, as HA does when the code
// behind them raises; false heals it. Authentication keeps working: the auth code is not what broke.
func (f *Faults) SetFailing(on bool) {
	f.mu.Lock()
	f.failing = on
	f.wakeLocked()
	f.mu.Unlock()
}

// SetFailingService makes every call of one service fail, as HA answers when the integration
// behind it raises (a device offline): "domain.service", or "" to heal it. Other calls go through.
func (f *Faults) SetFailingService(domainService string) {
	f.mu.Lock()
	f.service = domainService
	f.mu.Unlock()
}

func (f *Faults) serviceFails(domain, service string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.service != "" && f.service == domain+"."+service
}

// Held is how many REST requests and WebSocket commands are waiting out a delay now.
func (f *Faults) Held() int { return int(f.held.Load()) }

func (f *Faults) wakeLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Faults) isFailing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failing
}

// wait holds a request for the delay in force, until done closes, or until the delay is
// lifted. It reports false when done closed first (the client left).
func (f *Faults) wait(done <-chan struct{}) bool {
	f.mu.Lock()
	d, changed := f.delay, f.changed
	f.mu.Unlock()
	if d <= 0 {
		return true
	}
	f.held.Add(1)
	defer f.held.Add(-1)
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return true
		case <-done:
			return false
		case <-changed:
			f.mu.Lock()
			lifted := f.delay <= 0
			changed = f.changed
			f.mu.Unlock()
			if lifted {
				return true
			}
		}
	}
}

// wrap applies the faults to HTTP: the delay to every request (the WebSocket upgrade too: a busy
// HA answers it late), the failure to the REST API.
func (f *Faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.wait(r.Context().Done()) {
			return
		}
		if f.isFailing() && strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/api/websocket" {
			plain(w, http.StatusInternalServerError, serverError)
			return
		}
		if ds, ok := strings.CutPrefix(r.URL.Path, "/api/services/"); ok && r.Method == http.MethodPost {
			// A raising handler is not caught by HA's REST view: aiohttp's 500.
			if d, s, _ := strings.Cut(ds, "/"); f.serviceFails(d, s) {
				plain(w, http.StatusInternalServerError, serverError)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// faultCommand applies the faults to one WebSocket command before it is handled; false means the
// command was answered (failed) or the connection ended meanwhile.
func (c *wsConn) faultCommand(v any) bool {
	f := c.s.faults
	if !f.wait(c.ctx.Done()) {
		return false
	}
	m, _ := v.(map[string]any)
	if typ, _ := m["type"].(string); typ == "call_service" {
		d, _ := m["domain"].(string)
		s, _ := m["service"].(string)
		c.mu.Lock()
		last := c.lastID
		c.mu.Unlock()
		// A reused id is left to the handler, which refuses it before any service runs.
		if id := wsID(m); id > last && f.serviceFails(d, s) {
			c.setLast(id)
			c.sendError(id, "home_assistant_error", "Failed to call service "+d+"."+s+": the device did not respond")
			return false
		}
	}
	if !f.isFailing() {
		return true
	}
	if typ, _ := m["type"].(string); typ == "ping" || m == nil {
		return true
	}
	return !c.failCommand(m)
}

// failCommand answers a well-formed command the way HA answers one whose handler raised.
// Malformed, repeated and unknown ones are left to handle: HA refuses those before any handler runs.
func (c *wsConn) failCommand(m map[string]any) bool {
	id := wsID(m)
	typ, _ := m["type"].(string)
	if _, known := wsCommands[typ]; id == 0 || !known {
		return false
	}
	c.mu.Lock()
	last := c.lastID
	c.mu.Unlock()
	if id <= last {
		return false
	}
	c.setLast(id)
	c.sendError(id, "unknown_error", "Unknown error")
	return true
}

// DropClients ends every WebSocket connection at once, without a close handshake, as a crashed
// HA or a broken network does: the client sees its connection reset, not a goodbye.
func (s *Server) DropClients() {
	for _, c := range s.clients() {
		c.end(false)
	}
}
