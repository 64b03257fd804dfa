package hass

import (
	"fmt"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// update/release_notes (components/update/__init__.py websocket_release_notes): admin only, the
// entity id checked by cv.entity_id, then not_found / not_supported from the entity.

func init() {
	wsCommands["update/release_notes"] = wsCommand{admin: true, schema: schema{{name: "entity_id", req: true, kind: "str"}},
		handle: func(c *wsConn, id int64, m map[string]any) {
			eid := str(m, "entity_id")
			if !home.ValidEntityID(eid) {
				c.sendError(id, "invalid_format", fmt.Sprintf("Entity ID %s is an invalid entity ID for dictionary value @ data['entity_id']. Got %s", eid, pyRepr(eid)))
				return
			}
			notes, err := c.s.h.UpdateReleaseNotes(eid)
			if err != nil {
				c.haError(id, err)
				return
			}
			if notes == nil {
				c.result(id, nil)
				return
			}
			c.result(id, *notes)
		}}
}
