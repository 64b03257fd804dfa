package home_test

import (
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/sim/home"
)

func converseResponse(t *testing.T, r map[string]any) (kind, speech string, data map[string]any) {
	t.Helper()
	resp, ok := r["response"].(map[string]any)
	if !ok {
		t.Fatalf("no response in %v", r)
	}
	kind, _ = resp["response_type"].(string)
	speech, _ = resp["speech"].(map[string]any)["plain"].(map[string]any)["speech"].(string)
	data, _ = resp["data"].(map[string]any)
	return kind, speech, data
}

func TestConverse(t *testing.T) {
	h, err := home.New(home.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, c := range []struct {
		text, kind, speech, code string
		state                    map[string]string
	}{
		{"Turn on the kitchen lights.", "action_done", "Turned on the lights", "", map[string]string{"light.kitchen_ceiling": "on", "light.kitchen_island": "on"}},
		{"switch the lights in the bedroom off", "action_done", "Turned off the lights", "", map[string]string{"light.bedroom_ceiling": "off", "light.bedroom_nightstand": "off"}},
		{"please turn off Christmas Lights", "action_done", "Turned off Christmas Lights", "", map[string]string{"switch.christmas_lights": "off"}},
		{"turn the garage light on", "action_done", "Turned on Garage Light", "", map[string]string{"light.garage": "on"}},
		{"What's the temperature in the kitchen?", "query_answer", "°C in the Kitchen", "", nil},
		{"what is the temperature", "query_answer", "It is ", "", nil},
		{"turn on the lights in the attic", "error", "not aware of any area called attic", "no_valid_targets", nil},
		{"turn on the toaster", "error", "not aware of any device called toaster", "no_valid_targets", nil},
		{"what is the temperature in the garden shed", "error", "area called garden shed", "no_valid_targets", nil},
		{"open the pod bay doors", "error", "couldn't understand", "no_intent_match", nil},
	} {
		r := h.Converse(c.text, "", "", "")
		kind, speech, data := converseResponse(t, r)
		if kind != c.kind || !strings.Contains(speech, c.speech) || data["code"] != nilIfEmptyCode(c.code) {
			t.Errorf("%q: %s %q %v", c.text, kind, speech, data)
		}
		if id, _ := r["conversation_id"].(string); len(id) != 26 {
			t.Errorf("%q: conversation id %q", c.text, id)
		}
		for id, want := range c.state {
			if st, ok := h.State(id); !ok || st.State != want {
				t.Errorf("%q: %s is %v", c.text, id, st)
			}
		}
	}
	if r := h.Converse("turn on the garage light", "nl", "c1", ""); r["conversation_id"] != "c1" {
		t.Errorf("conversation id not kept: %v", r)
	} else if kind, _, _ := converseResponse(t, r); kind != "error" {
		t.Errorf("Dutch understood: %v", r)
	}
	if !home.ValidAgent("conversation.home_assistant") || !home.ValidAgent("homeassistant") || home.ValidAgent("conversation.openai") {
		t.Error("agent ids")
	}
}

func nilIfEmptyCode(code string) any {
	if code == "" {
		return nil
	}
	return code
}

func FuzzConverse(f *testing.F) {
	h, err := home.New(home.Options{Seed: 6})
	if err != nil {
		f.Fatal(err)
	}
	defer h.Close()
	for _, s := range []string{"turn on the kitchen lights", "what is the temperature in the ", "turn  on", "switch off the the", "how cold is it in ÄÖ", "turn on x in y in z"} {
		f.Add(s, "en")
	}
	f.Fuzz(func(t *testing.T, text, lang string) {
		r := h.Converse(text, lang, "", "")
		kind, speech, data := converseResponse(t, r)
		switch kind {
		case "action_done", "query_answer":
			if _, ok := data["success"]; !ok {
				t.Fatalf("%q: no success list in %v", text, data)
			}
		case "error":
			if data["code"] == nil {
				t.Fatalf("%q: error without code", text)
			}
		default:
			t.Fatalf("%q: response type %q", text, kind)
		}
		if speech == "" {
			t.Fatalf("%q: no speech", text)
		}
	})
}
