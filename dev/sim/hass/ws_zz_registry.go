package hass

import (
	"errors"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// Registry administration over the WebSocket: floors, labels and categories
// (components/config/{floor,label,category}_registry.py), zones (components/zone, a
// StorageCollectionWebsocket with zone_id), and config/entity_registry/update in full
// (entity_registry.py websocket_update_entity) and config/device_registry/update, which replace
// ws_registry.go's narrower ones.

func init() {
	for name, cmd := range registryAdminCommands() {
		wsCommands[name] = cmd
	}
}

// without is the message minus the envelope and the id key, as the handlers pass **data on.
func without(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k == "id" || k == "type" {
			continue
		}
		skip := false
		for _, s := range keys {
			skip = skip || k == s
		}
		if !skip {
			out[k] = v
		}
	}
	return out
}

// registryError answers like the registry handlers: a KeyError they do not catch is unknown_error.
func registryError(c *wsConn, id int64, err error) {
	var info *home.InfoError
	if !errors.As(err, &info) {
		var inv *home.InvalidError
		var nf *home.NotFoundError
		if !errors.As(err, &inv) && !errors.As(err, &nf) {
			c.sendError(id, "unknown_error", "Unknown error")
			return
		}
	}
	c.haError(id, err)
}

func registryAdminCommands() map[string]wsCommand {
	floorFields := schema{{name: "aliases", kind: "list"}, {name: "icon", kind: "any"}, {name: "level", kind: "any"}}
	labelFields := schema{{name: "color", kind: "any"}, {name: "description", kind: "any"}, {name: "icon", kind: "any"}}
	zoneFields := schema{}
	for _, n := range home.ZoneFieldNames() {
		zoneFields = append(zoneFields, sfield{name: n, kind: "any"})
	}
	ok := func(c *wsConn, id int64, v any, err error) {
		if err != nil {
			registryError(c, id, err)
			return
		}
		c.result(id, v)
	}
	return map[string]wsCommand{
		"config/floor_registry/create": {admin: true, schema: append(schema{{name: "name", req: true, kind: "str"}}, floorFields...),
			handle: func(c *wsConn, id int64, m map[string]any) {
				f, err := c.s.h.CreateFloor(without(m))
				ok(c, id, f, err)
			}},
		"config/floor_registry/update": {admin: true, schema: append(schema{{name: "floor_id", req: true, kind: "str"}, {name: "name", kind: "str"}}, floorFields...),
			handle: func(c *wsConn, id int64, m map[string]any) {
				f, err := c.s.h.UpdateFloor(str(m, "floor_id"), without(m, "floor_id"))
				ok(c, id, f, err)
			}},
		"config/floor_registry/delete": {admin: true, schema: schema{{name: "floor_id", req: true, kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) { ok(c, id, nil, c.s.h.DeleteFloor(str(m, "floor_id"))) }},
		"config/label_registry/create": {admin: true, schema: append(schema{{name: "name", req: true, kind: "str"}}, labelFields...),
			handle: func(c *wsConn, id int64, m map[string]any) {
				l, err := c.s.h.CreateLabel(without(m))
				ok(c, id, l, err)
			}},
		"config/label_registry/update": {admin: true, schema: append(schema{{name: "label_id", req: true, kind: "str"}, {name: "name", kind: "str"}}, labelFields...),
			handle: func(c *wsConn, id int64, m map[string]any) {
				l, err := c.s.h.UpdateLabel(str(m, "label_id"), without(m, "label_id"))
				ok(c, id, l, err)
			}},
		"config/label_registry/delete": {admin: true, schema: schema{{name: "label_id", req: true, kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) { ok(c, id, nil, c.s.h.DeleteLabel(str(m, "label_id"))) }},
		"config/category_registry/list": {schema: schema{{name: "scope", req: true, kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, c.s.h.Categories(str(m, "scope"))) }},
		"config/category_registry/create": {admin: true, schema: schema{{name: "scope", req: true, kind: "str"}, {name: "name", req: true, kind: "str"}, {name: "icon", kind: "any"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				cat, err := c.s.h.CreateCategory(str(m, "scope"), without(m, "scope"))
				ok(c, id, cat, err)
			}},
		"config/category_registry/update": {admin: true, schema: schema{{name: "scope", req: true, kind: "str"}, {name: "category_id", req: true, kind: "str"},
			{name: "name", kind: "str"}, {name: "icon", kind: "any"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				cat, err := c.s.h.UpdateCategory(str(m, "scope"), str(m, "category_id"), without(m, "scope", "category_id"))
				ok(c, id, cat, err)
			}},
		"config/category_registry/delete": {admin: true, schema: schema{{name: "scope", req: true, kind: "str"}, {name: "category_id", req: true, kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				ok(c, id, nil, c.s.h.DeleteCategory(str(m, "scope"), str(m, "category_id")))
			}},
		"zone/list": {handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, c.s.h.Zones()) }},
		// The collection validates the data itself (CREATE_SCHEMA), so the command schema takes any value.
		"zone/create": {admin: true, schema: zoneFields, handle: func(c *wsConn, id int64, m map[string]any) {
			z, err := c.s.h.CreateZone(without(m))
			ok(c, id, z, err)
		}},
		"zone/update": {admin: true, schema: append(schema{{name: "zone_id", req: true, kind: "str"}}, zoneFields...), handle: func(c *wsConn, id int64, m map[string]any) {
			z, err := c.s.h.UpdateZone(str(m, "zone_id"), without(m, "zone_id"))
			ok(c, id, z, err)
		}},
		"zone/delete": {admin: true, schema: schema{{name: "zone_id", req: true, kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			if err := c.s.h.DeleteZone(str(m, "zone_id")); err != nil {
				// ws_delete_item sends not_found and then, falling through, a result too.
				c.haError(id, err)
			}
			c.result(id, nil)
		}},
		// websocket_update_device: disabled_by is "user" or null, an unknown device is a KeyError
		// the handler does not catch, and the entity registry follows a disabled device.
		"config/device_registry/update": {admin: true, schema: schema{{name: "device_id", req: true, kind: "str"}, {name: "area_id", kind: "any"},
			{name: "labels", kind: "strlist"}, {name: "name_by_user", kind: "any"}, {name: "disabled_by", kind: "any"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				if v, given := m["disabled_by"]; given && v != nil && v != "user" {
					c.sendError(id, "invalid_format", "value must be one of ['user'] for dictionary value @ data['disabled_by']. Got "+pyRepr(fromGo(v)))
					return
				}
				d, err := c.s.h.UpdateDevice(str(m, "device_id"), without(m, "device_id"))
				var nf *home.NotFoundError
				if errors.As(err, &nf) {
					c.sendError(id, "unknown_error", "Unknown error")
					return
				}
				if err != nil {
					c.haError(id, err)
					return
				}
				if _, given := m["disabled_by"]; given {
					c.s.h.FollowDevice(d.ID)
				}
				c.result(id, d)
			}},
		"config/entity_registry/update": {admin: true, schema: schema{{name: "entity_id", req: true, kind: "str"}, {name: "name", kind: "any"},
			{name: "icon", kind: "any"}, {name: "area_id", kind: "any"}, {name: "device_class", kind: "any"}, {name: "labels", kind: "strlist"},
			{name: "aliases", kind: "list"}, {name: "hidden_by", kind: "any"}, {name: "disabled_by", kind: "any"}, {name: "new_entity_id", kind: "str"},
			{name: "categories", kind: "dict"}, {name: "options_domain", kind: "str"}, {name: "options", kind: "any"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				if _, a := m["options_domain"]; a != func() bool { _, b := m["options"]; return b }() {
					c.sendError(id, "invalid_format", "some but not all values in the same group of inclusion 'entity_option' @ data[<entity_option>]")
					return
				}
				u, err := c.s.h.UpdateEntityEntry(str(m, "entity_id"), without(m, "entity_id"))
				if err != nil {
					c.haError(id, err)
					return
				}
				out := map[string]any{"entity_entry": u.Entry.Extended()}
				if u.RequireRestart {
					out["require_restart"] = true
				} else if u.ReloadDelay > 0 {
					out["reload_delay"] = u.ReloadDelay
				}
				c.result(id, out)
			}},
	}
}
