package hatools

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzEditorConfig feeds model-written YAML through what ha_manage_scripts and ha_manage_scenes do
// with it before Home Assistant sees it: parse, unwrap, normalise, name.
func FuzzEditorConfig(f *testing.F) {
	f.Add("say_hi:\n  alias: Say hi\n  sequence:\n    action: light.turn_on\n", "Say hi")
	f.Add("- id: '1'\n  name: Dinner\n  entities:\n    Light.X: true\n", "Café  lights!")
	f.Add("name: N\nentities:\n  - entity_id: light.a\n    state: false\n  - 3\n", "__")
	f.Add("a: &a [*a]\n", "ß")
	f.Add(strings.Repeat("{a: ", 100), "日本")
	f.Fuzz(func(t *testing.T, text, alias string) {
		for _, body := range []string{"sequence", "entities"} {
			cfg, _, err := parseItemYAML(text, body)
			if err != nil {
				continue
			}
			normaliseScript(cfg)
			normaliseScene(cfg)
			if _, err := json.Marshal(cfg); err != nil {
				t.Fatalf("%q does not encode after normalising: %v", text, err)
			}
		}
		// A slug is a key unless it is longer than a key may be (newScriptKey then asks for script_id).
		if key := haSlugify(alias); key != "" && len(key) <= 255 && (!isScriptKey(key) || haSlugify(key) != key) {
			t.Fatalf("slug %q of %q is not a script key", key, alias)
		}
	})
}

func TestEditorConfigParse(t *testing.T) {
	cases := []struct {
		name, text, body, want, key, err string
	}{
		{"script mapping", "alias: A\nsequence: []\n", "sequence", `{"alias":"A","sequence":[]}`, "", ""},
		{"scripts.yaml entry", "a_b:\n  sequence:\n    action: x.y\n", "sequence", `{"sequence":{"action":"x.y"}}`, "a_b", ""},
		{"scenes.yaml item", "- id: '1'\n  name: N\n  entities: {}\n", "entities", `{"entities":{},"id":"1","name":"N"}`, "", ""},
		{"two items", "- a: 1\n- b: 2\n", "entities", "", "", "holds 2 items"},
		{"scalar", "just text", "sequence", "", "", "must be a mapping"},
		{"bad YAML", "a: [", "sequence", "", "", "not valid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, key, err := parseItemYAML(c.text, c.body)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			b, _ := json.Marshal(cfg)
			if err != nil || string(b) != c.want || key != c.key {
				t.Fatalf("got %s %q %v", b, key, err)
			}
		})
	}
	for alias, want := range map[string]string{"Good night": "good_night", "  Café — lights! ": "cafe_lights", "ÆSIR 2": "aesir_2", "日本": "", "a__b": "a_b"} {
		if got := haSlugify(alias); got != want {
			t.Errorf("slug of %q: %q, want %q", alias, got, want)
		}
	}
	cfg := map[string]any{"entities": []any{map[string]any{"entity_id": "Light.A", "state": true}, map[string]any{"entity_id": "light.b", "state": "on", "brightness": 3.0}}}
	normaliseScene(cfg)
	if b, _ := json.Marshal(cfg); string(b) != `{"entities":{"light.a":"on","light.b":{"brightness":3,"state":"on"}}}` {
		t.Errorf("normalised scene: %s", b)
	}
}
