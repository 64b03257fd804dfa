package supervisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hamcp/hamcp/src/internal/httpx"
	"net/http"
)

// ErrUnavailable means the Supervisor could not be reached; errors carrying it wrap the cause.
var ErrUnavailable = errors.New("supervisor is not reachable")

// ErrUnauthorized means the Supervisor refused the token (401, or 403 for a role that lacks the
// endpoint).
var ErrUnauthorized = errors.New("supervisor rejected the token")

// APIError is an error answer: `{"result":"error","message":"..."}` or a non-JSON body.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("supervisor returned %d: %s", e.Status, e.Message)
}

// Is matches 401/403 to ErrUnauthorized and gateway failures to ErrUnavailable.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrUnavailable:
		return httpx.GatewayDown(e.Status)
	}
	return false
}

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
		e.Message = statusText(status)
	}
	return e
}

// statusText never returns "": unusual statuses still get a readable message.
func statusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return fmt.Sprintf("HTTP status %d", status)
}

// clean makes an untrusted message safe for one log line.
func clean(s string) string { return httpx.CleanLine(s, maxErrorMessage) }
