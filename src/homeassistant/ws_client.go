package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

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

type wsState struct {
	mu      sync.Mutex
	state   connState
	sess    *wsSession
	changed chan struct{} // closed and replaced on every state change
	// failing is set once an attempt has failed; callers then get ErrUnavailable at once instead
	// of waiting on a retry that will probably fail too.
	failing     bool
	lastErr     error
	lastErrAt   time.Time
	connectedAt time.Time
	haVersion   string
	reconnects  int
	cancel      context.CancelFunc
	runDone     chan struct{}
	subs        map[*subscription]struct{}
}

func (w *wsState) init() {
	w.changed = make(chan struct{})
	w.subs = map[*subscription]struct{}{}
}

// setLocked moves to a new state and wakes everyone waiting on the old one.
func (w *wsState) setLocked(st connState) {
	w.state = st
	close(w.changed)
	w.changed = make(chan struct{})
}

// Start connects the WebSocket in the background and keeps it connected — reconnecting with
// exponential backoff and jitter, resubscribing and resyncing the mirror — until ctx ends or
// Close is called. Calling it again has no effect.
func (c *Client) Start(ctx context.Context) {
	w := &c.ws
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != stateIdle {
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	w.runDone = make(chan struct{})
	w.setLocked(stateConnecting)
	go c.run(rctx)
}

func (c *Client) stopWS() {
	w := &c.ws
	w.mu.Lock()
	cancel, done := w.cancel, w.runDone
	subs := w.subs
	w.subs = map[*subscription]struct{}{}
	if w.state != stateClosed {
		w.setLocked(stateClosed)
	}
	w.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	for sub := range subs {
		sub.q.close()
	}
}

func (c *Client) run(ctx context.Context) {
	c.mirror.checks.init()
	checksDone := make(chan struct{})
	go func() {
		defer close(checksDone)
		c.runChecks(ctx)
	}()
	defer func() {
		<-checksDone
		c.mirror.SetLive(false)
		c.ws.mu.Lock()
		if c.ws.state != stateClosed {
			c.ws.sess = nil
			c.ws.setLocked(stateClosed)
		}
		c.ws.mu.Unlock()
		close(c.ws.runDone)
	}()
	attempt := 0
	for {
		s, err := c.dialSession(ctx)
		if err == nil {
			if err = c.setupSession(ctx, s); err != nil {
				s.close()
				c.mirror.SetLive(false)
			}
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			c.serve(ctx, s)
			if time.Since(s.startedAt) >= c.stableAfter {
				attempt = 0
			}
		} else {
			c.attemptFailed(err, attempt)
		}
		if ctx.Err() != nil {
			return
		}
		t := time.NewTimer(c.backoff(attempt))
		attempt++
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		c.ws.mu.Lock()
		if c.ws.state != stateClosed {
			c.ws.setLocked(stateConnecting)
		}
		c.ws.mu.Unlock()
	}
}

// setupSession brings a fresh connection to the point where callers may use it: coalesced
// frames on, state_changed subscribed, the mirror resynced, user subscriptions re-established.
func (c *Client) setupSession(ctx context.Context, s *wsSession) error {
	ctx, cancel := context.WithTimeout(ctx, c.setupTimeout)
	defer cancel()
	features := map[string]any{"features": map[string]any{"coalesce_messages": 1}}
	if _, err := s.call(ctx, "supported_features", features, nil); err != nil {
		var apiErr *APIError
		if !errors.As(err, &apiErr) { // an old core without supported_features is fine
			return err
		}
	}
	// state_changed first, then the snapshot: HA queues on one connection in order, so every
	// event sent before get_states' reply is already in the snapshot and every later one is newer.
	// The snapshot is installed on the reader goroutine (a hook) so no later event can slip under it.
	// Events that the mirror does not take at their word (mirror.go, applyEvent) are read back
	// from the state machine.
	applyEvent := func(raw json.RawMessage) {
		id, err := c.mirror.applyEvent(raw)
		if err != nil {
			c.log.Warn("ignoring state_changed event", "error", err)
		}
		if id != "" {
			c.askConfirm(id)
		}
	}
	if _, err := s.callWithEvents(ctx, "subscribe_events", map[string]any{"event_type": "state_changed"}, nil, applyEvent); err != nil {
		return fmt.Errorf("subscribing to state_changed: %w", err)
	}
	if err := c.loadStates(ctx, s); err != nil {
		return err
	}
	c.ws.mu.Lock()
	subs := make([]*subscription, 0, len(c.ws.subs))
	for sub := range c.ws.subs {
		subs = append(subs, sub)
	}
	c.ws.mu.Unlock()
	for _, sub := range subs {
		if err := c.establish(ctx, sub, s); err != nil {
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				return err
			}
			// HA refused a subscription it accepted before (e.g. a trigger that no longer
			// validates); keep the connection, try again on the next reconnect.
			c.log.Warn("re-subscribing after reconnect failed", "type", sub.msg["type"], "error", err)
		}
	}
	return nil
}

