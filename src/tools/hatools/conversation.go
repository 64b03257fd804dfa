package hatools

import (
	"context"
	"errors"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tplguard"
)

// SetConversation is the toolset of Assist conversations and templates.
const SetConversation = "conversation"

type conversationArgs struct {
	Text           string `json:"text" validate:"required,min=1,max=2000" example:"turn off the kitchen lights"`
	Language       string `json:"language,omitempty" jsonschema:"default HA's" validate:"omitempty,max=20" example:"en"`
	AgentID        string `json:"agent_id,omitempty" jsonschema:"default conversation.home_assistant" validate:"omitempty,max=255"`
	ConversationID string `json:"conversation_id,omitempty" jsonschema:"continue a conversation: the id it returned" validate:"omitempty,max=255"`
}

// intentTarget is one entity, area or domain Assist acted on or reported.
type intentTarget = homeassistant.IntentTarget

type conversationResult struct {
	Speech         string         `json:"speech"`
	ResponseType   string         `json:"response_type"`
	ErrorCode      string         `json:"error_code,omitempty"`
	ConversationID string         `json:"conversation_id,omitempty"`
	Continue       bool           `json:"continue_conversation,omitempty"`
	Targets        []intentTarget `json:"targets,omitempty"`
	Success        []intentTarget `json:"success,omitempty"`
	Failed         []intentTarget `json:"failed,omitempty"`
}

type templateArgs struct {
	Template  string         `json:"template" validate:"required,min=1,max=20000" example:"{{ states('sun.sun') }}"`
	Variables map[string]any `json:"variables,omitempty"`
}

// conversationTools are the Assist and template tools, in the order tools/list shows them.
func conversationTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{processConversation(d), renderTemplate(d)}
}

// processConversation is ha_process_conversation.
func processConversation(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[conversationArgs, conversationResult]{
		Name: "ha_process_conversation", Toolset: SetConversation, Title: "Talk to Assist", Confirm: conversationConfirm(d),
		Description: "Say a sentence to Assist, HA's voice agent: it carries out commands (\"turn off the kitchen lights\") and answers questions, returning its reply and what it acted on. It may change devices (the user confirms locks, alarms, garage doors); prefer ha_call_service when you know the service.",
		Destructive: true,
		Summary:     func(a conversationArgs) string { return a.Text },
		Handler: func(ctx context.Context, c *toolkit.Call, a conversationArgs) (conversationResult, error) {
			r, err := d.HA.ProcessConversation(ctx, homeassistant.ConversationInput{Text: a.Text, Language: a.Language, AgentID: a.AgentID, ConversationID: a.ConversationID})
			if err != nil {
				var api *homeassistant.APIError
				if errors.As(err, &api) && api.Code == "invalid_format" && strings.Contains(api.Message, "agent_id") {
					return conversationResult{}, toolkit.InvalidArg("agent_id", "was refused by Home Assistant: "+api.Message, `{"agent_id": "conversation.home_assistant"}`)
				}
				return conversationResult{}, haError(err, false, "")
			}
			data := r.Response.Data
			return conversationResult{Speech: r.Response.Speech.Plain.Speech, ResponseType: r.Response.ResponseType, ErrorCode: data.Code,
				ConversationID: r.ConversationID, Continue: r.Continue, Targets: data.Targets, Success: data.Success, Failed: data.Failed}, nil
		},
	})
}

// renderTemplate is ha_render_template.
func renderTemplate(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[templateArgs, toolkit.Text]{
		Name: "ha_render_template", Toolset: SetConversation, Title: "Render a template",
		Description: "Render a Jinja template in HA and return the text, e.g. {{ area_entities('kitchen') }}: test automation templates or compute an answer in one call. Templates must do bounded work: loops nested at most 3 deep, range() with constant bounds (10,000 iterations in all), no macro that calls itself, '*' repeating a string or list only a constant, small number of times.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a templateArgs) (toolkit.Text, error) {
			// HA renders on its event loop with no time limit: refuse unbounded work before sending.
			if err := checkTemplate(a.Template); err != nil {
				return "", err
			}
			out, err := d.HA.RenderTemplate(ctx, a.Template, a.Variables)
			if err != nil {
				var api *homeassistant.APIError
				if errors.As(err, &api) && api.Status == 400 {
					return "", toolkit.InvalidArg("template", "Home Assistant could not render it: "+api.Message, `{"template": "{{ states('sun.sun') }}"}`)
				}
				return "", haError(err, false, "")
			}
			return toolkit.Text(out), nil
		},
	})
}

// checkTemplate refuses a template whose work the model could make unbounded (package tplguard),
// as an error on the field template that says what to change.
func checkTemplate(src string) error {
	var te *tplguard.Error
	if err := tplguard.Check(src); !errors.As(err, &te) {
		return err
	}
	if te.Syntax {
		return toolkit.InvalidArg("template", te.Msg+"; fix the Jinja syntax", `{"template": "{{ states('sun.sun') }}"}`)
	}
	return toolkit.InvalidArg("template", te.Msg+" (Home Assistant renders templates on its event loop: an unbounded render stalls the whole home)",
		`{"template": "{% for s in states.light | selectattr('state', 'eq', 'on') %}{{ s.name }} {% endfor %}"}`)
}
