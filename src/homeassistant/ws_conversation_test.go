package homeassistant

import (
	"context"
	"errors"
	"testing"
)

func TestWSProcessConversation(t *testing.T) {
	t.Parallel()
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	ctx := context.Background()
	tests := []struct {
		name     string
		in       ConversationInput
		wantType string
		wantCode string // Data.Code for error answers
		wantErr  string // APIError code
	}{
		{"a question", ConversationInput{Text: "What is the temperature in the living room?"}, "query_answer", "", ""},
		{"nonsense", ConversationInput{Text: "fly me to the moon"}, "error", "no_intent_match", ""},
		{"another language", ConversationInput{Text: "mach das Licht aus", Language: "de"}, "error", "no_intent_match", ""},
		{"continued conversation", ConversationInput{Text: "fly me to the moon", ConversationID: "01JTESTCONVERSATION"}, "error", "no_intent_match", ""},
		{"unknown agent", ConversationInput{Text: "hello", AgentID: "conversation.nobody"}, "", "", "invalid_format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.ProcessConversation(ctx, tt.in)
			if tt.wantErr != "" {
				var api *APIError
				if !errors.As(err, &api) || api.Code != tt.wantErr {
					t.Fatalf("err = %v, want APIError code %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Response.ResponseType != tt.wantType || got.Response.Data.Code != tt.wantCode || got.Response.Speech.Plain.Speech == "" {
				t.Fatalf("answer = %+v, want type %q code %q with speech", got.Response, tt.wantType, tt.wantCode)
			}
			if tt.in.ConversationID != "" && got.ConversationID != tt.in.ConversationID {
				t.Fatalf("conversation id %q, want %q", got.ConversationID, tt.in.ConversationID)
			}
			if got.ConversationID == "" {
				t.Fatal("no conversation id")
			}
		})
	}
}
