package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/internal/reconnect"
)

// maxSubscriptionBacklog bounds undelivered events per subscription; a handler this far behind
// loses the oldest events rather than growing memory without limit.
const maxSubscriptionBacklog = 10_000

// subscription outlives connections: it is re-sent on every new session, and its events keep
// flowing to the same handler in order.
type subscription struct {
	msg map[string]any // the subscribe message without "id"
	q   *queue[json.RawMessage]

	mu      sync.Mutex // serialises establish and unsubscribe
	sess    *wsSession
	id      int64
	removed bool
}

func (sub *subscription) deliver(raw json.RawMessage) { sub.q.push(raw) }

// Subscribe sends a subscription command (msg must carry "type", e.g. {"type":
// "subscribe_events", "event_type": "automation_triggered"} or a subscribe_trigger) and calls
// handler with each event payload, in order, on a goroutine of its own. The subscription is
// re-established after every reconnect. unsubscribe ends it; events already queued are dropped.
func (c *Client) Subscribe(ctx context.Context, msg map[string]any, handler func(json.RawMessage)) (unsubscribe func(context.Context) error, err error) {
	if handler == nil {
		return nil, errors.New("homeassistant: Subscribe needs a handler")
	}
	if _, err := encodeCommand(1, "", msg); err != nil {
		return nil, fmt.Errorf("homeassistant: subscribe message: %w", err)
	}
	sub := &subscription{msg: maps.Clone(msg), q: newQueue(maxSubscriptionBacklog, handler)}
	w := &c.ws
	w.mu.Lock()
	if w.state == stateClosed {
		w.mu.Unlock()
		sub.q.close()
		return nil, ErrClosed
	}
	// Registered before the first attempt so a reconnect racing with this call re-sends it too;
	// establish makes sure it is sent only once per session.
	w.subs[sub] = struct{}{}
	w.mu.Unlock()

	_, err = c.onSession(ctx, func(s *wsSession) (json.RawMessage, error) {
		return nil, c.establish(ctx, sub, s)
	})
	if err != nil {
		c.dropSubscription(sub)
		return nil, err
	}
	return func(ctx context.Context) error { return c.unsubscribe(ctx, sub) }, nil
}

// establish sends sub on session s unless it is already active there.
func (c *Client) establish(ctx context.Context, sub *subscription, s *wsSession) error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.removed || sub.sess == s {
		return nil
	}
	id, replies, err := s.start("", sub.msg, nil, sub.deliver)
	if err != nil {
		return err
	}
	select {
	case r := <-replies:
		if r.err != nil {
			s.dropEvents(id)
			return r.err
		}
	case <-ctx.Done():
		s.forget(id)
		// HA may still accept it; take it back so the server does not keep sending events.
		go c.bestEffortUnsubscribe(s, id)
		return ctx.Err()
	}
	sub.sess, sub.id = s, id
	return nil
}

func (c *Client) unsubscribe(ctx context.Context, sub *subscription) error {
	sub.mu.Lock()
	if sub.removed {
		sub.mu.Unlock()
		return nil
	}
	sub.removed = true
	s, id := sub.sess, sub.id
	sub.mu.Unlock()
	c.dropSubscription(sub)
	if s == nil || !s.alive() {
		return nil // the server forgot it with the connection
	}
	s.dropEvents(id)
	_, err := s.call(ctx, "unsubscribe_events", map[string]any{"subscription": id}, nil)
	var apiErr *APIError
	if err == nil || (errors.As(err, &apiErr) && apiErr.Code == "not_found") || !s.alive() {
		return nil
	}
	return err
}

func (c *Client) dropSubscription(sub *subscription) {
	c.ws.mu.Lock()
	delete(c.ws.subs, sub)
	c.ws.mu.Unlock()
	sub.q.close()
}

func (c *Client) bestEffortUnsubscribe(s *wsSession, id int64) {
	ctx, cancel := context.WithTimeout(s.ctx, c.pongTimeout)
	defer cancel()
	_, _ = s.call(ctx, "unsubscribe_events", map[string]any{"subscription": id}, nil)
}

// backoff is the delay before reconnect attempt n, shared with the other backends' links.
func (c *Client) backoff(attempt int) time.Duration {
	return reconnect.Backoff(attempt, c.backoffBase, c.backoffCap)
}
