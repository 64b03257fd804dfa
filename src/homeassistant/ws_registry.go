package homeassistant

import (
	"context"
)

// Area is one row of config/area_registry/list.
type Area struct {
	ID      string   `json:"area_id"`
	Name    string   `json:"name"`
	FloorID *string  `json:"floor_id"`
	Aliases []string `json:"aliases"`
	Labels  []string `json:"labels"`
}

// Floor is one row of config/floor_registry/list.
type Floor struct {
	ID    string `json:"floor_id"`
	Name  string `json:"name"`
	Level *int   `json:"level"`
}

// Label is one row of config/label_registry/list.
type Label struct {
	ID          string  `json:"label_id"`
	Name        string  `json:"name"`
	Color       *string `json:"color"`
	Description *string `json:"description"`
}

// Device is one row of config/device_registry/list. HA sends null for what a device does not
// report, hence the pointers.
type Device struct {
	ID               string   `json:"id"`
	Name             *string  `json:"name"`
	NameByUser       *string  `json:"name_by_user"`
	Manufacturer     *string  `json:"manufacturer"`
	Model            *string  `json:"model"`
	ModelID          *string  `json:"model_id"`
	AreaID           *string  `json:"area_id"`
	Labels           []string `json:"labels"`
	ViaDeviceID      *string  `json:"via_device_id"`
	DisabledBy       *string  `json:"disabled_by"`
	EntryType        *string  `json:"entry_type"`
	SWVersion        *string  `json:"sw_version"`
	HWVersion        *string  `json:"hw_version"`
	SerialNumber     *string  `json:"serial_number"`
	ConfigurationURL *string  `json:"configuration_url"`
}

// DisplayName is the name the user gave the device, else the integration's.
func (d Device) DisplayName() string {
	if d.NameByUser != nil && *d.NameByUser != "" {
		return *d.NameByUser
	}
	if d.Name != nil {
		return *d.Name
	}
	return ""
}

// DisplayEntity is one row of config/entity_registry/list_for_display, the compact list HA's
// own frontend loads: short keys, enabled entities only, empty members omitted.
type DisplayEntity struct {
	EntityID string   `json:"ei"`
	AreaID   string   `json:"ai"`
	DeviceID string   `json:"di"`
	Labels   []string `json:"lb"`
	Name     string   `json:"en"`
}

// Areas lists the area registry (WebSocket config/area_registry/list; REST has no registries).
func (c *Client) Areas(ctx context.Context) ([]Area, error) {
	return callAs[[]Area](ctx, c, "config/area_registry/list", nil)
}

// Floors lists the floor registry (WebSocket config/floor_registry/list).
func (c *Client) Floors(ctx context.Context) ([]Floor, error) {
	return callAs[[]Floor](ctx, c, "config/floor_registry/list", nil)
}

// Labels lists the label registry (WebSocket config/label_registry/list).
func (c *Client) Labels(ctx context.Context) ([]Label, error) {
	return callAs[[]Label](ctx, c, "config/label_registry/list", nil)
}

// Devices lists the device registry (WebSocket config/device_registry/list).
func (c *Client) Devices(ctx context.Context) ([]Device, error) {
	return callAs[[]Device](ctx, c, "config/device_registry/list", nil)
}

// DisplayEntities lists the enabled entities of the entity registry in the compact form
// (WebSocket config/entity_registry/list_for_display), much smaller than the full list.
func (c *Client) DisplayEntities(ctx context.Context) ([]DisplayEntity, error) {
	var out struct {
		Entities []DisplayEntity `json:"entities"`
	}
	err := c.Call(ctx, "config/entity_registry/list_for_display", nil, &out)
	return out.Entities, err
}
