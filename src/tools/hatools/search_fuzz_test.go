package hatools

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
)

func TestSearchScoreRanking(t *testing.T) {
	docs := []searchDoc{
		{id: "light.kitchen_ceiling", name: "Kitchen Ceiling", area: "Kitchen", device: "Kitchen Ceiling"},
		{id: "sensor.kitchen_temperature", name: "Kitchen Temperature", area: "Kitchen", device: "Kitchen Sensor"},
		{id: "light.living_room_lamp", name: "Living Room Lamp", area: "Living room", device: "Living Room Lamp"},
		{id: "light.living_room_ceiling", name: "Living Room Ceiling", area: "Living room"},
		{id: "switch.coffee_machine", name: "Coffee Machine", area: "Kitchen", device: "Coffee Machine Plug"},
	}
	for _, c := range []struct{ query, best, absent string }{
		{"kitchen ceiling", "light.kitchen_ceiling", ""},
		{"kitchn temprature", "sensor.kitchen_temperature", ""}, // two typos
		{"lamp", "light.living_room_lamp", ""},
		{"coffee plug", "switch.coffee_machine", "light.kitchen_ceiling"},
		{"switch.coffee_machine", "switch.coffee_machine", ""},
		{"garage", "", "light.kitchen_ceiling"},
	} {
		best, bestScore := "", 0
		for _, d := range docs {
			s := searchScore(c.query, d)
			if s > bestScore {
				best, bestScore = d.id, s
			}
			if d.id == c.absent && s > 0 {
				t.Errorf("%q matched %s (%d)", c.query, d.id, s)
			}
		}
		if best != c.best {
			t.Errorf("%q: best %q, want %q", c.query, best, c.best)
		}
	}
}

func FuzzSearchScore(f *testing.F) {
	f.Add("kitchen light", "light.kitchen_ceiling", "Kitchen Ceiling", "Kitchen", "Hue")
	f.Add("", "sensor.x", "", "", "")
	f.Add("ÄÖ ü", "sensor.ä", "Ünïcode", "É", "\xff")
	f.Fuzz(func(t *testing.T, query, id, name, area, device string) {
		s := searchScore(query, searchDoc{id: id, name: name, area: area, device: device})
		if s < 0 {
			t.Fatalf("negative score %d", s)
		}
		q := strings.ToLower(strings.TrimSpace(query))
		if q != "" && q == strings.ToLower(id) && s < 1000 {
			t.Fatalf("exact id %q scored %d", id, s)
		}
		if strings.TrimSpace(query) == "" && s != 0 {
			t.Fatalf("empty query scored %d", s)
		}
	})
}

func FuzzOneEditApart(f *testing.F) {
	f.Add("kitchen", "kitchn")
	f.Add("", "a")
	f.Add("ab", "ba")
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := oneEditApart(a, b), oneEditApart(b, a)
		if ab != ba {
			t.Fatalf("not symmetric for %q %q", a, b)
		}
		if a == b && !ab {
			t.Fatalf("%q is not one edit from itself", a)
		}
		if d := utf8.RuneCountInString(a) - utf8.RuneCountInString(b); ab && (d > 1 || d < -1) {
			t.Fatalf("%q and %q differ in length by %d", a, b, d)
		}
	})
}

func FuzzEventFilter(f *testing.F) {
	f.Add("light.*", `{"entity_id":"light.kitchen"}`)
	f.Add("*door*", `{"service_data":{"entity_id":["lock.front_door","x"]}}`)
	f.Add("[", `{"entity_id":7}`)
	f.Fuzz(func(t *testing.T, pattern, data string) {
		var m map[string]any
		if json.Unmarshal([]byte(data), &m) != nil {
			return
		}
		if !matchesFilter("", m) {
			t.Fatal("an empty filter must pass every event")
		}
		ids := eventEntities(m)
		if matchesFilter(pattern, m) && len(ids) == 0 {
			t.Fatalf("%q matched an event about no entity", pattern)
		}
	})
}

