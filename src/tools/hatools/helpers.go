package hatools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetHelpers is the toolset of lists and helper entities.
const SetHelpers = "helpers"

type shoppingArgs struct {
	Action           string `json:"action" validate:"required,oneof=list add complete incomplete rename remove clear_completed" example:"add"`
	Name             string `json:"name,omitempty" jsonschema:"add: the new item; else the item's name" validate:"omitempty,max=255"`
	ItemID           string `json:"item_id,omitempty" jsonschema:"instead of name" validate:"omitempty,max=64"`
	NewName          string `json:"new_name,omitempty" validate:"omitempty,max=255"`
	IncludeCompleted *bool  `json:"include_completed,omitempty" jsonschema:"default true"`
	toolkit.Page
}

type shoppingResult struct {
	Action string                                    `json:"action"`
	Item   *homeassistant.ShoppingItem               `json:"item,omitempty"`
	Items  *toolkit.List[homeassistant.ShoppingItem] `json:"items,omitempty"`
}

type todoArgs struct {
	Action      string `json:"action" jsonschema:"lists: the to-do lists; list: items" validate:"required,oneof=lists list add update complete remove" example:"list"`
	EntityID    string `json:"entity_id,omitempty" jsonschema:"all actions but lists" validate:"omitempty,entity_id" example:"todo.chores"`
	Item        string `json:"item,omitempty" jsonschema:"add: new item; else its name or uid" validate:"omitempty,max=255"`
	Rename      string `json:"rename,omitempty" validate:"omitempty,max=255"`
	Description string `json:"description,omitempty" validate:"omitempty,max=2000"`
	Due         string `json:"due,omitempty" jsonschema:"ISO-8601 date or date-time" validate:"omitempty,iso8601"`
	Status      string `json:"status,omitempty" jsonschema:"list: filter; update: set" validate:"omitempty,oneof=needs_action completed"`
	toolkit.Page
}

type todoItem struct {
	UID         string `json:"uid"`
	Summary     string `json:"summary"`
	Status      string `json:"status"`
	Due         string `json:"due,omitempty"`
	Description string `json:"description,omitempty"`
}

type todoList struct {
	EntityID string `json:"entity_id"`
	Name     string `json:"name"`
	Open     string `json:"open_items"`
}

type todoResult struct {
	Action string                  `json:"action"`
	Lists  *toolkit.List[todoList] `json:"lists,omitempty"`
	Items  *toolkit.List[todoItem] `json:"items,omitempty"`
	Done   string                  `json:"done,omitempty"`
}

// serviceRefusal turns HA's validation errors into argument errors the model can fix.
func serviceRefusal(err error, field, example string) error {
	var api *homeassistant.APIError
	if errors.As(err, &api) && (api.Code == "service_validation_error" || api.Code == "invalid_format") {
		return toolkit.InvalidArg(field, "was refused by Home Assistant: "+api.Message, example)
	}
	return haError(err, false, "")
}

// helperTools are the list and helper tools, in the order tools/list shows them.
func helperTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{manageShoppingList(d), manageTodo(d)}
}

// manageShoppingList is ha_manage_shopping_list.
func manageShoppingList(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[shoppingArgs, shoppingResult]{
		Name: "ha_manage_shopping_list", Toolset: SetHelpers, Title: "Shopping list",
		Confirm: &toolkit.Confirm[shoppingArgs]{When: "action remove or clear_completed (`delete`)",
			Check: func(ctx context.Context, c *toolkit.Call, a shoppingArgs) (toolkit.Ask, error) {
				if a.Action != "remove" && a.Action != "clear_completed" {
					return toolkit.Ask{}, nil
				}
				what := "Remove \"" + a.Name + a.ItemID + "\" from the shopping list?"
				if a.Action == "clear_completed" {
					what = "Remove every completed item from the shopping list?"
				}
				return plain(sensitive.Delete, what), nil
			}},
		Description: "Read and change the shopping list; items by exact name or item_id. The user confirms remove and clear_completed. Other to-do lists: ha_manage_todo.",
		Destructive: true,
		Summary:     func(a shoppingArgs) string { return a.Action + " " + a.Name },
		Handler: func(ctx context.Context, c *toolkit.Call, a shoppingArgs) (shoppingResult, error) {
			return shoppingAction(ctx, d.HA, a)
		},
	})
}

