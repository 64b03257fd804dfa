package homeassistant

import "context"

// ConversationInput is one sentence for Assist (WS conversation/process); empty members are
// left to Home Assistant (its language, its built-in agent, a new conversation).
type ConversationInput struct {
	Text           string `json:"text"`
	Language       string `json:"language,omitempty"`
	AgentID        string `json:"agent_id,omitempty"`
	ConversationID string `json:"conversation_id,omitempty"`
}

// ConversationResult is HA's ConversationResult.as_dict(): Assist's answer and what it acted on.
type ConversationResult struct {
	Response       ConversationResponse `json:"response"`
	ConversationID string               `json:"conversation_id"`
	Continue       bool                 `json:"continue_conversation"`
}

// ConversationResponse is the intent response inside a ConversationResult.
type ConversationResponse struct {
	Speech struct {
		Plain struct {
			Speech string `json:"speech"`
		} `json:"plain"`
	} `json:"speech"`
	ResponseType string `json:"response_type"` // action_done | query_answer | error
	Data         struct {
		Code    string         `json:"code"` // for response_type error, e.g. no_intent_match
		Targets []IntentTarget `json:"targets"`
		Success []IntentTarget `json:"success"`
		Failed  []IntentTarget `json:"failed"`
	} `json:"data"`
}

// IntentTarget is one entity, area or domain an intent acted on or reported.
type IntentTarget struct {
	Type string `json:"type"` // entity | area | domain | ...
	Name string `json:"name"`
	ID   string `json:"id,omitempty"`
}

// ProcessConversation hands a sentence to Assist (WS conversation/process), which may carry out
// what it understands. An agent_id HA refuses is an *APIError with Code "invalid_format".
func (c *Client) ProcessConversation(ctx context.Context, in ConversationInput) (ConversationResult, error) {
	var out ConversationResult
	err := c.Call(ctx, "conversation/process", in, &out)
	return out, err
}
