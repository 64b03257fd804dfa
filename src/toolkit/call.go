package toolkit

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/authn"
)

// Call is what a handler may know about the request it serves: who, which session, and how to
// talk back (progress, log messages, questions to the user). It carries nothing of HTTP.
type Call struct {
	Tool       string
	Category   Category
	SessionKey string
	Client     string // client name and version from initialize, for the audit log
	// Confirmed says how the user confirmed this call (ConfirmedBy…), "" when it needed no confirmation.
	Confirmed string
	// Kind is what the call changes, for the audit log (undo.go); set when it is recorded.
	Kind string

	undo atomic.Pointer[Undo] // how the change can be undone (undo.go)

	env     *Env
	req     *mcp.CallToolRequest
	decoded bool   // the arguments passed validation: the call is worth an audit line
	rt      *round // MCP 2026-07-28: the input_required exchange this call belongs to (mrtr.go)
}

func newCall(env *Env, t *Tool, req *mcp.CallToolRequest) *Call {
	c := &Call{Tool: t.def.Name, Category: t.category, env: env, req: req}
	if env.SessionKey != nil {
		c.SessionKey = env.SessionKey(req)
	} else if req.Session != nil {
		c.SessionKey = req.Session.ID()
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			c.Client = p.ClientInfo.Name
			if p.ClientInfo.Version != "" {
				c.Client += "/" + p.ClientInfo.Version
			}
		}
	}
	return c
}

func (c *Call) authorize(ctx context.Context, summary string) error {
	if c.env.Gate == nil {
		return &Error{Code: "permission_denied", Message: fmt.Sprintf("the %s category is not available on this server", c.Category)}
	}
	return c.env.Gate.Authorize(ctx, c, summary)
}

// TokenInfo is the verified bearer token behind an HTTP request (nil for stdio).
func (c *Call) TokenInfo() *auth.TokenInfo {
	if c.req == nil || c.req.Extra == nil {
		return nil
	}
	return c.req.Extra.TokenInfo
}

// Principal is the caller behind an HTTP request, as its token's verifier named it; nil for
// --no-auth, and for stdio and SSH, whose calls carry no token: authn.Caller(ctx, c.TokenInfo())
// also finds the principal their connection's context carries.
func (c *Call) Principal() *authn.Principal { return authn.PrincipalOf(c.TokenInfo()) }

// Progress sends a progress notification when the client asked for them; it is a no-op otherwise.
func (c *Call) Progress(ctx context.Context, progress, total float64, message string) {
	if c.req == nil || c.req.Session == nil {
		return
	}
	token := c.req.Params.GetProgressToken()
	if token == nil {
		return
	}
	_ = c.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: token, Progress: progress, Total: total, Message: message,
	})
}

// Log sends a log message to the client, honouring the level it set with logging/setLevel.
//
//lint:ignore SA1019 MCP logging (deprecated by SEP-2577 in 2026-07-28) is how clients of earlier protocol versions get it; dropping it is a design change.
func (c *Call) Log(ctx context.Context, level mcp.LoggingLevel, data any) {
	if c.req == nil || c.req.Session == nil {
		return
	}
	//lint:ignore SA1019 as for the signature above.
	_ = c.req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: c.Tool, Data: data})
}

// CanElicit reports whether the client can ask its user a question (MCP elicitation, form mode). A
// client that declares only URL mode cannot.
func (c *Call) CanElicit() bool {
	e := c.elicitation()
	return e != nil && (e.Form != nil || e.URL == nil)
}

// CanOpenURL reports whether the client can show its user a page (MCP URL-mode elicitation).
// Never on 2026-07-28: the page would have to go out in an input_required result and the
// permission manager waits for the page's answer within the call; such clients get the
// approval link in the refusal instead.
func (c *Call) CanOpenURL() bool {
	e := c.elicitation()
	return e != nil && e.URL != nil && !c.modern()
}

func (c *Call) elicitation() *mcp.ElicitationCapabilities {
	if c.req == nil || c.req.Session == nil {
		return nil
	}
	p := c.req.Session.InitializeParams()
	if p == nil || p.Capabilities == nil {
		return nil
	}
	return p.Capabilities.Elicitation
}

// OpenURL asks the client to show the user a page (URL-mode elicitation, id names it for
// URLDone). accepted means the user agreed to open it; what they do there happens out of band.
func (c *Call) OpenURL(ctx context.Context, message, url, id string) (bool, error) {
	if !c.CanOpenURL() {
		return false, fmt.Errorf("the client cannot open a page for the user")
	}
	res, err := c.req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: message, URL: url, ElicitationID: id})
	if err != nil {
		return false, err
	}
	return res.Action == "accept", nil
}

// URLDone tells the client that the page opened by OpenURL was answered.
func (c *Call) URLDone(ctx context.Context, id string) {
	if c.CanOpenURL() {
		_ = c.req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
	}
}

// Confirm asks the user a yes/no question through the client. It returns true only when the
// user explicitly accepted and ticked the box; decline and cancel are false.
func (c *Call) Confirm(ctx context.Context, message, checkbox string) (bool, error) {
	return c.confirmBound(ctx, message, checkbox, "")
}

// confirmBound is Confirm for an answer that covers one effect: on a retried round (2026-07-28) an
// answer counts only for the same question about the same effect (bind, the Ask's digest).
func (c *Call) confirmBound(ctx context.Context, message, checkbox, bind string) (bool, error) {
	if !c.CanElicit() {
		return false, fmt.Errorf("the client cannot ask the user")
	}
	if c.rt != nil {
		return c.askOnRetry(message, checkbox, bind)
	}
	res, err := c.req.Session.Elicit(ctx, confirmParams(message, checkbox))
	if err != nil {
		return false, err
	}
	if res.Action != "accept" {
		return false, nil
	}
	allow, _ := res.Content["allow"].(bool)
	return allow, nil
}

// Session is the MCP session behind the call, for toolsets that push notifications to it
// (event subscriptions). Nil for a sessionless request.
func (c *Call) Session() *mcp.ServerSession {
	if c.req == nil {
		return nil
	}
	return c.req.Session
}
