package hass_test

import (
	"net/url"
	"strings"
	"testing"
)

func TestRESTConversationProcess(t *testing.T) {
	r := api(t, "POST", "/api/conversation/process", `{"text": "turn off the garage light"}`)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	res := r.json(t).(map[string]any)
	resp := res["response"].(map[string]any)
	if resp["response_type"] != "action_done" || resp["data"].(map[string]any)["success"].([]any)[0].(map[string]any)["id"] != "light.garage" {
		t.Errorf("result: %s", r.body)
	}
	for _, c := range []struct {
		body, msg string
	}{
		{`{"text": "hi", "agent_id": "x"}`, "Message format incorrect: invalid agent ID for dictionary value @ data['agent_id']"},
		{`{}`, "Message format incorrect: required key not provided @ data['text']"},
		{`{"text": 5}`, "Message format incorrect: expected str for dictionary value @ data['text']"},
		{`{"text": "hi", "colour": "red"}`, "Message format incorrect: extra keys not allowed @ data['colour']"},
		{`not json`, "Invalid JSON."},
	} {
		r := api(t, "POST", "/api/conversation/process", c.body)
		if r.status != 400 || r.json(t).(map[string]any)["message"] != c.msg {
			t.Errorf("%s: %d %s", c.body, r.status, r.body)
		}
	}
	if r := do(t, home.URL(), "POST", "/api/conversation/process", "wrong", `{"text":"hi"}`); r.status != 401 {
		t.Errorf("bad token: %d", r.status)
	}
}

func TestRESTShoppingList(t *testing.T) {
	r := api(t, "POST", "/api/shopping_list/item", `{"name": "Pears"}`)
	item, _ := r.json(t).(map[string]any)
	id, _ := item["id"].(string)
	if r.status != 200 || item["name"] != "Pears" || id == "" {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	if r := api(t, "POST", "/api/shopping_list/item/"+id, `{"complete": true}`); r.status != 200 || r.json(t).(map[string]any)["complete"] != true {
		t.Errorf("update: %d %s", r.status, r.body)
	}
	found := false
	for _, it := range api(t, "GET", "/api/shopping_list", "").json(t).([]any) {
		found = found || it.(map[string]any)["id"] == id
	}
	if !found {
		t.Error("GET /api/shopping_list lacks the new item")
	}
	if r := api(t, "POST", "/api/shopping_list/clear_completed", ""); r.status != 200 || !strings.Contains(string(r.body), "Cleared completed items.") {
		t.Errorf("clear: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		path, body string
		status     int
		msg        string
	}{
		{"/api/shopping_list/item/" + id, `{"name": "x"}`, 404, "Item not found"},
		{"/api/shopping_list/item/" + id, `{"complete": "yes"}`, 400, "Item not found"},
		{"/api/shopping_list/item", `{}`, 400, "Message format incorrect: required key not provided @ data['name']"},
		{"/api/shopping_list/item", `[1]`, 400, "Message format incorrect: expected a dictionary"},
	} {
		r := api(t, "POST", c.path, c.body)
		if r.status != c.status || r.json(t).(map[string]any)["message"] != c.msg {
			t.Errorf("%s %s: %d %s", c.path, c.body, r.status, r.body)
		}
	}
}

func TestRESTEventListeners(t *testing.T) {
	counts := map[string]float64{}
	for _, e := range api(t, "GET", "/api/events", "").json(t).([]any) {
		m := e.(map[string]any)
		counts[m["event"].(string)] = m["listener_count"].(float64)
	}
	for _, ev := range []string{"state_changed", "homeassistant_stop", "entity_registry_updated", "shopping_list_updated", "call_service"} {
		if counts[ev] < 1 {
			t.Errorf("%s has %v listeners: %v", ev, counts[ev], counts)
		}
	}
}

// FuzzConversationBody: whatever the body, the view answers 200 with a conversation result or
// 400 with HA's {"message"} — never a crash or another status.
func FuzzConversationBody(f *testing.F) {
	for _, s := range []string{`{"text":"turn on the garage light"}`, `{"text":"x","agent_id":null}`, `{"text":"", "language":"de"}`, `[]`, `{"text":"what is the temperature in the "}`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := api(t, "POST", "/api/conversation/process", body)
		v := r.json(t)
		switch r.status {
		case 200:
			resp, _ := v.(map[string]any)["response"].(map[string]any)
			if resp == nil || resp["response_type"] == nil {
				t.Fatalf("200 without a response: %s", r.body)
			}
		case 400:
			if msg, _ := v.(map[string]any)["message"].(string); msg == "" {
				t.Fatalf("400 without a message: %s", r.body)
			}
		default:
			t.Fatalf("status %d for %q", r.status, body)
		}
	})
}

// FuzzShoppingItemBody: the update view answers 200, 400 or 404 with JSON for any JSON object.
func FuzzShoppingItemBody(f *testing.F) {
	for _, s := range []string{`{"name":"x"}`, `{"complete":true}`, `{"complete":1}`, `{"other":1}`, `{}`} {
		f.Add(s, "0123456789abcdef0123456789abcdef")
	}
	f.Fuzz(func(t *testing.T, body, id string) {
		if id == "" {
			return
		}
		r := api(t, "POST", "/api/shopping_list/item/"+url.PathEscape(id), body)
		if r.status == 500 {
			return // request.json() raising on a body that is not JSON, as in HA
		}
		if r.status != 200 && r.status != 400 && r.status != 404 {
			t.Fatalf("status %d for %q", r.status, body)
		}
		r.json(t)
	})
}
