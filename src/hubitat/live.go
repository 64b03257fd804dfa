package hubitat

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/hamcp/hamcp/src/internal/httpx"
	"github.com/hamcp/hamcp/src/internal/reconnect"
)

// connState is where the live link is (shared with the other backends' links).
type connState = reconnect.State

const (
	stateIdle       = reconnect.Idle
	stateConnecting = reconnect.Connecting
	stateConnected  = reconnect.Connected
	stateDown       = reconnect.Down
	stateClosed     = reconnect.Closed
)

// linkState is where the live event link is. While it is down every hub call fails at once
// with ErrUnavailable: a rebooting hub takes minutes, and a tool call should not hang for them.
type linkState struct {
	mu        sync.Mutex
	state     connState
	failing   bool
	via       string // "eventsocket" or "posturl"
	lastErr   error
	lastErrAt time.Time
	since     time.Time
	reconnect int
	cancel    context.CancelFunc
	done      chan struct{}
	resync    chan struct{} // a systemStart or a failed call asks the loop to resync
}

func (l *linkState) init() { l.resync = make(chan struct{}, 1) }

// gate fails fast while the link is down.
func (l *linkState) gate() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == stateIdle || l.state == stateClosed || l.state == stateConnected {
		return nil
	}
	if !l.failing {
		return nil
	}
	if l.lastErr == nil {
		return fmt.Errorf("%w: the event link is reconnecting", ErrUnavailable)
	}
	return fmt.Errorf("%w: the event link is down since %s (%v); retrying in the background",
		ErrUnavailable, l.lastErrAt.UTC().Format(time.RFC3339), l.lastErr)
}

func (l *linkState) set(st connState) {
	l.mu.Lock()
	if l.state != stateClosed {
		l.state = st
	}
	l.mu.Unlock()
}

func (l *linkState) kick() {
	select {
	case l.resync <- struct{}{}:
	default:
	}
}

// linkFailed records a transport failure seen by a call: the link is probably down too, so the
// loop is asked to check, and the next calls fail fast.
func (c *Client) linkFailed(err error) {
	l := &c.link
	l.mu.Lock()
	started := l.state != stateIdle && l.state != stateClosed
	if started {
		l.failing = true
		l.lastErr, l.lastErrAt = c.scrub(httpx.Cause(err)), time.Now()
		if l.state == stateConnected {
			l.state = stateConnecting
		}
	}
	l.mu.Unlock()
	if started {
		c.cache.SetLive(false)
		l.kick()
	}
}