// loadStates replaces the mirror with get_states' answer. The answer is installed on the reader
// goroutine (a hook), in order with the events on the same connection.
func (c *Client) loadStates(ctx context.Context, s *wsSession) error {
	var decodeErr error
	_, err := s.call(ctx, "get_states", nil, func(r reply) {
		if r.err != nil {
			return
		}
		var states []State
		if decodeErr = json.Unmarshal(r.result, &states); decodeErr == nil {
			c.mirror.replace(states)
		}
	})
	if err != nil {
		return fmt.Errorf("get_states: %w", err)
	}
	if decodeErr != nil {
		return fmt.Errorf("get_states: malformed result: %w", decodeErr)
	}
	return nil
}

// serve publishes the session, keeps it alive and returns when it ends.
func (c *Client) serve(ctx context.Context, s *wsSession) {
	w := &c.ws
	w.mu.Lock()
	if w.state == stateClosed {
		w.mu.Unlock()
		s.close()
		return
	}
	w.sess = s
	w.failing = false
	w.connectedAt = time.Now()
	w.haVersion = s.haVersion
	w.setLocked(stateConnected)
	w.mu.Unlock()
	c.log.Info("connected to home assistant websocket", "url", c.wsURL, "ha_version", s.haVersion)

	go c.keepalive(s)
	select {
	case <-s.done:
	case <-ctx.Done():
		s.close()
	}
	c.mirror.SetLive(false)
	err := s.endErr()
	w.mu.Lock()
	w.sess = nil
	w.reconnects++
	w.lastErr, w.lastErrAt = err, time.Now()
	if w.state != stateClosed {
		w.setLocked(stateConnecting)
	}
	w.mu.Unlock()
	if ctx.Err() == nil {
		c.log.Warn("home assistant websocket disconnected; reconnecting", "error", err)
	}
}

func (c *Client) attemptFailed(err error, attempt int) {
	w := &c.ws
	w.mu.Lock()
	w.failing = true
	w.lastErr, w.lastErrAt = err, time.Now()
	if w.state != stateClosed {
		w.setLocked(stateDown)
	}
	w.mu.Unlock()
	// Say it loudly once per outage, then quietly while retrying.
	if attempt == 0 {
		c.log.Warn("cannot connect to home assistant websocket; retrying", "url", c.wsURL, "error", err)
	} else {
		c.log.Debug("home assistant websocket retry failed", "attempt", attempt, "error", err)
	}
}

func (c *Client) keepalive(s *wsSession) {
	t := time.NewTicker(c.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(s.ctx, c.pongTimeout)
			_, err := s.call(ctx, "ping", nil, nil)
			cancel()
			if err != nil && s.alive() {
				s.fail(fmt.Errorf("no pong within %s", c.pongTimeout))
				return
			}
		}
	}
}

