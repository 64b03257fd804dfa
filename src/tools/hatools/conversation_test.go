package hatools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
)

type dtAssist struct {
	Speech         string `json:"speech"`
	ResponseType   string `json:"response_type"`
	ErrorCode      string `json:"error_code"`
	ConversationID string `json:"conversation_id"`
	Success        []struct {
		ID string `json:"id"`
	} `json:"success"`
}

func testConversation(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	ctx := context.Background()
	for _, c := range []struct {
		text, wantType, wantCode, speech string
		check                            func(t *testing.T, r dtAssist)
	}{
		{"Turn off the kitchen lights", "action_done", "", "Turned off the lights", func(t *testing.T, r dtAssist) {
			for _, id := range []string{"light.kitchen_ceiling", "light.kitchen_island"} {
				testkit.Eventually(t, id+" off", func() bool { s, ok := e.ha.Mirror().Get(id); return ok && s.State == "off" })
			}
		}},
		{"turn on the Office Desk Lamp", "action_done", "", "Turned on Office Desk Lamp", func(t *testing.T, r dtAssist) {
			st, err := e.ha.State(ctx, "light.office_desk")
			if err != nil || st.State != "on" {
				t.Errorf("office desk lamp: %v %v", st.State, err)
			}
		}},
		{"What is the temperature in the bedroom?", "query_answer", "", "°C in the Bedroom", func(t *testing.T, r dtAssist) {
			if len(r.Success) != 1 || r.Success[0].ID != "sensor.bedroom_temperature" {
				t.Errorf("answered from %+v", r.Success)
			}
		}},
		{"sing me a song", "error", "no_intent_match", "couldn't understand", nil},
		{"turn on the attic lights", "error", "no_valid_targets", "not aware of any", nil},
	} {
		var r dtAssist
		dtOK(t, cs, "ha_process_conversation", map[string]any{"text": c.text, "confirm": true}, &r)
		if r.ResponseType != c.wantType || r.ErrorCode != c.wantCode || !strings.Contains(r.Speech, c.speech) || r.ConversationID == "" {
			t.Errorf("%q: %+v", c.text, r)
			continue
		}
		if c.check != nil {
			c.check(t, r)
		}
	}
	var r dtAssist
	dtOK(t, cs, "ha_process_conversation", map[string]any{"text": "turn off the office desk lamp", "conversation_id": "chat-42", "agent_id": "conversation.home_assistant", "confirm": true}, &r)
	if r.ConversationID != "chat-42" || r.ResponseType != "action_done" {
		t.Errorf("continued conversation: %+v", r)
	}

	for _, c := range []struct{ tpl, want string }{
		{"{{ 1 + 2 }}", "3"},
		{"{{ states('sun.sun') in ['above_horizon', 'below_horizon'] }}", "True"},
		{"{{ area_name('light.kitchen_ceiling') }}", "Kitchen"},
	} {
		res := dtCall(t, cs, "ha_render_template", map[string]any{"template": c.tpl})
		if res.IsError || dtText(res) != c.want {
			t.Errorf("template %q: %s", c.tpl, dtText(res))
		}
	}

	dtErrCases(t, cs, []dtErrCase{
		{"empty text", "ha_process_conversation", map[string]any{"text": ""}, "invalid_argument", "text", ""},
		{"unknown agent (HA invalid_format)", "ha_process_conversation", map[string]any{"text": "hi", "agent_id": "conversation.nobody", "confirm": true}, "invalid_argument", "agent_id", "invalid agent ID"},
		{"broken template (HA 400)", "ha_render_template", map[string]any{"template": "{{ states('sun.sun') | no_such_filter }}"}, "invalid_argument", "template", "Error rendering template"},
		{"missing template", "ha_render_template", map[string]any{}, "invalid_argument", "template", ""},
	})
}
