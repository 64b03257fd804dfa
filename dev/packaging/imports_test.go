package packaging

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedBinaryHoldsNothingFromDev: the add-on's build (-tags nosim, as addon/compile-hamcp.sh
// builds it) imports nothing under dev/ and none of the simulator's or browser tests' modules, and
// no package under src/ imports dev/ outside its tests, except cmd/hamcp's demo wiring.
func TestShippedBinaryHoldsNothingFromDev(t *testing.T) {
	root := filepath.Join("..", "..")
	list := func(args ...string) []string {
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	deps := list("-deps", "-tags", "nosim", "./src/cmd/hamcp")
	if len(deps) < 100 {
		t.Fatalf("go list found only %d packages", len(deps))
	}
	for _, p := range deps {
		for _, bad := range []string{"github.com/hamcp/hamcp/dev/", "github.com/nikolalohinski/gonja", "github.com/chromedp/"} {
			if strings.HasPrefix(p, bad) {
				t.Errorf("the add-on's binary imports %s", p)
			}
		}
	}
	for _, line := range list("-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./src/...") {
		pkg, imports, _ := strings.Cut(line, " ")
		if pkg == "github.com/hamcp/hamcp/src/cmd/hamcp" {
			continue // demo_sim.go (!nosim) is the demo's wiring
		}
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, "github.com/hamcp/hamcp/dev/") {
				t.Errorf("%s imports %s outside its tests", pkg, imp)
			}
		}
	}
}
