package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

const (
	confirmBegin = "<!-- confirmations:begin (generated from package sensitive and the tool declarations; UPDATE_DOCS=1 go test ./src/app -run TestDocsConfirmTable) -->"
	confirmEnd   = "<!-- confirmations:end -->"
)

// confirmTable renders DOCS.md's policy table (service → class) and tool → confirmation list from the
// same table and declarations the toolkit enforces.
func confirmTable() string {
	var b strings.Builder
	b.WriteString("| Service | On | Class |\n|---|---|---|\n")
	for _, r := range sensitive.Rules {
		on := "any target"
		if len(r.DeviceClasses) > 0 {
			on = "device_class " + strings.Join(r.DeviceClasses, " or ")
		}
		fmt.Fprintf(&b, "| `%s.%s` | %s | `%s` |\n", r.Domain, r.Service, on, r.Class)
	}
	b.WriteString("\n| Tool | Needs a confirmation when |\n|---|---|\n")
	for _, t := range declared().Select(toolkit.Filter{}) {
		if w := t.ConfirmWhen(); w != "" {
			fmt.Fprintf(&b, "| `%s` | %s |\n", t.Name(), w)
		}
	}
	return b.String()
}

func TestDocsConfirmTable(t *testing.T) {
	checkDocsBlock(t, confirmBegin, confirmEnd, confirmTable(), "TestDocsConfirmTable")
}

// checkDocsBlock compares a generated block of DOCS.md (between begin and end) with want, and rewrites
// it when UPDATE_DOCS=1.
func checkDocsBlock(t *testing.T, begin, end, want, test string) {
	t.Helper()
	path := filepath.Join("..", "..", "DOCS.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("DOCS.md has no generated block between %q and %q", begin, end)
	}
	if got := doc[i+len(begin)+1 : j]; got != want {
		if os.Getenv("UPDATE_DOCS") == "1" {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)+1]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("DOCS.md differs from the code; run UPDATE_DOCS=1 go test ./src/app -run %s.\nwant:\n%s", test, want)
	}
}