// Status is a health snapshot for the server's health endpoint; no secrets.
type Status struct {
	URL         string    `json:"url"`
	Link        string    `json:"link"` // not_started | connecting | connected | down | closed
	Via         string    `json:"via,omitempty"`
	Since       time.Time `json:"since,omitzero"`
	Reconnects  int       `json:"reconnects"`
	CacheReady  bool      `json:"cache_ready"`
	CacheLive   bool      `json:"cache_live"`
	Devices     int       `json:"devices"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
}

// Status reports the link and cache as last seen, without contacting the hub.
func (c *Client) Status() Status {
	l := &c.link
	l.mu.Lock()
	st := Status{URL: c.base, Link: l.state.String(), Via: l.via, Since: l.since, Reconnects: l.reconnect}
	if l.lastErr != nil {
		st.LastError, st.LastErrorAt = l.lastErr.Error(), l.lastErrAt.UTC()
	}
	l.mu.Unlock()
	st.CacheReady, st.CacheLive, st.Devices = c.cache.Ready(), c.cache.Live(), c.cache.Len()
	return st
}

// Start runs the live link in the background until ctx ends or Close: the eventsocket (or
// postURL pushes), a resync from /devices/all on every (re)connect and systemStart, reconnects
// with exponential back-off and jitter. Calling it again has no effect.
func (c *Client) Start(ctx context.Context) {
	l := &c.link
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != stateIdle || c.isClosed() {
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	l.cancel, l.done = cancel, make(chan struct{})
	l.state = stateConnecting
	go c.run(rctx)
}

func (c *Client) stopLink() {
	l := &c.link
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.state = stateClosed
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	c.cache.SetLive(false)
}

func (c *Client) run(ctx context.Context) {
	defer close(c.link.done)
	usePush := c.mode == EventsPostURL
	attempt := 0
	for ctx.Err() == nil {
		var err error
		var began time.Time
		if usePush {
			began, err = c.servePush(ctx)
		} else {
			began, err = c.serveSocket(ctx)
			var refused *upgradeRefused
			if errors.As(err, &refused) && c.mode == EventsAuto && c.pushURL != "" {
				c.log.Warn("hub refused the eventsocket; using Maker API postURL pushes instead", "status", refused.status)
				usePush = true
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		c.cache.SetLive(false)
		if began.IsZero() {
			c.attemptFailed(err, attempt)
		} else {
			// A session ended: calls still try the hub until a reconnect attempt fails too,
			// since a dropped socket alone does not mean the hub is away.
			if time.Since(began) >= c.stableAfter {
				attempt = 0
			}
			c.sessionEnded(err)
		}
		t := time.NewTimer(c.backoff(attempt))
		attempt++
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		c.link.set(stateConnecting)
	}
}

func (c *Client) sessionEnded(err error) {
	l := &c.link
	l.mu.Lock()
	l.lastErr, l.lastErrAt = c.scrub(httpx.Cause(err)), time.Now()
	if l.state != stateClosed {
		l.state = stateConnecting
	}
	l.mu.Unlock()
	c.log.Warn("hubitat event link down; reconnecting", "url", c.base, "error", c.scrub(err))
}

func (c *Client) attemptFailed(err error, attempt int) {
	l := &c.link
	l.mu.Lock()
	l.failing = true
	l.lastErr, l.lastErrAt = c.scrub(httpx.Cause(err)), time.Now()
	if l.state != stateClosed {
		l.state = stateDown
	}
	l.mu.Unlock()
	if attempt == 0 {
		c.log.Warn("cannot reach the hubitat hub; retrying with back-off", "url", c.base, "error", c.scrub(err))
	} else {
		c.log.Debug("hubitat reconnect failed", "attempt", attempt, "error", c.scrub(err))
	}
}

// backoff is the delay before reconnect attempt n, shared with the other backends' links.
func (c *Client) backoff(attempt int) time.Duration {
	return reconnect.Backoff(attempt, c.backoffBase, c.backoffCap)
}

// connected publishes a working link.
func (c *Client) connected(via string) {
	l := &c.link
	l.mu.Lock()
	if l.state != stateClosed {
		l.state = stateConnected
	}
	l.failing, l.via, l.since = false, via, time.Now().UTC()
	l.mu.Unlock()
	c.cache.SetLive(true)
	c.log.Info("hubitat event link up", "url", c.base, "via", via)
}

// resync loads /devices/all into the cache. It goes around the fail-fast gate: it is how the
// link finds out the hub is back.
func (c *Client) resync(ctx context.Context) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.link.mu.Lock()
	failing := c.link.failing
	c.link.failing = false
	c.link.mu.Unlock()
	ds, err := c.fetchAll(ctx)
	if err != nil {
		c.link.mu.Lock()
		c.link.failing = c.link.failing || failing
		c.link.mu.Unlock()
		return fmt.Errorf("resync from /devices/all: %w", err)
	}
	// Mode and HSM status too, so the cache knows them before the first location event. Not
	// fatal: a hub without HSM installed answers /hsm with an error.
	if modes, err := c.Modes(ctx); err == nil {
		for _, m := range modes {
			if m.Active {
				c.cache.setLocation("mode", m.Name)
			}
		}
	}
	if st, err := c.HSM(ctx); err == nil {
		c.cache.setLocation("hsmStatus", st)
	}
	c.cache.replace(ds)
	return nil
}

type upgradeRefused struct{ status int }

func (e *upgradeRefused) Error() string {
	return fmt.Sprintf("the hub answered HTTP %d instead of opening the eventsocket", e.status)
}

// serveSocket runs one eventsocket session: connect, resync, then apply frames until the
// socket ends. Frames that arrive during the resync wait in the socket and are applied after
// the snapshot, in order, so none is lost and none is overwritten by older data.
func (c *Client) serveSocket(ctx context.Context) (time.Time, error) {
	dctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	conn, resp, err := websocket.Dial(dctx, c.wsURL, &websocket.DialOptions{HTTPClient: c.http})
	cancel()
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return time.Time{}, &upgradeRefused{status: resp.StatusCode}
		}
		return time.Time{}, unavailable("eventsocket", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	if err := c.resync(ctx); err != nil {
		return time.Time{}, err
	}
	began := time.Now()
	c.connected("eventsocket")
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go c.keepalive(sctx, conn, stop)
	go func() {
		// A call that failed on the wire marked the link failing; check the hub and clear it.
		for {
			select {
			case <-sctx.Done():
				return
			case <-c.link.resync:
			}
			if err := c.resync(sctx); err != nil {
				stop()
				return
			}
			c.connected("eventsocket")
		}
	}()
	for {
		_, data, err := conn.Read(sctx)
		if err != nil {
			if ctx.Err() != nil {
				return began, ctx.Err()
			}
			c.link.mu.Lock()
			c.link.reconnect++
			c.link.mu.Unlock()
			return began, unavailable("eventsocket", err)
		}
		c.handleFrame(ctx, data, "eventsocket")
	}
}

func (c *Client) keepalive(ctx context.Context, conn *websocket.Conn, stop func()) {
	t := time.NewTicker(c.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, c.callTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				c.log.Warn("hubitat eventsocket ping failed; reconnecting", "error", err)
				stop()
				return
			}
		}
	}
}

// handleFrame applies one event; a systemStart (the hub finished booting, its state may have
// moved without events) triggers a resync first.
func (c *Client) handleFrame(ctx context.Context, data []byte, via string) {
	e, err := ParseEvent(data)
	if err != nil {
		c.log.Debug("ignoring malformed hub event", "via", via, "error", err)
		return
	}
	if e.Location() && e.Name == "systemStart" {
		if via == "eventsocket" {
			if err := c.resync(ctx); err != nil {
				c.log.Warn("resync after systemStart failed", "error", c.scrub(err))
			}
		} else {
			c.link.kick()
		}
	}
	if !e.Location() && !c.allowed(e.DeviceID) {
		return
	}
	c.syncMu.Lock()
	c.cache.apply(e)
	c.syncMu.Unlock()
}

// servePush registers the postURL, resyncs, then waits: pushes arrive through PushHandler.
// A systemStart push or a failed call wakes it to resync; a failed resync ends the session.
func (c *Client) servePush(ctx context.Context) (time.Time, error) {
	target := c.PushTarget()
	if target == "" {
		return time.Time{}, errors.New("postURL pushes need a push URL (hubitat_events posturl)")
	}
	if err := c.registerPush(ctx, target); err != nil {
		return time.Time{}, err
	}
	if err := c.resync(ctx); err != nil {
		return time.Time{}, err
	}
	began := time.Now()
	c.connected("posturl")
	for {
		select {
		case <-ctx.Done():
			return began, ctx.Err()
		case <-c.link.resync:
		}
		// Re-register too: after a reboot the hub keeps its postURL, but a restored backup may not.
		err := c.registerPush(ctx, target)
		if err == nil {
			err = c.resync(ctx)
		}
		if err != nil {
			return began, err
		}
		c.connected("posturl")
	}
}

func (c *Client) registerPush(ctx context.Context, target string) error {
	c.link.mu.Lock()
	c.link.failing = false
	c.link.mu.Unlock()
	if err := c.RegisterPostURL(ctx, target); err != nil {
		return fmt.Errorf("registering postURL: %w", err)
	}
	return nil
}

// PushTarget is the URL to register with Maker API's postURL: PushURL plus the secret segment
// PushHandler checks. "" when no PushURL was given. It is a credential: do not log it.
func (c *Client) PushTarget() string {
	if c.pushURL == "" {
		return ""
	}
	return c.pushURL + "/" + c.pushSecret
}

// PushHandler takes Maker API's event POSTs. Mount it so that requests to PushTarget reach it;
// it answers 404 unless the last path segment is the client's secret, 405 to anything but POST.
func (c *Client) PushHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seg := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		if subtle.ConstantTimeCompare([]byte(seg), []byte(c.pushSecret)) != 1 {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 256<<10))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if _, err := ParseEvent(body); err != nil {
			http.Error(w, "body is not a Maker API event", http.StatusBadRequest)
			return
		}
		c.handleFrame(r.Context(), body, "posturl")
		w.WriteHeader(http.StatusOK)
	})
}
