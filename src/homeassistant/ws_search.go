package homeassistant

import "context"

// SearchRelated lists what Home Assistant relates to an item (WebSocket search/related,
// homeassistant/components/search/__init__.py): for an automation, the entities, devices and areas
// its triggers, conditions and actions reference, with a blueprint's inputs already substituted.
// Keys are kinds ("entity", "device", "area", "automation", "script", "scene", …).
func (c *Client) SearchRelated(ctx context.Context, itemType, itemID string) (map[string][]string, error) {
	return callAs[map[string][]string](ctx, c, "search/related", map[string]any{"item_type": itemType, "item_id": itemID})
}
