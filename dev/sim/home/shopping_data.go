package home

import (
	"strings"
)

// The shopping_list integration stores its items itself and shows them as the
// todo.shopping_list entity. Here both views share one list, so an item added
// over shopping_list/items/add is also a to-do item and the other way round.
const shoppingListEntity = "todo.shopping_list"

// ShoppingItem is a shopping_list item as its WebSocket and REST APIs send it.
type ShoppingItem struct {
	Name     string `json:"name"`
	ID       string `json:"id"`
	Complete bool   `json:"complete"`
}

// shoppingID is the item id the shopping_list API shows: uuid4().hex, so a
// to-do uid's dashes are dropped.
func shoppingID(uid string) string { return strings.ReplaceAll(uid, "-", "") }

func (it *todoItem) shopping() ShoppingItem {
	return ShoppingItem{Name: it.summary, ID: shoppingID(it.uid), Complete: it.status == "completed"}
}

// shoppingListLocked returns the list, creating it when the home has none.
func (h *Home) shoppingListLocked() *todoList {
	l := h.todos[shoppingListEntity]
	if l == nil {
		l = &todoList{}
		h.todos[shoppingListEntity] = l
	}
	return l
}

func (l *todoList) byShoppingID(id string) (int, *todoItem) {
	for i, it := range l.items {
		if shoppingID(it.uid) == id {
			return i, it
		}
	}
	return -1, nil
}

// ShoppingItems lists the shopping list in its stored order.
func (h *Home) ShoppingItems() []ShoppingItem {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.shoppingListLocked()
	out := make([]ShoppingItem, 0, len(l.items))
	for _, it := range l.items {
		out = append(out, it.shopping())
	}
	return out
}

// AddShoppingItem appends an item (shopping_list/items/add).
func (h *Home) AddShoppingItem(name, userID string) ShoppingItem {
	h.mu.Lock()
	defer h.flushAfter()()
	l := h.shoppingListLocked()
	it := &todoItem{uid: h.hexID(), summary: name, status: "needs_action"}
	l.items = append(l.items, it)
	item := it.shopping()
	h.shoppingChangedLocked("add", &item, userID)
	return item
}

// UpdateShoppingItem renames and/or (un)completes an item; a missing id is a
// *NotFoundError ("Item not found").
func (h *Home) UpdateShoppingItem(id string, name *string, complete *bool, userID string) (ShoppingItem, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	_, it := h.shoppingListLocked().byShoppingID(id)
	if it == nil {
		return ShoppingItem{}, &NotFoundError{Msg: "Item not found"}
	}
	if name != nil {
		it.summary = *name
	}
	if complete != nil {
		it.status = "needs_action"
		if *complete {
			it.status = "completed"
		}
	}
	item := it.shopping()
	h.shoppingChangedLocked("update", &item, userID)
	return item, nil
}

// RemoveShoppingItem deletes an item and returns it.
func (h *Home) RemoveShoppingItem(id, userID string) (ShoppingItem, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	l := h.shoppingListLocked()
	i, it := l.byShoppingID(id)
	if it == nil {
		return ShoppingItem{}, &NotFoundError{Msg: "Item not found"}
	}
	l.items = append(l.items[:i], l.items[i+1:]...)
	item := it.shopping()
	h.shoppingChangedLocked("remove", &item, userID)
	return item, nil
}

// ClearCompletedShoppingItems drops every completed item.
func (h *Home) ClearCompletedShoppingItems(userID string) {
	h.mu.Lock()
	defer h.flushAfter()()
	l := h.shoppingListLocked()
	keep := l.items[:0:0]
	for _, it := range l.items {
		if it.status != "completed" {
			keep = append(keep, it)
		}
	}
	l.items = keep
	h.shoppingChangedLocked("clear", nil, userID)
}

// ReorderShoppingItems puts the given ids first, in that order; every
// unchecked item must be named. Unknown ids are a *NotFoundError, a missing
// unchecked item an *InvalidError, as HA's async_reorder raises.
func (h *Home) ReorderShoppingItems(ids []string, userID string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	l := h.shoppingListLocked()
	rest := map[string]*todoItem{}
	for _, it := range l.items {
		rest[shoppingID(it.uid)] = it
	}
	var ordered []*todoItem
	for _, id := range ids {
		it, ok := rest[id]
		if !ok {
			return &NotFoundError{Msg: "One or more item id(s) not found."}
		}
		ordered = append(ordered, it)
		delete(rest, id)
	}
	for _, it := range l.items {
		if _, left := rest[shoppingID(it.uid)]; !left {
			continue
		}
		if it.status != "completed" {
			return &InvalidError{Msg: "The item ids array doesn't contain all the unchecked shopping list items."}
		}
		ordered = append(ordered, it)
	}
	l.items = ordered
	h.shoppingChangedLocked("reorder", nil, userID)
	return nil
}

// shoppingChangedLocked fires shopping_list_updated and refreshes the to-do
// entity's count of open items, as the integration does after every change.
func (h *Home) shoppingChangedLocked(action string, item *ShoppingItem, userID string) {
	ctx := h.newContext(userID, nil)
	data := map[string]any{"action": action}
	if item != nil {
		data["item"] = map[string]any{"name": item.Name, "id": item.ID, "complete": item.Complete}
	}
	h.fireLocked("shopping_list_updated", data, "LOCAL", ctx)
	if st := h.states[shoppingListEntity]; st != nil {
		h.writeState(shoppingListEntity, itoa(h.shoppingListLocked().open()), cloneAttrs(st.Attributes), false, ctx)
	}
}
