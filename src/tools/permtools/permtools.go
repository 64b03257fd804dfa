// Package permtools connects the toolkit to the permission manager (the gate every privileged
// call passes) and declares the tools that let the model see what it holds and what was done:
// ha_get_permissions and ha_get_audit_log.
package permtools

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Toolset name.
const SetPermissions = "permissions"

// Gate adapts the permission manager to the toolkit.
type Gate struct {
	M *permission.Manager
}

var _ toolkit.Gate = Gate{}

// Authorize asks the manager, passing the ways this client can put the question to its user: a form
// (elicitation) or hamcp's approval page (URL-mode elicitation).
func (g Gate) Authorize(ctx context.Context, c *toolkit.Call, summary string) error {
	req := permission.Request{
		SessionKey:  c.SessionKey,
		Client:      c.Client,
		Tool:        c.Tool,
		Category:    permission.Category(c.Category),
		ArgsSummary: summary,
		Owner:       authn.Caller(ctx, c.TokenInfo()).Owner(),
		SignIn:      SignIn(authn.Caller(ctx, c.TokenInfo())),
	}
	if c.CanElicit() {
		req.Elicit = func(ctx context.Context, message string) (bool, error) {
			return c.Confirm(ctx, message, "Allow for this session")
		}
	}
	if c.CanOpenURL() {
		req.OpenURL = c.OpenURL
		req.URLDone = c.URLDone
	}
	err := g.M.Authorize(ctx, req)
	var required *permission.RequiredError
	var denied *permission.DeniedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &required):
		details := map[string]any{"request_id": required.RequestID, "category": string(required.Category), "warning": required.Warning}
		if required.Link != "" {
			details["approval_url"] = required.Link
		}
		return &toolkit.Error{Code: "permission_required", Message: required.Error(), Hint: required.HowTo, Details: details}
	case errors.As(err, &denied):
		return &toolkit.Error{Code: "permission_denied", Message: denied.Error(), Details: map[string]any{"category": string(denied.Category)}}
	}
	return &toolkit.Error{Code: "permission_error", Message: "the permission check failed: " + err.Error()}
}

// Record writes the call to the audit log, with what it changed and how to undo it.
func (g Gate) Record(ctx context.Context, c *toolkit.Call, summary, outcome string, took time.Duration, detail string) {
	g.M.Audit(ctx, store.AuditEntry{
		Time: time.Now().UTC(), SessionID: c.SessionKey, Client: c.Client, Tool: c.Tool, Category: string(c.Category),
		ArgsSummary: summary, Outcome: outcome, Detail: detail, DurationMS: took.Milliseconds(),
		Kind: c.Kind, Principal: SignIn(authn.Caller(ctx, c.TokenInfo())), Undo: undoJSON(c.UndoInfo()),
	})
}

// undoJSON is the call's undo as the audit log keeps it; "" when it registered none.
func undoJSON(u *toolkit.Undo) string {
	if u == nil {
		return ""
	}
	b, err := json.Marshal(u)
	if err != nil {
		return ""
	}
	return string(b)
}

type permissionsArgs struct{}

type permissionsResult struct {
	Session    string                      `json:"session"`
	Categories []permission.CategoryStatus `json:"categories"`
	Note       string                      `json:"note"`
}

type auditArgs struct {
	Tool     string `json:"tool,omitempty" jsonschema:"only calls of this tool"`
	Category string `json:"category,omitempty" jsonschema:"only this permission category" validate:"omitempty,oneof=filesystem database command hub_admin"`
	Kind     string `json:"kind,omitempty" jsonschema:"only changes of this kind" validate:"omitempty,oneof=device config file database command hub permission"`
	Outcome  string `json:"outcome,omitempty" jsonschema:"only this outcome, e.g. ok, permission_required, confirmation_required"`
	Since    string `json:"since,omitempty" jsonschema:"ISO-8601 time; only newer entries" validate:"omitempty,iso8601"`
	toolkit.Page
}

type auditRow struct {
	Time       string `json:"time"`
	Client     string `json:"client,omitempty"`
	Tool       string `json:"tool"`
	Category   string `json:"category,omitempty"`
	Args       string `json:"args,omitempty"`
	Outcome    string `json:"outcome"`
	Detail     string `json:"detail,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Kind       string `json:"kind,omitempty"`
	// Undone says the user took the change back in the panel, and when.
	Undone string `json:"undone,omitempty"`
}

// Tools returns ha_get_permissions and ha_get_audit_log.
func Tools(m *permission.Manager, st *store.Store) []*toolkit.Tool {
	return []*toolkit.Tool{getPermissions(m, st), getAuditLog(m, st)}
}

// getPermissions is ha_get_permissions.
func getPermissions(m *permission.Manager, st *store.Store) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[permissionsArgs, permissionsResult]{
		Name: "ha_get_permissions", Toolset: SetPermissions, Title: "Session permissions",
		Description: "Which permission categories this session holds, which are denied or waiting for the user, and how the user grants them. " +
			"Call it after permission_required or before planning file, database or shell work. It cannot grant: only the user can.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ permissionsArgs) (permissionsResult, error) {
			return permissionsResult{
				Session:    m.SessionLabel(c.SessionKey),
				Categories: m.Status(c.SessionKey),
				Note: "Grants last for this session only, and only the user can make them: by accepting the prompt in their client, " +
					"or on hamcp's approval page (the link in a permission_required error, behind their Home Assistant administrator login), " +
					"or in the hamcp panel. The session label is what the user sees on the page; it is not the session id.",
			}, nil
		},
	})
}

// getAuditLog is ha_get_audit_log.
func getAuditLog(m *permission.Manager, st *store.Store) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[auditArgs, toolkit.List[auditRow]]{
		Name: "ha_get_audit_log", Toolset: SetPermissions, Title: "Audit log",
		Description: "This session's audit log, newest first (other sessions' are not visible): every call that changed something, privileged calls and permission decisions, " +
			"and whether the user undid a change. Filter by tool, kind (device, config, file, database, command, hub, permission), category, outcome, since. Paged.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a auditArgs) (toolkit.List[auditRow], error) {
			if c.SessionKey == "" {
				// An empty filter would match every session.
				return toolkit.List[auditRow]{}, &toolkit.Error{Code: "session_required", Message: "this request has no session, so it has no audit log of its own"}
			}
			limit, offset := a.Page.Effective()
			// Always this session's rows: other sessions' rows would hand the model their ids and what they did.
			q := store.AuditQuery{SessionID: c.SessionKey, Tool: a.Tool, Category: a.Category, Kind: a.Kind, Outcome: a.Outcome, Limit: limit, Offset: offset}
			if a.Since != "" {
				q.Since, _ = toolkit.ParseTime(a.Since)
			}
			entries, total, err := st.ListAudit(ctx, q)
			if err != nil {
				return toolkit.List[auditRow]{}, &toolkit.Error{Code: "store_error", Message: "could not read the audit log: " + err.Error()}
			}
			rows := make([]auditRow, 0, len(entries))
			for _, e := range entries {
				row := auditRow{Time: e.Time.UTC().Format(time.RFC3339), Client: e.Client, Tool: e.Tool,
					Category: e.Category, Args: e.ArgsSummary, Outcome: e.Outcome, Detail: e.Detail, DurationMS: e.DurationMS, Kind: e.Kind}
				if e.Undone() {
					row.Undone = e.UndoneAt.UTC().Format(time.RFC3339)
				}
				rows = append(rows, row)
			}
			return toolkit.Window(rows, total, a.Page), nil
		},
	})
}
