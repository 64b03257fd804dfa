package homeassistant

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		wantCode string
		wantMsg  string
	}{
		{"json message", 400, `{"message":"Data should be valid JSON."}`, "", "Data should be valid JSON."},
		{"json message and code", 400, `{"message":"Bad thing","code":"invalid_format"}`, "invalid_format", "Bad thing"},
		{"aiohttp plain text", 401, "401: Unauthorized", "", "401: Unauthorized"},
		{"empty body", 400, "", "", "Bad Request"},
		{"whitespace body", 404, "  \n ", "", "Not Found"},
		{"oauth error", 400, `{"error":"invalid_grant","error_description":"bad code"}`, "invalid_grant", "bad code"},
		{"oauth error only", 400, `{"error":"unsupported_grant_type"}`, "", "unsupported_grant_type"},
		{"numeric code", 500, `{"message":"boom","code":42}`, "42", "boom"},
		{"empty message", 500, `{"message":""}`, "", "{\"message\":\"\"}"},
		{"json without message", 500, `{"foo":1}`, "", `{"foo":1}`},
		{"broken json", 500, `{"message":`, "", `{"message":`},
		{"control characters stripped", 500, "line1\nline2\x00\x1b[31m", "", "line1 line2[31m"},
		{"html proxy page", 502, "<html><body>Bad Gateway</body></html>", "", "<html><body>Bad Gateway</body></html>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := parseErrorBody(tt.status, []byte(tt.body))
			if e.Status != tt.status || e.Code != tt.wantCode || e.Message != tt.wantMsg {
				t.Fatalf("got %+v, want status %d code %q message %q", e, tt.status, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestParseErrorBodyTruncatesLongBodies(t *testing.T) {
	e := parseErrorBody(500, []byte(strings.Repeat("é", 5000)))
	if len(e.Message) > maxErrorMessage+len("…")+4 || !strings.HasSuffix(e.Message, "…") || !utf8.ValidString(e.Message) {
		t.Fatalf("message not truncated cleanly: %d bytes", len(e.Message))
	}
}

func TestAPIErrorMatchesSentinels(t *testing.T) {
	tests := []struct {
		err          *APIError
		unauthorized bool
		unavailable  bool
	}{
		{&APIError{Status: 401}, true, false},
		{&APIError{Status: 403}, true, false},
		{&APIError{Code: "auth_invalid"}, true, false},
		{&APIError{Code: "unauthorized"}, true, false},
		{&APIError{Status: 502}, false, true},
		{&APIError{Status: 503}, false, true},
		{&APIError{Status: 504}, false, true},
		{&APIError{Status: 400}, false, false},
		{&APIError{Status: 500}, false, false},
		{&APIError{Code: "not_found"}, false, false},
	}
	for _, tt := range tests {
		if got := errors.Is(tt.err, ErrUnauthorized); got != tt.unauthorized {
			t.Errorf("%+v Is ErrUnauthorized = %v", tt.err, got)
		}
		if got := errors.Is(tt.err, ErrUnavailable); got != tt.unavailable {
			t.Errorf("%+v Is ErrUnavailable = %v", tt.err, got)
		}
		if tt.err.Error() == "" {
			t.Errorf("%+v has an empty message", tt.err)
		}
	}
}

func FuzzParseErrorBody(f *testing.F) {
	for _, seed := range []string{`{"message":"x"}`, `{"message":"x","code":"y"}`, "401: Unauthorized", "", `{"error":"a","error_description":"b"}`, `{"message":null}`, "\xff\xfe", `[1,2]`} {
		f.Add(400, []byte(seed))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := parseErrorBody(status, body)
		if e.Status != status || e.Message == "" {
			t.Fatalf("bad parse of status %d: %+v", status, e)
		}
		if !utf8.ValidString(e.Message) || !utf8.ValidString(e.Code) {
			t.Fatalf("invalid UTF-8 in %+v", e)
		}
		if strings.ContainsAny(e.Message, "\n\r\x00") {
			t.Fatalf("control characters survived: %q", e.Message)
		}
		if len(e.Message) > maxErrorMessage+8 {
			t.Fatalf("message too long: %d", len(e.Message))
		}
		_ = e.Error()
	})
}

func TestDecodeFrame(t *testing.T) {
	tests := []struct {
		name    string
		frame   string
		wantIDs []int64
		wantErr bool
	}{
		{"single result", `{"id":3,"type":"result","success":true,"result":null}`, []int64{3}, false},
		{"coalesced", `[{"id":1,"type":"event","event":{}},{"id":2,"type":"result","success":true}]`, []int64{1, 2}, false},
		{"leading whitespace", " \n{\"id\":7,\"type\":\"pong\"}", []int64{7}, false},
		{"empty array", `[]`, []int64{}, false},
		{"array with a bad element", `[{"id":1,"type":"event"},42,{"id":2,"type":"result"}]`, []int64{1, 2}, true},
		{"array with a mistyped element", `[{"id":"x","type":"event"},{"id":2,"type":"result"}]`, []int64{2}, true},
		{"truncated", `{"id":1,"type":`, nil, true},
		{"scalar", `42`, nil, true},
		{"empty", ``, nil, true},
		{"fractional id", `{"id":1.5,"type":"result"}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := decodeFrame([]byte(tt.frame))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantIDs == nil {
				if len(msgs) != 0 {
					t.Fatalf("want no messages, got %v", msgs)
				}
				return
			}
			if len(msgs) != len(tt.wantIDs) {
				t.Fatalf("got %d messages, want %d", len(msgs), len(tt.wantIDs))
			}
			for i, m := range msgs {
				if m.ID != tt.wantIDs[i] {
					t.Fatalf("message %d id %d, want %d", i, m.ID, tt.wantIDs[i])
				}
			}
		})
	}
}

func FuzzDecodeFrame(f *testing.F) {
	for _, seed := range []string{
		`{"id":1,"type":"result","success":true,"result":{"a":1}}`,
		`[{"id":1,"type":"event","event":{"x":[1,2]}},{"id":2,"type":"pong"}]`,
		`{"type":"auth_required","ha_version":"2026.1.0"}`,
		`{"id":2,"type":"result","success":false,"error":{"code":"not_found","message":"x"}}`,
		`[1,"a",null]`, `[`, `{}`, `null`,
		// Found by the fuzzer: a code and message that clean to nothing.
		`{"id":3,"type":"result","success":false,"error":{"code":"\u0007","message":" \t"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := decodeFrame(data)
		if err == nil && len(data) > 0 {
			// A frame that decodes as a single object must decode the same way inside an array.
			trimmed := strings.TrimSpace(string(data))
			if strings.HasPrefix(trimmed, "{") {
				wrapped, werr := decodeFrame([]byte("[" + trimmed + "]"))
				if werr != nil || len(wrapped) != 1 || len(msgs) != 1 || wrapped[0].ID != msgs[0].ID || wrapped[0].Type != msgs[0].Type {
					t.Fatalf("object and [object] disagree: %v %v / %v %v", msgs, err, wrapped, werr)
				}
			}
		}
		for _, m := range msgs {
			if m.Type == "result" && !m.Success {
				e := replyError(m)
				if e.Code == "" || e.Message == "" {
					t.Fatalf("failed result without code or message: %+v", e)
				}
			}
		}
	})
}

func TestEncodeCommand(t *testing.T) {
	tests := []struct {
		name    string
		msgType string
		payload any
		want    string
		wantErr string
	}{
		{"no payload", "get_states", nil, `{"id":5,"type":"get_states"}`, ""},
		{"map payload sorted", "call_service", map[string]any{"service": "turn_on", "domain": "light"}, `{"id":5,"type":"call_service","domain":"light","service":"turn_on"}`, ""},
		{"struct payload", "render_template", struct {
			Template string `json:"template"`
		}{"{{ 1 }}"}, `{"id":5,"type":"render_template","template":"{{ 1 }}"}`, ""},
		{"type from payload", "", map[string]any{"type": "subscribe_events", "event_type": "x"}, `{"id":5,"type":"subscribe_events","event_type":"x"}`, ""},
		{"matching types", "ping", map[string]any{"type": "ping"}, `{"id":5,"type":"ping"}`, ""},
		{"no type", "", map[string]any{"event_type": "x"}, "", "no \"type\""},
		{"conflicting type", "ping", map[string]any{"type": "get_states"}, "", "conflicts"},
		{"id supplied", "ping", map[string]any{"id": 9}, "", "must not set \"id\""},
		{"array payload", "ping", []int{1}, "", "must be a JSON object, got an array"},
		{"string payload", "ping", "x", "", "got a string"},
		{"non-string type", "", map[string]any{"type": 3}, "", "non-empty string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeCommand(5, tt.msgType, tt.payload)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON %s", got)
			}
		})
	}
}

func TestDeriveURLs(t *testing.T) {
	tests := []struct {
		in, base, ws, errPart string
	}{
		{"http://homeassistant.local:8123", "http://homeassistant.local:8123", "ws://homeassistant.local:8123/api/websocket", ""},
		{"http://homeassistant.local:8123/", "http://homeassistant.local:8123", "ws://homeassistant.local:8123/api/websocket", ""},
		{"https://ha.example.com/api/", "https://ha.example.com", "wss://ha.example.com/api/websocket", ""},
		{"http://supervisor/core", "http://supervisor/core", "ws://supervisor/core/websocket", ""},
		{"http://supervisor/core/api", "http://supervisor/core", "ws://supervisor/core/websocket", ""},
		{" http://10.0.0.2:8123 ", "http://10.0.0.2:8123", "ws://10.0.0.2:8123/api/websocket", ""},
		{"", "", "", "BaseURL is empty"},
		{"homeassistant.local:8123", "", "", "must start with http"},
		{"ftp://x", "", "", "must start with http"},
		{"http://", "", "", "has no host"},
		{"http://user:pw@ha:8123", "", "", "credentials"},
		{"http://ha:8123/?x=1", "", "", "query"},
		{"http://ha :8123", "", "", "not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			base, ws, err := deriveURLs(tt.in)
			if tt.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errPart) {
					t.Fatalf("err = %v, want %q", err, tt.errPart)
				}
				if strings.Contains(err.Error(), "pw") {
					t.Fatalf("error echoes the password: %v", err)
				}
				return
			}
			if err != nil || base != tt.base || ws != tt.ws {
				t.Fatalf("got %q %q %v; want %q %q", base, ws, err, tt.base, tt.ws)
			}
		})
	}
}

