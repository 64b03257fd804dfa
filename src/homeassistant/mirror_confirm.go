package homeassistant

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// mirrorChecks holds the entities whose state_changed events the mirror would not believe (see
// applyEvent); the client reads each from the state machine and applies the answer.
type mirrorChecks struct {
	mu      sync.Mutex
	pending map[string]checkMark
	resync  bool // too many to read one by one, or a read failed: reload every state
	running bool // a batch is being answered
	wake    chan struct{}
}

// checkMark is the mirror's entry when the check was asked for.
type checkMark struct {
	seen State
	ok   bool
}

const (
	// maxPendingChecks bounds the queue a flood of fired events can build; past it the mirror
	// reloads every state once instead.
	maxPendingChecks = 1024
	// bulkCheckAt is how many checks at once are cheaper as one get_states than one GET each.
	bulkCheckAt = 32
	// checkTimeout bounds one read; a mirror left unconfirmed is set right by the next resync.
	checkTimeout = 30 * time.Second
)

func (q *mirrorChecks) init() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.wake == nil {
		q.wake = make(chan struct{}, 1)
		q.pending = map[string]checkMark{}
	}
}

// askConfirm queues a read of id. It runs on the WebSocket reader goroutine right after the
// event was folded in, so the mark is the mirror as of that event.
func (c *Client) askConfirm(id string) {
	q := &c.mirror.checks
	seen, ok := c.mirror.Get(id)
	q.mu.Lock()
	if q.wake == nil {
		q.mu.Unlock()
		return // not started: the first snapshot will be the truth
	}
	if !q.resync {
		q.pending[id] = checkMark{seen, ok}
		if len(q.pending) > maxPendingChecks {
			q.pending = map[string]checkMark{}
			q.resync = true
		}
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// runChecks answers queued checks until ctx ends.
func (c *Client) runChecks(ctx context.Context) {
	q := &c.mirror.checks
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		}
		q.mu.Lock()
		batch, resync := q.pending, q.resync
		q.pending, q.resync, q.running = map[string]checkMark{}, false, true
		q.mu.Unlock()
		if resync || len(batch) > bulkCheckAt {
			c.resyncMirror(ctx)
		} else {
			for id, mark := range batch {
				if !c.checkOne(ctx, id, mark) {
					c.resyncMirror(ctx)
					break
				}
			}
		}
		q.mu.Lock()
		q.running = false
		q.mu.Unlock()
	}
}

// checkOne reads id from the state machine and applies it; false if the read failed.
func (c *Client) checkOne(ctx context.Context, id string, mark checkMark) bool {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	st, err := c.State(ctx, id)
	switch {
	case err == nil:
		c.mirror.confirm(id, &st, mark.seen, mark.ok)
	case IsStatus(err, http.StatusNotFound):
		c.mirror.confirm(id, nil, mark.seen, mark.ok)
	default:
		if ctx.Err() == nil {
			c.log.Debug("reading an entity to confirm an event failed; reloading all states", "entity_id", id, "error", err)
		}
		return false
	}
	return true
}

// resyncMirror reloads every state over the WebSocket, installed in event order.
func (c *Client) resyncMirror(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, c.setupTimeout)
	defer cancel()
	s, err := c.waitSession(ctx)
	if err == nil {
		err = c.loadStates(ctx, s)
	}
	if err != nil && ctx.Err() == nil {
		// The next reconnect resyncs anyway.
		c.log.Debug("reloading states to confirm events failed", "error", err)
	}
}
