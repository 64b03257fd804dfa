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


type shoppingItem struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Complete bool   `json:"complete"`
}

type shoppingArgs struct {
	Action           string `json:"action" jsonschema:"list, add, complete, incomplete, rename, remove or clear_completed" validate:"required,oneof=list add complete incomplete rename remove clear_completed" example:"add"`
	Name             string `json:"name,omitempty" jsonschema:"add: the new item; other actions: the item to act on (exact name, any case)" validate:"omitempty,max=255"`
	ItemID           string `json:"item_id,omitempty" jsonschema:"the item's id from list (instead of name)" validate:"omitempty,max=64"`
	NewName          string `json:"new_name,omitempty" jsonschema:"rename: the item's new name" validate:"omitempty,max=255"`
	IncludeCompleted *bool  `json:"include_completed,omitempty" jsonschema:"list: include completed items (default true)"`
	toolkit.Page
}

type shoppingResult struct {
	Action string                      `json:"action"`
	Item   *shoppingItem               `json:"item,omitempty"`
	Items  *toolkit.List[shoppingItem] `json:"items,omitempty"`
}

type todoArgs struct {
	Action      string `json:"action" jsonschema:"lists (the to-do lists), list (items), add, update, complete or remove" validate:"required,oneof=lists list add update complete remove" example:"list"`
	EntityID    string `json:"entity_id,omitempty" jsonschema:"the to-do list, e.g. todo.chores (all actions but lists)" validate:"omitempty,entity_id" example:"todo.chores"`
	Item        string `json:"item,omitempty" jsonschema:"add: the new item; update/complete/remove: the item's name or uid" validate:"omitempty,max=255"`
	Rename      string `json:"rename,omitempty" jsonschema:"update: new name" validate:"omitempty,max=255"`
	Description string `json:"description,omitempty" jsonschema:"add/update: longer description" validate:"omitempty,max=2000"`
	Due         string `json:"due,omitempty" jsonschema:"add/update: due date (2026-02-01) or date-time (2026-02-01T18:00:00)" validate:"omitempty,iso8601"`
	Status      string `json:"status,omitempty" jsonschema:"list: only items with this status; update: set it" validate:"omitempty,oneof=needs_action completed"`
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

// helperDomains are the helper integrations ha_list_input_helpers covers, with the attributes
// that say how each can be set.
var helperDomains = map[string][]string{
	"input_boolean":  nil,
	"input_button":   nil,
	"input_number":   {"min", "max", "step", "mode", "unit_of_measurement"},
	"input_select":   {"options"},
	"input_text":     {"min", "max", "pattern", "mode"},
	"input_datetime": {"has_date", "has_time"},
	"counter":        {"minimum", "maximum", "step", "initial"},
	"timer":          {"duration", "remaining", "finishes_at"},
}

type inputHelpersArgs struct {
	Domain string `json:"domain,omitempty" jsonschema:"only one helper type" validate:"omitempty,oneof=input_boolean input_button input_number input_select input_text input_datetime counter timer"`
	Search string `json:"search,omitempty" jsonschema:"case-insensitive text matched against entity id and name"`
	toolkit.Page
}

type helperView struct {
	EntityID string         `json:"entity_id"`
	Name     string         `json:"name,omitempty"`
	State    string         `json:"state"`
	Settings map[string]any `json:"settings,omitempty"`
}

// wsService calls a service over the WebSocket, whose errors carry HA's reason (REST answers a
// bare 400 or 500), and returns its response data when asked for.
func wsService(ctx context.Context, ha *homeassistant.Client, domain, service string, data map[string]any, entityID string, returnResponse bool) (json.RawMessage, error) {
	payload := map[string]any{"domain": domain, "service": service, "service_data": data, "target": map[string]any{"entity_id": entityID}}
	if returnResponse {
		payload["return_response"] = true
	}
	var out struct {
		Response json.RawMessage `json:"response"`
	}
	err := ha.Call(ctx, "call_service", payload, &out)
	return out.Response, err
}

// serviceRefusal turns HA's validation errors into argument errors the model can fix.
func serviceRefusal(err error, field, example string) error {
	var api *homeassistant.APIError
	if errors.As(err, &api) && (api.Code == "service_validation_error" || api.Code == "invalid_format") {
		return toolkit.InvalidArg(field, "was refused by Home Assistant: "+api.Message, example)
	}
	return haError(err, false, "")
}

func helperTools(d Deps) []*toolkit.Tool {
	shopping := toolkit.Define(toolkit.Spec[shoppingArgs, shoppingResult]{
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
		Description: "Read and change the shopping list. Name an item by its exact name or by item_id from action list. " +
			"The user confirms remove and clear_completed. For other to-do lists use ha_manage_todo.",
		Destructive: true,
		Summary:     func(a shoppingArgs) string { return a.Action + " " + a.Name },
		Handler: func(ctx context.Context, c *toolkit.Call, a shoppingArgs) (shoppingResult, error) {
			out := shoppingResult{Action: a.Action}
			var items []shoppingItem
			if err := d.HA.Call(ctx, "shopping_list/items", nil, &items); err != nil {
				return out, haError(err, false, "")
			}
			switch a.Action {
			case "list":
				if a.IncludeCompleted != nil && !*a.IncludeCompleted {
					items = slices.DeleteFunc(items, func(it shoppingItem) bool { return it.Complete })
				}
				page := toolkit.Paginate(items, a.Page)
				out.Items = &page
				return out, nil
			case "add":
				if strings.TrimSpace(a.Name) == "" {
					return out, toolkit.InvalidArg("name", "is required to add an item", `{"action": "add", "name": "milk"}`)
				}
				var it shoppingItem
				if err := d.HA.Call(ctx, "shopping_list/items/add", map[string]any{"name": a.Name}, &it); err != nil {
					return out, haError(err, false, "")
				}
				out.Item = &it
				return out, nil
			case "clear_completed":
				if err := d.HA.Call(ctx, "shopping_list/items/clear", nil, nil); err != nil {
					return out, haError(err, false, "")
				}
				items = slices.DeleteFunc(items, func(it shoppingItem) bool { return it.Complete })
				page := toolkit.Paginate(items, a.Page)
				out.Items = &page
				return out, nil
			}
			id, err := pickShoppingItem(items, a.ItemID, a.Name, a.Action)
			if err != nil {
				return out, err
			}
			var it shoppingItem
			switch a.Action {
			case "remove":
				err = d.HA.Call(ctx, "shopping_list/items/remove", map[string]any{"item_id": id}, &it)
			case "rename":
				if strings.TrimSpace(a.NewName) == "" {
					return out, toolkit.InvalidArg("new_name", "is required to rename an item", `{"action": "rename", "name": "milk", "new_name": "oat milk"}`)
				}
				err = d.HA.Call(ctx, "shopping_list/items/update", map[string]any{"item_id": id, "name": a.NewName}, &it)
			default:
				err = d.HA.Call(ctx, "shopping_list/items/update", map[string]any{"item_id": id, "complete": a.Action == "complete"}, &it)
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
		},
	})

	todo := toolkit.Define(toolkit.Spec[todoArgs, todoResult]{
		Name: "ha_manage_todo", Toolset: SetHelpers, Title: "To-do lists",
		Confirm: &toolkit.Confirm[todoArgs]{When: "action remove (`delete`)",
			Check: func(ctx context.Context, c *toolkit.Call, a todoArgs) (toolkit.Ask, error) {
				if a.Action != "remove" {
					return toolkit.Ask{}, nil
				}
				return plain(sensitive.Delete, "Remove \""+a.Item+"\" from "+a.EntityID+"?"), nil
			}},
		Description: "Work with to-do lists (todo entities): action lists shows them; the others read or change one list's items, named by summary or uid. " +
			"The user confirms remove. For the shopping list ha_manage_shopping_list is simpler.",
		Destructive: true,
		Summary:     func(a todoArgs) string { return a.Action + " " + a.EntityID + " " + a.Item },
		Handler: func(ctx context.Context, c *toolkit.Call, a todoArgs) (todoResult, error) {
			out := todoResult{Action: a.Action}
			if a.Action == "lists" {
				all, err := states(ctx, d.HA)
				if err != nil {
					return out, haError(err, false, "")
				}
				var lists []todoList
				for _, s := range all {
					if s.Domain() == "todo" {
						lists = append(lists, todoList{EntityID: s.EntityID, Name: s.FriendlyName(), Open: s.State})
					}
				}
				page := toolkit.Paginate(lists, a.Page)
				out.Lists = &page
				return out, nil
			}
			if a.EntityID == "" || !strings.HasPrefix(a.EntityID, "todo.") {
				return out, toolkit.InvalidArg("entity_id", "must be a to-do list (todo.*); action=lists shows them", `{"entity_id": "todo.shopping_list"}`)
			}
			if a.Action != "list" && strings.TrimSpace(a.Item) == "" {
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
			case "list":
				statuses := []string{"needs_action", "completed"}
				if a.Status != "" {
					statuses = []string{a.Status}
				}
				raw, err := wsService(ctx, d.HA, "todo", "get_items", map[string]any{"status": statuses}, a.EntityID, true)
				if err != nil {
					return out, serviceRefusal(err, "entity_id", `{"entity_id": "todo.shopping_list"}`)
				}
				var resp map[string]struct {
					Items []todoItem `json:"items"`
				}
				if err := json.Unmarshal(raw, &resp); err != nil {
					return out, toolkit.Backend("Home Assistant", errors.New("todo.get_items answered with unexpected data"), false, "")
				}
				list, ok := resp[a.EntityID]
				if !ok {
					return out, toolkit.NotFound("Home Assistant has no to-do list "+a.EntityID, "action=lists shows the to-do lists")
				}
				page := toolkit.Paginate(list.Items, a.Page)
				out.Items = &page
				return out, nil
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
			if _, err := wsService(ctx, d.HA, "todo", service, data, a.EntityID, false); err != nil {
				return out, serviceRefusal(err, "item", `{"item": "Mow the lawn"}`)
			}
			out.Done = a.Action + " " + a.Item
			return out, nil
		},
	})

	inputs := toolkit.Define(toolkit.Spec[inputHelpersArgs, toolkit.List[helperView]]{
		Name: "ha_list_input_helpers", Toolset: SetHelpers, Title: "List helpers",
		Description: "List helper entities (input_boolean, input_number, input_select, input_text, input_datetime, input_button, counter, timer) " +
			"with their value and the settings that say how they can be set (range and step, options, pattern). Paged. " +
			"Change them with ha_call_service (e.g. input_number.set_value, input_select.select_option).",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a inputHelpersArgs) (toolkit.List[helperView], error) {
			all, err := states(ctx, d.HA)
			if err != nil {
				return toolkit.List[helperView]{}, haError(err, false, "")
			}
			var out []helperView
			for _, s := range all {
				keys, ok := helperDomains[s.Domain()]
				if !ok || a.Domain != "" && s.Domain() != a.Domain || a.Search != "" && !hasFold(s.EntityID+" "+s.FriendlyName(), a.Search) {
					continue
				}
				v := helperView{EntityID: s.EntityID, Name: s.FriendlyName(), State: s.State}
				if v.Name == s.EntityID {
					v.Name = ""
				}
				for _, k := range keys {
					if val, ok := s.Attributes[k]; ok && val != nil {
						if v.Settings == nil {
							v.Settings = map[string]any{}
						}
						v.Settings[k] = val
					}
				}
				out = append(out, v)
			}
			return toolkit.Paginate(out, a.Page), nil
		},
	})
	return []*toolkit.Tool{shopping, todo, inputs}
}

// pickShoppingItem finds the item an action is about: by id, or by exact name ignoring case,
// preferring one whose state the action would change.
func pickShoppingItem(items []shoppingItem, id, name, action string) (string, error) {
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