func TestNewValidatesToken(t *testing.T) {
	tests := []struct {
		token, errPart string
	}{
		{"", "Token is empty"},
		{"   ", "Token is empty"},
		{"abc\ndef", "not allowed in an HTTP header"},
		{"abc", ""},
	}
	for _, tt := range tests {
		c, err := New(Config{BaseURL: "http://ha:8123", Token: tt.token})
		if tt.errPart == "" {
			if err != nil || c == nil {
				t.Fatalf("token %q: %v", tt.token, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.errPart) {
			t.Fatalf("token %q: err = %v, want %q", tt.token, err, tt.errPart)
		}
		if tt.token != "" && strings.Contains(err.Error(), strings.TrimSpace(tt.token)) && strings.TrimSpace(tt.token) != "" {
			t.Fatalf("error echoes the token: %v", err)
		}
	}
}

// TestBackoffSeesHABackWithin5s: however long HA was down (a restart takes a minute or more,
// the Supervisor updating it longer), the wait before the next attempt leaves room for the
// attempt itself within 5 s of HA being back. The cap was 30 s: after a minute's restart hamcp
// could stay away for half a minute with HA up.
func TestBackoffSeesHABackWithin5s(t *testing.T) {
	c, _ := New(Config{BaseURL: "http://ha:8123", Token: "t"})
	for attempt := 0; attempt < 64; attempt++ {
		for i := 0; i < 20; i++ {
			if d := c.backoff(attempt); d > 4*time.Second {
				t.Fatalf("attempt %d waits %v: HA back meanwhile is seen only after that", attempt, d)
			}
		}
	}
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	c, _ := New(Config{BaseURL: "http://ha:8123", Token: "t"})
	for attempt := 0; attempt < 12; attempt++ {
		want := c.backoffBase << attempt
		if want > c.backoffCap || want <= 0 {
			want = c.backoffCap
		}
		for i := 0; i < 50; i++ {
			d := c.backoff(attempt)
			if d < want/2 || d > want {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, want/2, want)
			}
		}
	}
	if d := c.backoff(1000); d > c.backoffCap {
		t.Fatalf("cap not applied: %v", d)
	}
}

// Energy preferences in both forms a Home Assistant in the field sends: before 2026.2 a grid source
// lists flow_from/flow_to; since (core PR #162200, storage 1.3) each grid connection is one source
// with stat_energy_from/stat_energy_to, and wind is a source type.
func TestEnergyPrefsBothGridForms(t *testing.T) {
	for _, tt := range []struct {
		name          string
		body          string
		imports, exps string
	}{
		{"2026.2 and later", `{"energy_sources":[{"type":"grid","stat_energy_from":"sensor.import_a","stat_energy_to":"sensor.export_a","stat_cost":null,"cost_adjustment_day":0},
			{"type":"grid","stat_energy_from":"sensor.import_b","stat_energy_to":null,"cost_adjustment_day":0},{"type":"wind","stat_energy_from":"sensor.wind"}],"device_consumption":[]}`,
			"sensor.import_a|sensor.import_b", "sensor.export_a"},
		{"before 2026.2", `{"energy_sources":[{"type":"grid","flow_from":[{"stat_energy_from":"sensor.import_a"},{"stat_energy_from":"sensor.import_b"}],
			"flow_to":[{"stat_energy_to":"sensor.export_a"}],"cost_adjustment_day":0}],"device_consumption":[]}`,
			"sensor.import_a|sensor.import_b", "sensor.export_a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p EnergyPrefs
			if err := json.Unmarshal([]byte(tt.body), &p); err != nil {
				t.Fatal(err)
			}
			var imports, exports []string
			for _, s := range p.Sources {
				if s.Type == "grid" {
					imports = append(imports, s.GridImports()...)
					exports = append(exports, s.GridExports()...)
				}
			}
			if strings.Join(imports, "|") != tt.imports || strings.Join(exports, "|") != tt.exps {
				t.Fatalf("imports %v exports %v; want %s / %s", imports, exports, tt.imports, tt.exps)
			}
		})
	}
}
