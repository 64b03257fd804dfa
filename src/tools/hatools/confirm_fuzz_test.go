package hatools

import (
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/sensitive"
)

// FuzzYAMLTree: any text is read (or refused) without panicking and within the node budget, whatever
// its aliases and tags; and an unlock listed first is always found, whatever follows it, unless the
// text is refused (which the write confirmation counts as the worst case).
func FuzzYAMLTree(f *testing.F) {
	f.Add("x\n  target: !include door.yaml\n")
	f.Add("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n")
	f.Add("  action: light.turn_on\n")
	f.Add("---\naction: !secret svc\n---\n- service: lock.open\n")
	f.Fuzz(func(t *testing.T, rest string) {
		text := "- action: lock.unlock\n" + rest
		doc, err := yamlTree(text)
		if err != nil {
			return
		}
		docs, _ := doc.([]any)
		if len(docs) == 0 {
			return
		}
		first, _ := docs[0].([]any)
		if len(first) == 0 {
			return // the rest turned the document into something else (a scalar continuation)
		}
		for _, c := range sensitive.Calls(doc) {
			if strings.EqualFold(c.Service, "lock.unlock") {
				return
			}
		}
		if m, ok := first[0].(map[string]any); ok && m["action"] == "lock.unlock" {
			t.Fatalf("the unlock in %q was not found", text)
		}
	})
}
