package hass_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// asJSON re-encodes a decoded body, for substring checks.
func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRESTConfigFlows(t *testing.T) {
	const base = "/api/config/config_entries"
	start := api(t, "POST", base+"/flow", `{"handler":"hue"}`)
	if start.status != 200 {
		t.Fatalf("start: %d %s", start.status, start.body)
	}
	form := start.json(t).(map[string]any)
	id, _ := form["flow_id"].(string)
	want := `{"data_schema":[{"name":"host","required":true,"type":"string"}],"description_placeholders":null,"errors":null,"flow_id":"` + id +
		`","handler":"hue","last_step":null,"preview":null,"step_id":"manual","type":"form"}`
	if got := asJSON(form); got != want || len(id) != 32 {
		t.Fatalf("first step:\n got %s\nwant %s", got, want)
	}
	steps := []struct {
		name, method, path, body string
		status                   int
		want                     string // "|" separates texts that must all appear
	}{
		{"GET repeats the step", "GET", "/flow/" + id, "", 200, `"step_id":"manual"|"errors":null`},
		{"bad host", "POST", "/flow/" + id, `{"host":"10.9.9.9"}`, 200, `"errors":{"base":"cannot_connect"}|"step_id":"manual"`},
		{"missing field", "POST", "/flow/" + id, ``, 400, `{"errors":{"host":"required key not provided"}}`},
		{"extra field", "POST", "/flow/" + id, `{"host":"x","port":1}`, 400, `{"errors":{"base":["extra keys not allowed @ data['port']"]}}`},
		{"wrong type", "POST", "/flow/" + id, `{"host":1}`, 400, `{"errors":{"host":"expected str"}}`},
		{"not an object", "POST", "/flow/" + id, `[1]`, 400, `{"message":"Message format incorrect: expected dict"}`},
		{"bad JSON", "POST", "/flow/" + id, `{`, 400, `{"message":"Invalid JSON."}`},
		{"options view does not know it", "GET", "/options/flow/" + id, "", 404, `{"message":"Invalid flow specified"}`},
		{"bridge found", "POST", "/flow/" + id, `{"host":"192.168.1.21"}`, 200, `"step_id":"link"|"data_schema":[]`},
		{"linked", "POST", "/flow/" + id, `{}`, 200, `"type":"create_entry"|"title":"Hue Bridge ECB5FAFFFE0A1B2C"|"result":{"created_at"|"minor_version":1|"version":1|"subentries":[]`},
		{"finished", "GET", "/flow/" + id, "", 404, `{"message":"Invalid flow specified"}`},
		{"unknown handler", "POST", "/flow", `{"handler":"wibble"}`, 404, `{"message":"Invalid handler specified"}`},
		{"no handler", "POST", "/flow", `{"show_advanced_options":true}`, 400, `required key not provided @ data['handler']`},
		{"handler not a string", "POST", "/flow", `{"handler":3}`, 400, `expected str for dictionary value @ data['handler']`},
		{"GET the index", "GET", "/flow", "", 405, `405: Method Not Allowed`},
		{"single instance", "POST", "/flow", `{"handler":"sun"}`, 200, `"type":"abort"|"reason":"single_instance_allowed"`},
		{"options of an unknown entry", "POST", "/options/flow", `{"handler":"nope"}`, 500, `Server got itself in trouble`},
		{"abort unknown", "DELETE", "/flow/deadbeef", "", 404, `{"message":"Invalid flow specified"}`},
		{"reload unknown", "POST", "/entry/nope/reload", "", 404, `{"message":"Invalid entry specified"}`},
		{"delete unknown", "DELETE", "/entry/nope", "", 404, `{"message":"Invalid entry specified"}`},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r := api(t, s.method, base+s.path, s.body)
			if r.status != s.status {
				t.Fatalf("%d, want %d: %s", r.status, s.status, r.body)
			}
			for _, w := range strings.Split(s.want, "|") {
				if !strings.Contains(string(r.body), w) {
					t.Fatalf("%s lacks %s", r.body, w)
				}
			}
		})
	}
	entries := api(t, "GET", base+"/entry?domain=hue", "").json(t).([]any)
	var created string
	for _, e := range entries {
		if m := e.(map[string]any); m["title"] == "Hue Bridge ECB5FAFFFE0A1B2C" {
			created = m["entry_id"].(string)
		}
	}
	if created == "" {
		t.Fatalf("the new entry is not listed: %v", entries)
	}
	t.Run("options flow", func(t *testing.T) {
		f := api(t, "POST", base+"/options/flow", `{"handler":"`+created+`"}`).json(t).(map[string]any)
		if asJSON(f["data_schema"]) != `[{"default":false,"name":"allow_hue_groups","optional":true,"type":"boolean"},{"default":false,"name":"allow_unreachable","optional":true,"type":"boolean"}]` {
			t.Fatalf("options form: %v", f)
		}
		oid := f["flow_id"].(string)
		if r := api(t, "POST", base+"/options/flow/"+oid, `{"allow_hue_groups":"yes"}`); r.status != 400 || !strings.Contains(string(r.body), `"allow_hue_groups":"expected bool"`) {
			t.Fatalf("bad option: %d %s", r.status, r.body)
		}
		done := api(t, "POST", base+"/options/flow/"+oid, `{"allow_hue_groups":true}`).json(t).(map[string]any)
		if asJSON(done) != `{"description":null,"description_placeholders":null,"flow_id":"`+oid+`","handler":"`+created+`","title":"","type":"create_entry"}` {
			t.Fatalf("options saved: %v", done)
		}
		again := api(t, "POST", base+"/options/flow", `{"handler":"`+created+`"}`).json(t).(map[string]any)
		if !strings.Contains(asJSON(again["data_schema"]), `{"default":true,"name":"allow_hue_groups"`) {
			t.Fatalf("the saved option is not the default: %v", again)
		}
		if r := api(t, "DELETE", base+"/options/flow/"+again["flow_id"].(string), ""); r.status != 200 || string(r.body) != `{"message":"Flow aborted"}` {
			t.Fatalf("abort: %d %s", r.status, r.body)
		}
	})
	t.Run("non-admin", func(t *testing.T) {
		if r := do(t, home.URL(), "POST", base+"/flow", home.UserToken(), `{"handler":"hue"}`); r.status != 401 {
			t.Fatalf("a user started a flow: %d", r.status)
		}
		if r := do(t, home.URL(), "DELETE", base+"/entry/"+created, home.UserToken(), ""); r.status != 401 {
			t.Fatalf("a user deleted an entry: %d", r.status)
		}
	})
	if r := api(t, "POST", base+"/entry/"+created+"/reload", ""); r.status != 200 || string(r.body) != `{"require_restart":false}` {
		t.Fatalf("reload: %d %s", r.status, r.body)
	}
	if r := api(t, "DELETE", base+"/entry/"+created, ""); r.status != 200 || string(r.body) != `{"require_restart":false}` {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := api(t, "DELETE", base+"/entry/"+created, ""); r.status != 404 {
		t.Fatalf("deleted twice: %d %s", r.status, r.body)
	}
}