func FuzzCompactEvent(f *testing.F) {
	f.Add("state_changed", `{"entity_id":"light.a","old_state":{"state":"off"},"new_state":{"state":"on"}}`, "2026-01-31T10:00:00.123+00:00")
	f.Add("my_event", `{"big":"`+strings.Repeat("x", 2100)+`"}`, "")
	f.Add("state_changed", `{"entity_id":"`+strings.Repeat("é", 130)+`"}`, "nonsense")
	f.Fuzz(func(t *testing.T, typ, data, fired string) {
		var m map[string]any
		if json.Unmarshal([]byte(data), &m) != nil {
			return
		}
		at, _ := time.Parse(time.RFC3339Nano, fired)
		out := compactEvent("sub_1", homeassistant.Event{EventType: typ, Data: m, TimeFired: at})
		var back map[string]any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		if back["subscription_id"] != "sub_1" {
			t.Fatalf("lost the subscription id: %s", out)
		}
		if limit := maxEventData + 3*len(typ) + 2048; len(out) > limit {
			t.Fatalf("notification of %d bytes, over %d", len(out), limit)
		}
	})
}

func FuzzEventNames(f *testing.F) {
	f.Add("my_custom_event")
	f.Add("shelly.click")
	f.Add("bad event")
	f.Add("homeassistant_stop")
	f.Fuzz(func(t *testing.T, name string) {
		if validEventType(name) {
			if len(name) > 64 || strings.ContainsAny(name, " /?#\t\n") {
				t.Fatalf("accepted %q", name)
			}
		}
		if strings.HasSuffix(name, "_registry_updated") && !sensitive.ReservedEvent(name) {
			t.Fatalf("%q should need confirmation", name)
		}
		if id := personEntityID(name); !strings.Contains(id, ".") || id != strings.ToLower(id) {
			t.Fatalf("person id %q from %q", id, name)
		}
	})
}

func FuzzPickShoppingItem(f *testing.F) {
	f.Add("Milk", "milk", "complete", true)
	f.Add("", "", "remove", false)
	f.Fuzz(func(t *testing.T, itemName, ref, action string, complete bool) {
		items := []homeassistant.ShoppingItem{{ID: "a", Name: itemName, Complete: complete}, {ID: "b", Name: itemName, Complete: !complete}}
		id, err := pickShoppingItem(items, "", ref, action)
		if err != nil {
			return
		}
		if id != "a" && id != "b" {
			t.Fatalf("picked %q", id)
		}
		if !strings.EqualFold(strings.TrimSpace(ref), strings.TrimSpace(itemName)) {
			t.Fatalf("%q picked for %q", itemName, ref)
		}
		if action == "complete" && id != map[bool]string{true: "b", false: "a"}[complete] {
			t.Fatalf("complete picked the completed item")
		}
	})
}

// BenchmarkSearchScore ranks a 3,000-entity home for one query, what ha_search_entities does per call.
func BenchmarkSearchScore(b *testing.B) {
	rooms := []string{"Kitchen", "Living room", "Bedroom", "Office", "Garage", "Garden"}
	kinds := []string{"light", "sensor", "switch", "binary_sensor", "climate"}
	docs := make([]searchDoc, 3000)
	for i := range docs {
		room, kind := rooms[i%len(rooms)], kinds[i%len(kinds)]
		obj := strings.ToLower(strings.ReplaceAll(room, " ", "_")) + "_" + kind + "_" + strconv.Itoa(i)
		docs[i] = searchDoc{id: kind + "." + obj, name: room + " " + kind + " " + strconv.Itoa(i), area: room, device: room + " hub"}
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, d := range docs {
			if searchScore("kitchn light 42", d) > 0 {
				n++
			}
		}
		if n == 0 {
			b.Fatal("nothing matched")
		}
	}
}
