package toolkit

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Confirm declares that some calls of a tool need the user's confirmation. The toolkit enforces it in
// one place, after the permission grants and before the handler: it asks the user through the client
// (MCP elicitation, form mode) when the client can, else through the permission system's approval path
// (a request for this one call, answered on hamcp's approval page or in the panel). The `confirm`
// argument the model sets is accepted on its own only for the classes the user trusts the model with
// (Env.ConfirmTrusted, the confirm_trusted option): it is the model's word, not the user's.
type Confirm[In any] struct {
	// When says which calls need it, in words for DOCS.md, e.g. "action remove or clear_completed".
	When string
	// Check decides for one call: an Ask with no classes means none is needed. It may read the backend
	// (to resolve targets, read a script); an error stops the call.
	Check func(ctx context.Context, c *Call, in In) (Ask, error)
}

// Ask is what one call needs confirmed.
type Ask struct {
	// Classes are the policy classes the action falls in (see package sensitive); empty = nothing to ask.
	Classes []string
	// Question is shown to the user as it is: say what will happen, to what, e.g. "Unlock lock.front_door
	// (Front Door)?". Keep secrets out of it: the approval request is listed in the panel.
	Question string
	// Digest sums up the resolved effect and everything read to decide it (configurations, group
	// members, device classes). The user's yes covers that effect only: an approval is bound to it,
	// and a call whose digest changed while the user was asked is asked again.
	Digest string
}

// Confirmer is implemented by a Gate that can ask the user to approve one action out of the model's
// reach (the permission manager's approval page and panel). It returns nil when the user approved this
// exact call, or an error the model can act on.
type Confirmer interface {
	ConfirmAction(ctx context.Context, c *Call, a Action) error
}

// Action is one call waiting for the user's confirmation.
type Action struct {
	Ask
	Summary string // the audit summary of the arguments
	// Key identifies the exact call (tool and every argument): an approval lets this call, and no
	// other, run once.
	Key string
}

// Ways a confirmation was obtained, written to the audit log.
const (
	ConfirmedByUser     = "the user accepted when asked by the client"
	ConfirmedByApproval = "the user approved it on the approval page or in the panel"
	ConfirmedByPolicy   = "confirm=true, trusted for this class by the confirm_trusted option"
)

const confirmArg = "confirm"

// confirmProperty is the one description of the confirm argument every confirmed tool shares.
func confirmProperty() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: "you asked the user and they agreed. Enough on its own only for the " +
		"kinds of action the user trusts you with (option confirm_trusted); otherwise hamcp asks the user itself"}
}

// takeConfirm removes the confirm argument from args (the handler never sees it) and reports it.
func takeConfirm(args map[string]any) (bool, error) {
	v, ok := args[confirmArg]
	if !ok {
		return false, nil
	}
	delete(args, confirmArg)
	b, isBool := v.(bool)
	if !isBool && v != nil {
		return false, InvalidArg(confirmArg, "must be a boolean (true or false)", "true")
	}
	return b, nil
}

// callKey names one exact call: the tool and its arguments in canonical JSON (map keys sorted).
func callKey(tool string, args map[string]any) string {
	b, _ := json.Marshal(args)
	return tool + " " + string(b)
}

// trusts reports whether the options let confirm=true stand for the user in every class of the ask.
func (env *Env) trusts(classes []string) bool {
	for _, c := range classes {
		if !slices.Contains(env.ConfirmTrusted, c) {
			return false
		}
	}
	return true
}

// OnceNote is what every confirmation tells the user: a yes is for this one action, not a permission.
const OnceNote = "Yes lets this one action run once; it grants nothing else."

// confirm enforces one call's Ask. recheck decides again once the user has answered: a swapped
// scene, script or group behind the same arguments is a different effect, which the yes does not
// cover.
func (c *Call) confirm(ctx context.Context, a Ask, said bool, summary, key string, recheck func(context.Context) (Ask, error)) error {
	trusted := c.env.trusts(a.Classes)
	if said && trusted {
		c.Confirmed = ConfirmedByPolicy
		return nil
	}
	if a.Digest != "" {
		key += " effect:" + a.Digest
	}
	err := c.askUser(ctx, a, trusted, summary, key)
	if err != nil || recheck == nil {
		return err
	}
	again, err := recheck(ctx)
	if err != nil {
		return err
	}
	if again.Digest != a.Digest || !slices.Equal(again.Classes, a.Classes) {
		c.Confirmed = ""
		return &Error{Code: "confirmation_stale", Message: "what this call would do changed while the user was being asked (" +
			a.Question + "); the user's answer does not cover what it would do now, so nothing was done",
			Hint: "call again: the user is asked about what it does now"}
	}
	return nil
}

// askUser obtains the user's answer to a, through the client or the approval path.
func (c *Call) askUser(ctx context.Context, a Ask, trusted bool, summary, key string) error {
	classes := strings.Join(a.Classes, ", ")
	if c.CanElicit() {
		ok, err := c.confirmBound(ctx, a.Question+" "+OnceNote, "Yes, do this once", a.Digest)
		if err == nil {
			if !ok {
				return &Error{Code: "confirmation_declined", Message: "the user declined: " + a.Question,
					Hint: "nothing was done; do not retry this call unless the user asks for it again"}
			}
			c.Confirmed = ConfirmedByUser
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if asksOnRetry(err) {
			return err // 2026-07-28: the client asks the user and retries the call (mrtr.go)
		}
		// The client failed to ask: the approval path still can.
	}
	if trusted {
		return &Error{Code: "confirmation_required", Field: confirmArg, Message: a.Question + " This needs confirming.",
			Hint: "ask the user first, then repeat the call with \"confirm\": true"}
	}
	if cf, ok := c.env.Gate.(Confirmer); ok {
		if err := cf.ConfirmAction(ctx, c, Action{Ask: a, Summary: summary, Key: key}); err != nil {
			return err
		}
		c.Confirmed = ConfirmedByApproval
		return nil
	}
	return &Error{Code: "confirmation_required", Message: a.Question + " Only the user can confirm this (" + classes +
		"): confirm=true is not enough, and this client cannot ask them and this server has no approval page.",
		Hint: "tell the user; they can use an MCP client that supports elicitation, or add " + classes + " to the add-on option confirm_trusted"}
}
