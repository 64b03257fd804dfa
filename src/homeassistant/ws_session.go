package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// wsSession is one authenticated WebSocket connection. HA's ids are per connection, so a
// reconnect means a new session with ids starting again at 1.
type wsSession struct {
	conn         *websocket.Conn
	log          *slog.Logger
	where        string // ws URL, for error messages
	haVersion    string
	writeTimeout time.Duration
	ctx          context.Context // ends with the session
	cancel       context.CancelFunc
	startedAt    time.Time

	// writeMu makes "take the next id" and "write the frame" one step: HA rejects an id that is
	// not greater than the last one it saw, so frames must leave in id order.
	writeMu sync.Mutex
	lastID  int64

	mu      sync.Mutex
	pending map[int64]*pendingCall
	events  map[int64]func(json.RawMessage) // subscription id → delivery (runs on the reader)
	err     error                           // why the session ended; set once
	done    chan struct{}
}

type pendingCall struct {
	ch chan reply // buffered: the reader never blocks on a caller that gave up
	// hook runs on the reader goroutine before any later frame is handled. The mirror uses it to
	// install a get_states snapshot exactly between the events that precede and follow it.
	hook func(reply)
}

type reply struct {
	result json.RawMessage
	err    error
}

// dialSession connects and authenticates. A rejected token is an APIError matching
// ErrUnauthorized; anything preventing the exchange matches ErrUnavailable.
func (c *Client) dialSession(ctx context.Context) (*wsSession, error) {
	hctx, cancel := context.WithTimeout(ctx, c.handshakeWait)
	defer cancel()
	conn, resp, err := websocket.Dial(hctx, c.wsURL, &websocket.DialOptions{HTTPClient: c.http})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, &APIError{Status: resp.StatusCode, Message: fmt.Sprintf("websocket endpoint %s answered HTTP %d instead of upgrading", c.wsURL, resp.StatusCode)}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, unavailable(c.wsURL, err)
	}
	conn.SetReadLimit(c.readLimit)
	fail := func(err error) (*wsSession, error) {
		_ = conn.CloseNow()
		return nil, err
	}
	first, err := readHandshake(hctx, conn)
	if err != nil {
		return fail(unavailable(c.wsURL, err))
	}
	if first.Type != "auth_required" {
		return fail(unavailable(c.wsURL, fmt.Errorf("expected auth_required, got %q", first.Type)))
	}
	auth, _ := json.Marshal(map[string]string{"type": "auth", "access_token": c.token})
	if err := conn.Write(hctx, websocket.MessageText, auth); err != nil {
		return fail(unavailable(c.wsURL, err))
	}
	answer, err := readHandshake(hctx, conn)
	if err != nil {
		return fail(unavailable(c.wsURL, err))
	}
	switch answer.Type {
	case "auth_ok":
	case "auth_invalid":
		msg := clean(answer.Message)
		if msg == "" {
			msg = "Invalid access token or password"
		}
		return fail(&APIError{Code: "auth_invalid", Message: msg})
	default:
		return fail(unavailable(c.wsURL, fmt.Errorf("expected auth_ok or auth_invalid, got %q", answer.Type)))
	}
	version := answer.HAVersion
	if version == "" {
		version = first.HAVersion
	}
	sctx, scancel := context.WithCancel(ctx)
	s := &wsSession{
		conn:         conn,
		log:          c.log,
		where:        c.wsURL,
		haVersion:    clean(version),
		writeTimeout: c.writeTimeout,
		ctx:          sctx,
		cancel:       scancel,
		startedAt:    time.Now(),
		pending:      map[int64]*pendingCall{},
		events:       map[int64]func(json.RawMessage){},
		done:         make(chan struct{}),
	}
	go s.readLoop()
	return s, nil
}

// readHandshake reads one handshake message; HA sends these as single objects.
func readHandshake(ctx context.Context, conn *websocket.Conn) (inbound, error) {
	typ, data, err := conn.Read(ctx)
	if err != nil {
		return inbound{}, err
	}
	if typ != websocket.MessageText {
		return inbound{}, errors.New("binary frame during authentication")
	}
	msgs, err := decodeFrame(data)
	if err != nil {
		return inbound{}, err
	}
	if len(msgs) != 1 {
		return inbound{}, fmt.Errorf("expected one handshake message, got %d", len(msgs))
	}
	return msgs[0], nil
}

func (s *wsSession) readLoop() {
	for {
		typ, data, err := s.conn.Read(s.ctx)
		if err != nil {
			s.fail(err)
			return
		}
		if typ != websocket.MessageText {
			s.log.Warn("ignoring binary websocket frame", "bytes", len(data))
			continue
		}
		msgs, err := decodeFrame(data)
		if err != nil {
			// One bad frame is not worth a reconnect; keep any messages that did decode.
			s.log.Warn("ignoring malformed websocket frame", "error", err, "bytes", len(data))
		}
		for _, m := range msgs {
			s.dispatch(m)
		}
	}
}

