package hatools

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzRegistryFields: whatever fields a model sends for a registry item, the check neither panics
// nor lets through a key the kind does not take, a create without its required fields, or a value
// that cannot be sent on.
func FuzzRegistryFields(f *testing.F) {
	kinds := []string{"area", "floor", "label", "category", "zone"}
	f.Add(uint8(0), true, `{"name": "Attic", "labels": "climate", "floor_id": "first_floor"}`)
	f.Add(uint8(1), false, `{"level": -1.5}`)
	f.Add(uint8(2), true, `{"name": "x", "color": null, "icon": "tree"}`)
	f.Add(uint8(4), true, `{"name": "School", "latitude": 91, "longitude": 4.9, "radius": -1, "passive": "yes"}`)
	f.Add(uint8(3), false, `{"name": null}`)
	f.Add(uint8(0), false, `{"aliases": [1, "a"], "bogus": {}}`)
	f.Fuzz(func(t *testing.T, k uint8, create bool, raw string) {
		kind := kinds[int(k)%len(kinds)]
		var fields map[string]any
		if json.Unmarshal([]byte(raw), &fields) != nil {
			return
		}
		out, err := registryFields(kind, create, fields)
		if err != nil {
			return
		}
		spec := registryKinds[kind]
		for key := range out {
			if !slices.Contains(spec.fields, key) {
				t.Fatalf("%s accepted the key %q", kind, key)
			}
		}
		if create {
			for _, key := range spec.required {
				if out[key] == nil {
					t.Fatalf("%s create without %s: %v", kind, key, out)
				}
			}
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("fields cannot be sent: %v", err)
		}
	})
}
