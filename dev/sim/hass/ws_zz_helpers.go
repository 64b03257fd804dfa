package hass

import (
	"github.com/hamcp/hamcp/dev/sim/home"
)

// The helpers' storage collections over the WebSocket (collection.py StorageCollectionWebsocket):
// <domain>/list, and (admin) <domain>/create, <domain>/update with <domain>_id, <domain>/delete.
// Field validation happens in the home model, which words its refusals as voluptuous does.

func init() {
	for _, domain := range home.HelperDomains {
		for name, cmd := range helperCommands(domain) {
			wsCommands[name] = cmd
		}
	}
}

func helperCommands(domain string) map[string]wsCommand {
	names, required := home.HelperFieldNames(domain)
	fields := func(extra ...sfield) schema {
		s := schema{}
		for _, n := range names {
			f := sfield{name: n, kind: "any"}
			for _, r := range required {
				f.req = f.req || r == n
			}
			s = append(s, f)
		}
		return append(s, extra...)
	}
	idKey := domain + "_id"
	data := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "id" && k != "type" && k != idKey {
				out[k] = v
			}
		}
		return out
	}
	return map[string]wsCommand{
		domain + "/list": {handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, c.s.h.HelperItems(domain))
		}},
		domain + "/create": {admin: true, schema: fields(), handle: func(c *wsConn, id int64, m map[string]any) {
			item, err := c.s.h.CreateHelper(domain, data(m))
			if err != nil {
				c.haError(id, err)
				return
			}
			c.result(id, item)
		}},
		domain + "/update": {admin: true, schema: fields(sfield{name: idKey, req: true, kind: "str"}), handle: func(c *wsConn, id int64, m map[string]any) {
			item, err := c.s.h.UpdateHelper(domain, str(m, idKey), data(m))
			if err != nil {
				c.haError(id, err)
				return
			}
			c.result(id, item)
		}},
		domain + "/delete": {admin: true, schema: schema{{name: idKey, req: true, kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			if err := c.s.h.DeleteHelper(domain, str(m, idKey)); err != nil {
				// ws_delete_item sends the not_found error and then, falling through, a result too.
				c.haError(id, err)
			}
			c.result(id, nil)
		}},
	}
}
