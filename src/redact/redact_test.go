package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"code", true}, {"lockCodes", true}, {"lock_codes", true}, {"usercode", true}, {"userCode", true},
		{"pin", true}, {"PIN", true}, {"password", true}, {"psk", true}, {"wifi_password", true},
		{"token", true}, {"access_token", true}, {"api_key", true}, {"apiKey", true},
		{"code_format", false}, {"code_arm_required", false}, {"codeChanged", false}, {"lastCodeName", false},
		{"maxCodes", false}, {"codeLength", false}, {"changed_by", false}, {"brightness", false}, {"", false},
	} {
		if got := Key(tc.name); got != tc.want {
			t.Errorf("Key(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAttribute(t *testing.T) {
	for _, tc := range []struct {
		name, attr, raw, want string
	}{
		{"lockCodes as a JSON string", "lockCodes", `"{\"1\":{\"name\":\"Family\",\"code\":\"1234\"}}"`,
			`"{\"1\":{\"code\":\"[hidden]\",\"name\":\"Family\"}}"`},
		{"lockCodes as an object", "lockCodes", `{"1":{"name":"Family","code":"1234"},"2":{"name":"Guest","code":5678}}`,
			`{"1":{"code":"[hidden]","name":"Family"},"2":{"code":"[hidden]","name":"Guest"}}`},
		{"lockCodes slot to code", "lockCodes", `{"1":"1234"}`, `{"1":"[hidden]"}`},
		{"lockCodes encrypted", "lockCodes", `"U2FsdGVkX19xyz"`, `"[hidden]"`},
		{"lockCodes empty", "lockCodes", `"{}"`, `"{}"`},
		{"lockCodes not JSON", "lockCodes", `{"1":`, `"[hidden]"`},
		{"no codes", "lockCodes", `null`, `null`},
		{"a code attribute", "usercode", `"4321"`, `"[hidden]"`},
		{"a numeric code", "code", `4321`, `"[hidden]"`},
		{"a harmless attribute", "level", `"1234"`, `"1234"`},
		{"a harmless number", "battery", `88`, `88`},
		{"secret inside another object", "data", `{"users":[{"name":"A","pin":"9999"}]}`, `{"users":[{"name":"A","pin":"[hidden]"}]}`},
		{"token in a URL", "image", `"/api/camera_proxy/camera.x?token=abcdef123"`, `"/api/camera_proxy/camera.x?token=[hidden]"`},
		{"harmless object kept as sent", "color", `{ "hue": 1 }`, `{ "hue": 1 }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Attribute(tc.attr, []byte(tc.raw))); got != tc.want {
				t.Errorf("Attribute(%q, %s) = %s, want %s", tc.attr, tc.raw, got, tc.want)
			}
		})
	}
}

func TestMap(t *testing.T) {
	in := map[string]any{
		"domain": "alarm_control_panel", "service": "alarm_disarm",
		"service_data": map[string]any{"entity_id": []any{"alarm_control_panel.home"}, "code": "1234"},
		"list":         []any{map[string]any{"access_token": "tok"}, "x"},
	}
	got := Map(in)
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), "1234") || strings.Contains(string(b), "tok\"") {
		t.Fatalf("Map left a secret: %s", b)
	}
	if !strings.Contains(string(b), `"alarm_control_panel.home"`) || !strings.Contains(string(b), `"alarm_disarm"`) {
		t.Fatalf("Map lost harmless data: %s", b)
	}
	if in["service_data"].(map[string]any)["code"] != "1234" {
		t.Fatal("Map changed its input")
	}
	plain := map[string]any{"a": 1}
	if Map(plain)["a"] != 1 || Map(nil) != nil {
		t.Fatal("Map of harmless data changed it")
	}
}

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		want    []string
	}{
		{"setCode", []string{"3", "1234", "Guest"}, []string{"3", Hidden, "Guest"}},
		{"deleteCode", []string{"3"}, []string{"3"}},
		{"setCodeLength", []string{"4"}, []string{"4"}},
		{"setCodes", []string{`{"1":"1234"}`}, []string{Hidden}},
		{"disarm", []string{"1234"}, []string{Hidden}},
		{"setPin", []string{"1234"}, []string{Hidden}},
		{"setLevel", []string{"50", "2"}, []string{"50", "2"}},
		{"setCode", []string{"3", ""}, []string{"3", ""}},
	} {
		got := Args(tc.command, tc.args)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Args(%q, %q) = %q, want %q", tc.command, tc.args, got, tc.want)
		}
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`unlocked with code=1234 at the door`, `unlocked with code=[hidden] at the door`},
		{`{"code":"1234","entity_id":"lock.x"}`, `{"code":"[hidden]","entity_id":"lock.x"}`},
		{`value {\"1\":{\"name\":\"Family\",\"code\":\"1234\"}}`, `value {\"1\":{\"name\":\"Family\",\"code\":\"[hidden]\"}}`},
		{`"lockCodes":"{\"1\":{\"code\":\"1234\"}}" rest`, `"lockCodes":"[hidden]" rest`},
		{`GET /api?access_token=abcdef&x=1`, `GET /api?access_token=[hidden]&x=1`},
		{`pin: 0000`, `pin: [hidden]`},
		{`Rule "Lights" triggered by device 12 switch on`, `Rule "Lights" triggered by device 12 switch on`},
		{`code_format: number`, `code_format: number`},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// codesOf lists the code values of a valid lockCodes text, if it is one: slot -> {code}.
func codesOf(s string) []string {
	var m map[string]map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		var inner string
		if json.Unmarshal([]byte(s), &inner) != nil || json.Unmarshal([]byte(inner), &m) != nil {
			return nil
		}
	}
	var out []string
	for _, e := range m {
		switch c := e["code"].(type) {
		case string:
			out = append(out, c)
		case float64:
			b, _ := json.Marshal(c)
			out = append(out, string(b))
		}
	}
	return out
}

// FuzzLockCodes: whatever a hub sends as lockCodes, redacting it never panics, and no code of a
// valid map survives (unless the same text is also a slot number or a name, which stay).
func FuzzLockCodes(f *testing.F) {
	for _, s := range []string{
		`{"1":{"name":"Family","code":"1234"}}`, `"{\"1\":{\"name\":\"Family\",\"code\":\"1234\"}}"`,
		`{}`, ``, `null`, `{"1":`, `{"1":{"name":"a","code":1234,"x":{"code":[1,2]}}}`, `[{"code":"9"}]`,
		`{"1":{"name":"Fam\"ily","code":"12\\34"}}`, `U2FsdGVkX1+abc==`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		attr := string(Attribute("lockCodes", []byte(s)))
		for _, code := range codesOf(s) {
			if len(code) < 3 || strings.Contains(Hidden, code) {
				continue
			}
			var kept strings.Builder
			var m map[string]map[string]any
			_ = json.Unmarshal([]byte(s), &m)
			for k, e := range m {
				kept.WriteString(k + "\x00")
				if n, ok := e["name"].(string); ok {
					kept.WriteString(n + "\x00")
				}
				for field := range e { // field names stay: {"00000000": …} is a key, not a code
					kept.WriteString(field + "\x00")
				}
			}
			if strings.Contains(kept.String(), code) || strings.Contains(`{}":,`, code) {
				continue
			}
			if strings.Contains(attr, code) {
				t.Fatalf("Attribute(lockCodes, %q) = %q still holds code %q", s, attr, code)
			}
		}
		_ = Text(s)
	})
}

// FuzzText: Text never panics and leaves no quoted code of a JSON object behind.
func FuzzText(f *testing.F) {
	for _, s := range []string{`{"code":"1234"}`, `code=1234`, `?token=abc`, `"lockCodes":"{\"1\":{}}"`, `pin:`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Text(s)
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return
		}
		c, ok := m["code"].(string)
		if !ok || len(c) < 4 || strings.ContainsAny(c, `\"`) {
			return
		}
		var rest strings.Builder
		for k, v := range m {
			rest.WriteString(k)
			if k != "code" {
				b, _ := json.Marshal(v)
				rest.Write(b)
			}
		}
		if strings.Contains(rest.String(), c) || strings.Contains(Hidden, c) {
			return
		}
		if strings.Contains(got, c) {
			t.Fatalf("Text(%q) = %q still holds %q", s, got, c)
		}
	})
}
