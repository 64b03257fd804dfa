package hubitat

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValueForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw    string
		str    string
		num    float64
		isNum  bool
		isNull bool
	}{
		{`"21.5"`, "21.5", 21.5, true, false},
		{`21.5`, "21.5", 21.5, true, false},
		{`" 40 "`, " 40 ", 40, true, false},
		{`"1e3"`, "1e3", 1000, true, false},
		{`null`, "", 0, false, true},
		{``, "", 0, false, true},
		{`"on"`, "on", 0, false, false},
		{`""`, "", 0, false, false},
		{`true`, "true", 0, false, false},
		{`"NaN"`, "NaN", 0, false, false},
		{`"Infinity"`, "Infinity", 0, false, false},
		{`{"1": {"name": "Family"}}`, `{"1":{"name":"Family"}}`, 0, false, false},
		{`[1, 2]`, `[1,2]`, 0, false, false},
	}
	for _, tt := range tests {
		v := Value{raw: json.RawMessage(tt.raw)}
		if got := v.String(); got != tt.str {
			t.Errorf("%s: String %q, want %q", tt.raw, got, tt.str)
		}
		f, ok := v.Float()
		if ok != tt.isNum || f != tt.num {
			t.Errorf("%s: Float %v %v, want %v %v", tt.raw, f, ok, tt.num, tt.isNum)
		}
		if v.IsNull() != tt.isNull {
			t.Errorf("%s: IsNull %v", tt.raw, v.IsNull())
		}
	}
}

