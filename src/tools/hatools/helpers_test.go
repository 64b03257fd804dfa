package hatools_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/homeassistant"
)

type dtShopItem struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Complete bool   `json:"complete"`
}

type dtTodoRow struct {
	Summary string `json:"summary"`
	Status  string `json:"status"`
}

type dtShopResult struct {
	Item  *dtShopItem `json:"item"`
	Items *struct {
		Total int          `json:"total"`
		Items []dtShopItem `json:"items"`
	} `json:"items"`
}

func testHelpers(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	shop := func(args map[string]any) dtShopResult {
		t.Helper()
		var r dtShopResult
		dtOK(t, cs, "ha_manage_shopping_list", args, &r)
		return r
	}
	names := func() []string {
		var out []string
		for _, it := range shop(map[string]any{"action": "list"}).Items.Items {
			out = append(out, it.Name)
		}
		return out
	}
	if !slices.Contains(names(), "Milk") {
		t.Fatalf("shopping list: %v", names())
	}
	added := shop(map[string]any{"action": "add", "name": "Oat milk"}).Item
	if added == nil || added.ID == "" || added.Complete {
		t.Fatalf("add: %+v", added)
	}
	if it := shop(map[string]any{"action": "complete", "name": "oat MILK"}).Item; it.ID != added.ID || !it.Complete {
		t.Errorf("complete by name: %+v", it)
	}
	if it := shop(map[string]any{"action": "rename", "item_id": added.ID, "new_name": "Soy milk"}).Item; it.Name != "Soy milk" {
		t.Errorf("rename: %+v", it)
	}
	open := shop(map[string]any{"action": "list", "include_completed": false}).Items
	for _, it := range open.Items {
		if it.Complete {
			t.Errorf("include_completed=false listed %+v", it)
		}
	}
	// The shopping list is also the todo.shopping_list entity: the same items, one store.
	var todo struct {
		Items *struct {
			Items []dtTodoRow `json:"items"`
		} `json:"items"`
	}
	dtOK(t, cs, "ha_manage_todo", map[string]any{"action": "list", "entity_id": "todo.shopping_list", "status": "completed"}, &todo)
	if !slices.ContainsFunc(todo.Items.Items, func(i dtTodoRow) bool { return i.Summary == "Soy milk" }) {
		t.Errorf("todo view of the shopping list: %+v", todo.Items)
	}
	shop(map[string]any{"action": "remove", "name": "Soy milk", "confirm": true})
	if slices.Contains(names(), "Soy milk") {
		t.Error("remove left the item")
	}
	left := shop(map[string]any{"action": "clear_completed", "confirm": true}).Items
	for _, it := range left.Items {
		if it.Complete {
			t.Errorf("clear_completed left %+v", it)
		}
	}

	// To-do lists through the todo services.
	var lists struct {
		Lists *struct {
			Items []struct {
				EntityID string `json:"entity_id"`
			} `json:"items"`
		} `json:"lists"`
	}
	dtOK(t, cs, "ha_manage_todo", map[string]any{"action": "lists"}, &lists)
	if len(lists.Lists.Items) != 2 {
		t.Errorf("todo lists: %+v", lists.Lists)
	}
	dtOK(t, cs, "ha_manage_todo", map[string]any{"action": "add", "entity_id": "todo.chores", "item": "Fix the fence", "due": "2030-05-01", "description": "the gate side"}, nil)
	dtOK(t, cs, "ha_manage_todo", map[string]any{"action": "complete", "entity_id": "todo.chores", "item": "Fix the fence"}, nil)
	dtOK(t, cs, "ha_manage_todo", map[string]any{"action": "list", "entity_id": "todo.chores", "status": "completed"}, &todo)
	ok := false
	for _, it := range todo.Items.Items {
		ok = ok || it.Summary == "Fix the fence" && it.Status == "completed"
	}
	if !ok {
		t.Errorf("completed chores: %+v", todo.Items)
	}
	dtOK(t, cs, "ha_manage_todo", map[string]any{"action": "remove", "entity_id": "todo.chores", "item": "Fix the fence", "confirm": true}, nil)

	// Helpers, including a counter created through POST /api/states.
	if _, _, err := e.ha.PostState(context.Background(), "counter.coffee_cups", homeassistant.StateUpdate{State: "3",
		Attributes: map[string]any{"minimum": 0, "maximum": 20, "step": 1, "initial": 0, "friendly_name": "Coffee cups"}}); err != nil {
		t.Fatal(err)
	}
	var helpers struct {
		Helpers struct {
			Items []struct {
				EntityID string         `json:"entity_id"`
				State    string         `json:"state"`
				Settings map[string]any `json:"settings"`
			} `json:"items"`
		} `json:"helpers"`
	}
	dtOK(t, cs, "ha_manage_helpers", map[string]any{"action": "list", "search": "night"}, &helpers)
	if h := helpers.Helpers.Items; len(h) != 1 || h[0].Settings["step"] != 0.5 || h[0].Settings["unit_of_measurement"] != "°C" {
		t.Errorf("night temperature helper: %+v", h)
	}
	testkit.Eventually(t, "the new counter", func() bool {
		dtOK(t, cs, "ha_manage_helpers", map[string]any{"action": "list", "domain": "counter"}, &helpers)
		h := helpers.Helpers.Items
		return len(h) == 1 && h[0].State == "3" && h[0].Settings["maximum"] == 20.0
	})

	dtErrCases(t, cs, []dtErrCase{
		{"bad action", "ha_manage_shopping_list", map[string]any{"action": "burn"}, "invalid_argument", "action", ""},
		{"remove unconfirmed", "ha_manage_shopping_list", map[string]any{"action": "remove", "name": "Milk"}, "confirmation_required", "confirm", ""},
		{"unknown item name", "ha_manage_shopping_list", map[string]any{"action": "complete", "name": "unicorn"}, "invalid_argument", "name", "Milk"},
		{"unknown item id (HA item_not_found)", "ha_manage_shopping_list", map[string]any{"action": "complete", "item_id": "0123456789abcdef0123456789abcdef"}, "not_found", "", "no item"},
		{"add without name", "ha_manage_shopping_list", map[string]any{"action": "add"}, "invalid_argument", "name", ""},
		{"not a todo entity", "ha_manage_todo", map[string]any{"action": "list", "entity_id": "light.kitchen_ceiling"}, "invalid_argument", "entity_id", ""},
		{"missing todo list", "ha_manage_todo", map[string]any{"action": "list", "entity_id": "todo.garden"}, "not_found", "", "todo.garden"},
		{"unknown todo item (HA service_validation_error)", "ha_manage_todo", map[string]any{"action": "complete", "entity_id": "todo.chores", "item": "Paint the moon"}, "invalid_argument", "item", "Unable to find"},
		{"todo remove unconfirmed", "ha_manage_todo", map[string]any{"action": "remove", "entity_id": "todo.chores", "item": "Mow the lawn"}, "confirmation_required", "confirm", ""},
		{"bad due", "ha_manage_todo", map[string]any{"action": "add", "entity_id": "todo.chores", "item": "x", "due": "someday"}, "invalid_argument", "due", ""},
		{"bad helper domain", "ha_manage_helpers", map[string]any{"action": "list", "domain": "input_magic"}, "invalid_argument", "domain", ""},
	})
}
