package homeassistant

import (
	"context"
	"encoding/json"
	"fmt"
)

// Writing Home Assistant's registries (WebSocket only; REST has none of them). Areas, floors,
// labels and categories are config/<kind>_registry/create|update|delete
// (components/config/<kind>_registry.py); zones are the zone integration's storage collection
// (zone/list|create|update|delete with zone_id); entities and devices are updated in place
// (config/entity_registry/update, config/device_registry/update). Items travel as JSON objects:
// each kind has its own fields, and hamcp keeps them whole for its history.

// RegistryKind is one registry whose items can be created, updated and deleted.
type RegistryKind string

// The registry kinds.
const (
	RegistryArea     RegistryKind = "area"
	RegistryFloor    RegistryKind = "floor"
	RegistryLabel    RegistryKind = "label"
	RegistryCategory RegistryKind = "category" // scoped: every call names its scope
	RegistryZone     RegistryKind = "zone"
)

// IDKey is the field that names an item of the kind in commands and results.
func (k RegistryKind) IDKey() string {
	if k == RegistryZone {
		return "zone_id"
	}
	return string(k) + "_id"
}

// command is the WebSocket command for verb (list, create, update, delete).
func (k RegistryKind) command(verb string) string {
	if k == RegistryZone {
		return "zone/" + verb
	}
	return "config/" + string(k) + "_registry/" + verb
}

// RegistryItems lists a registry's items as Home Assistant sends them (scope: categories only).
func (c *Client) RegistryItems(ctx context.Context, kind RegistryKind, scope string) ([]map[string]any, error) {
	var payload map[string]any
	if kind == RegistryCategory {
		payload = map[string]any{"scope": scope}
	}
	return callAs[[]map[string]any](ctx, c, kind.command("list"), payload)
}

// RegistryItem finds one item by id; ok is false when there is none.
func (c *Client) RegistryItem(ctx context.Context, kind RegistryKind, scope, id string) (item map[string]any, ok bool, err error) {
	items, err := c.RegistryItems(ctx, kind, scope)
	if err != nil {
		return nil, false, err
	}
	key := kind.IDKey()
	if kind == RegistryZone {
		key = "id" // zone/list items carry their id as "id"
	}
	for _, it := range items {
		if fmt.Sprint(it[key]) == id {
			return it, true, nil
		}
	}
	return nil, false, nil
}

// CreateRegistryItem creates an item from fields and returns it (its id under IDKey, "id" for a zone).
func (c *Client) CreateRegistryItem(ctx context.Context, kind RegistryKind, scope string, fields map[string]any) (map[string]any, error) {
	return callAs[map[string]any](ctx, c, kind.command("create"), withKeys(fields, kind, scope, ""))
}

// UpdateRegistryItem changes the given fields of item id and returns the item.
func (c *Client) UpdateRegistryItem(ctx context.Context, kind RegistryKind, scope, id string, fields map[string]any) (map[string]any, error) {
	return callAs[map[string]any](ctx, c, kind.command("update"), withKeys(fields, kind, scope, id))
}

// DeleteRegistryItem deletes item id. Areas and devices that used a deleted floor or label lose it,
// as Home Assistant's registries do.
func (c *Client) DeleteRegistryItem(ctx context.Context, kind RegistryKind, scope, id string) error {
	return c.Call(ctx, kind.command("delete"), withKeys(nil, kind, scope, id), nil)
}

func withKeys(fields map[string]any, kind RegistryKind, scope, id string) map[string]any {
	out := make(map[string]any, len(fields)+2)
	for k, v := range fields {
		out[k] = v
	}
	if kind == RegistryCategory {
		out["scope"] = scope
	}
	if id != "" {
		out[kind.IDKey()] = id
	}
	return out
}

// EntityEntryFull is an entity's registry entry as config/entity_registry/get and update return it
// (RegistryEntry.extended_dict), kept as a JSON object so that nothing HA adds is lost.
type EntityEntryFull map[string]any

// EntityRegistryEntry reads one entity's registry entry (config/entity_registry/get); HA answers
// not_found for an entity the registry does not know.
func (c *Client) EntityRegistryEntry(ctx context.Context, entityID string) (EntityEntryFull, error) {
	return callAs[EntityEntryFull](ctx, c, "config/entity_registry/get", map[string]any{"entity_id": entityID})
}

// RegistryRow is what hamcp reads of one row of config/entity_registry/list (as_partial_dict):
// "id" is the entry's own id, which stays when the entity id is renamed.
type RegistryRow struct {
	ID       string `json:"id"`
	EntityID string `json:"entity_id"`
	Platform string `json:"platform"`
	UniqueID string `json:"unique_id"`
}

// FindEntity is the entity id of the first registry row match accepts; ok is false when none does.
func (c *Client) FindEntity(ctx context.Context, match func(RegistryRow) bool) (entityID string, ok bool, err error) {
	rows, err := callAs[[]RegistryRow](ctx, c, "config/entity_registry/list", nil)
	if err != nil {
		return "", false, err
	}
	for _, r := range rows {
		if match(r) {
			return r.EntityID, true, nil
		}
	}
	return "", false, nil
}

// EntityUpdateResult is config/entity_registry/update's answer: the entry, and when an enabled
// entity appears (after a config entry reload, reload_delay seconds, or only after a restart).
type EntityUpdateResult struct {
	Entry          EntityEntryFull `json:"entity_entry"`
	RequireRestart bool            `json:"require_restart,omitempty"`
	ReloadDelay    int             `json:"reload_delay,omitempty"`
}

// UpdateEntityRegistry changes an entity's registry entry (websocket_update_entity): name, icon,
// area_id, device_class, labels, aliases, hidden_by/disabled_by ("user" or nil), new_entity_id.
func (c *Client) UpdateEntityRegistry(ctx context.Context, entityID string, fields map[string]any) (EntityUpdateResult, error) {
	msg := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		msg[k] = v
	}
	msg["entity_id"] = entityID
	return callAs[EntityUpdateResult](ctx, c, "config/entity_registry/update", msg)
}

// UpdateDeviceRegistry changes a device's registry entry (websocket_update_device): name_by_user,
// area_id, labels, disabled_by ("user" or nil). It returns the device as HA sends it.
func (c *Client) UpdateDeviceRegistry(ctx context.Context, deviceID string, fields map[string]any) (map[string]any, error) {
	msg := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		msg[k] = v
	}
	msg["device_id"] = deviceID
	return callAs[map[string]any](ctx, c, "config/device_registry/update", msg)
}

// DeviceEntry reads one device's registry entry as HA sends it; ok is false when there is none.
func (c *Client) DeviceEntry(ctx context.Context, deviceID string) (map[string]any, bool, error) {
	raw, err := callAs[[]json.RawMessage](ctx, c, "config/device_registry/list", nil)
	if err != nil {
		return nil, false, err
	}
	for _, r := range raw {
		var d map[string]any
		if json.Unmarshal(r, &d) == nil && d["id"] == deviceID {
			return d, true, nil
		}
	}
	return nil, false, nil
}

// ExposeEntities exposes entities to, or hides them from, voice assistants ("conversation" is
// Assist), as Settings → Voice assistants → Expose does (homeassistant/expose_entity,
// components/homeassistant/exposed_entities.py ws_expose_entity).
func (c *Client) ExposeEntities(ctx context.Context, assistants, entityIDs []string, expose bool) error {
	return c.Call(ctx, "homeassistant/expose_entity", map[string]any{"assistants": assistants, "entity_ids": entityIDs, "should_expose": expose}, nil)
}
