package homeassistant

import "context"

// EntityEntry is one entity registry entry as config/entity_registry/get_entries returns it (Home
// Assistant's RegistryEntry.extended_dict): the registry's own device class ("show as", set by the
// user) and the integration's, which no state or event can change.
type EntityEntry struct {
	EntityID            string   `json:"entity_id"`
	Platform            string   `json:"platform"`
	UniqueID            string   `json:"unique_id"`
	DeviceID            *string  `json:"device_id"`
	AreaID              *string  `json:"area_id"`
	Labels              []string `json:"labels"`
	DeviceClass         *string  `json:"device_class"`
	OriginalDeviceClass *string  `json:"original_device_class"`
	DisabledBy          *string  `json:"disabled_by"`
	HiddenBy            *string  `json:"hidden_by"`
}

// Class is the device class Home Assistant gives the entity: the user's choice, else the
// integration's.
func (e EntityEntry) Class() string {
	if e.DeviceClass != nil && *e.DeviceClass != "" {
		return *e.DeviceClass
	}
	if e.OriginalDeviceClass != nil {
		return *e.OriginalDeviceClass
	}
	return ""
}

// EntityEntries reads the registry entries of the given entities (WebSocket
// config/entity_registry/get_entries, homeassistant/components/config/entity_registry.py
// websocket_get_entities). An entity without an entry (one whose integration gives it no unique
// id) is absent from the map.
func (c *Client) EntityEntries(ctx context.Context, ids []string) (map[string]EntityEntry, error) {
	raw, err := callAs[map[string]*EntityEntry](ctx, c, "config/entity_registry/get_entries", map[string]any{"entity_ids": ids})
	if err != nil {
		return nil, err
	}
	out := make(map[string]EntityEntry, len(raw))
	for id, e := range raw {
		if e != nil {
			out[id] = *e
		}
	}
	return out, nil
}
