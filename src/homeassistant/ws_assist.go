package homeassistant

import (
	"context"
)

// ExposedEntities says, per entity id, which assistants it is exposed to or hidden from
// ("conversation" is Assist; "cloud.alexa", "cloud.google_assistant"), as set under Settings →
// Voice assistants → Expose (WebSocket homeassistant/expose_entity/list). Entities without a
// setting are missing and follow HA's defaults.
func (c *Client) ExposedEntities(ctx context.Context) (map[string]map[string]bool, error) {
	var out struct {
		Exposed map[string]map[string]bool `json:"exposed_entities"`
	}
	err := c.Call(ctx, "homeassistant/expose_entity/list", nil, &out)
	return out.Exposed, err
}