func TestWSConfigEntryDisable(t *testing.T) {
	w := dialAuthed(t, home.Token())
	var shelly string
	for _, e := range w.ok(map[string]any{"id": 1, "type": "config_entries/get", "domain": "shelly"}).([]any) {
		shelly = e.(map[string]any)["entry_id"].(string)
	}
	if st := api(t, "GET", "/api/states/switch.coffee_machine", ""); st.status != 200 {
		t.Fatalf("before: %d", st.status)
	}
	cases := []struct {
		name string
		msg  map[string]any
		code string
		want string
	}{
		{"disable", map[string]any{"entry_id": shelly, "disabled_by": "user"}, "", `{"require_restart":false}`},
		{"again", map[string]any{"entry_id": shelly, "disabled_by": "user"}, "", `{"require_restart":false}`},
		{"integration is no disabler", map[string]any{"entry_id": shelly, "disabled_by": "integration"}, "invalid_format", "not a valid value for dictionary value @ data['disabled_by']. Got 'integration'"},
		{"missing disabled_by", map[string]any{"entry_id": shelly}, "invalid_format", "required key not provided @ data['disabled_by']"},
		{"unknown entry", map[string]any{"entry_id": "nope", "disabled_by": nil}, "not_found", "Config entry not found"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.msg["id"], c.msg["type"] = 10+i, "config_entries/disable"
			m, _ := w.cmd(c.msg)
			if c.code != "" {
				if errCode(m) != c.code || !strings.Contains(asJSON(m), c.want) {
					t.Fatalf("%v: %v", c.msg, m)
				}
				return
			}
			if asJSON(m["result"]) != c.want {
				t.Fatalf("%v: %v", c.msg, m)
			}
		})
	}
	entry := w.ok(map[string]any{"id": 20, "type": "config_entries/get", "domain": "shelly"}).([]any)[0].(map[string]any)
	if entry["disabled_by"] != "user" || entry["state"] != "not_loaded" {
		t.Fatalf("disabled entry: %v", entry)
	}
	if st := api(t, "GET", "/api/states/switch.coffee_machine", ""); st.status != 404 {
		t.Fatalf("a disabled entry's entity kept its state: %d", st.status)
	}
	reg := w.ok(map[string]any{"id": 21, "type": "config/entity_registry/get", "entity_id": "switch.coffee_machine"}).(map[string]any)
	if reg["disabled_by"] != "config_entry" {
		t.Fatalf("registry: %v", reg["disabled_by"])
	}
	w.ok(map[string]any{"id": 22, "type": "config_entries/disable", "entry_id": shelly, "disabled_by": nil})
	entry = w.ok(map[string]any{"id": 23, "type": "config_entries/get", "domain": "shelly"}).([]any)[0].(map[string]any)
	if entry["disabled_by"] != nil || entry["state"] != "loaded" {
		t.Fatalf("enabled entry: %v", entry)
	}
	if st := api(t, "GET", "/api/states/switch.coffee_machine", ""); st.status != 200 {
		t.Fatalf("the entity did not come back: %d", st.status)
	}
}
