package permission

import (
	"errors"
	"fmt"
)

// RequiredError means the user has not granted the category yet. Its text is written for the model: what
// to tell the user, the approval link to give them, and how to retry. Nothing in it grants anything.
type RequiredError struct {
	RequestID string
	Category  Category
	Tool      string
	Warning   string // what a grant would allow
	HowTo     string // what the user must do
	Link      string // the approval page for the request ("" when none is served)
	Detail    string // why this call was refused, when there is more to say (e.g. the request expired)
}

func (e *RequiredError) Error() string {
	msg := fmt.Sprintf("permission_required: %s needs the %q permission, which the user has not granted in this session.",
		toolOrCall(e.Tool), e.Category)
	if e.Detail != "" {
		msg += " " + e.Detail
	}
	return msg + " " + e.Warning + " What to do: " + e.HowTo +
		" You cannot grant this yourself: only the user can, after logging in to Home Assistant. Request id: " + e.RequestID + "."
}

// DeniedError means the category is refused for the whole session (by policy or by the user).
type DeniedError struct {
	Category Category
	Reason   string
	ByPolicy bool // true when the add-on options deny it; the user must change the option
}

func (e *DeniedError) Error() string {
	next := "Do not retry it in this session; tell the user. A new session will ask again."
	if e.ByPolicy {
		next = "Do not retry; tell the user, who can change the add-on option to ask or allow."
	}
	return fmt.Sprintf("permission_denied: the %q permission is denied for this session: %s. %s", e.Category, e.Reason, next)
}

// Errors from Approve, Deny and the lookups, so the user's API can answer 404, 410 or 403.
var (
	ErrNotOwner       = errors.New("only the credential that made a permission request, the approval page or the hamcp panel may answer it")
	ErrUnknownRequest = errors.New("no pending permission request has that id (it was already answered, cancelled, or its session ended)")
	ErrRequestExpired = errors.New("the permission request has expired: ask the assistant to retry the call, which makes a new request")
)

func toolOrCall(tool string) string {
	if tool == "" {
		return "this call"
	}
	return tool
}
