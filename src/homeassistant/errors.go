package homeassistant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hamcp/hamcp/src/internal/httpx"
)

// ErrUnavailable means Home Assistant could not be reached (connection refused, DNS, timeout, a
// proxy answering 502/503/504, or the WebSocket being down). Errors carrying it also wrap the cause.
var ErrUnavailable = errors.New("home assistant is not reachable")

// ErrNoAnswer marks an ErrUnavailable whose request had been sent when the answer failed to
// come (a timeout, the connection lost while waiting): Home Assistant may have carried it out.
// Callers must not report a write that failed this way as "nothing changed".
var ErrNoAnswer = errors.New("the request was sent but no answer came")

// ErrUnauthorized means Home Assistant rejected the access token (HTTP 401/403 or auth_invalid).
var ErrUnauthorized = errors.New("home assistant rejected the access token")

// ErrNotStarted is returned by WebSocket calls made before Start.
var ErrNotStarted = errors.New("home assistant websocket client not started: call Start first")

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("home assistant client is closed")

// APIError is an error answer from Home Assistant: a REST status with its `{"message"}` or plain
// text body, or a WebSocket result with `error.code`/`error.message` (Status 0 then). It matches
// ErrUnauthorized (401/403, codes "unauthorized" and "auth_invalid") and, for a gateway failure
// from the Supervisor proxy, ErrUnavailable.
type APIError = httpx.APIError[service]

// service is Home Assistant as its APIErrors name it.
type service struct{}

func (service) Name() string        { return "home assistant" }
func (service) Unauthorized() error { return ErrUnauthorized }
func (service) Unavailable() error  { return ErrUnavailable }

// IsStatus reports whether err is Home Assistant answering with HTTP status code.
func IsStatus(err error, code int) bool {
	var api *APIError
	return errors.As(err, &api) && api.Status == code
}

// maxErrorMessage bounds how much of an error body ends up in an error string (and in logs).
const maxErrorMessage = 512

// parseErrorBody turns an HA error response into an APIError. HA answers errors as
// `{"message": "...", "code"?: "..."}`, as aiohttp's plain text ("401: Unauthorized"), or with an
// empty body (bare HTTPBadRequest, unknown calendar); OAuth endpoints use `{"error","error_description"}`.
func parseErrorBody(status int, body []byte) *APIError {
	e := &APIError{Status: status}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var obj struct {
			Message          *string         `json:"message"`
			Code             json.RawMessage `json:"code"`
			Error            json.RawMessage `json:"error"`
			ErrorDescription string          `json:"error_description"`
		}
		if json.Unmarshal(trimmed, &obj) == nil {
			e.Code = rawString(obj.Code)
			switch {
			case obj.Message != nil:
				e.Message = *obj.Message
			case obj.ErrorDescription != "":
				e.Message = obj.ErrorDescription
				if e.Code == "" {
					e.Code = rawString(obj.Error)
				}
			case len(obj.Error) > 0 && obj.Error[0] == '"':
				e.Message = rawString(obj.Error)
			}
			if e.Message != "" || e.Code != "" {
				e.Message = clean(e.Message)
				if e.Message == "" {
					e.Message = httpx.StatusText(status)
				}
				return e
			}
		}
	}
	e.Message = clean(string(trimmed))
	if e.Message == "" {
		e.Message = httpx.StatusText(status)
	}
	return e
}

// rawString renders a JSON string or number member as text; anything else is dropped.
func rawString(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// clean makes an untrusted message safe for one log line.
func clean(s string) string { return httpx.CleanLine(s, maxErrorMessage) }

// unavailable wraps a transport failure so it matches ErrUnavailable and still exposes the cause.
func unavailable(where string, cause error) error {
	return fmt.Errorf("%w at %s: %w", ErrUnavailable, where, cause)
}

// unanswered is unavailable for a request that had been sent (ErrNoAnswer).
func unanswered(where string, cause error) error {
	return fmt.Errorf("%w at %s: %w (%w)", ErrUnavailable, where, cause, ErrNoAnswer)
}
