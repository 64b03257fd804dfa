package hass

import (
	"errors"
	"strings"

	"github.com/hamcp/hamcp/dev/sim/home"
)

func registryCommands() map[string]wsCommand {
	areaFields := schema{{name: "name", kind: "str"}, {name: "aliases", kind: "list"}, {name: "floor_id", kind: "any"}, {name: "icon", kind: "any"},
		{name: "labels", kind: "list"}, {name: "picture", kind: "any"}, {name: "humidity_entity_id", kind: "any"}, {name: "temperature_entity_id", kind: "any"}}
	fields := func(m map[string]any, skip string) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "id" && k != "type" && k != skip {
				out[k] = v
			}
		}
		return out
	}
	areaErr := func(c *wsConn, id int64, err error) {
		var nf *home.NotFoundError
		if errors.As(err, &nf) {
			c.sendError(id, "invalid_info", nf.Msg)
			return
		}
		c.haError(id, err)
	}
	return map[string]wsCommand{
		"config/floor_registry/list": {handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, c.s.h.Floors()) }},
		"config/area_registry/list":  {handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, c.s.h.Areas()) }},
		"config/label_registry/list": {handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, c.s.h.Labels()) }},
		"config/device_registry/list": {handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, c.s.h.Devices())
		}},
		"config/entity_registry/list": {handle: func(c *wsConn, id int64, m map[string]any) {
			ents := c.s.h.EntityEntries()
			out := make([]any, 0, len(ents))
			for i := range ents {
				out = append(out, ents[i].List())
			}
			c.result(id, out)
		}},
		"config/entity_registry/list_for_display": {handle: func(c *wsConn, id int64, m map[string]any) {
			ents := c.s.h.EntityEntries()
			out := make([]any, 0, len(ents))
			for _, e := range ents {
				if e.DisabledBy != nil {
					continue
				}
				d := map[string]any{"ei": e.EntityID, "pl": e.Platform}
				if e.AreaID != nil {
					d["ai"] = *e.AreaID
				}
				if len(e.Labels) > 0 {
					d["lb"] = e.Labels
				}
				if e.DeviceID != nil {
					d["di"] = *e.DeviceID
				}
				if e.Icon != nil {
					d["ic"] = *e.Icon
				}
				if e.TranslationKey != nil {
					d["tk"] = *e.TranslationKey
				}
				if e.EntityCategory != nil {
					d["ec"] = map[string]int{"config": 0, "diagnostic": 1}[*e.EntityCategory]
				}
				if e.HiddenBy != nil {
					d["hb"] = true
				}
				if e.HasEntityName {
					d["hn"] = true
				}
				// HA's _as_display_dict: "en" is the integration's original name, sent only
				// when the user has set no name and the entity names itself after its device;
				// a user-set name never appears here.
				if e.Name == nil && e.HasEntityName && e.OriginalName != nil {
					d["en"] = *e.OriginalName
				}
				out = append(out, d)
			}
			c.result(id, map[string]any{"entity_categories": map[string]string{"0": "config", "1": "diagnostic"}, "entities": out})
		}},
		"config/entity_registry/get": {schema: schema{{name: "entity_id", req: true, kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			e, ok := c.s.h.EntityEntry(str(m, "entity_id"))
			if !ok {
				c.sendError(id, "not_found", "Entity not found")
				return
			}
			c.result(id, e.Extended())
		}},
		// websocket_get_entities: the extended entry of each id, null for an entity the registry lacks.
		"config/entity_registry/get_entries": {schema: schema{{name: "entity_ids", req: true, kind: "strlist"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			out := map[string]any{}
			ids, _ := m["entity_ids"].([]any)
			if one, ok := m["entity_ids"].(string); ok { // cv.entity_ids takes a comma-separated string too
				for _, p := range strings.Split(one, ",") {
					ids = append(ids, strings.ToLower(strings.TrimSpace(p)))
				}
			}
			for _, v := range ids {
				eid, _ := v.(string)
				if e, ok := c.s.h.EntityEntry(eid); ok {
					out[eid] = e.Extended()
				} else {
					out[eid] = nil
				}
			}
			c.result(id, out)
		}},
		"config/area_registry/create": {admin: true, schema: append(schema{{name: "name", req: true, kind: "str"}}, areaFields[1:]...),
			handle: func(c *wsConn, id int64, m map[string]any) {
				a, err := c.s.h.CreateArea(fields(m, ""))
				if err != nil {
					areaErr(c, id, err)
					return
				}
				c.result(id, a)
			}},
		"config/area_registry/update": {admin: true, schema: append(schema{{name: "area_id", req: true, kind: "str"}}, areaFields...),
			handle: func(c *wsConn, id int64, m map[string]any) {
				a, err := c.s.h.UpdateArea(str(m, "area_id"), fields(m, "area_id"))
				if err != nil {
					areaErr(c, id, err)
					return
				}
				c.result(id, a)
			}},
		"config/area_registry/delete": {admin: true, schema: schema{{name: "area_id", req: true, kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				if err := c.s.h.DeleteArea(str(m, "area_id")); err != nil {
					areaErr(c, id, err)
					return
				}
				c.result(id, "success")
			}},
		"search/related": {schema: schema{{name: "item_type", req: true, kind: "str", opts: []string{"area", "automation", "automation_blueprint",
			"config_entry", "device", "entity", "floor", "group", "integration", "label", "person", "scene", "script", "script_blueprint"}}, {name: "item_id", req: true, kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				res, err := c.s.h.SearchRelated(str(m, "item_type"), str(m, "item_id"))
				if err != nil {
					c.haError(id, err)
					return
				}
				c.result(id, res)
			}},
	}
}

func calendarCommands() map[string]wsCommand {
	event := func(m map[string]any) home.EventInput {
		e, _ := m["event"].(map[string]any)
		return home.EventInput{Summary: str(e, "summary"), Description: str(e, "description"), Location: str(e, "location"),
			DTStart: str(e, "dtstart"), DTEnd: str(e, "dtend"), RRule: str(e, "rrule")}
	}
	calErr := func(c *wsConn, id int64, err error) {
		var hae *home.HAError
		if errors.As(err, &hae) {
			c.sendError(id, "failed", hae.Msg)
			return
		}
		c.haError(id, err)
	}
	base := schema{{name: "entity_id", req: true, kind: "str"}}
	return map[string]wsCommand{
		"calendar/event/create": {schema: append(base, sfield{name: "event", req: true, kind: "dict"}), handle: calendarChecked(func(c *wsConn, id int64, m map[string]any) {
			if err := c.s.h.CreateCalendarEvent(str(m, "entity_id"), event(m)); err != nil {
				calErr(c, id, err)
				return
			}
			c.result(id, nil)
		})},
		"calendar/event/update": {schema: append(base, sfield{name: "uid", req: true, kind: "str"}, sfield{name: "recurrence_id", kind: "str"},
			sfield{name: "recurrence_range", kind: "str"}, sfield{name: "event", req: true, kind: "dict"}), handle: calendarChecked(func(c *wsConn, id int64, m map[string]any) {
			if err := c.s.h.UpdateCalendarEvent(str(m, "entity_id"), str(m, "uid"), str(m, "recurrence_id"), str(m, "recurrence_range"), event(m)); err != nil {
				calErr(c, id, err)
				return
			}
			c.result(id, nil)
		})},
		"calendar/event/delete": {schema: append(base, sfield{name: "uid", req: true, kind: "str"}, sfield{name: "recurrence_id", kind: "str"},
			sfield{name: "recurrence_range", kind: "str"}), handle: calendarChecked(func(c *wsConn, id int64, m map[string]any) {
			if err := c.s.h.DeleteCalendarEvent(str(m, "entity_id"), str(m, "uid"), str(m, "recurrence_id"), str(m, "recurrence_range")); err != nil {
				calErr(c, id, err)
				return
			}
			c.result(id, nil)
		})},
	}
}
