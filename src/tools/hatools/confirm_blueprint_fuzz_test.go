package hatools

import (
	"strings"
	"testing"
)

// FuzzSubstituteInputs: any blueprint text and input value either fails to parse or yields a tree
// in which no !input is left unresolved as its bare name (it becomes the value, the default, or a
// template the walk counts as unknown).
func FuzzSubstituteInputs(f *testing.F) {
	f.Add("blueprint:\n  input:\n    door: {default: lock.a}\nactions:\n  - action: lock.unlock\n    target: {entity_id: !input door}\n", "door", "lock.front_door")
	f.Add("blueprint:\n  input:\n    s:\n      input:\n        x: {default: 1}\nactions: !input act\n", "act", "x")
	f.Add("a: &a [*a]\n", "a", "b")
	f.Fuzz(func(t *testing.T, text, name, value string) {
		if len(text) > 4096 {
			return
		}
		out, err := substituteInputs(text, map[string]any{name: value})
		if err != nil {
			return
		}
		var walk func(v any, depth int)
		walk = func(v any, depth int) {
			if depth > 300 {
				t.Fatalf("tree nested deeper than the reader allows")
			}
			switch x := v.(type) {
			case map[string]any:
				for _, e := range x {
					walk(e, depth+1)
				}
			case []any:
				for _, e := range x {
					walk(e, depth+1)
				}
			case string:
				if strings.HasPrefix(x, "!input") {
					t.Fatalf("an !input tag survived: %q", x)
				}
			}
		}
		walk(out, 0)
	})
}
