package homeassistant

import (
	"encoding/json"
	"testing"
	"time"
)

const garageID = "cover.garage_door"

func garageState(state, deviceClass string, at time.Time) State {
	s := st(garageID, state, at)
	s.Attributes = map[string]any{"device_class": deviceClass, "friendly_name": "Garage Door"}
	s.Context.ID = "01REAL" + state
	return s
}

// firedJSON is a state_changed event as someone other than the state machine could fire it.
func firedJSON(t *testing.T, origin string, timeFired time.Time, ctxID string, data map[string]any) json.RawMessage {
	t.Helper()
	ev := map[string]any{"event_type": "state_changed", "origin": origin, "context": map[string]any{"id": ctxID, "parent_id": nil, "user_id": "u1"}, "data": data}
	if !timeFired.IsZero() {
		ev["time_fired"] = timeFired
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Events that do not carry the state machine's marks change nothing by themselves; each asks for
// the entity to be read back.
func TestMirrorRefusesFiredEvents(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	shade := garageState("open", "shade", t1)
	shadeCtx := shade
	shadeCtx.Context.ID = "01FIRED"
	other := shade
	other.EntityID = "cover.decoy"
	sameClass := garageState("open", "garage", t1)
	sameClass.Context.ID = "01FIRED"
	cases := []struct {
		name string
		raw  json.RawMessage
	}{
		{"REMOTE, perfectly bound (REST POST /api/events, WS fire_event)", firedJSON(t, "REMOTE", t1, "01FIRED", map[string]any{"entity_id": garageID, "new_state": shadeCtx})},
		{"REMOTE removal", firedJSON(t, "REMOTE", t1, "01FIRED", map[string]any{"entity_id": garageID, "new_state": nil})},
		{"LOCAL removal (a script's event action)", firedJSON(t, "LOCAL", t1, "01FIRED", map[string]any{"entity_id": garageID, "old_state": nil, "new_state": nil})},
		{"LOCAL without time_fired binding", firedJSON(t, "LOCAL", t1.Add(time.Microsecond), "01FIRED", map[string]any{"entity_id": garageID, "new_state": shadeCtx})},
		{"LOCAL without context binding", firedJSON(t, "LOCAL", t1, "01OTHER", map[string]any{"entity_id": garageID, "new_state": shadeCtx})},
		{"LOCAL without time_fired", firedJSON(t, "LOCAL", time.Time{}, "01FIRED", map[string]any{"entity_id": garageID, "new_state": shadeCtx})},
		{"LOCAL, new_state of another entity", firedJSON(t, "LOCAL", t1, "01FIRED", map[string]any{"entity_id": garageID, "new_state": other})},
		{"no origin, otherwise bound", firedJSON(t, "", t1, "01FIRED", map[string]any{"entity_id": garageID, "new_state": sameClass})},
		{"bound LOCAL changing device_class", firedJSON(t, "LOCAL", t1, "01FIRED", map[string]any{"entity_id": garageID, "new_state": shadeCtx})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newStateMirror()
			defer m.close()
			real := garageState("closed", "garage", t0)
			m.replace([]State{real})
			v := m.Version()
			id, err := m.applyEvent(c.raw)
			if err != nil || id != garageID {
				t.Fatalf("applyEvent = %q, %v; want a check of %s", id, err, garageID)
			}
			got, ok := m.Get(garageID)
			if !ok || got.State != "closed" || deviceClass(got) != "garage" || m.Version() != v {
				t.Fatalf("the mirror believed a fired event: %+v (present %v)", got, ok)
			}
			// The state machine still has the garage: the check changes nothing.
			m.confirm(garageID, ptr(real), got, ok)
			if m.Version() != v {
				t.Fatal("confirming an unchanged entity moved the version")
			}
		})
	}
}

// The state machine's own events, bound, are applied at once with no check.
func TestMirrorAppliesStateMachineEvents(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := newStateMirror()
	defer m.close()
	m.replace([]State{garageState("closed", "garage", t0)})
	open := garageState("open", "garage", t0.Add(time.Second))
	id, err := m.applyEvent(firedJSON(t, "LOCAL", open.LastUpdated, open.Context.ID, map[string]any{"entity_id": garageID, "new_state": open}))
	if err != nil || id != "" {
		t.Fatalf("applyEvent = %q, %v; want it applied", id, err)
	}
	if got, _ := m.Get(garageID); got.State != "open" {
		t.Fatalf("state machine event not applied: %+v", got)
	}
}

// Answers to checks that newer events have overtaken change nothing.
func TestMirrorConfirmOrdering(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	closed := garageState("closed", "garage", t0)
	open := garageState("open", "garage", t0.Add(time.Second))
	cases := []struct {
		name      string
		now       *State // the mirror's entry when the answer comes (nil: none)
		seen      *State // the mirror's entry when the check was asked for
		answer    *State // nil: 404
		wantState string // "" gone
	}{
		{"removal confirmed", &closed, &closed, nil, ""},
		{"removal overtaken by a newer state", &open, &closed, nil, "open"},
		{"older answer than the mirror", &open, &closed, &closed, "open"},
		{"newer answer", &closed, &closed, &open, "open"},
		{"absent entity appears", nil, nil, &open, "open"},
		{"absent entity stays absent", nil, nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newStateMirror()
			defer m.close()
			var init []State
			if c.now != nil {
				init = append(init, *c.now)
			}
			m.replace(init)
			var seen State
			if c.seen != nil {
				seen = *c.seen
			}
			var answer *State
			if c.answer != nil {
				answer = ptr(*c.answer)
			}
			m.confirm(garageID, answer, seen, c.seen != nil)
			got, ok := m.Get(garageID)
			if (c.wantState == "") == ok || ok && got.State != c.wantState {
				t.Fatalf("after confirm: %+v (present %v), want %q", got, ok, c.wantState)
			}
		})
	}
}

