package hass

import (
	"errors"
	"net/url"
	"slices"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// WebSocket commands for administration: config entries, repairs, recorder
// info, blueprints and HACS. This file's init runs after ws_core.go's
// (files initialise in name order) and adds to its command table.

// integrationTypeNames are HA's INTEGRATION_TYPES, for config_entries/get's type_filter.
var integrationTypeNames = []string{"device", "entity", "hardware", "helper", "hub", "service", "system", "virtual"}

func init() {
	for name, cmd := range adminCommands() {
		wsCommands[name] = cmd
	}
}

func adminCommands() map[string]wsCommand {
	return map[string]wsCommand{
		"config_entries/get": {admin: true, schema: schema{{name: "type_filter", kind: "strlist"}, {name: "domain", kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				types := strList(m["type_filter"])
				for _, t := range types {
					if !slices.Contains(integrationTypeNames, t) {
						c.sendError(id, "invalid_format", "value must be one of "+pyRepr(strsToList(integrationTypeNames))+" @ data['type_filter'][0]. Got "+pyRepr(t))
						return
					}
				}
				c.result(id, c.s.h.ConfigEntryDetails(str(m, "domain"), types))
			}},
		"homeassistant/expose_entity/list": {admin: true, handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, map[string]any{"exposed_entities": c.s.h.ExposedEntities()})
		}},
		"homeassistant/expose_entity": {admin: true, schema: schema{{name: "assistants", req: true, kind: "strlist"},
			{name: "entity_ids", req: true, kind: "strlist"}, {name: "should_expose", req: true, kind: "bool"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				if err := c.s.h.ExposeEntities(strList(m["assistants"]), strList(m["entity_ids"]), boolOr(m, "should_expose", false)); err != nil {
					c.haError(id, err)
					return
				}
				c.result(id, nil)
			}},
		"repairs/list_issues": {handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, map[string]any{"issues": c.s.h.RepairIssues()})
		}},
		"recorder/info": {needsRecorder: true, handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, map[string]any{"backlog": 0, "max_backlog": 65000, "migration_in_progress": false,
				"migration_is_live": false, "recording": true, "thread_running": true})
		}},
		"blueprint/list": {schema: schema{{name: "domain", req: true, kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, c.s.h.Blueprints(str(m, "domain")))
		}},
		"blueprint/import": {schema: schema{{name: "url", req: true, kind: "str"}}, handle: wsImportBlueprint},
		"blueprint/save": {schema: schema{{name: "domain", req: true, kind: "str"}, {name: "path", req: true, kind: "str"},
			{name: "yaml", req: true, kind: "str"}, {name: "source_url", kind: "str"}, {name: "allow_override", kind: "bool"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				overrides, err := c.s.h.SaveBlueprint(str(m, "domain"), str(m, "path"), str(m, "yaml"), str(m, "source_url"), boolOr(m, "allow_override", false))
				var exists *home.AlreadyExistsError
				var oserr *home.OSError
				switch {
				case errors.As(err, &exists):
					c.sendError(id, "already_exists", exists.Msg)
				case errors.As(err, &oserr):
					c.sendError(id, "unknown_error", oserr.Msg)
				case err != nil:
					c.haError(id, err)
				default:
					c.result(id, map[string]any{"overrides_existing": overrides})
				}
			}},
		"hacs/info": {admin: true, handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, c.s.h.HACSInfo()) }},
		"hacs/repositories/list": {admin: true, schema: schema{{name: "categories", kind: "list"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, c.s.h.HACSRepositories(strList(m["categories"])))
		}},
		// HACS's hacs_repository_info takes repository_id only: any other key is refused.
		"hacs/repository/info": {admin: true, schema: schema{{name: "repository_id", req: true, kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				repoID := str(m, "repository_id")
				info, ok := c.s.h.HACSRepository(repoID)
				if !ok {
					c.sendError(id, "repository_not_found", "Repository with ID ("+repoID+") not found")
					return
				}
				c.result(id, info)
			}},
		"hacs/repository/download": {admin: true, schema: schema{{name: "repository", req: true, kind: "str"}, {name: "version", kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				hacsResult(c, id, c.s.h.HACSDownload(str(m, "repository"), str(m, "version")))
			}},
		"hacs/repository/remove": {admin: true, schema: schema{{name: "repository", req: true, kind: "str"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				hacsResult(c, id, c.s.h.HACSRemove(str(m, "repository")))
			}},
	}
}

// hacsResult answers as HACS does: {} on success, code "error" for its own
// failures, and for an unknown id the AttributeError HACS hits on None,
// which HA reports as unknown_error.
func hacsResult(c *wsConn, id int64, err error) {
	var he *home.HACSError
	var nf *home.NotFoundError
	switch {
	case err == nil:
		c.result(id, map[string]any{})
	case errors.As(err, &he):
		c.sendError(id, "error", he.Msg)
	case errors.As(err, &nf):
		c.sendError(id, "unknown_error", "Unknown error")
	default:
		c.haError(id, err)
	}
}

// wsImportBlueprint is blueprint/import: cv.url first, then the importers.
func wsImportBlueprint(c *wsConn, id int64, m map[string]any) {
	raw := str(m, "url")
	if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.sendError(id, "invalid_format", "invalid url for dictionary value @ data['url']. Got "+pyRepr(raw))
		return
	}
	res, err := c.s.h.ImportBlueprint(raw)
	var fe *home.FetchError
	var hae *home.HAError
	switch {
	case errors.As(err, &fe):
		c.s.log.Error("blueprint import failed", "url", raw, "error", fe.Msg)
		c.sendError(id, "unknown_error", "Unknown error")
	case errors.As(err, &hae):
		c.sendError(id, "home_assistant_error", hae.Msg)
	case err != nil:
		c.haError(id, err)
	default:
		c.result(id, res)
	}
}
