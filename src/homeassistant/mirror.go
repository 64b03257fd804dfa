package homeassistant

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/internal/livecache"
)

// StateMirror is an in-memory copy of HA's state machine: primed by get_states, kept current by
// state_changed events and resynced after every reconnect. Reads never leave the process.
// Ready, Live, Version and SyncedAt come from the embedded livecache.Sync, changed under mu.
type StateMirror struct {
	livecache.Sync

	mu     sync.RWMutex
	states map[string]State
	sorted []State // All() cache, rebuilt lazily after a change

	lmu       sync.Mutex
	listeners map[uint64]func(old, new *State)
	nextL     uint64
	notify    *queue[stateChange]
	closed    bool

	checks mirrorChecks // entities to read back from the state machine (mirror_confirm.go)
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
	if m.Ready() {
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
	m.SetLive(true)
	m.Synced()
	m.emit(changes) // under m.mu, like applyEvent's
	m.mu.Unlock()
}

// What the mirror trusts. Anyone with an admin token can put a state_changed event on HA's bus —
// REST POST /api/events/state_changed (api/__init__.py APIEventView, which even turns state dicts
// into State objects, so subscribe_entities forwards them as real changes), WS fire_event
// (websocket_api/commands.py handle_fire_event), or a script's `event:` action
// (helpers/script.py _async_event_step) — and subscribe_events (handle_subscribe_events) hands
// every one of them to the mirror. So an event's data is applied only when it carries the marks
// that HA's state machine alone puts on it (core.py StateMachine.async_set_internal fires with
// origin LOCAL, the new State's own context, and time_fired = the new state's last_updated, to
// the microsecond):
//
//   - origin LOCAL: POST /api/events and WS fire_event fire with EventOrigin.remote;
//   - data.entity_id names the new state's own entity (no change of domain or entity);
//   - the event's context id is the new state's, and time_fired equals its last_updated: a
//     script's event action fires LOCAL and can template the context id, but it renders its data
//     before the event gets its time, so it cannot hit the timestamp;
//   - device_class unchanged: the rare real change of it is read back rather than believed.
//
// Anything else — a removal (new_state null; the state machine's async_remove fires no
// timestamp to bind to), REMOTE events, events that fail the binding — changes nothing from its
// own data: applyEvent returns the entity id and the client reads that entity from the state
// machine (GET /api/states/<id>; 404 is a real removal) and applies the answer with confirm.
// Ordinary changes, thousands a minute on a big home, cost no round trip; removals are rare,
// and forged events cost Home Assistant one read each, coalesced per entity.

// stateChangedEvent is what applyEvent reads of a state_changed event.
type stateChangedEvent struct {
	EventType string    `json:"event_type"`
	Origin    string    `json:"origin"`
	TimeFired time.Time `json:"time_fired"`
	Context   struct {
		ID string `json:"id"`
	} `json:"context"`
	Data struct {
		EntityID string `json:"entity_id"`
		NewState *State `json:"new_state"`
	} `json:"data"`
}

// fromStateMachine reports whether ev carries the marks of HA's state machine (see above).
func (ev *stateChangedEvent) fromStateMachine() bool {
	n := ev.Data.NewState
	return n != nil && ev.Origin == "LOCAL" && ev.Data.EntityID != "" && n.EntityID == ev.Data.EntityID &&
		ev.Context.ID != "" && n.Context.ID == ev.Context.ID &&
		!ev.TimeFired.IsZero() && ev.TimeFired.Equal(n.LastUpdated)
}

// applyEvent folds one state_changed event into the mirror when it comes from HA's state
// machine. Otherwise it changes nothing and returns the entity id to confirm against the state
// machine ("" when there is nothing to confirm).
func (m *StateMirror) applyEvent(raw json.RawMessage) (confirmID string, err error) {
	var ev stateChangedEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return "", fmt.Errorf("malformed state_changed event: %w", err)
	}
	if ev.EventType != "state_changed" {
		return "", nil
	}
	id := ev.Data.EntityID
	if id == "" && ev.Data.NewState != nil {
		id = ev.Data.NewState.EntityID
	}
	if id == "" {
		return "", errors.New("state_changed event without entity_id")
	}
	if !ev.fromStateMachine() {
		if checkEntityID(id) != nil {
			return "", nil // no entity the state machine could hold
		}
		return id, nil
	}
	n := *ev.Data.NewState
	m.mu.Lock()
	old, had := m.states[id]
	if had && deviceClass(old) != deviceClass(n) {
		m.mu.Unlock()
		return id, nil
	}
	m.states[id] = n
	m.sorted = nil
	m.Changed()
	if m.Ready() {
		c := stateChange{new: &n}
		if had {
			c.old = ptr(old)
		}
		// Queued under m.mu: confirm runs on another goroutine, and listeners must get changes
		// in the order the mirror made them. emit does not block.
		m.emit([]stateChange{c})
	}
	m.mu.Unlock()
	return "", nil
}

// confirm applies what the state machine answered for id (current nil: it has no such entity).
// seen is the mirror's entry when the check was asked for (seenOK false: there was none), so an
// answer that a newer event has overtaken changes nothing: a state older than the mirror's is
// dropped, and a removal applies only while the mirror still holds what it held then.
func (m *StateMirror) confirm(id string, current *State, seen State, seenOK bool) {
	m.mu.Lock()
	old, had := m.states[id]
	var c stateChange
	switch {
	case current == nil:
		if !had || !seenOK || !sameState(old, seen) || old.Context.ID != seen.Context.ID {
			m.mu.Unlock()
			return
		}
		delete(m.states, id)
		c.old = ptr(old)
	default:
		if current.EntityID == "" {
			current.EntityID = id
		}
		if current.EntityID != id || had && (current.LastUpdated.Before(old.LastUpdated) ||
			sameState(old, *current) && deviceClass(old) == deviceClass(*current)) {
			m.mu.Unlock()
			return
		}
		m.states[id] = *current
		c.new = ptr(*current)
		if had {
			c.old = ptr(old)
		}
	}
	m.sorted = nil
	m.Changed()
	if m.Ready() {
		m.emit([]stateChange{c})
	}
	m.mu.Unlock()
}

func deviceClass(s State) string {
	dc, _ := s.Attributes["device_class"].(string)
	return dc
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
