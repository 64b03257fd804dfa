package hass

import (
	"encoding/json"
	"fmt"
	"strings"
)

// wsCommand is one WebSocket command: its voluptuous-like schema, whether
// it needs admin, and its handler.
type wsCommand struct {
	admin         bool
	needsRecorder bool
	schema        schema
	handle        func(c *wsConn, id int64, m map[string]any)
}

type schema []sfield

// sfield kinds: str, int, number, bool, dict, list, strlist (a string or a
// list of strings), any.
type sfield struct {
	name string
	req  bool
	kind string
	opts []string
}

type invalid struct{ msg string }

func (e *invalid) Error() string { return e.msg }

// check validates a message like the command's schema would, with
// humanize_error's "… @ data['x']. Got <value>" text.
func (s schema) check(m map[string]any) error {
	known := map[string]sfield{}
	for _, f := range s {
		known[f.name] = f
	}
	for k, v := range m {
		if k == "id" || k == "type" {
			continue
		}
		f, ok := known[k]
		if !ok {
			return &invalid{fmt.Sprintf("extra keys not allowed @ data['%s']. Got %s", k, pyRepr(fromGo(v)))}
		}
		if msg := kindError(f, v); msg != "" {
			return &invalid{fmt.Sprintf("%s for dictionary value @ data['%s']. Got %s", msg, k, pyRepr(fromGo(v)))}
		}
	}
	for _, f := range s {
		if _, ok := m[f.name]; f.req && !ok {
			return &invalid{fmt.Sprintf("required key not provided @ data['%s']. Got None", f.name)}
		}
	}
	return nil
}

func kindError(f sfield, v any) string {
	switch f.kind {
	case "str":
		s, ok := v.(string)
		if !ok {
			return "expected str"
		}
		if len(f.opts) > 0 {
			for _, o := range f.opts {
				if o == s {
					return ""
				}
			}
			return "value must be one of " + pyRepr(strsToList(f.opts))
		}
	case "int":
		n, ok := v.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			return "expected int"
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			return "expected float"
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return "expected bool"
		}
	case "dict":
		if _, ok := v.(map[string]any); !ok {
			return "expected a dictionary"
		}
	case "list":
		if _, ok := v.([]any); !ok {
			return "expected list"
		}
	case "strlist":
		switch x := v.(type) {
		case string:
		case []any:
			for _, e := range x {
				if _, ok := e.(string); !ok {
					return "expected str"
				}
			}
		default:
			return "expected list"
		}
	}
	return ""
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func boolOr(m map[string]any, k string, def bool) bool {
	if b, ok := m[k].(bool); ok {
		return b
	}
	return def
}

func strList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func intOf(v any) int64 {
	if n, ok := v.(json.Number); ok {
		i, _ := n.Int64()
		return i
	}
	return 0
}