// FuzzMirrorApplyEvent: whatever an event says, the mirror's entry changes only for an event
// bound to the state machine that keeps the device_class, and never disappears.
func FuzzMirrorApplyEvent(f *testing.F) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := t0.Add(time.Second).Format(time.RFC3339Nano)
	f.Add(`{"event_type":"state_changed","origin":"LOCAL","time_fired":"` + at + `","context":{"id":"c"},"data":{"entity_id":"cover.garage_door","new_state":{"entity_id":"cover.garage_door","state":"open","attributes":{"device_class":"garage"},"last_updated":"` + at + `","context":{"id":"c"}}}}`)
	f.Add(`{"event_type":"state_changed","origin":"REMOTE","data":{"entity_id":"cover.garage_door","new_state":null}}`)
	f.Add(`{"event_type":"state_changed","origin":"LOCAL","data":{"entity_id":"cover.garage_door","new_state":{"entity_id":"cover.garage_door","state":"open","attributes":{"device_class":["x"]}}}}`)
	f.Add(`{"event_type":"state_changed","data":{"entity_id":"cover.garage_door","new_state":{"attributes":{"device_class":{"a":1}}}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		m := newStateMirror()
		defer m.close()
		m.replace([]State{garageState("closed", "garage", t0)})
		id, err := m.applyEvent(json.RawMessage(raw))
		got, ok := m.Get(garageID)
		if !ok {
			t.Fatalf("an event removed the garage (check %q, err %v)", id, err)
		}
		if got.State == "closed" && got.LastUpdated.Equal(t0) {
			return
		}
		var ev stateChangedEvent
		if json.Unmarshal([]byte(raw), &ev) != nil || !ev.fromStateMachine() || deviceClass(got) != "garage" {
			t.Fatalf("applied an event not bound to the state machine: %s -> %+v", raw, got)
		}
	})
}
