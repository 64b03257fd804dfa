package hass

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// Dashboards over the WebSocket (homeassistant/components/lovelace): websocket.py's
// lovelace/config, lovelace/config/save and lovelace/config/delete (errors through _handle_errors:
// config_not_found, or "error" for a HomeAssistantError), dashboard.py's DashboardsCollectionWebSocket
// under lovelace/dashboards (collection.py's list/create/update/delete with dashboard_id), and the
// resources collection's lovelace/resources and lovelace/resources/list.

func init() {
	for name, cmd := range lovelaceCommands() {
		wsCommands[name] = cmd
	}
}

// dashboardBase are DASHBOARD_BASE_*_FIELDS as the sim's schema kinds.
var dashboardBase = schema{{name: "require_admin", kind: "bool"}, {name: "icon", kind: "any"},
	{name: "show_in_sidebar", kind: "bool"}}

func lovelaceCommands() map[string]wsCommand {
	urlPath := sfield{name: "url_path", kind: "any"}
	resources := func(c *wsConn, id int64, m map[string]any) {
		res, err := c.s.h.LovelaceResources()
		if err != nil {
			c.haError(id, err)
			return
		}
		c.result(id, res)
	}
	return map[string]wsCommand{
		"lovelace/config": {schema: schema{{name: "force", kind: "bool"}, urlPath}, handle: func(c *wsConn, id int64, m map[string]any) {
			up, ok := lovelaceURLPath(c, id, m)
			if !ok {
				return
			}
			cfg, err := c.s.h.LovelaceConfig(up)
			if err != nil {
				lovelaceError(c, id, err)
				return
			}
			c.result(id, cfg)
		}},
		"lovelace/config/save": {admin: true, schema: schema{{name: "config", req: true, kind: "any"}, urlPath}, handle: func(c *wsConn, id int64, m map[string]any) {
			switch m["config"].(type) {
			case string, map[string]any:
			default:
				c.sendError(id, "invalid_format", "expected str for dictionary value @ data['config']. Got "+pyRepr(fromGo(m["config"])))
				return
			}
			up, ok := lovelaceURLPath(c, id, m)
			if !ok {
				return
			}
			if err := c.s.h.SaveLovelaceConfig(up, m["config"]); err != nil {
				lovelaceError(c, id, err)
				return
			}
			c.result(id, nil)
		}},
		"lovelace/config/delete": {admin: true, schema: schema{urlPath}, handle: func(c *wsConn, id int64, m map[string]any) {
			up, ok := lovelaceURLPath(c, id, m)
			if !ok {
				return
			}
			if err := c.s.h.DeleteLovelaceConfig(up); err != nil {
				lovelaceError(c, id, err)
				return
			}
			c.result(id, nil)
		}},
		"lovelace/dashboards/list": {handle: func(c *wsConn, id int64, m map[string]any) {
			list, err := c.s.h.LovelaceDashboards()
			if err != nil {
				c.haError(id, err)
				return
			}
			c.result(id, list)
		}},
		"lovelace/dashboards/create": {admin: true, schema: append(schema{{name: "title", req: true, kind: "str"},
			{name: "url_path", req: true, kind: "str"}, {name: "mode", kind: "str", opts: []string{"storage"}},
			{name: "allow_single_word", kind: "bool"}}, dashboardBase...), handle: wsCreateDashboard},
		"lovelace/dashboards/update": {admin: true, schema: append(schema{{name: "title", kind: "str"},
			{name: "dashboard_id", req: true, kind: "str"}}, dashboardBase...), handle: func(c *wsConn, id int64, m map[string]any) {
			data := collectionData(m, "dashboard_id")
			if !dashboardIcon(c, id, data, true) {
				return
			}
			item, err := c.s.h.UpdateLovelaceDashboard(str(m, "dashboard_id"), data)
			if err != nil {
				c.haError(id, err)
				return
			}
			c.result(id, item)
		}},
		"lovelace/dashboards/delete": {admin: true, schema: schema{{name: "dashboard_id", req: true, kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			if err := c.s.h.DeleteLovelaceDashboard(str(m, "dashboard_id")); err != nil {
				// ws_delete_item sends the not_found error and then, falling through, a result too.
				c.haError(id, err)
			}
			c.result(id, nil)
		}},
		"lovelace/resources":      {handle: resources},
		"lovelace/resources/list": {handle: resources},
	}
}

// wsCreateDashboard is ws_create_item: the schema (with cv.icon), then _process_create_data's
// checks, whose vol.Invalid humanize_error words with the whole data.
func wsCreateDashboard(c *wsConn, id int64, m map[string]any) {
	data := collectionData(m, "")
	if !dashboardIcon(c, id, data, false) {
		return
	}
	item, err := c.s.h.CreateLovelaceDashboard(data)
	var inv *home.InvalidError
	if errors.As(err, &inv) {
		shown := map[string]any{"require_admin": false, "show_in_sidebar": true, "mode": "storage"}
		for k, v := range data {
			shown[k] = v
		}
		c.sendError(id, "invalid_format", inv.Msg+". Got "+pyRepr(fromGo(shown)))
		return
	}
	if err != nil {
		c.haError(id, err)
		return
	}
	c.result(id, item)
}

// collectionData is the message without id, type and the item id key.
func collectionData(m map[string]any, idKey string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "id" && k != "type" && k != idKey {
			out[k] = v
		}
	}
	return out
}

// dashboardIcon is cv.icon (a "prefix:name" string); update also takes null, which removes it.
func dashboardIcon(c *wsConn, id int64, data map[string]any, nullable bool) bool {
	v, ok := data["icon"]
	if !ok || v == nil && nullable {
		return true
	}
	if s, isStr := v.(string); isStr && strings.Contains(s, ":") {
		return true
	}
	c.sendError(id, "invalid_format", `Icons should be specified in the form "prefix:name" for dictionary value @ data['icon']. Got `+pyRepr(fromGo(v)))
	return false
}

// lovelaceURLPath reads url_path as vol.Any(None, cv.string) does: absent or null is the default
// dashboard; numbers and booleans become their text; lists and dicts are refused.
func lovelaceURLPath(c *wsConn, id int64, m map[string]any) (*string, bool) {
	v, ok := m["url_path"]
	if !ok || v == nil {
		return nil, true
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	case bool:
		s = "False"
		if x {
			s = "True"
		}
	default:
		c.sendError(id, "invalid_format", "not a valid value for dictionary value @ data['url_path']. Got "+pyRepr(fromGo(v)))
		return nil, false
	}
	return &s, true
}

func lovelaceError(c *wsConn, id int64, err error) {
	var le *home.LovelaceError
	if errors.As(err, &le) {
		c.sendError(id, le.Code, le.Msg)
		return
	}
	c.haError(id, err)
}
