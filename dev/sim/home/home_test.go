package home_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim/hass"
	"github.com/hamcp/hamcp/dev/sim/home"
)

// fixedClock is a settable clock so timestamps are exact in assertions.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fixedClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newHome(t *testing.T, dir string) (*home.Home, *fixedClock) {
	t.Helper()
	clk := &fixedClock{t: time.Date(2026, 5, 6, 10, 0, 0, 0, time.UTC)} // a Wednesday, 12:00 in Amsterdam
	h, err := home.New(home.Options{Seed: 7, ConfigDir: dir, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	h.SetRenderer(func(tpl string, vars map[string]any, snap *home.Snapshot, typed bool) (any, error) {
		out, _, err := hass.RenderTemplate(tpl, vars, snap)
		if err != nil {
			return nil, &home.HAError{Msg: err.Error()}
		}
		if typed {
			return hass.ParseResult(out), nil
		}
		return out, nil
	})
	t.Cleanup(h.Close)
	return h, clk
}

func mustState(t *testing.T, h *home.Home, id string) *home.State {
	t.Helper()
	st, ok := h.State(id)
	if !ok {
		t.Fatalf("no state for %s", id)
	}
	return st
}

func call(t *testing.T, h *home.Home, domain, service string, data map[string]any) *home.CallResult {
	t.Helper()
	res, err := h.CallService(home.ServiceCall{Domain: domain, Service: service, Data: data})
	if err != nil {
		t.Fatalf("%s.%s(%v): %v", domain, service, data, err)
	}
	return res
}

func TestDemoHomeShape(t *testing.T) {
	h, _ := newHome(t, "")
	states := h.States()
	if len(states) < 60 {
		t.Fatalf("want at least 60 entities, got %d", len(states))
	}
	domains := map[string]int{}
	for _, s := range states {
		domains[s.Domain()]++
		if s.Attributes["friendly_name"] == nil {
			t.Errorf("%s has no friendly_name", s.EntityID)
		}
	}
	for _, d := range []string{"light", "switch", "sensor", "binary_sensor", "climate", "cover", "lock", "media_player", "person",
		"device_tracker", "calendar", "automation", "script", "scene", "input_boolean", "input_number", "input_select", "input_text",
		"camera", "todo", "weather", "sun", "zone"} {
		if domains[d] == 0 {
			t.Errorf("no %s entities", d)
		}
	}
	if len(h.Floors()) < 3 || len(h.Areas()) < 8 || len(h.Labels()) < 3 || len(h.Devices()) < 20 {
		t.Errorf("registries too small: floors=%d areas=%d labels=%d devices=%d", len(h.Floors()), len(h.Areas()), len(h.Labels()), len(h.Devices()))
	}
	temp := mustState(t, h, "sensor.kitchen_temperature")
	if temp.Attributes["unit_of_measurement"] != "°C" || temp.Attributes["state_class"] != "measurement" || temp.Attributes["device_class"] != "temperature" {
		t.Errorf("temperature sensor attributes: %v", temp.Attributes)
	}
	for _, d := range h.Devices() {
		if d.Manufacturer == nil && d.EntryType == nil {
			t.Errorf("device %s has no manufacturer", d.Name)
		}
	}
}

func TestDeterministicForSeed(t *testing.T) {
	a, _ := newHome(t, "")
	b, _ := newHome(t, "")
	ja, _ := json.Marshal(a.States())
	jb, _ := json.Marshal(b.States())
	if string(ja) != string(jb) {
		t.Fatal("two homes with the same seed and clock differ")
	}
	da, _ := json.Marshal(a.Devices())
	db, _ := json.Marshal(b.Devices())
	if string(da) != string(db) {
		t.Fatal("device registries differ for the same seed")
	}
}

func TestStateJSONShape(t *testing.T) {
	h, _ := newHome(t, "")
	raw, err := json.Marshal(mustState(t, h, "light.hallway"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	order := []string{`"entity_id"`, `"state"`, `"attributes"`, `"last_changed"`, `"last_reported"`, `"last_updated"`, `"context"`}
	last := -1
	for _, k := range order {
		i := strings.Index(s, k)
		if i <= last {
			t.Fatalf("key %s out of order in %s", k, s)
		}
		last = i
	}
	if !strings.Contains(s, `+00:00"`) || !strings.Contains(s, `"parent_id":null`) {
		t.Errorf("timestamps or context not in HA form: %s", s)
	}
}

func TestSetStateSemantics(t *testing.T) {
	h, clk := newHome(t, "")
	var events []home.Event
	var mu sync.Mutex
	cancel := h.Subscribe("state_changed", func(e home.Event) { mu.Lock(); events = append(events, e); mu.Unlock() })
	defer cancel()

	st, created, err := h.SetState("sensor.custom", "1", map[string]any{"unit_of_measurement": "W"}, false, "")
	if err != nil || !created || st.State != "1" {
		t.Fatalf("create: %v %v %v", st, created, err)
	}
	first := st.LastChanged
	clk.add(time.Second)
	st, created, _ = h.SetState("sensor.custom", "1", map[string]any{"unit_of_measurement": "W", "extra": 2}, false, "")
	if created || !st.LastChanged.Equal(first) || st.LastUpdated.Equal(first) {
		t.Errorf("attribute-only change must keep last_changed and move last_updated: %+v", st)
	}
	clk.add(time.Second)
	st, _, _ = h.SetState("sensor.custom", "2", nil, false, "")
	if st.LastChanged.Equal(first) {
		t.Errorf("state change must move last_changed")
	}
	clk.add(time.Second)
	before := len(events)
	st2, _, _ := h.SetState("sensor.custom", "2", nil, false, "")
	if len(events) != before || !st2.LastUpdated.Equal(st.LastUpdated) || st2.LastReported.Equal(st.LastReported) {
		t.Errorf("identical write must only refresh last_reported and fire nothing")
	}
	if _, _, err := h.SetState("Bad.ID", "x", nil, false, ""); err == nil {
		t.Error("invalid entity id accepted")
	}
	if !h.RemoveState("sensor.custom") || h.RemoveState("sensor.custom") {
		t.Error("remove should succeed once")
	}
	mu.Lock()
	defer mu.Unlock()
	lastEv := events[len(events)-1]
	if lastEv.Data["new_state"] != nil {
		t.Errorf("removal event must have new_state nil: %v", lastEv.Data)
	}
}

func TestValidEntityID(t *testing.T) {
	cases := map[string]bool{"light.kitchen": true, "sensor.a_1": true, "Light.x": false, "light": false, "light.": false,
		".x": false, "light.a.b": false, "light._x": false, "light.x_": false, "li__ght.x": false, "light.a__b": false, "_light.x": false}
	for id, want := range cases {
		if got := home.ValidEntityID(id); got != want {
			t.Errorf("ValidEntityID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestCompressedAndDiff(t *testing.T) {
	h, clk := newHome(t, "")
	old := mustState(t, h, "light.kitchen_ceiling")
	clk.add(time.Minute)
	call(t, h, "light", "turn_on", map[string]any{"entity_id": "light.kitchen_ceiling", "brightness": 100})
	cur := mustState(t, h, "light.kitchen_ceiling")
	c := old.Compressed()
	if c["s"] != old.State || c["c"] != old.Context.ID {
		t.Errorf("compressed state: %v", c)
	}
	d := home.Diff(old, cur)
	plus := d["+"].(map[string]any)
	if plus["s"] != "on" || plus["lc"] == nil || plus["c"] != cur.Context.ID {
		t.Errorf("diff: %v", d)
	}
	if a := plus["a"].(map[string]any); a["brightness"] != 100 {
		t.Errorf("diff attributes: %v", a)
	}
}

func TestEventBusOrderAndListeners(t *testing.T) {
	h, _ := newHome(t, "")
	var got []string
	cancelA := h.Subscribe("my_event", func(e home.Event) { got = append(got, "a:"+e.EventType) })
	cancelB := h.Subscribe(home.MatchAll, func(e home.Event) {
		if e.EventType == "my_event" {
			got = append(got, "b:"+e.EventType)
		}
	})
	if n := h.Listeners()["my_event"]; n != 1 {
		t.Errorf("listener count = %d", n)
	}
	ctx := h.FireEvent("my_event", map[string]any{"x": 1}, "REMOTE", "")
	if ctx.ID == "" || len(got) != 2 || got[0] != "a:my_event" {
		t.Errorf("delivery: %v", got)
	}
	cancelA()
	cancelB()
	h.FireEvent("my_event", nil, "LOCAL", "")
	if len(got) != 2 {
		t.Error("cancelled subscribers still called")
	}
	raw, _ := json.Marshal(home.Event{EventType: "x", Origin: "LOCAL", TimeFired: time.Unix(0, 0)})
	if !strings.Contains(string(raw), `"data":{}`) || !strings.Contains(string(raw), `"time_fired":"1970-01-01T00:00:00+00:00"`) {
		t.Errorf("event JSON: %s", raw)
	}
}
