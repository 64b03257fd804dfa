package hass

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// WebSocket commands of the shopping_list, conversation and energy
// integrations. The file sorts after ws_core.go so wsCommands exists.
func init() {
	for name, cmd := range dataCommands() {
		wsCommands[name] = cmd
	}
}

func dataCommands() map[string]wsCommand {
	itemNotFound := func(c *wsConn, id int64, err error) {
		var nf *home.NotFoundError
		if errors.As(err, &nf) {
			c.sendError(id, "item_not_found", "Item not found")
			return
		}
		c.haError(id, err)
	}
	return map[string]wsCommand{
		"shopping_list/items": {handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, c.s.h.ShoppingItems())
		}},
		"shopping_list/items/add": {schema: schema{{name: "name", req: true, kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, c.s.h.AddShoppingItem(str(m, "name"), c.user.ID))
		}},
		"shopping_list/items/update": {schema: schema{{name: "item_id", req: true, kind: "str"}, {name: "name", kind: "str"}, {name: "complete", kind: "bool"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				var name *string
				var complete *bool
				if v, ok := m["name"].(string); ok {
					name = &v
				}
				if v, ok := m["complete"].(bool); ok {
					complete = &v
				}
				item, err := c.s.h.UpdateShoppingItem(str(m, "item_id"), name, complete, c.user.ID)
				if err != nil {
					itemNotFound(c, id, err)
					return
				}
				c.result(id, item)
			}},
		"shopping_list/items/remove": {schema: schema{{name: "item_id", req: true, kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			item, err := c.s.h.RemoveShoppingItem(str(m, "item_id"), c.user.ID)
			if err != nil {
				itemNotFound(c, id, err)
				return
			}
			c.result(id, item)
		}},
		"shopping_list/items/clear": {handle: func(c *wsConn, id int64, m map[string]any) {
			c.s.h.ClearCompletedShoppingItems(c.user.ID)
			c.result(id, nil)
		}},
		"shopping_list/items/reorder": {schema: schema{{name: "item_ids", req: true, kind: "list"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			for _, v := range m["item_ids"].([]any) {
				if _, ok := v.(string); !ok {
					c.sendError(id, "invalid_format", "expected str @ data['item_ids'][0]. Got "+pyRepr(fromGo(v)))
					return
				}
			}
			if err := c.s.h.ReorderShoppingItems(strList(m["item_ids"]), c.user.ID); err != nil {
				var nf *home.NotFoundError
				var inv *home.InvalidError
				switch {
				case errors.As(err, &nf):
					c.sendError(id, "not_found", nf.Msg)
				case errors.As(err, &inv):
					c.sendError(id, "invalid_format", inv.Msg)
				default:
					c.haError(id, err)
				}
				return
			}
			c.result(id, nil)
		}},
		"conversation/process": {schema: schema{{name: "text", req: true, kind: "str"}, {name: "conversation_id", kind: "any"},
			{name: "language", kind: "str"}, {name: "agent_id", kind: "any"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			if v, ok := m["conversation_id"]; ok && v != nil {
				if _, isStr := v.(string); !isStr {
					c.sendError(id, "invalid_format", "expected str for dictionary value @ data['conversation_id']. Got "+pyRepr(fromGo(v)))
					return
				}
			}
			if msg := agentError(m); msg != "" {
				c.sendError(id, "invalid_format", msg)
				return
			}
			c.result(id, c.s.h.Converse(str(m, "text"), str(m, "language"), str(m, "conversation_id"), c.user.ID))
		}},
		"conversation/agent/list": {schema: schema{{name: "language", kind: "str"}, {name: "country", kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			langs := []string{"en"}
			if l := str(m, "language"); l != "" && !strings.HasPrefix(strings.ToLower(l), "en") {
				langs = []string{}
			}
			c.result(id, map[string]any{"agents": []any{map[string]any{"id": home.DefaultAgent, "name": "Home Assistant", "supported_languages": langs}}})
		}},
		"energy/get_prefs": {handle: func(c *wsConn, id int64, m map[string]any) {
			p, ok := c.s.h.EnergyPrefs()
			if !ok {
				c.sendError(id, "not_found", "No prefs")
				return
			}
			c.result(id, p)
		}},
		"energy/save_prefs": {admin: true, schema: schema{{name: "energy_sources", kind: "list"}, {name: "device_consumption", kind: "list"},
			{name: "device_consumption_water", kind: "list"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			if msg := legacyGridError(m["energy_sources"]); msg != "" {
				c.sendError(id, "invalid_format", msg)
				return
			}
			update := map[string]any{}
			for _, k := range []string{"energy_sources", "device_consumption", "device_consumption_water"} {
				if v, ok := m[k]; ok {
					update[k] = toGoNumbers(v)
				}
			}
			c.result(id, c.s.h.SaveEnergyPrefs(update))
		}},
	}
}

// legacyGridError is what energy/save_prefs says, since Home Assistant 2026.2 (energy/data.py
// GRID_SOURCE_SCHEMA), to a grid source in the form before it: flow_from and flow_to are no longer
// keys of a grid source, and each grid connection needs its cost_adjustment_day.
func legacyGridError(v any) string {
	sources, _ := v.([]any)
	for i, s := range sources {
		src, _ := s.(map[string]any)
		if src["type"] != "grid" {
			continue
		}
		at := fmt.Sprintf("@ data['energy_sources'][%d]", i)
		for _, k := range []string{"flow_from", "flow_to", "power"} {
			if _, ok := src[k]; ok {
				return "extra keys not allowed " + at + "['" + k + "']"
			}
		}
		if _, ok := src["cost_adjustment_day"]; !ok {
			return "required key not provided " + at + "['cost_adjustment_day']"
		}
	}
	return ""
}

// agentError is agent_id_validator's humanized failure, "" when the agent exists.
func agentError(m map[string]any) string {
	v, ok := m["agent_id"]
	if !ok {
		return ""
	}
	if s, isStr := v.(string); isStr && home.ValidAgent(s) {
		return ""
	}
	return "invalid agent ID for dictionary value @ data['agent_id']. Got " + pyRepr(fromGo(v))
}
