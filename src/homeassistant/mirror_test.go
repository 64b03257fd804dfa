package homeassistant

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit"
)

type recorded struct{ old, new string }

// recorder collects listener calls as "entity:state" strings ("" for nil).
type recorder struct {
	mu  sync.Mutex
	got []recorded
}

func (r *recorder) fn(old, new *State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, recorded{describe(old), describe(new)})
}

func (r *recorder) snapshot() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.got...)
}

func describe(s *State) string {
	if s == nil {
		return ""
	}
	return s.EntityID + ":" + s.State
}

func st(id, state string, at time.Time) State {
	return State{EntityID: id, State: state, LastChanged: at, LastUpdated: at}
}

// eventJSON is a state_changed event as HA's state machine fires it: LOCAL, with the new state's
// context, at the new state's last_updated. A nil newState is a removal.
func eventJSON(t *testing.T, id string, newState *State) json.RawMessage {
	t.Helper()
	ev := map[string]any{"event_type": "state_changed", "origin": "LOCAL", "context": map[string]any{"id": "01REMOVAL"},
		"data": map[string]any{"entity_id": id, "new_state": newState}}
	if newState != nil {
		newState.Context.ID = "01CTX" + newState.State
		ev["time_fired"] = newState.LastUpdated
		ev["context"] = newState.Context
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// apply folds an event in and answers any check it asks for the way the state machine would:
// gone for a removal, unchanged otherwise.
func apply(m *StateMirror, raw json.RawMessage) error {
	id, err := m.applyEvent(raw)
	if id != "" {
		seen, ok := m.Get(id)
		m.confirm(id, nil, seen, ok)
	}
	return err
}

func TestMirrorReplaceAndEvents(t *testing.T) {
	m := newStateMirror()
	defer m.close()
	rec := &recorder{}
	m.OnStateChanged(rec.fn)
	t0 := time.Now().UTC()

	if m.Ready() || m.Live() {
		t.Fatal("empty mirror must not be ready")
	}
	// An event before the first snapshot updates the map but tells nobody.
	if err := apply(m, eventJSON(t, "light.a", ptr(st("light.a", "on", t0)))); err != nil {
		t.Fatal(err)
	}
	m.replace([]State{st("light.a", "off", t0), st("light.b", "on", t0), st("sensor.t", "21", t0)})
	if !m.Ready() || !m.Live() || m.Len() != 3 {
		t.Fatalf("after prime: ready=%v live=%v len=%d", m.Ready(), m.Live(), m.Len())
	}
	v := m.Version()
	t1 := t0.Add(time.Second)
	steps := []struct {
		name string
		do   func() error
	}{
		{"change", func() error { return apply(m, eventJSON(t, "light.a", ptr(st("light.a", "on", t1)))) }},
		{"add", func() error { return apply(m, eventJSON(t, "light.c", ptr(st("light.c", "off", t1)))) }},
		{"remove", func() error { return apply(m, eventJSON(t, "light.b", nil)) }},
		{"remove unknown", func() error { return apply(m, eventJSON(t, "light.zzz", nil)) }},
		{"other event type", func() error { return apply(m, json.RawMessage(`{"event_type":"call_service","data":{}}`)) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	if m.Version() <= v {
		t.Fatal("version did not move")
	}
	if s, ok := m.Get("light.a"); !ok || s.State != "on" {
		t.Fatalf("light.a = %+v", s)
	}
	if _, ok := m.Get("light.b"); ok {
		t.Fatal("light.b should be removed")
	}
	all := m.All()
	if len(all) != 3 || all[0].EntityID != "light.a" || all[1].EntityID != "light.c" || all[2].EntityID != "sensor.t" {
		t.Fatalf("All not sorted or wrong: %v", all)
	}
	all[0].State = "mutated"
	if s, _ := m.Get("light.a"); s.State != "on" {
		t.Fatal("All must return a copy")
	}

	// Resync after a reconnect: differences become notifications.
	m.SetLive(false)
	if m.Live() || !m.Ready() {
		t.Fatal("disconnected mirror is ready but not live")
	}
	t2 := t1.Add(time.Second)
	m.replace([]State{st("light.a", "on", t1), st("light.c", "on", t2), st("light.d", "off", t2)})
	want := map[recorded]bool{
		{"light.a:off", "light.a:on"}: true,
		{"", "light.c:off"}:           true,
		{"light.b:on", ""}:            true,
		{"light.c:off", "light.c:on"}: true,
		{"", "light.d:off"}:           true,
		{"sensor.t:21", ""}:           true,
	}
	testkit.Eventually(t, "all notifications", func() bool { return len(rec.snapshot()) == len(want) })
	for _, r := range rec.snapshot() {
		if !want[r] {
			t.Fatalf("unexpected notification %+v (all: %+v)", r, rec.snapshot())
		}
	}
	// The first three were live events and must have come in order.
	if got := rec.snapshot()[:3]; got[0] != (recorded{"light.a:off", "light.a:on"}) || got[2] != (recorded{"light.b:on", ""}) {
		t.Fatalf("live notifications out of order: %+v", got)
	}
}

func TestMirrorMalformedEvents(t *testing.T) {
	m := newStateMirror()
	defer m.close()
	for _, raw := range []string{`{`, `{"event_type":"state_changed","data":{}}`, `{"event_type":"state_changed","data":{"entity_id":5}}`} {
		if _, err := m.applyEvent(json.RawMessage(raw)); err == nil {
			t.Errorf("applyEvent(%s) should fail", raw)
		}
	}
	// A new_state without entity_id is not the state machine's: read back, not applied.
	id, err := m.applyEvent(json.RawMessage(`{"event_type":"state_changed","origin":"LOCAL","data":{"entity_id":"a.b","new_state":{"state":"x"}}}`))
	if err != nil || id != "a.b" {
		t.Fatalf("applyEvent = %q, %v; want a check of a.b", id, err)
	}
	if s, ok := m.Get("a.b"); ok {
		t.Fatalf("applied an unbound event: %+v", s)
	}
}

func TestMirrorListenerRemoveAndClose(t *testing.T) {
	m := newStateMirror()
	now := time.Now()
	m.replace([]State{st("a.b", "1", now)})
	rec := &recorder{}
	remove := m.OnStateChanged(rec.fn)
	_ = apply(m, eventJSON(t, "a.b", ptr(st("a.b", "2", now.Add(time.Second)))))
	testkit.Eventually(t, "first notification", func() bool { return len(rec.snapshot()) == 1 })
	remove()
	_ = apply(m, eventJSON(t, "a.b", ptr(st("a.b", "3", now.Add(2*time.Second)))))
	// A second listener proves the change was delivered, so the first one really was skipped.
	second := &recorder{}
	m.OnStateChanged(second.fn)
	_ = apply(m, eventJSON(t, "a.b", ptr(st("a.b", "4", now.Add(3*time.Second)))))
	testkit.Eventually(t, "second listener", func() bool {
		got := second.snapshot()
		return len(got) > 0 && got[len(got)-1].new == "a.b:4"
	})
	if got := rec.snapshot(); len(got) != 1 {
		t.Fatalf("removed listener still called: %+v", got)
	}
	m.close()
	after := m.OnStateChanged(rec.fn)
	after() // registering after close is a harmless no-op
}

func TestMirrorConcurrentReadersAndWriter(t *testing.T) {
	m := newStateMirror()
	defer m.close()
	now := time.Now()
	var initial []State
	for i := 0; i < 200; i++ {
		initial = append(initial, st(fmt.Sprintf("sensor.s%03d", i), "0", now))
	}
	m.replace(initial)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if len(m.All()) != 200 {
					t.Error("All lost entities")
					return
				}
				m.Get("sensor.s007")
				m.Version()
			}
		}()
	}
	for i := 0; i < 500; i++ {
		id := fmt.Sprintf("sensor.s%03d", i%200)
		_ = apply(m, eventJSON(t, id, ptr(st(id, fmt.Sprint(i), now.Add(time.Duration(i)*time.Millisecond)))))
	}
	close(stop)
	wg.Wait()
}

func TestQueueOrderAndOverflow(t *testing.T) {
	var mu sync.Mutex
	var got []int
	block := make(chan struct{})
	q := newQueue(5, func(v int) {
		if v == 0 {
			<-block // hold the consumer so the backlog builds up
		}
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
	})
	defer q.close()
	q.push(0)
	testkit.Eventually(t, "consumer to take item 0", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.items) == 0 })
	dropped := 0
	for i := 1; i <= 8; i++ {
		if !q.push(i) {
			dropped++
		}
	}
	close(block)
	testkit.Eventually(t, "backlog delivered", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 6 })
	mu.Lock()
	defer mu.Unlock()
	want := []int{0, 4, 5, 6, 7, 8}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v (oldest dropped first)", got, want)
		}
	}
	if dropped != 3 {
		t.Fatalf("dropped %d, want 3", dropped)
	}
	q.close()
	if q.push(9) {
		t.Fatal("push after close must report false")
	}
}
