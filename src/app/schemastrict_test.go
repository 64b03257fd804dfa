package app

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hamcp/hamcp/src/toolkit"
)

// jsonTypes are JSON Schema's type names.
var jsonTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// TestInputSchemasAreStrict: every input schema a session can be offered, in every tool mode (flat,
// search, read-only), is one a strict checker takes. It resolves as JSON Schema 2020-12; every
// subschema is an object, never the boolean true or false (draft-04 validators and OpenAPI 3.0
// converters refuse them), except additionalProperties false, which refuses unknown arguments; every
// type is a JSON type; every array says what its items are; required names properties; enums are
// non-empty and distinct; bounds are ordered; patterns compile.
func TestInputSchemasAreStrict(t *testing.T) {
	t.Parallel()
	reg := declared()
	seen := map[string]bool{}
	for _, m := range []struct {
		mode   toolkit.Mode
		filter toolkit.Filter
	}{
		{toolkit.ModeAll, toolkit.Filter{}},
		{toolkit.ModeSearch, toolkit.Filter{}},
		{toolkit.ModeAll, toolkit.Filter{ReadOnly: true}},
		{toolkit.ModeSearch, toolkit.Filter{ReadOnly: true}},
	} {
		tools, _ := reg.Surface(m.filter, m.mode, 0)
		for _, tl := range tools {
			def := tl.Definition()
			b, err := json.Marshal(def.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			if seen[string(b)] {
				continue
			}
			seen[string(b)] = true
			var s jsonschema.Schema
			if err := json.Unmarshal(b, &s); err != nil {
				t.Errorf("%s: %v", tl.Name(), err)
				continue
			}
			if _, err := s.Resolve(nil); err != nil {
				t.Errorf("%s (mode %s, read-only %v): does not resolve: %v", tl.Name(), m.mode, m.filter.ReadOnly, err)
			}
			var raw any
			_ = json.Unmarshal(b, &raw)
			for _, p := range strictProblems("", raw, false) {
				t.Errorf("%s (mode %s, read-only %v): %s", tl.Name(), m.mode, m.filter.ReadOnly, p)
			}
		}
	}
	if len(seen) < 60 {
		t.Fatalf("only %d schemas checked", len(seen))
	}
}

// strictProblems walks one schema (as decoded JSON) at path at; falseOK says that the boolean
// false is allowed here (additionalProperties).
func strictProblems(at string, v any, falseOK bool) []string {
	if b, ok := v.(bool); ok {
		if b || !falseOK {
			return []string{fmt.Sprintf("the boolean schema %v at %s/: write an object schema or leave it out", b, at)}
		}
		return nil
	}
	s, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("a schema that is not an object at %s/", at)}
	}
	var out []string
	bad := func(format string, args ...any) {
		out = append(out, fmt.Sprintf(format+" at %s/", append(args, at)...))
	}
	typ, _ := s["type"].(string)
	if _, ok := s["type"]; ok && !slices.Contains(jsonTypes, typ) {
		bad("type %v", s["type"])
	}
	if typ == "array" && s["items"] == nil {
		bad("an array without items")
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		out = append(out, strictProblems(at+"/"+name, p, false)...)
	}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, _ := r.(string); props[name] == nil {
				bad("required %v is not a property", r)
			}
		}
	}
	if items, ok := s["items"]; ok {
		out = append(out, strictProblems(at+"/items", items, false)...)
	}
	if ap, ok := s["additionalProperties"]; ok {
		out = append(out, strictProblems(at+"/additionalProperties", ap, true)...)
	}
	if enum, ok := s["enum"].([]any); ok {
		seen := map[string]bool{}
		for _, e := range enum {
			k := fmt.Sprint(e)
			if seen[k] {
				bad("enum value %v twice", e)
			}
			seen[k] = true
		}
		if len(enum) == 0 {
			bad("an empty enum")
		}
	}
	for _, pair := range [][2]string{{"minimum", "maximum"}, {"minLength", "maxLength"}, {"minItems", "maxItems"}} {
		lo, lok := s[pair[0]].(float64)
		hi, hok := s[pair[1]].(float64)
		if lok && hok && lo > hi {
			bad("%s %v over %s %v", pair[0], lo, pair[1], hi)
		}
	}
	if p, ok := s["pattern"].(string); ok {
		if _, err := regexp.Compile(p); err != nil {
			bad("pattern %q: %v", p, err)
		}
	}
	return out
}