// shoppingAction reads the list (names are resolved against it), then acts.
func shoppingAction(ctx context.Context, ha *homeassistant.Client, a shoppingArgs) (shoppingResult, error) {
	out := shoppingResult{Action: a.Action}
	items, err := ha.ShoppingList(ctx)
	if err != nil {
		return out, haError(err, false, "")
	}
	switch a.Action {
	case "list":
		if a.IncludeCompleted != nil && !*a.IncludeCompleted {
			items = slices.DeleteFunc(items, func(it homeassistant.ShoppingItem) bool { return it.Complete })
		}
		page := toolkit.Paginate(items, a.Page)
		out.Items = &page
		return out, nil
	case "add":
		if strings.TrimSpace(a.Name) == "" {
			return out, toolkit.InvalidArg("name", "is required to add an item", `{"action": "add", "name": "milk"}`)
		}
		it, err := ha.AddShoppingItem(ctx, a.Name)
		if err != nil {
			return out, haError(err, false, "")
		}
		out.Item = &it
		return out, nil
	case "clear_completed":
		if err := ha.ClearCompletedShoppingItems(ctx); err != nil {
			return out, haError(err, false, "")
		}
		items = slices.DeleteFunc(items, func(it homeassistant.ShoppingItem) bool { return it.Complete })
		page := toolkit.Paginate(items, a.Page)
		out.Items = &page
		return out, nil
	}
	id, err := pickShoppingItem(items, a.ItemID, a.Name, a.Action)
	if err != nil {
		return out, err
	}
	var it homeassistant.ShoppingItem
	switch a.Action {
	case "remove":
		it, err = ha.RemoveShoppingItem(ctx, id)
	case "rename":
		if strings.TrimSpace(a.NewName) == "" {
			return out, toolkit.InvalidArg("new_name", "is required to rename an item", `{"action": "rename", "name": "milk", "new_name": "oat milk"}`)
		}
		it, err = ha.UpdateShoppingItem(ctx, id, homeassistant.ShoppingItemUpdate{Name: &a.NewName})
	default:
		complete := a.Action == "complete"
		it, err = ha.UpdateShoppingItem(ctx, id, homeassistant.ShoppingItemUpdate{Complete: &complete})
	}
	var api *homeassistant.APIError
	if errors.As(err, &api) && api.Code == "item_not_found" {
		return out, toolkit.NotFound("the shopping list has no item "+id, "list the items with action=list")
	}
	if err != nil {
		return out, haError(err, false, "")
	}
	out.Item = &it
	return out, nil
}

// manageTodo is ha_manage_todo.
func manageTodo(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[todoArgs, todoResult]{
		Name: "ha_manage_todo", Toolset: SetHelpers, Title: "To-do lists",
		Confirm: &toolkit.Confirm[todoArgs]{When: "action remove (`delete`)",
			Check: func(ctx context.Context, c *toolkit.Call, a todoArgs) (toolkit.Ask, error) {
				if a.Action != "remove" {
					return toolkit.Ask{}, nil
				}
				return plain(sensitive.Delete, "Remove \""+a.Item+"\" from "+a.EntityID+"?"), nil
			}},
		Description: "To-do lists (todo.*): lists shows them; other actions read or change one list's items, by summary or uid. " +
			"The user confirms remove. For the shopping list, ha_manage_shopping_list.",
		Destructive: true,
		Summary:     func(a todoArgs) string { return a.Action + " " + a.EntityID + " " + a.Item },
		Handler: func(ctx context.Context, c *toolkit.Call, a todoArgs) (todoResult, error) {
			return todoAction(ctx, d.HA, a)
		},
	})
}

