package supervisor

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/hamcp/hamcp/src/internal/httpx"
)

// ErrUnavailable means the Supervisor could not be reached; errors carrying it wrap the cause.
var ErrUnavailable = errors.New("supervisor is not reachable")

// ErrUnauthorized means the Supervisor refused the token (401, or 403 for a role that lacks the
// endpoint).
var ErrUnauthorized = errors.New("supervisor rejected the token")

// APIError is an error answer: `{"result":"error","message":"..."}` or a non-JSON body. It
// matches ErrUnauthorized for 401/403 and ErrUnavailable for a gateway failure.
type APIError = httpx.APIError[service]

// service is the Supervisor as its APIErrors name it.
type service struct{}

func (service) Name() string        { return "supervisor" }
func (service) Unauthorized() error { return ErrUnauthorized }
func (service) Unavailable() error  { return ErrUnavailable }

const maxErrorMessage = 512

// parseErrorBody reads the Supervisor's error envelope, falling back to the body text (aiohttp
// answers "401: Unauthorized" in plain text) or the status text for an empty body.
func parseErrorBody(status int, body []byte) *APIError {
	e := &APIError{Status: status}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var env struct {
			Message *string `json:"message"`
		}
		if json.Unmarshal(trimmed, &env) == nil && env.Message != nil {
			e.Message = clean(*env.Message)
		}
	} else {
		e.Message = clean(string(trimmed))
	}
	if e.Message == "" {
		e.Message = httpx.StatusText(status)
	}
	return e
}

// clean makes an untrusted message safe for one log line.
func clean(s string) string { return httpx.CleanLine(s, maxErrorMessage) }
