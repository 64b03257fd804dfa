package home

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzValidateFlowInput: any JSON object against a form's schema either validates into the
// schema's fields with their types, or fails with errors for its own fields and "base".
func FuzzValidateFlowInput(f *testing.F) {
	fields := []flowField{{name: "host", typ: "string", required: true}, {name: "port", typ: "integer", required: true, def: int64(80)},
		{name: "protocol", typ: "select", required: true, def: "rtsp", options: []string{"rtsp", "rtmp", "flv"}}, {name: "keep", typ: "boolean", def: false}}
	f.Add(`{"host":"192.168.1.70","port":"80"}`)
	f.Add(`{"host":1,"port":1.5e300,"extra":null}`)
	f.Add(`{"protocol":"hls","keep":"yes"}`)
	f.Fuzz(func(t *testing.T, body string) {
		dec := json.NewDecoder(strings.NewReader(body))
		dec.UseNumber()
		var in map[string]any
		if dec.Decode(&in) != nil || in == nil {
			return
		}
		out, errs := validateFlowInput(fields, in)
		if len(errs) > 0 {
			for k := range errs {
				if k != "base" && k != "host" && k != "port" && k != "protocol" && k != "keep" {
					t.Fatalf("error under an unknown key %q: %v", k, errs)
				}
			}
			return
		}
		if _, ok := out["host"].(string); !ok || len(out) != len(fields) {
			t.Fatalf("validated input lacks a field: %v", out)
		}
		if _, ok := out["port"].(int64); !ok {
			t.Fatalf("port is not an int: %#v", out["port"])
		}
	})
}
