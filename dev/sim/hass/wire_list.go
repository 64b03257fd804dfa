package hass

import (
	"sort"
	"strings"
)

// The lists below let docs/home-assistant-fidelity.md's test find every WebSocket command and
// REST route the simulator answers, so no call reaches the simulator without a row saying which
// Home Assistant handler it copies.

// WSCommandNames lists every WebSocket command type the simulator answers, sorted.
func WSCommandNames() []string {
	names := make([]string, 0, len(wsCommands))
	for n := range wsCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RouteList lists the REST routes of this server as "METHOD /pattern", sorted (path parameters
// as "{name}"; the routes depend on the server's options, e.g. the recorder and file logging).
func (s *Server) RouteList() []string { return s.mux.list() }

// RouteList lists the Supervisor's routes as "METHOD /pattern", sorted.
func (s *Supervisor) RouteList() []string { return s.mux.list() }

func (rt *router) list() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rt.routes {
		k := r.method + " /" + strings.Join(r.parts, "/")
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
