package testkit

import "strings"

// BuiltFrom reports whether piece is a concatenation of literals: how a client builds a path
// around its parameters ("/api/config/config_entries/flow" + "/"). The fidelity-table tests of
// the Home Assistant and Hubitat clients use it to check that a documented route is one the
// client can build.
func BuiltFrom(piece string, lits map[string]bool) bool {
	ok := make([]bool, len(piece)+1)
	ok[0] = true
	for i := 0; i < len(piece); i++ {
		if !ok[i] {
			continue
		}
		for l := range lits {
			if strings.HasPrefix(piece[i:], l) {
				ok[i+len(l)] = true
			}
		}
	}
	return ok[len(piece)]
}
