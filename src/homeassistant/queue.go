package homeassistant

import "sync"

// queue hands items to fn one at a time, in arrival order, on its own goroutine, so a slow or
// re-entrant consumer (one that calls back into the client) never stalls the WebSocket reader.
type queue[T any] struct {
	fn  func(T)
	max int

	mu      sync.Mutex
	items   []T
	closed  bool
	dropped uint64
	wake    chan struct{}
}

// newQueue starts the delivery goroutine; max bounds the backlog (oldest items are dropped
// beyond it, because stale state events are worth less than fresh ones).
func newQueue[T any](max int, fn func(T)) *queue[T] {
	q := &queue[T]{fn: fn, max: max, wake: make(chan struct{}, 1)}
	go q.loop()
	return q
}

// push enqueues v; it reports false when the queue is closed or had to drop its oldest item.
func (q *queue[T]) push(v T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	ok := true
	if q.max > 0 && len(q.items) >= q.max {
		var zero T
		q.items[0] = zero
		q.items = q.items[1:]
		q.dropped++
		ok = false
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return ok
}

// close stops delivery after the item in progress. It does not wait, so fn may call it.
func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue[T]) loop() {
	for range q.wake {
		for {
			q.mu.Lock()
			if q.closed {
				q.mu.Unlock()
				return
			}
			if len(q.items) == 0 {
				q.mu.Unlock()
				break
			}
			v := q.items[0]
			var zero T
			q.items[0] = zero
			q.items = q.items[1:]
			q.mu.Unlock()
			q.fn(v)
		}
	}
}
