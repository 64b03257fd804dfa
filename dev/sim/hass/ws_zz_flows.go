package hass

// WS config_entries/disable (homeassistant/components/config/config_entries.py,
// config_entry_disable): only "user" or null may be set through the API.
func init() {
	wsCommands["config_entries/disable"] = wsCommand{admin: true,
		schema: schema{{name: "entry_id", req: true, kind: "str"}, {name: "disabled_by", req: true, kind: "any"}},
		handle: func(c *wsConn, id int64, m map[string]any) {
			var by *string
			switch v := m["disabled_by"].(type) {
			case nil:
			case string:
				if v != "user" {
					c.sendError(id, "invalid_format", "not a valid value for dictionary value @ data['disabled_by']. Got "+pyRepr(v))
					return
				}
				by = &v
			default:
				c.sendError(id, "invalid_format", "not a valid value for dictionary value @ data['disabled_by']. Got "+pyRepr(fromGo(v)))
				return
			}
			restart, err := c.s.h.SetEntryDisabled(str(m, "entry_id"), by)
			if err != nil {
				c.haError(id, err)
				return
			}
			c.result(id, map[string]any{"require_restart": restart})
		}}
}