func TestIDForms(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{`12`: "12", `"12"`: "12", `12.0`: "12", `null`: "", `-3`: "", `1.5`: "", `"x"`: "x", `{}`: ""} {
		if got := idString(json.RawMessage(raw)); got != want {
			t.Errorf("idString(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestParseEventEnvelopes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       Event
	}{
		{"eventsocket device", `{"source":"DEVICE","name":"switch","displayName":"Lamp","value":"on","unit":null,"deviceId":12,"hubId":0,"installedAppId":0,"descriptionText":"Lamp is on"}`,
			Event{Source: "DEVICE", Name: "switch", DeviceID: "12", DisplayName: "Lamp", DescriptionText: "Lamp is on"}},
		{"eventsocket location", `{"source":"LOCATION","name":"mode","value":"Night","deviceId":0}`,
			Event{Source: "LOCATION", Name: "mode"}},
		{"postURL device", `{"content":{"name":"level","value":"40","displayName":"Lamp","deviceId":"12","unit":"%","type":null,"data":null}}`,
			Event{Name: "level", DeviceID: "12", DisplayName: "Lamp", Unit: "%"}},
		{"postURL location", `{"content":{"name":"systemStart","value":"true","deviceId":null}}`,
			Event{Name: "systemStart"}},
	}
	for _, tt := range tests {
		e, err := ParseEvent([]byte(tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if e.Source != tt.want.Source || e.Name != tt.want.Name || e.DeviceID != tt.want.DeviceID || e.DisplayName != tt.want.DisplayName ||
			e.Unit != tt.want.Unit || e.DescriptionText != tt.want.DescriptionText {
			t.Errorf("%s: %+v, want %+v", tt.name, e, tt.want)
		}
	}
}

func TestAdminReplyNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want float64
		ok   bool
	}{
		{"482716", 482716, true},
		{"482716 KB\n", 482716, true},
		{"43.2 C\n", 43.2, true},
		{`"43.2"`, 43.2, true},
		{`{"freeOSMemory": 482716}`, 482716, true},
		{`{"a": 1, "b": 2}`, 0, false},
		{"<html>login</html>", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseAdminReply(200, []byte(tt.body)).Number()
		if ok != tt.ok || got != tt.want {
			t.Errorf("Number(%q) = %v %v, want %v %v", tt.body, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseDevice(f *testing.F) {
	f.Add([]byte(`{"id":"1","name":"n","label":"l","attributes":[{"name":"level","currentValue":50,"dataType":"NUMBER","values":null}],"commands":["on",{"command":"off"}],"capabilities":["Switch",{"attributes":[]}]}`))
	f.Add([]byte(`[{"id":2,"attributes":{"switch":"on","level":"40","x":null},"commands":[{"command":"on"}]}]`))
	f.Add([]byte(`{"id":"8","attributes":[{"name":"lockCodes","currentValue":"{\"1\":{\"name\":\"Family\",\"code\":\"1234\"}}","dataType":"JSON_OBJECT"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, _ := ParseDevices(b)
		for _, d := range ds {
			if d.ID == "" {
				t.Fatal("a device without an id was kept")
			}
		}
		d, _ := ParseDevice(b)
		for _, d := range append(ds, d) {
			for _, a := range d.Attributes {
				_ = a.Value.String()
				if f, ok := a.Value.Float(); ok && (f != f) {
					t.Fatalf("NaN from %q", a.Value.raw)
				}
				if _, err := json.Marshal(a.Value); err != nil {
					t.Fatalf("value %q does not marshal: %v", a.Value.raw, err)
				}
			}
			for _, c := range d.Commands {
				if c.Name == "" {
					t.Fatal("a command without a name was kept")
				}
			}
		}
	})
}

func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"source":"DEVICE","name":"switch","value":"on","deviceId":12,"date":"2026-01-31T10:00:00.000+0000"}`))
	f.Add([]byte(`{"content":{"name":"mode","value":"Night","deviceId":null,"isStateChange":"true"}}`))
	f.Add([]byte(`[{"device_id":"3","name":"x","value":1,"date":1700000000000}]`))
	f.Add([]byte(`{"name":"lockCodes","value":"{\"1\":{\"name\":\"Family\",\"code\":\"1234\"}}","deviceId":8,"descriptionText":"codes {\"1\":{\"code\":\"1234\"}}"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseEvent(b)
		if err == nil {
			if e.DeviceID != "" && e.Location() {
				t.Fatal("device event reported as location")
			}
			if _, err := json.Marshal(e); err != nil {
				t.Fatalf("event does not marshal: %v", err)
			}
		}
		evs, _ := ParseEvents(b)
		for _, e := range evs {
			_ = e.Value.String()
		}
		_, _ = ParseModes(b)
		_, _ = ParseRooms(b)
		_, _ = ParseCodeTypes(b)
		if h, err := ParseHubInfo(b); err == nil && (h.Latitude > 90 || h.Latitude < -90) {
			t.Fatalf("latitude %v", h.Latitude)
		}
	})
}

func FuzzAdminReply(f *testing.F) {
	f.Add([]byte("482716\n"))
	f.Add([]byte(`{"status":"success","version":3}`))
	f.Add([]byte("\xff\xfe binary"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := ParseAdminReply(200, b)
		if !utf8.ValidString(r.Text) {
			t.Fatal("text is not UTF-8")
		}
		if r.JSON != nil && !json.Valid(r.JSON) {
			t.Fatal("JSON member is not JSON")
		}
		if f, ok := r.Number(); ok && (f != f || f > 1e300 || f < -1e300) {
			t.Fatalf("number %v", f)
		}
	})
}

// Codes are hidden as the hub's replies are read, whichever way a lock's codes arrive: the
// detailed device, the all-devices map, an eventsocket frame, a postURL push, the events list.
func TestParseHidesCodes(t *testing.T) {
	const codes = `"{\"1\":{\"name\":\"Family\",\"code\":\"1234\"}}"`
	for _, tc := range []struct {
		name  string
		parse func([]byte) (any, error)
		body  string
	}{
		{"device", func(b []byte) (any, error) { return ParseDevice(b) },
			`{"id":"8","attributes":[{"name":"lockCodes","currentValue":` + codes + `},{"name":"usercode","currentValue":1234}]}`},
		{"all devices", func(b []byte) (any, error) { return ParseDevices(b) },
			`[{"id":"8","attributes":{"lockCodes":` + codes + `,"lock":"locked"}}]`},
		{"eventsocket frame", func(b []byte) (any, error) { return ParseEvent(b) },
			`{"name":"lockCodes","value":` + codes + `,"deviceId":8,"descriptionText":"Front Door lockCodes is {\"1\":{\"name\":\"Family\",\"code\":\"1234\"}}"}`},
		{"postURL push", func(b []byte) (any, error) { return ParseEvent(b) },
			`{"content":{"name":"lockCodes","value":` + codes + `,"deviceId":8,"descriptionText":"code=1234"}}`},
		{"events list", func(b []byte) (any, error) { return ParseEvents(b) },
			`[{"name":"lockCodes","value":` + codes + `,"deviceId":8}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.parse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "1234") || !strings.Contains(string(b), "Family") {
				t.Errorf("parsed: %s", b)
			}
		})
	}
}
