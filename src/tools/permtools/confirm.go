package permtools

import (
	"context"
	"errors"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/toolkit"
)

var _ toolkit.Confirmer = Gate{}

// ConfirmAction asks the user to approve one call through the permission manager's approval path:
// a request for this exact call, answered on hamcp's approval page (opened in the client when it
// supports URL-mode elicitation) or in the panel.
func (g Gate) ConfirmAction(ctx context.Context, c *toolkit.Call, a toolkit.Action) error {
	who := authn.Caller(ctx, c.TokenInfo())
	req := permission.Action{SessionKey: c.SessionKey, Client: c.Client, Tool: c.Tool, Owner: who.Owner(), SignIn: SignIn(who),
		Question: a.Question, ArgsSummary: a.Summary, Key: a.Key}
	if c.CanOpenURL() {
		req.OpenURL = c.OpenURL
		req.URLDone = c.URLDone
	}
	err := g.M.ConfirmAction(ctx, req)
	var required *permission.ConfirmRequiredError
	var denied *permission.ConfirmDeniedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &required):
		details := map[string]any{"request_id": required.RequestID, "classes": a.Classes}
		if required.Link != "" {
			details["approval_url"] = required.Link
		}
		return &toolkit.Error{Code: "confirmation_required", Message: required.Error(), Hint: required.HowTo, Details: details}
	case errors.As(err, &denied):
		return &toolkit.Error{Code: "confirmation_denied", Message: denied.Error()}
	}
	return &toolkit.Error{Code: "permission_error", Message: "the confirmation check failed: " + err.Error()}
}
