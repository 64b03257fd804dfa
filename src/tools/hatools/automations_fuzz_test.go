package hatools

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzParseAutomationYAML(f *testing.F) {
	f.Add("alias: x\ntriggers:\n  - trigger: sun\n    event: sunset\nactions: []\n")
	f.Add("- id: '1'\n  alias: y\n")
	f.Add("1: one\ntrue: yes\n2026-01-01: date\nnested: {a: [1, 2.5, .inf, .nan]}\n")
	f.Add("a: &a [*a]\n")
	f.Add(strings.Repeat("[", 200))
	f.Fuzz(func(t *testing.T, text string) {
		m, err := parseAutomationYAML(text)
		if err != nil {
			return
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("result of %q does not encode: %v", text, err)
		}
	})
}

func TestParseAutomationYAML(t *testing.T) {
	cases := []struct {
		name, text, want, err string
	}{
		{"mapping", "alias: A\nmode: single\n", `{"alias":"A","mode":"single"}`, ""},
		{"one-item list", "- alias: B\n", `{"alias":"B"}`, ""},
		{"keys and times become text", "1: x\nat: 2026-01-01T10:00:00Z\n", `{"1":"x","at":"2026-01-01T10:00:00Z"}`, ""},
		{"two items", "- alias: A\n- alias: B\n", "", "holds 2 items"},
		{"scalar", "just text", "", "must be a mapping"},
		{"syntax", "alias: [", "", "not valid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := parseAutomationYAML(c.text)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(m); string(got) != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func FuzzCheckAutomationID(f *testing.F) {
	for _, s := range []string{"1718000000000", "automation.kitchen", "../x", "a?b", "a%2Fb", "", "tab\there"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if checkAutomationID("id", id) != nil {
			return
		}
		if id == "" || strings.ContainsAny(id, "/?#\\%") || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("accepted %q", id)
		}
	})
}

// FuzzPluralKeys: after pluralKeys an automation has no top-level singular trigger/condition/
// action key, loses no value, and a config giving both forms of a key is refused.
func FuzzPluralKeys(f *testing.F) {
	f.Add(`{"trigger":[{"platform":"sun"}],"action":[]}`)
	f.Add(`{"triggers":[],"trigger":[]}`)
	f.Add(`{"alias":"x","condition":{"condition":"state"},"conditions":null}`)
	f.Fuzz(func(t *testing.T, text string) {
		var cfg map[string]any
		if json.Unmarshal([]byte(text), &cfg) != nil || cfg == nil {
			return
		}
		before := len(cfg)
		both := false
		for _, n := range validated {
			_, p := cfg[n[0]]
			_, s := cfg[n[1]]
			both = both || p && s
		}
		err := pluralKeys(cfg, "config")
		if both != (err != nil) {
			t.Fatalf("%s: both forms %v, error %v", text, both, err)
		}
		if err != nil {
			return
		}
		for _, n := range validated {
			if _, ok := cfg[n[1]]; ok {
				t.Fatalf("%s: %s left", text, n[1])
			}
		}
		if len(cfg) != before {
			t.Fatalf("%s: %d keys became %d", text, before, len(cfg))
		}
	})
}
