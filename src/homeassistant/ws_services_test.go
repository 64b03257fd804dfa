package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestWSCallService(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	ctx := context.Background()
	for _, tc := range []struct {
		name            string
		domain, service string
		data            map[string]any
		target          ServiceTarget
		returnResponse  bool
		code            string // "" = success; "-" = refused before sending
		responseHas     string
	}{
		{name: "no response", domain: "homeassistant", service: "update_entity", target: ServiceTarget{EntityID: []string{"sun.sun"}}},
		{name: "response", domain: "todo", service: "get_items", data: map[string]any{"status": []string{"needs_action", "completed"}},
			target: ServiceTarget{EntityID: []string{"todo.shopping_list"}}, returnResponse: true, responseHas: "todo.shopping_list"},
		{name: "validation refused", domain: "todo", service: "remove_item", data: map[string]any{"item": []string{"no such item, surely"}},
			target: ServiceTarget{EntityID: []string{"todo.shopping_list"}}, code: "service_validation_error"},
		{name: "unknown service", domain: "light", service: "make_coffee", target: ServiceTarget{EntityID: []string{"light.kitchen"}}, code: "not_found"},
		{name: "bad domain", domain: "Light", service: "turn_on", code: "-"},
		{name: "bad service", domain: "light", service: "turn on", code: "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.CallServiceWS(ctx, tc.domain, tc.service, tc.data, tc.target, tc.returnResponse)
			var api *APIError
			switch tc.code {
			case "":
				if err != nil {
					t.Fatal(err)
				}
			case "-":
				if err == nil || errors.As(err, &api) {
					t.Fatalf("err = %v, want a client-side refusal", err)
				}
				return
			default:
				if !errors.As(err, &api) || api.Code != tc.code {
					t.Fatalf("err = %v, want code %s", err, tc.code)
				}
				return
			}
			if tc.responseHas == "" {
				if len(resp) != 0 {
					t.Fatalf("response %s without return_response", resp)
				}
				return
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(resp, &m); err != nil || m[tc.responseHas] == nil {
				t.Fatalf("response %s lacks %s (%v)", resp, tc.responseHas, err)
			}
		})
	}
}

func TestWSValidateConfig(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	ctx := context.Background()
	trigger := []any{map[string]any{"trigger": "state", "entity_id": "binary_sensor.front_door", "to": "on"}}
	action := []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.kitchen"}}}
	for _, tc := range []struct {
		name    string
		parts   map[string]any
		invalid []string
	}{
		{"valid", map[string]any{"triggers": trigger, "actions": action}, nil},
		{"bad trigger", map[string]any{"triggers": []any{map[string]any{"trigger": "no_such_platform"}}, "actions": action}, []string{"triggers"}},
		{"bad action and condition", map[string]any{"triggers": trigger, "conditions": []any{map[string]any{"condition": "nonsense"}}, "actions": []any{42}},
			[]string{"conditions", "actions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.ValidateConfig(ctx, tc.parts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != len(tc.parts) {
				t.Fatalf("verdicts for %d parts, gave %d: %+v", len(res), len(tc.parts), res)
			}
			for part, v := range res {
				bad := false
				for _, p := range tc.invalid {
					bad = bad || p == part
				}
				if v.Valid == bad || bad && v.Error == "" || !bad && v.Error != "" {
					t.Errorf("%s: %+v, want invalid=%v with a reason", part, v, bad)
				}
			}
		})
	}
}
