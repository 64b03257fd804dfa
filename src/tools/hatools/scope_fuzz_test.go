package hatools

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzScopeArgs: whatever arguments a model sends, the scope check never panics, never lets a
// hidden entity id through in an entity field or text, and the scrubbed text never keeps one.
func FuzzScopeArgs(f *testing.F) {
	for _, s := range []string{
		`{"entity_id":"lock.front_door"}`, `{"entity_id":["light.kitchen","lock.front_door"]}`,
		`{"data":{"target":{"area_id":"hallway"}},"message":"see lock.front_door."}`,
		`{"config":{"actions":[{"action":"lock.unlock","target":{"entity_id":"lock.front_door"}}]}}`,
		`{"template":"{{ states('lock.front_door') }}"}`, `{"entity_id":"all"}`, `{"entity_id":"light.*"}`,
		`{"lock.front_door":1}`, `{"text":"..lock.front_door..lock.front_door_2"}`,
	} {
		f.Add(s)
	}
	v := &scopeView{exposed: map[string]bool{"light.kitchen": true}, known: map[string]bool{"lock.front_door": true, "light.kitchen": true}}
	f.Fuzz(func(t *testing.T, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil {
			return
		}
		err := v.checkArgs(args)
		b, _ := json.Marshal(args)
		if err == nil && containsToken(string(b), "lock.front_door") {
			t.Fatalf("passed arguments naming a hidden entity: %s", b)
		}
		out := v.scrub(raw)
		if containsToken(out, "lock.front_door") {
			t.Fatalf("scrub kept a hidden id: %q", out)
		}
		cleaned, cerr := v.clean(args)
		if cerr == nil {
			cb, _ := json.Marshal(cleaned)
			if containsToken(string(cb), "lock.front_door") {
				t.Fatalf("clean kept a hidden id: %s", cb)
			}
		}
	})
}

// containsToken reports whether id appears in s as a whole domain.object token.
func containsToken(s, id string) bool {
	for i := strings.Index(s, id); i >= 0; {
		end := i + len(id)
		if (i == 0 || !idByte(s[i-1])) && (end == len(s) || !idByte(s[end])) {
			return true
		}
		next := strings.Index(s[i+1:], id)
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// BenchmarkScopeClean: a 2,000-entity answer (ha_get_states detail=full sized) through the
// output filter, half of it hidden.
func BenchmarkScopeClean(b *testing.B) {
	v := &scopeView{exposed: map[string]bool{}, known: map[string]bool{}}
	items := make([]map[string]any, 0, 2000)
	for i := range 2000 {
		id := "sensor.s" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "_" + strings.TrimSpace(string(rune('0'+i%10)))
		id += "_" + itoa(i)
		v.known[id] = true
		if i%2 == 0 {
			v.exposed[id] = true
		}
		items = append(items, map[string]any{"entity_id": id, "state": "21.5", "name": "Sensor " + id,
			"attributes": map[string]any{"friendly_name": "Sensor", "unit_of_measurement": "°C", "note": "near " + id}})
	}
	out := map[string]any{"items": items, "total": len(items)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.clean(out); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