func (s *wsSession) dispatch(m inbound) {
	switch m.Type {
	case "result", "pong":
		s.mu.Lock()
		pc := s.pending[m.ID]
		delete(s.pending, m.ID)
		s.mu.Unlock()
		if pc == nil {
			s.log.Debug("websocket reply for unknown id", "id", m.ID, "type", m.Type)
			return
		}
		r := reply{result: m.Result}
		if m.Type == "result" && !m.Success {
			r = reply{err: replyError(m)}
		}
		if pc.hook != nil {
			pc.hook(r)
		}
		pc.ch <- r
	case "event":
		s.mu.Lock()
		deliver := s.events[m.ID]
		s.mu.Unlock()
		if deliver != nil {
			deliver(m.Event)
		}
	default:
		s.log.Debug("ignoring websocket message", "type", m.Type, "id", m.ID)
	}
}

// send writes one command. When pc is set it is registered for the reply, and when events is
// set it receives the subscription's events; both are registered before the frame leaves so no
// answer can arrive unclaimed.
func (s *wsSession) send(msgType string, payload any, pc *pendingCall, events func(json.RawMessage)) (int64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	id := s.lastID + 1
	frame, err := encodeCommand(id, msgType, payload)
	if err != nil {
		return 0, fmt.Errorf("homeassistant: %w", err)
	}
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return 0, unsentError{err}
	}
	if pc != nil {
		s.pending[id] = pc
	}
	if events != nil {
		s.events[id] = events
	}
	s.mu.Unlock()
	// A separate deadline: cancelling a caller's context mid-write would tear down the shared
	// connection for everyone.
	wctx, cancel := context.WithTimeout(s.ctx, s.writeTimeout)
	err = s.conn.Write(wctx, websocket.MessageText, frame)
	cancel()
	if err != nil {
		s.forget(id)
		s.fail(err)
		return 0, s.endErr()
	}
	s.lastID = id
	return id, nil
}

// call sends a command and waits for its result.
func (s *wsSession) call(ctx context.Context, msgType string, payload any, hook func(reply)) (json.RawMessage, error) {
	return s.callWithEvents(ctx, msgType, payload, hook, nil)
}

func (s *wsSession) callWithEvents(ctx context.Context, msgType string, payload any, hook func(reply), events func(json.RawMessage)) (json.RawMessage, error) {
	id, r, err := s.start(msgType, payload, hook, events)
	if err != nil {
		return nil, err
	}
	select {
	case rep := <-r:
		if rep.err != nil && events != nil {
			s.dropEvents(id)
		}
		return rep.result, rep.err
	case <-ctx.Done():
		s.forget(id)
		return nil, ctx.Err()
	}
}

func (s *wsSession) start(msgType string, payload any, hook func(reply), events func(json.RawMessage)) (int64, <-chan reply, error) {
	pc := &pendingCall{ch: make(chan reply, 1), hook: hook}
	id, err := s.send(msgType, payload, pc, events)
	return id, pc.ch, err
}

func (s *wsSession) forget(id int64) {
	s.mu.Lock()
	delete(s.pending, id)
	delete(s.events, id)
	s.mu.Unlock()
}

func (s *wsSession) dropEvents(id int64) {
	s.mu.Lock()
	delete(s.events, id)
	s.mu.Unlock()
}

// fail ends the session once: every waiting call gets an ErrUnavailable answer.
func (s *wsSession) fail(cause error) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	if s.ctx.Err() != nil && !errors.Is(cause, errSessionClosed) {
		cause = errSessionClosed
	}
	lost := "websocket connection lost, reconnecting"
	if errors.Is(cause, errSessionClosed) {
		lost = "websocket connection lost" // we closed it: no reconnect follows
	}
	s.err = unavailable(s.where, fmt.Errorf("%s: %w", lost, cause))
	// Calls waiting for an answer had been sent: HA may have carried them out.
	sentErr := unanswered(s.where, fmt.Errorf("%s: %w", lost, cause))
	pending := s.pending
	s.pending = map[int64]*pendingCall{}
	s.events = map[int64]func(json.RawMessage){}
	s.mu.Unlock()
	s.cancel()
	_ = s.conn.CloseNow()
	for _, pc := range pending {
		pc.ch <- reply{err: sentErr}
	}
	close(s.done)
}

var errSessionClosed = errors.New("connection closed by the client")

// unsentError is a session's end met before a command's frame was written: Home Assistant never
// saw it, so it may be sent again on the next connection.
type unsentError struct{ error }

func (e unsentError) Unwrap() error { return e.error }

func isUnsent(err error) bool {
	var u unsentError
	return errors.As(err, &u)
}

func (s *wsSession) endErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// close ends the session from our side. It drops the TCP connection rather than waiting for a
// close handshake, which an unresponsive peer would stretch to seconds.
func (s *wsSession) close() {
	s.fail(errSessionClosed)
}

func (s *wsSession) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}
