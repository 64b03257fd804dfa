package hass

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzWSMessage feeds arbitrary frames to the guards a WebSocket message
// passes: JSON decoding, the auth schema and every command's schema.
func FuzzWSMessage(f *testing.F) {
	for _, s := range []string{`{"id":1,"type":"ping"}`, `{"type":"auth","access_token":"x"}`, `{"id":2,"type":"call_service","domain":"light","service":"turn_on","target":{"entity_id":["a.b"]}}`,
		`[{"id":1},{"id":"x"}]`, `{"id":3,"type":"render_template","template":"{{ 1 }}","timeout":1.5}`, `{"id":4,"type":"subscribe_entities","entity_ids":"light.a"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame string) {
		var v any
		if decodeJSON([]byte(frame), &v) != nil {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		_ = authSchemaError(m)
		for name, cmd := range wsCommands {
			if err := cmd.schema.check(m); err != nil && err.Error() == "" {
				t.Fatalf("%s: empty schema error", name)
			}
		}
	})
}

// FuzzRouter checks arbitrary paths never crash routing and unknown ones
// get aiohttp's 404/405 text.
func FuzzRouter(f *testing.F) {
	rt := &router{notFound: "404: Not Found"}
	rt.handle("GET", "/api/states/{entity_id}", func(w http.ResponseWriter, r *http.Request, p params) {
		if p["entity_id"] == "" {
			w.WriteHeader(500) // an empty parameter must never match
			return
		}
		w.WriteHeader(200)
	})
	rt.handle("POST", "/core/api/{rest:*}", func(w http.ResponseWriter, r *http.Request, p params) { w.WriteHeader(200) })
	for _, s := range []string{"/api/states/light.x", "/api/states/", "/core/api/a/b/c", "/api/states/%zz", "//", "/api/states/a/b"} {
		f.Add("GET", s)
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		req, err := http.NewRequest(method, "http://x"+path, nil)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 404, 405:
		default:
			t.Fatalf("%s %s: status %d", method, path, rec.Code)
		}
	})
}

// FuzzRefuseSupervisorCommands: whatever frame an add-on sends through the Supervisor's
// proxy, no supervisor/* or hassio/* command reaches core, every one taken out gets an error
// result, and what is forwarded is the rest.
func FuzzRefuseSupervisorCommands(f *testing.F) {
	for _, s := range []string{`{"id":1,"type":"supervisor/api","endpoint":"/addons","method":"get"}`, `{"id":1,"type":"get_states"}`,
		`[{"id":1,"type":"ping"},{"id":2,"type":"hassio/update/addon"}]`, `[{"id":1,"type":"supervisor/subscribe"}]`, `not json`, `[]`, `{"type":7}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame string) {
		rest, refused := refuseSupervisorCommands([]byte(frame))
		for _, r := range refused {
			var m map[string]any
			if decodeJSON(r, &m) != nil || m["success"] != false || m["type"] != "result" {
				t.Fatalf("refusal %s", r)
			}
		}
		if rest == nil {
			if len(refused) == 0 {
				t.Fatalf("%q: nothing forwarded and nothing refused", frame)
			}
			return
		}
		var v any
		if decodeJSON(rest, &v) != nil {
			if len(refused) > 0 {
				t.Fatalf("%q: forwarded a frame that is not JSON after refusing", frame)
			}
			return
		}
		items, isList := v.([]any)
		if !isList {
			items = []any{v}
		}
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				if typ, _ := m["type"].(string); strings.HasPrefix(typ, "supervisor/") || strings.HasPrefix(typ, "hassio/") {
					t.Fatalf("%q: forwarded %s", frame, typ)
				}
			}
		}
	})
}
