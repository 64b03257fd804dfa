// Package permtools connects the toolkit to the permission manager (the gate every privileged
// call passes) and declares the tools that let the model see what it holds and what was done:
// ha_get_permissions and ha_get_audit_log.
package permtools

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Toolset name.
const SetPermissions = "permissions"

// Gate adapts the permission manager to the toolkit.
type Gate struct {
	M *permission.Manager
	// Owners remembers which authenticated user each session belongs to, so the approval API
	// can refuse a session approving its own request.
	Owners *Owners
}

var _ toolkit.Gate = Gate{}

// Identity names the credential behind a request: the token's grant key (one per token or OAuth
// grant), else its user. Two tokens of the same Home Assistant user are different identities,
// so the user can approve from the panel or another token what their assistant's token asked.
func Identity(ti *auth.TokenInfo) string {
	if ti == nil {
		return ""
	}
	if gk, ok := ti.Extra["grant_key"].(string); ok && gk != "" {
		return gk
	}
	return ti.UserID
}

// Owners maps session keys to the identity that made requests in them.
type Owners struct {
	mu sync.Mutex
	m  map[string]string
}

// Set records the owner of a session.
func (o *Owners) Set(sessionKey, user string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]string{}
	}
	o.m[sessionKey] = user
}

// Get returns the owner of a session ("" when unknown, e.g. stdio).
func (o *Owners) Get(sessionKey string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[sessionKey]
}

// Forget drops a session that ended.
func (o *Owners) Forget(sessionKey string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, sessionKey)
}

// Authorize asks the manager, passing an elicitation function when the client can ask its user.
func (g Gate) Authorize(ctx context.Context, c *toolkit.Call, summary, code string) error {
	if g.Owners != nil {
		if id := Identity(c.TokenInfo()); id != "" {
			g.Owners.Set(c.SessionKey, id)
		}
	}
	req := permission.Request{
		SessionKey:  c.SessionKey,
		Client:      c.Client,
		Tool:        c.Tool,
		Category:    permission.Category(c.Category),
		ArgsSummary: summary,
		Code:        code,
	}
	if c.CanElicit() {
		req.Elicit = func(ctx context.Context, message string) (bool, error) {
			return c.Confirm(ctx, message, "Allow for this session")
		}
	}
	err := g.M.Authorize(ctx, req)
	var required *permission.RequiredError
	var denied *permission.DeniedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &required):
		return &toolkit.Error{
			Code:    "permission_required",
			Message: required.Error(),
			Hint:    required.HowTo,
			Details: map[string]any{"request_id": required.RequestID, "category": string(required.Category), "warning": required.Warning},
		}
	case errors.As(err, &denied):
		return &toolkit.Error{Code: "permission_denied", Message: denied.Error(), Details: map[string]any{"category": string(denied.Category)}}
	}
	return &toolkit.Error{Code: "permission_error", Message: "the permission check failed: " + err.Error()}
}

// Record writes the call to the audit log.
func (g Gate) Record(ctx context.Context, c *toolkit.Call, summary, outcome string, took time.Duration, detail string) {
	g.M.Audit(ctx, store.AuditEntry{
		Time: time.Now().UTC(), SessionID: c.SessionKey, Client: c.Client, Tool: c.Tool, Category: string(c.Category),
		ArgsSummary: summary, Outcome: outcome, Detail: detail, DurationMS: took.Milliseconds(),
	})
}

type permissionsArgs struct{}

type permissionsResult struct {
	Session    string                      `json:"session"`
	Categories []permission.CategoryStatus `json:"categories"`
	Note       string                      `json:"note"`
}

type auditArgs struct {
	Tool        string `json:"tool,omitempty" jsonschema:"only calls of this tool"`
	Category    string `json:"category,omitempty" jsonschema:"only this permission category" validate:"omitempty,oneof=filesystem database command hub_admin"`
	Outcome     string `json:"outcome,omitempty" jsonschema:"only this outcome, e.g. ok, error, permission_required"`
	Since       string `json:"since,omitempty" jsonschema:"ISO-8601 time; only newer entries" validate:"omitempty,iso8601"`
	AllSessions bool   `json:"all_sessions,omitempty" jsonschema:"include other sessions' calls (default: only this session)"`
	toolkit.Page
}

type auditRow struct {
	Time       string `json:"time"`
	Session    string `json:"session,omitempty"`
	Client     string `json:"client,omitempty"`
	Tool       string `json:"tool"`
	Category   string `json:"category,omitempty"`
	Args       string `json:"args,omitempty"`
	Outcome    string `json:"outcome"`
	Detail     string `json:"detail,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// Tools returns ha_get_permissions and ha_get_audit_log.
func Tools(m *permission.Manager, st *store.Store) []*toolkit.Tool {
	perms := toolkit.Define(toolkit.Spec[permissionsArgs, permissionsResult]{
		Name: "ha_get_permissions", Toolset: SetPermissions, Title: "Session permissions",
		Description: "Show which root-level permission categories (filesystem, database, command) this session holds, which are denied or waiting for the user, " +
			"and how the user can grant them. Call it when a tool returned permission_required or before planning file, database or shell work. " +
			"It cannot grant anything: only the user can.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ permissionsArgs) (permissionsResult, error) {
			return permissionsResult{
				Session:    c.SessionKey,
				Categories: m.Status(c.SessionKey),
				Note:       "Grants last for this session only. The user grants a category by accepting the prompt in their client, by approving the request in Home Assistant, or by giving you the one-time code from the Home Assistant notification (send it as permission_code when you retry).",
			}, nil
		},
	})
	audit := toolkit.Define(toolkit.Spec[auditArgs, toolkit.List[auditRow]]{
		Name: "ha_get_audit_log", Toolset: SetPermissions, Title: "Audit log",
		Description: "Read the audit log of privileged calls (file, database and shell tools, permission requests and grants), newest first. " +
			"Defaults to this session; filter by tool, category, outcome or since. Paged with limit/offset.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a auditArgs) (toolkit.List[auditRow], error) {
			limit, offset := a.Page.Effective()
			q := store.AuditQuery{Tool: a.Tool, Category: a.Category, Outcome: a.Outcome, Limit: limit, Offset: offset}
			if !a.AllSessions {
				q.SessionID = c.SessionKey
			}
			if a.Since != "" {
				q.Since, _ = toolkit.ParseTime(a.Since)
			}
			entries, total, err := st.ListAudit(ctx, q)
			if err != nil {
				return toolkit.List[auditRow]{}, &toolkit.Error{Code: "store_error", Message: "could not read the audit log: " + err.Error()}
			}
			rows := make([]auditRow, 0, len(entries))
			for _, e := range entries {
				rows = append(rows, auditRow{Time: e.Time.UTC().Format(time.RFC3339), Session: e.SessionID, Client: e.Client, Tool: e.Tool,
					Category: e.Category, Args: e.ArgsSummary, Outcome: e.Outcome, Detail: e.Detail, DurationMS: e.DurationMS})
			}
			return toolkit.Window(rows, total, a.Page), nil
		},
	})
	return []*toolkit.Tool{perms, audit}
}
