package hass

import (
	"fmt"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// The trace integration's WebSocket commands (components/trace/websocket_api.py):
// admin only, domain limited to TRACE_DOMAINS, a run the store no longer keeps is
// not_found "The trace could not be found".

func init() {
	for name, cmd := range traceCommands() {
		wsCommands[name] = cmd
	}
}

func traceCommands() map[string]wsCommand {
	domain := sfield{name: "domain", req: true, kind: "str", opts: home.TraceDomains}
	item := sfield{name: "item_id", kind: "str"}
	return map[string]wsCommand{
		"trace/list": {admin: true, schema: schema{domain, item}, handle: func(c *wsConn, id int64, m map[string]any) {
			var itemID *string
			if s, ok := m["item_id"].(string); ok {
				itemID = &s
			}
			c.result(id, c.s.h.TraceList(str(m, "domain"), itemID))
		}},
		"trace/get": {admin: true, schema: schema{domain, {name: "item_id", req: true, kind: "str"}, {name: "run_id", req: true, kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				tr, ok := c.s.h.TraceGet(str(m, "domain"), str(m, "item_id"), str(m, "run_id"))
				if !ok {
					c.sendError(id, "not_found", "The trace could not be found")
					return
				}
				c.result(id, tr)
			}},
		// domain and item_id are vol.Inclusive(…, "id"): both or neither. voluptuous reports the
		// group's label as the path, so humanize_error quotes the message's own id.
		"trace/contexts": {admin: true, schema: schema{{name: "domain", kind: "str", opts: home.TraceDomains}, item},
			handle: func(c *wsConn, id int64, m map[string]any) {
				_, hasDomain := m["domain"]
				_, hasItem := m["item_id"]
				if hasDomain != hasItem {
					c.sendError(id, "invalid_format", fmt.Sprintf("some but not all values in the same group of inclusion 'id' @ data['id']. Got %d", id))
					return
				}
				key := ""
				if hasItem {
					key = str(m, "domain") + "." + str(m, "item_id")
				}
				c.result(id, c.s.h.TraceContexts(key))
			}},
	}
}