// todoAction carries out one ha_manage_todo action through the todo services.
func todoAction(ctx context.Context, ha *homeassistant.Client, a todoArgs) (todoResult, error) {
	out := todoResult{Action: a.Action}
	if a.Action == "lists" {
		lists, err := todoLists(ctx, ha, a.Page)
		if err != nil {
			return out, err
		}
		out.Lists = &lists
		return out, nil
	}
	if a.EntityID == "" || !strings.HasPrefix(a.EntityID, "todo.") {
		return out, toolkit.InvalidArg("entity_id", "must be a to-do list (todo.*); action=lists shows them", `{"entity_id": "todo.shopping_list"}`)
	}
	if a.Action == "list" {
		items, err := todoItems(ctx, ha, a)
		if err != nil {
			return out, err
		}
		out.Items = &items
		return out, nil
	}
	if strings.TrimSpace(a.Item) == "" {
		return out, toolkit.InvalidArg("item", "is required for action "+a.Action, `{"item": "Mow the lawn"}`)
	}
	data := map[string]any{}
	if a.Due != "" {
		if len(a.Due) == len("2006-01-02") {
			data["due_date"] = a.Due
		} else {
			data["due_datetime"] = a.Due
		}
	}
	if a.Description != "" {
		data["description"] = a.Description
	}
	var service string
	switch a.Action {
	case "add":
		service, data["item"] = "add_item", a.Item
	case "update":
		service, data["item"] = "update_item", a.Item
		if a.Rename != "" {
			data["rename"] = a.Rename
		}
		if a.Status != "" {
			data["status"] = a.Status
		}
	case "complete":
		service, data["item"], data["status"] = "update_item", a.Item, "completed"
	case "remove":
		service, data = "remove_item", map[string]any{"item": []string{a.Item}}
	}
	target := homeassistant.ServiceTarget{EntityID: []string{a.EntityID}}
	if _, err := ha.CallServiceWS(ctx, "todo", service, data, target, false); err != nil {
		return out, serviceRefusal(err, "item", `{"item": "Mow the lawn"}`)
	}
	out.Done = a.Action + " " + a.Item
	return out, nil
}

// todoLists pages the todo entities; their state is the number of open items.
func todoLists(ctx context.Context, ha *homeassistant.Client, p toolkit.Page) (toolkit.List[todoList], error) {
	all, err := states(ctx, ha)
	if err != nil {
		return toolkit.List[todoList]{}, haError(err, false, "")
	}
	var lists []todoList
	for _, s := range all {
		if s.Domain() == "todo" {
			lists = append(lists, todoList{EntityID: s.EntityID, Name: s.FriendlyName(), Open: s.State})
		}
	}
	return toolkit.Paginate(lists, p), nil
}

// todoItems reads one list's items with todo.get_items over the WebSocket, whose refusals say why.
func todoItems(ctx context.Context, ha *homeassistant.Client, a todoArgs) (toolkit.List[todoItem], error) {
	statuses := []string{"needs_action", "completed"}
	if a.Status != "" {
		statuses = []string{a.Status}
	}
	raw, err := ha.CallServiceWS(ctx, "todo", "get_items", map[string]any{"status": statuses}, homeassistant.ServiceTarget{EntityID: []string{a.EntityID}}, true)
	if err != nil {
		return toolkit.List[todoItem]{}, serviceRefusal(err, "entity_id", `{"entity_id": "todo.shopping_list"}`)
	}
	var resp map[string]struct {
		Items []todoItem `json:"items"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return toolkit.List[todoItem]{}, toolkit.Backend("Home Assistant", errors.New("todo.get_items answered with unexpected data"), false, "")
	}
	list, ok := resp[a.EntityID]
	if !ok {
		return toolkit.List[todoItem]{}, toolkit.NotFound("Home Assistant has no to-do list "+a.EntityID, "action=lists shows the to-do lists")
	}
	return toolkit.Paginate(list.Items, a.Page), nil
}

// pickShoppingItem finds the item an action is about: by id, or by exact name ignoring case,
// preferring one whose state the action would change.
func pickShoppingItem(items []homeassistant.ShoppingItem, id, name, action string) (string, error) {
	if id != "" {
		return id, nil
	}
	if strings.TrimSpace(name) == "" {
		return "", toolkit.InvalidArg("name", "or item_id is required for action "+action, `{"action": "`+action+`", "name": "milk"}`)
	}
	found := ""
	for _, it := range items {
		if !strings.EqualFold(strings.TrimSpace(it.Name), strings.TrimSpace(name)) {
			continue
		}
		if found == "" || action == "complete" && !it.Complete || action == "incomplete" && it.Complete {
			found = it.ID
		}
	}
	if found != "" {
		return found, nil
	}
	names := make([]string, 0, min(len(items), 20))
	for _, it := range items[:min(len(items), 20)] {
		names = append(names, it.Name)
	}
	return "", toolkit.InvalidArg("name", "matches no item on the shopping list (got "+name+"); items: "+strings.Join(names, ", "), `{"name": "milk"}`)
}
