package hass

// config/auth/update joins the command table here: ws_core.go's init builds the table, and Go runs
// a package's init functions in file-name order.
func init() {
	wsCommands["config/auth/update"] = wsCommand{admin: true, handle: handleAuthUpdate,
		schema: schema{{name: "user_id", req: true, kind: "str"}, {name: "name", kind: "str"}, {name: "group_ids", kind: "list"}}}
}
