package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/toolkit"
)

const (
	grantsBegin = "<!-- tool-grants:begin (generated from the tool declarations; UPDATE_DOCS=1 go test ./src/app -run TestDocsGrantTable) -->"
	grantsEnd   = "<!-- tool-grants:end -->"
)

// grantTable renders DOCS.md's tool → grant table from what the tools declare: the same declarations the
// permission gate enforces, so the documentation cannot promise a grant the code does not ask for.
func grantTable() string {
	var b strings.Builder
	b.WriteString("| Tool | Grant needed |\n|---|---|\n")
	open := 0
	for _, t := range declared().Select(toolkit.Filter{}) {
		gs := t.Grants()
		if len(gs) == 0 {
			open++
			continue
		}
		var parts []string
		for _, g := range gs {
			p := "`" + string(g.Category) + "`"
			if g.When != "" {
				p += " when " + g.When
			}
			parts = append(parts, p)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", t.Name(), strings.Join(parts, "; "))
	}
	fmt.Fprintf(&b, "\nThe other %d tools need no grant.\n", open)
	return b.String()
}

func TestDocsGrantTable(t *testing.T) {
	checkDocsBlock(t, grantsBegin, grantsEnd, grantTable(), "TestDocsGrantTable")
}
