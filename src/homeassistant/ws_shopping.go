package homeassistant

import (
	"context"
)

// ShoppingItem is one item of the shopping_list integration's list.
type ShoppingItem struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Complete bool   `json:"complete"`
}

// ShoppingItemUpdate changes an item; nil members stay as they are.
type ShoppingItemUpdate struct {
	Name     *string `json:"name,omitempty"`
	Complete *bool   `json:"complete,omitempty"`
}

// ShoppingList returns every item of the shopping list, completed ones included (WebSocket
// shopping_list/items).
func (c *Client) ShoppingList(ctx context.Context) ([]ShoppingItem, error) {
	return callAs[[]ShoppingItem](ctx, c, "shopping_list/items", nil)
}

// AddShoppingItem appends an item (WebSocket shopping_list/items/add).
func (c *Client) AddShoppingItem(ctx context.Context, name string) (ShoppingItem, error) {
	return callAs[ShoppingItem](ctx, c, "shopping_list/items/add", map[string]any{"name": name})
}

// UpdateShoppingItem renames or (un)completes an item (WebSocket shopping_list/items/update).
// An unknown id is an APIError with Code "item_not_found".
func (c *Client) UpdateShoppingItem(ctx context.Context, id string, upd ShoppingItemUpdate) (ShoppingItem, error) {
	msg := struct {
		ItemID string `json:"item_id"`
		ShoppingItemUpdate
	}{id, upd}
	return callAs[ShoppingItem](ctx, c, "shopping_list/items/update", msg)
}

// RemoveShoppingItem deletes an item and returns it (WebSocket shopping_list/items/remove).
// An unknown id is an APIError with Code "item_not_found".
func (c *Client) RemoveShoppingItem(ctx context.Context, id string) (ShoppingItem, error) {
	return callAs[ShoppingItem](ctx, c, "shopping_list/items/remove", map[string]any{"item_id": id})
}

// ClearCompletedShoppingItems deletes every completed item (WebSocket
// shopping_list/items/clear).
func (c *Client) ClearCompletedShoppingItems(ctx context.Context) error {
	return c.Call(ctx, "shopping_list/items/clear", nil, nil)
}
