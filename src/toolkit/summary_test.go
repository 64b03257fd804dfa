package toolkit

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name, args, want string
	}{
		{"no arguments", `{}`, ""},
		{"only confirm", `{"confirm": true}`, ""},
		{"plain pairs in name order", `{"service": "turn_on", "domain": "light"}`, "domain: light, service: turn_on"},
		{"a list", `{"entity_id": ["light.a", "light.b"]}`, "entity_id: light.a, light.b"},
		{"a long list", `{"ids": [1,2,3,4,5,6,7]}`, "ids: 1, 2, 3, 4, 5 +2 more"},
		{"a code is hidden", `{"entity_id": "lock.front_door", "code": "1234"}`, "code: [hidden], entity_id: lock.front_door"},
		{"a nested secret is hidden", `{"data": {"password": "hunter2", "x": 1}}`, "data: {password: [hidden], x: 1}"},
		{"file content is a size", `{"path": "a.yaml", "content": "secret: abc\n"}`, "content: (12 bytes), path: a.yaml"},
		{"deep objects are counted", `{"config": {"a": {"b": 1}}}`, "config: {a: {1 fields}}"},
		{"new lines fold", `{"sql": "SELECT 1\nFROM x"}`, "sql: SELECT 1 FROM x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
				t.Fatal(err)
			}
			if got := Summarize(args); got != tc.want {
				t.Fatalf("Summarize(%s) = %q, want %q", tc.args, got, tc.want)
			}
		})
	}
}

func FuzzSummarize(f *testing.F) {
	f.Add(`{"code": "1234", "entity_id": "lock.x"}`)
	f.Add(`{"data": {"token": "abc", "list": ["password=x"]}}`)
	f.Add(`{"content": "api_key: 123"}`)
	f.Add(`{"password": "hunter2-secret-value", "entity_id": "lock.x"}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil {
			return
		}
		s := Summarize(args)
		if utf8.RuneCountInString(s) > summaryMax {
			t.Fatalf("summary of %d runes, over %d", utf8.RuneCountInString(s), summaryMax)
		}
		for _, secret := range []string{"hunter2-secret-value"} {
			if strings.Contains(raw, secret) && strings.Contains(s, secret) {
				for _, k := range []string{"password", "token", "code", "secret"} {
					if strings.Contains(raw, `"`+k+`":"`+secret) || strings.Contains(raw, `"`+k+`": "`+secret) {
						t.Fatalf("secret under %q shown: %q", k, s)
					}
				}
			}
		}
	})
}
