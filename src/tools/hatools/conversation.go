package hatools

import (
	"context"
	"errors"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetConversation is the toolset of Assist conversations and templates.
const SetConversation = "conversation"


type conversationArgs struct {
	Text           string `json:"text" jsonschema:"what to say to Assist, e.g. turn off the kitchen lights" validate:"required,min=1,max=2000" example:"turn off the kitchen lights"`
	Language       string `json:"language,omitempty" jsonschema:"language code (default: Home Assistant's language)" validate:"omitempty,max=20" example:"en"`
	AgentID        string `json:"agent_id,omitempty" jsonschema:"conversation agent (default: Home Assistant's built-in conversation.home_assistant)" validate:"omitempty,max=255"`
	ConversationID string `json:"conversation_id,omitempty" jsonschema:"continue an earlier conversation: pass the conversation_id it returned" validate:"omitempty,max=255"`
}

// intentTarget is one entity, area or domain Assist acted on or reported.
type intentTarget struct {
	Type string `json:"type"`
	Name string `json:"name"`
	ID   string `json:"id,omitempty"`
}

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

// assistReply is ConversationResult.as_dict() as HA sends it.
type assistReply struct {
	Response struct {
		Speech struct {
			Plain struct {
				Speech string `json:"speech"`
			} `json:"plain"`
		} `json:"speech"`
		ResponseType string `json:"response_type"`
		Data         struct {
			Code    string         `json:"code"`
			Targets []intentTarget `json:"targets"`
			Success []intentTarget `json:"success"`
			Failed  []intentTarget `json:"failed"`
		} `json:"data"`
	} `json:"response"`
	ConversationID string `json:"conversation_id"`
	Continue       bool   `json:"continue_conversation"`
}

type templateArgs struct {
	Template  string         `json:"template" jsonschema:"Jinja template to render, e.g. {{ states('sun.sun') }}" validate:"required,min=1,max=20000" example:"{{ states('sun.sun') }}"`
	Variables map[string]any `json:"variables,omitempty" jsonschema:"variables the template can use"`
}

func conversationTools(d Deps) []*toolkit.Tool {
	converse := toolkit.Define(toolkit.Spec[conversationArgs, conversationResult]{
		Name: "ha_process_conversation", Toolset: SetConversation, Title: "Talk to Assist", Confirm: conversationConfirm(d),
		Description: "Send a sentence to Home Assistant's Assist (its conversation agent), which understands and carries out commands like " +
			"\"turn off the kitchen lights\" or questions like \"what is the temperature in the bedroom\", and returns its spoken answer and what it acted on. " +
			"Assist may change devices; when a lock, alarm or garage door is exposed to it, the user confirms the call. Prefer ha_call_service when you know the entity and service; use this to try what a voice command does.",
		Destructive: true,
		Summary:     func(a conversationArgs) string { return a.Text },
		Handler: func(ctx context.Context, c *toolkit.Call, a conversationArgs) (conversationResult, error) {
			payload := map[string]any{"text": a.Text}
			for k, v := range map[string]string{"language": a.Language, "agent_id": a.AgentID, "conversation_id": a.ConversationID} {
				if v != "" {
					payload[k] = v
				}
			}
			var r assistReply
			if err := d.HA.Call(ctx, "conversation/process", payload, &r); err != nil {
				var api *homeassistant.APIError
				if errors.As(err, &api) && api.Code == "invalid_format" && strings.Contains(api.Message, "agent_id") {
					return conversationResult{}, toolkit.InvalidArg("agent_id", "was refused by Home Assistant: "+api.Message, `{"agent_id": "conversation.home_assistant"}`)
				}
				return conversationResult{}, haError(err, false, "")
			}
			return conversationResult{Speech: r.Response.Speech.Plain.Speech, ResponseType: r.Response.ResponseType, ErrorCode: r.Response.Data.Code,
				ConversationID: r.ConversationID, Continue: r.Continue, Targets: r.Response.Data.Targets,
				Success: r.Response.Data.Success, Failed: r.Response.Data.Failed}, nil
		},
	})

	render := toolkit.Define(toolkit.Spec[templateArgs, toolkit.Text]{
		Name: "ha_render_template", Toolset: SetConversation, Title: "Render a template",
		Description: "Render a Home Assistant Jinja template and return the text, e.g. {{ states('sensor.outdoor_temperature') }}, " +
			"{{ area_entities('kitchen') }} or {{ states.light | selectattr('state','eq','on') | map(attribute='entity_id') | list }}. " +
			"Use it to test templates for automations or to compute an answer in one call; it changes nothing.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a templateArgs) (toolkit.Text, error) {
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
	return []*toolkit.Tool{converse, render}
}
