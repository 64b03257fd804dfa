package supervisor

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		wantMsg string
	}{
		{"envelope", 400, `{"result":"error","message":"Addon is not installed"}`, "Addon is not installed"},
		{"envelope with job", 500, `{"result":"error","message":"Backup failed","job_id":"abc"}`, "Backup failed"},
		{"aiohttp text", 401, "401: Unauthorized", "401: Unauthorized"},
		{"empty", 404, "", "Not Found"},
		{"json without message", 500, `{"result":"error"}`, "Internal Server Error"},
		{"broken json", 500, `{"result":`, "Internal Server Error"},
		{"multi-line", 500, "a\nb", "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := parseErrorBody(tt.status, []byte(tt.body))
			if e.Status != tt.status || e.Message != tt.wantMsg {
				t.Fatalf("got %+v, want %d %q", e, tt.status, tt.wantMsg)
			}
		})
	}
}

func TestAPIErrorSentinels(t *testing.T) {
	tests := []struct {
		status                    int
		unauthorized, unavailable bool
	}{
		{401, true, false}, {403, true, false}, {502, false, true}, {503, false, true}, {504, false, true},
		{400, false, false}, {404, false, false}, {500, false, false},
	}
	for _, tt := range tests {
		e := &APIError{Status: tt.status, Message: "x"}
		if errors.Is(e, ErrUnauthorized) != tt.unauthorized || errors.Is(e, ErrUnavailable) != tt.unavailable {
			t.Errorf("status %d: unauthorized=%v unavailable=%v", tt.status, errors.Is(e, ErrUnauthorized), errors.Is(e, ErrUnavailable))
		}
	}
}

func FuzzParseErrorBody(f *testing.F) {
	for _, seed := range []string{`{"result":"error","message":"x"}`, "401: Unauthorized", "", `{"message":null}`, "\xff", `[]`} {
		f.Add(500, []byte(seed))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := parseErrorBody(status, body)
		if e.Status != status || e.Message == "" {
			t.Fatalf("bad parse: %+v", e)
		}
		if !utf8.ValidString(e.Message) || strings.ContainsAny(e.Message, "\n\r\x00") || len(e.Message) > maxErrorMessage+8 {
			t.Fatalf("unsafe message %q", e.Message)
		}
	})
}

func TestCheckPathAndSlug(t *testing.T) {
	paths := []struct {
		path string
		ok   bool
	}{
		{"/addons", true}, {"/addons/core_ssh/info", true}, {"/core/logs", true},
		{"addons", false}, {"/addons/../host", false}, {"/core/logs?lines=1", false}, {"/a b", false},
		{"/a\nb", false}, {"", false}, {`/a\b`, false},
	}
	for _, tt := range paths {
		if err := checkPath(tt.path); (err == nil) != tt.ok {
			t.Errorf("checkPath(%q) = %v", tt.path, err)
		}
	}
	slugs := []struct {
		slug string
		ok   bool
	}{
		{"core_ssh", true}, {"a0d7b954_vscode", true}, {"self", true}, {"local-thing", true},
		{"", false}, {"..", false}, {"a/b", false}, {"a?b", false}, {strings.Repeat("a", 129), false},
	}
	for _, tt := range slugs {
		if err := checkSlug(tt.slug); (err == nil) != tt.ok {
			t.Errorf("checkSlug(%q) = %v", tt.slug, err)
		}
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		cfg     Config
		errPart string
		base    string
	}{
		{Config{Token: "t"}, "", "http://supervisor"},
		{Config{BaseURL: "http://127.0.0.1:9/", Token: "t"}, "", "http://127.0.0.1:9"},
		{Config{BaseURL: "supervisor", Token: "t"}, "not valid", ""},
		{Config{BaseURL: "http://u:secret@supervisor", Token: "t"}, "credentials", ""},
		{Config{BaseURL: "http://supervisor?x", Token: "t"}, "query", ""},
		{Config{}, "Token is empty", ""},
		{Config{Token: "a\nb"}, "not allowed", ""},
	}
	for _, tt := range tests {
		c, err := New(tt.cfg)
		if tt.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errPart) || strings.Contains(err.Error(), "secret") {
				t.Errorf("New(%+v) err = %v, want %q", tt.cfg, err, tt.errPart)
			}
			continue
		}
		if err != nil || c.BaseURL() != tt.base {
			t.Errorf("New(%+v) = %v, %v; want base %s", tt.cfg, c, err, tt.base)
		}
	}
}