// waitSession returns the live session, waiting while a connection attempt is in progress
// unless the previous attempt already failed.
func (c *Client) waitSession(ctx context.Context) (*wsSession, error) {
	w := &c.ws
	for {
		w.mu.Lock()
		st, s, ch, failing, lastErr := w.state, w.sess, w.changed, w.failing, w.lastErr
		w.mu.Unlock()
		switch {
		case st == stateConnected && s.alive():
			return s, nil
		case st == stateConnected:
			// The connection has just dropped and serve has not yet said so: wait for the
			// reconnect (or for it to fail) like any caller arriving a moment later.
		case st == stateIdle:
			return nil, ErrNotStarted
		case st == stateClosed:
			return nil, ErrClosed
		case st == stateDown || failing:
			return nil, downError(c.wsURL, lastErr)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, unavailable(c.wsURL, fmt.Errorf("still connecting: %w", ctx.Err()))
		}
	}
}

// onSession runs fn on the live session. A session that ended before fn's command left (a
// restart dropping the connection between waitSession and the write) is not Home Assistant being
// down: the command was never seen, so it goes out again on the next connection, within ctx.
func (c *Client) onSession(ctx context.Context, fn func(*wsSession) (json.RawMessage, error)) (json.RawMessage, error) {
	for {
		s, err := c.waitSession(ctx)
		if err != nil {
			return nil, err
		}
		raw, err := fn(s)
		if err == nil || !isUnsent(err) || ctx.Err() != nil {
			return raw, err
		}
		select { // the session is ending: let it finish before asking for the next one
		case <-s.done:
		case <-ctx.Done():
			return nil, err
		}
	}
}

func downError(where string, last error) error {
	if last == nil {
		return unavailable(where, errors.New("websocket not connected"))
	}
	if errors.Is(last, ErrUnavailable) || errors.Is(last, ErrUnauthorized) {
		return last
	}
	return unavailable(where, last)
}

// Call sends one WebSocket command and decodes its result into out (which may be nil or a
// *json.RawMessage). payload is the command's other members and must encode to a JSON object.
// HA's error answers come back as *APIError with Code set (e.g. "not_found"). Commands that
// stream events afterwards (subscribe_*, render_template, history/stream) need Subscribe instead.
func (c *Client) Call(ctx context.Context, msgType string, payload any, out any) error {
	if msgType == "" {
		return errors.New(`homeassistant: message type is empty, e.g. "config/area_registry/list"`)
	}
	// The limit the message names: the client's configured timeout, not what is left of it
	// once bound, which a busy machine would print as 296ms of a 300ms limit.
	budget := c.callTimeout
	if _, ok := ctx.Deadline(); ok {
		budget = budgetOf(ctx)
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	raw, err := c.onSession(ctx, func(s *wsSession) (json.RawMessage, error) {
		return s.call(ctx, msgType, payload, nil)
	})
	if err != nil {
		return c.noAnswer(ctx, msgType, budget, err)
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("homeassistant: decoding %s result: %w", msgType, err)
	}
	return nil
}

// bound gives a call without a deadline of its own the client's (Config.Timeout): a Home
// Assistant that stops answering must fail calls, not hold them and their callers forever.
func (c *Client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.callTimeout)
}

// noAnswer words a call that ran out of time as Home Assistant not answering (ErrUnavailable,
// naming the command and how long it waited), where the bare context error would tell the
// model nothing.
func (c *Client) noAnswer(ctx context.Context, msgType string, budget time.Duration, err error) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, ErrUnavailable) { // waitSession: still connecting when time ran out
		return unavailable(c.wsURL, fmt.Errorf("not connected, so %s was not sent, within %s: %w", msgType, budget, context.DeadlineExceeded))
	}
	return unanswered(c.wsURL, fmt.Errorf("no answer to %s within %s: %w", msgType, budget, context.DeadlineExceeded))
}

// budgetOf is how long a call with ctx may still take, for error messages.
func budgetOf(ctx context.Context) time.Duration {
	dl, _ := ctx.Deadline()
	return time.Until(dl).Round(time.Millisecond)
}
