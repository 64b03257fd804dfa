package homeassistant

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// StateMirror is an in-memory copy of HA's state machine: primed by get_states, kept current by
// state_changed events and resynced after every reconnect. Reads never leave the process.
type StateMirror struct {
	mu       sync.RWMutex
	states   map[string]State
	sorted   []State // All() cache, rebuilt lazily after a change
	version  uint64
	ready    bool
	live     bool
	syncedAt time.Time

	lmu       sync.Mutex
	listeners map[uint64]func(old, new *State)
	nextL     uint64
	notify    *queue[stateChange]
	closed    bool
}

type stateChange struct{ old, new *State }

// maxPendingNotifications bounds listener backlog; a listener that falls this far behind loses
// the oldest changes rather than growing memory without limit.
const maxPendingNotifications = 100_000

func newStateMirror() *StateMirror {
	return &StateMirror{states: map[string]State{}}
}

// All returns every state sorted by entity id. The slice is the caller's; attribute maps are
// shared and must not be modified.
func (m *StateMirror) All() []State { return slices.Clone(m.Snapshot()) }

// Snapshot returns every state sorted by entity id without copying: the slice is shared by all
// readers and must not be modified. A change builds a new slice, so a snapshot never changes
// under its reader. Readers that only filter (the hot path of state listings) use it.
func (m *StateMirror) Snapshot() []State {
	m.mu.RLock()
	cached := m.sorted
	m.mu.RUnlock()
	if cached == nil {
		m.mu.Lock()
		if m.sorted == nil {
			m.sorted = make([]State, 0, len(m.states))
			for _, s := range m.states {
				m.sorted = append(m.sorted, s)
			}
			slices.SortFunc(m.sorted, func(a, b State) int { return strings.Compare(a.EntityID, b.EntityID) })
		}
		cached = m.sorted
		m.mu.Unlock()
	}
	return cached
}

// Get returns one entity's state.
func (m *StateMirror) Get(entityID string) (State, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.states[entityID]
	return s, ok
}

// Len is the number of entities.
func (m *StateMirror) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.states)
}

// Version increases on every change, so callers can tell whether anything moved.
func (m *StateMirror) Version() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.version
}

// Ready reports that the mirror has been primed at least once. Its content may be stale while
// the WebSocket is reconnecting; Live tells that apart.
func (m *StateMirror) Ready() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.ready
}

// Live reports that the mirror is primed and currently fed by a connected WebSocket.
func (m *StateMirror) Live() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.ready && m.live
}

// SyncedAt is when the last full snapshot was applied (zero before the first).
func (m *StateMirror) SyncedAt() time.Time {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.syncedAt
}

// OnStateChanged registers fn for every change after the mirror is primed: old is nil for a new
// entity, new is nil for a removed one. Changes found while resyncing after a reconnect are
// reported too. fn runs on one delivery goroutine, in order; it may call back into the client.
func (m *StateMirror) OnStateChanged(fn func(old, new *State)) (remove func()) {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	if m.closed {
		return func() {}
	}
	if m.listeners == nil {
		m.listeners = map[uint64]func(old, new *State){}
	}
	if m.notify == nil {
		m.notify = newQueue(maxPendingNotifications, m.deliver)
	}
	m.nextL++
	id := m.nextL
	m.listeners[id] = fn
	return func() {
		m.lmu.Lock()
		delete(m.listeners, id)
		m.lmu.Unlock()
	}
}

func (m *StateMirror) deliver(c stateChange) {
	m.lmu.Lock()
	fns := make([]func(old, new *State), 0, len(m.listeners))
	for _, fn := range m.listeners {
		fns = append(fns, fn)
	}
	m.lmu.Unlock()
	for _, fn := range fns {
		fn(c.old, c.new)
	}
}

func (m *StateMirror) emit(changes []stateChange) {
	if len(changes) == 0 {
		return
	}
	m.lmu.Lock()
	q := m.notify
	m.lmu.Unlock()
	if q == nil {
		return
	}
	for _, c := range changes {
		q.push(c)
	}
}

// replace installs a full snapshot. After the first one it reports the differences, so
// listeners learn what changed while the connection was down.
func (m *StateMirror) replace(states []State) {
	next := make(map[string]State, len(states))
	for _, s := range states {
		if s.EntityID != "" {
			next[s.EntityID] = s
		}
	}
	m.mu.Lock()
	var changes []stateChange
	if m.ready {
		for id, n := range next {
			o, ok := m.states[id]
			switch {
			case !ok:
				changes = append(changes, stateChange{new: ptr(n)})
			case !sameState(o, n):
				changes = append(changes, stateChange{old: ptr(o), new: ptr(n)})
			}
		}
		for id, o := range m.states {
			if _, ok := next[id]; !ok {
				changes = append(changes, stateChange{old: ptr(o)})
			}
		}
	}
	m.states = next
	m.sorted = nil
	m.version++
	m.ready, m.live = true, true
	m.syncedAt = time.Now()
	m.mu.Unlock()
	m.emit(changes)
}

// applyEvent folds one state_changed event into the mirror.
func (m *StateMirror) applyEvent(raw json.RawMessage) error {
	var ev struct {
		EventType string `json:"event_type"`
		Data      struct {
			EntityID string `json:"entity_id"`
			NewState *State `json:"new_state"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return fmt.Errorf("malformed state_changed event: %w", err)
	}
	if ev.EventType != "state_changed" {
		return nil
	}
	id := ev.Data.EntityID
	if id == "" && ev.Data.NewState != nil {
		id = ev.Data.NewState.EntityID
	}
	if id == "" {
		return errors.New("state_changed event without entity_id")
	}
	m.mu.Lock()
	old, had := m.states[id]
	if ev.Data.NewState == nil {
		delete(m.states, id)
	} else {
		if ev.Data.NewState.EntityID == "" {
			ev.Data.NewState.EntityID = id
		}
		m.states[id] = *ev.Data.NewState
	}
	m.sorted = nil
	m.version++
	primed := m.ready
	m.mu.Unlock()
	if !primed || (!had && ev.Data.NewState == nil) {
		return nil
	}
	c := stateChange{new: ev.Data.NewState}
	if had {
		c.old = ptr(old)
	}
	m.emit([]stateChange{c})
	return nil
}

func (m *StateMirror) setLive(live bool) {
	m.mu.Lock()
	m.live = live
	m.mu.Unlock()
}

func (m *StateMirror) close() {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	m.closed = true
	if m.notify != nil {
		m.notify.close()
	}
	m.listeners = nil
}

// sameState compares what HA's own change detection compares; attribute edits move
// last_updated, so it is enough to look at the timestamps and the state string.
func sameState(a, b State) bool {
	return a.State == b.State && a.LastUpdated.Equal(b.LastUpdated) && a.LastChanged.Equal(b.LastChanged)
}

func ptr[T any](v T) *T { return &v }
