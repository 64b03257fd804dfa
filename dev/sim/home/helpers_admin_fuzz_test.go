package home

import (
	"encoding/json"
	"testing"
)

// FuzzValidateHelper: any config a client sends to <domain>/create is refused with an error or
// yields an item whose entity state can be written (no panic on any accepted shape).
func FuzzValidateHelper(f *testing.F) {
	f.Add(3, `{"name": "Night", "min": 12, "max": 22, "step": 0.5}`)
	f.Add(4, `{"name": "Mode", "options": ["a", "b"], "initial": "b"}`)
	f.Add(8, `{"name": "Heat", "monday": [{"from": "06:00", "to": "24:00:00"}, {"from": "01:00", "to": "02:00"}]}`)
	f.Add(7, `{"name": "Tea", "duration": {"minutes": 4}}`)
	f.Add(6, `{"name": "Cups", "initial": "3", "minimum": null, "step": 1.5}`)
	h, err := New(Options{Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which int, body string) {
		domain := HelperDomains[(which%len(HelperDomains)+len(HelperDomains))%len(HelperDomains)]
		var data map[string]any
		if json.Unmarshal([]byte(body), &data) != nil || data == nil {
			return
		}
		cfg, err := validateHelper(domain, data)
		if err != nil {
			return
		}
		if name, _ := cfg["name"].(string); name == "" {
			t.Fatalf("accepted a helper without a name: %v", cfg)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, attrs := h.helperState(domain, cfg, nil); attrs["editable"] != true {
			t.Fatalf("%s %v: a stored helper must say it is editable", domain, cfg)
		}
	})
}
