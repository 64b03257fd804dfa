package home

import (
	"bytes"
	"sort"
	"sync"
	"time"
)

// MatchAll is the event type a subscriber uses to receive every event (HA's MATCH_ALL).
const MatchAll = "*"

// Event is one event on the bus.
type Event struct {
	EventType string
	Data      map[string]any
	Origin    string // "LOCAL" | "REMOTE"
	TimeFired time.Time
	Context   Context
}

// MarshalJSON writes the event the way HA sends it over the WebSocket.
func (e Event) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"event_type":`)
	writeJSON(&b, e.EventType)
	b.WriteString(`,"data":`)
	data := e.Data
	if data == nil {
		data = map[string]any{}
	}
	if err := writeJSONErr(&b, data); err != nil {
		return nil, err
	}
	b.WriteString(`,"origin":`)
	writeJSON(&b, e.Origin)
	b.WriteString(`,"time_fired":`)
	writeJSON(&b, ISOTime(e.TimeFired))
	b.WriteString(`,"context":`)
	writeJSON(&b, e.Context)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// bus delivers events in the order they were produced. Producers enqueue
// while holding the home lock (so the queue order is the state order) and
// flush after releasing it, so subscribers may call back into Home.
type bus struct {
	mu    sync.Mutex
	subs  map[int]*subscriber
	next  int
	queue []Event

	deliver sync.Mutex
}

type subscriber struct {
	id        int
	eventType string
	fn        func(Event)
}

func newBus() *bus { return &bus{subs: map[int]*subscriber{}} }

func (b *bus) subscribe(eventType string, fn func(Event)) func() {
	if eventType == "" {
		eventType = MatchAll
	}
	b.mu.Lock()
	b.next++
	id := b.next
	b.subs[id] = &subscriber{id: id, eventType: eventType, fn: fn}
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, id)
			b.mu.Unlock()
		})
	}
}

func (b *bus) enqueue(e Event) {
	b.mu.Lock()
	b.queue = append(b.queue, e)
	b.mu.Unlock()
}

// flush delivers queued events. If another goroutine is already delivering,
// it will pick up what we queued: after it releases the delivery lock it looks
// at the queue again, so nothing is stranded.
func (b *bus) flush() {
	for {
		if !b.deliver.TryLock() {
			return
		}
		for {
			b.mu.Lock()
			if len(b.queue) == 0 {
				b.mu.Unlock()
				break
			}
			e := b.queue[0]
			b.queue = b.queue[1:]
			subs := b.matching(e.EventType)
			b.mu.Unlock()
			for _, s := range subs {
				s.fn(e)
			}
		}
		b.deliver.Unlock()
		b.mu.Lock()
		empty := len(b.queue) == 0
		b.mu.Unlock()
		if empty {
			return
		}
	}
}

// matching is called with b.mu held; subscribers are called in subscribe order.
func (b *bus) matching(eventType string) []*subscriber {
	var out []*subscriber
	for _, s := range b.subs {
		if s.eventType == MatchAll || s.eventType == eventType {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (b *bus) listeners() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := map[string]int{}
	for _, s := range b.subs {
		m[s.eventType]++
	}
	return m
}
