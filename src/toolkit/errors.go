package toolkit

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a tool error meant for the model: it says what went wrong and what to do next.
// Tool errors become results with isError=true; they are never JSON-RPC protocol errors.
type Error struct {
	// Code is a stable machine-readable kind, e.g. "invalid_argument", "not_found",
	// "backend_unavailable", "permission_required", "too_large".
	Code string `json:"error"`
	// Field names the argument at fault, when there is one.
	Field string `json:"field,omitempty"`
	// Message says what is wrong, in plain words.
	Message string `json:"message"`
	// Hint says what to do about it (an example of a good value, a narrower call, a step for the user).
	Hint string `json:"hint,omitempty"`
	// Changed reports whether anything was changed before the failure, for backend errors on writes.
	Changed *bool `json:"changed,omitempty"`
	// Details carries extra structured data (e.g. a permission request id).
	Details map[string]any `json:"details,omitempty"`
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Field != "" {
		fmt.Fprintf(&b, "%s: %s", e.Field, e.Message)
	} else {
		b.WriteString(e.Message)
	}
	if e.Hint != "" {
		b.WriteString(" — ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// InvalidArg reports a bad argument: the field, the rule it broke, and an example of a good value.
func InvalidArg(field, rule, example string) *Error {
	e := &Error{Code: "invalid_argument", Field: field, Message: rule}
	if example != "" {
		e.Hint = "example: " + example
	}
	return e
}

// NotFound reports a missing object and how to find valid ones.
func NotFound(what, hint string) *Error {
	return &Error{Code: "not_found", Message: what, Hint: hint}
}

// Unavailable reports a backend that cannot be reached. Nothing was changed.
func Unavailable(backend string, cause error, hint string) *Error {
	no := false
	msg := backend + " is not reachable"
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Error{Code: "backend_unavailable", Message: msg, Hint: hint, Changed: &no}
}

// Backend reports that a backend refused or failed a request.
// changed tells the model whether anything took effect; next is the suggested next step.
func Backend(backend string, cause error, changed bool, next string) *Error {
	return &Error{Code: "backend_error", Message: backend + " returned an error: " + cause.Error(), Hint: next, Changed: &changed}
}

// AsError converts any error into a tool Error, keeping one that already is.
func AsError(err error) *Error {
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	var ae ArgError
	if errors.As(err, &ae) {
		return ae.ToolError()
	}
	return &Error{Code: "error", Message: err.Error()}
}

// ArgError is implemented by errors that know which argument was wrong.
type ArgError interface {
	error
	ToolError() *Error
}
