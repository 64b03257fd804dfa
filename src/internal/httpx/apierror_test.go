package httpx

import (
	"errors"
	"testing"
)

var (
	errTestAuth = errors.New("test: unauthorized")
	errTestDown = errors.New("test: unavailable")
)

type testService struct{}

func (testService) Name() string        { return "test backend" }
func (testService) Unauthorized() error { return errTestAuth }
func (testService) Unavailable() error  { return errTestDown }

type otherService struct{ testService }

func TestAPIError(t *testing.T) {
	tests := []struct {
		name       string
		err        *APIError[testService]
		text       string
		auth, down bool
	}{
		{"status", &APIError[testService]{Status: 400, Message: "bad"}, "test backend returned 400: bad", false, false},
		{"status and code", &APIError[testService]{Status: 404, Code: "not_found", Message: "gone"}, "test backend returned 404 not_found: gone", false, false},
		{"code only (WebSocket)", &APIError[testService]{Code: "unknown_command", Message: "no"}, "test backend error unknown_command: no", false, false},
		{"route", &APIError[testService]{Status: 500, Path: "/apps/api/1/devices", Message: "boom"}, "test backend /apps/api/1/devices answered 500: boom", false, false},
		{"401", &APIError[testService]{Status: 401, Message: "x"}, "test backend returned 401: x", true, false},
		{"403", &APIError[testService]{Status: 403, Message: "x"}, "test backend returned 403: x", true, false},
		{"auth_invalid", &APIError[testService]{Code: "auth_invalid", Message: "x"}, "test backend error auth_invalid: x", true, false},
		{"unauthorized code", &APIError[testService]{Code: "unauthorized", Message: "x"}, "test backend error unauthorized: x", true, false},
		{"502", &APIError[testService]{Status: 502, Message: "x"}, "test backend returned 502: x", false, true},
		{"503", &APIError[testService]{Status: 503, Message: "x"}, "test backend returned 503: x", false, true},
		{"504", &APIError[testService]{Status: 504, Message: "x"}, "test backend returned 504: x", false, true},
		{"500", &APIError[testService]{Status: 500, Message: "x"}, "test backend returned 500: x", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error = tt.err
			if got := err.Error(); got != tt.text {
				t.Errorf("text %q, want %q", got, tt.text)
			}
			if got := errors.Is(err, errTestAuth); got != tt.auth {
				t.Errorf("Is(unauthorized) = %v, want %v", got, tt.auth)
			}
			if got := errors.Is(err, errTestDown); got != tt.down {
				t.Errorf("Is(unavailable) = %v, want %v", got, tt.down)
			}
			// Each backend's APIError is its own type.
			if errors.As(err, new(*APIError[otherService])) {
				t.Error("an APIError of one service matched another's")
			}
		})
	}
}

func TestStatusText(t *testing.T) {
	for status, want := range map[int]string{404: "Not Found", 599: "HTTP status 599"} {
		if got := StatusText(status); got != want {
			t.Errorf("StatusText(%d) = %q, want %q", status, got, want)
		}
	}
}
