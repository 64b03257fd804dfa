package hubitat

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hamcp/hamcp/src/internal/livecache"
)

// Cache is an in-memory copy of the authorised devices: primed from /devices/all, kept current
// by the hub's events and resynced after every reconnect and every systemStart. Reads never
// leave the process. Like the Home Assistant state mirror, Ready says it was primed once and
// Live says it is being fed right now; stale data is only served when a caller asks for it.
// Ready, Live, Version and SyncedAt come from the embedded livecache.Sync, changed under mu.
type Cache struct {
	livecache.Sync

	mu      sync.RWMutex
	devices map[string]Device
	mode    string
	hsm     string

	lmu       sync.Mutex
	listeners map[uint64]func(Event)
	nextL     uint64
	events    chan Event
	dropped   uint64
	closed    bool
}

// maxPendingEvents bounds the listener backlog; beyond it new events are dropped and counted.
const maxPendingEvents = 4096

func newCache() *Cache { return &Cache{devices: map[string]Device{}} }

// All returns every cached device, sorted by numeric id. The slice is the caller's.
func (m *Cache) All() []Device {
	m.mu.RLock()
	out := make([]Device, 0, len(m.devices))
	for _, d := range m.devices {
		out = append(out, d.clone())
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Device) int { return compareIDs(a.ID, b.ID) })
	return out
}

func compareIDs(a, b string) int {
	ai, _ := strconv.ParseInt(a, 10, 64)
	bi, _ := strconv.ParseInt(b, 10, 64)
	switch {
	case ai < bi:
		return -1
	case ai > bi:
		return 1
	}
	return strings.Compare(a, b)
}

// Get returns one cached device.
func (m *Cache) Get(id string) (Device, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.devices[id]
	return d.clone(), ok
}

// Len is the number of cached devices.
func (m *Cache) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.devices)
}

// Mode and HSM are the last mode and HSM status seen in location events ("" before any).
func (m *Cache) Mode() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mode
}

// HSM is the last HSM status seen in a location event.
func (m *Cache) HSM() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.hsm
}

// OnEvent registers fn for every event of an authorised device and every location event, after
// the cache applied it. fn runs on one delivery goroutine, in order; it may call the client.
func (m *Cache) OnEvent(fn func(Event)) (remove func()) {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	if m.closed {
		return func() {}
	}
	if m.listeners == nil {
		m.listeners = map[uint64]func(Event){}
		m.events = make(chan Event, maxPendingEvents)
		go m.deliver(m.events)
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

func (m *Cache) deliver(ch <-chan Event) {
	for e := range ch {
		m.lmu.Lock()
		fns := make([]func(Event), 0, len(m.listeners))
		for _, fn := range m.listeners {
			fns = append(fns, fn)
		}
		m.lmu.Unlock()
		for _, fn := range fns {
			fn(e)
		}
	}
}

func (m *Cache) emit(e Event) {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	if m.events == nil || m.closed {
		return
	}
	select {
	case m.events <- e:
	default:
		m.dropped++
	}
}

// replace installs a full snapshot; the link marks the cache live once it is connected.
func (m *Cache) replace(ds []Device) {
	next := make(map[string]Device, len(ds))
	for _, d := range ds {
		next[d.ID] = d
	}
	m.mu.Lock()
	m.devices = next
	m.Synced()
	m.mu.Unlock()
}

// apply folds one event into the cache and hands it to listeners. Device events for devices
// the cache does not hold (the eventsocket streams every device on the hub, not only those
// Maker API authorised) are dropped, and so is anything before the first snapshot.
func (m *Cache) apply(e Event) bool {
	m.mu.Lock()
	if !m.Ready() {
		m.mu.Unlock()
		return false
	}
	if e.Location() {
		m.setLocationLocked(e.Name, e.Value.String())
		m.mu.Unlock()
		m.emit(e)
		return true
	}
	d, ok := m.devices[e.DeviceID]
	if !ok {
		m.mu.Unlock()
		return false
	}
	d.Attributes = slices.Clone(d.Attributes)
	i := slices.IndexFunc(d.Attributes, func(a Attribute) bool { return a.Name == e.Name })
	if i >= 0 {
		d.Attributes[i].Value = e.Value
	} else {
		d.Attributes = append(d.Attributes, Attribute{Name: e.Name, Value: e.Value})
		slices.SortFunc(d.Attributes, func(a, b Attribute) int { return strings.Compare(a.Name, b.Name) })
	}
	m.devices[e.DeviceID] = d
	m.Changed()
	m.mu.Unlock()
	if e.DisplayName == "" {
		e.DisplayName = d.DisplayName()
	}
	m.emit(e)
	return true
}

func (m *Cache) setLocation(name, value string) {
	m.mu.Lock()
	m.setLocationLocked(name, value)
	m.mu.Unlock()
}

func (m *Cache) setLocationLocked(name, value string) {
	switch name {
	case "mode":
		m.mode = value
	case "hsmStatus":
		m.hsm = value
	default:
		return
	}
	m.Changed()
}

func (m *Cache) close() {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	if m.closed {
		return
	}
	m.closed = true
	if m.events != nil {
		close(m.events)
	}
	m.listeners = nil
}
