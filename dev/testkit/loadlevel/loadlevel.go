// Package loadlevel is for tests: the HAMCP_LOAD switch that the load, soak and measurement
// tests (dev/demo, dev/perf) share. They are not part of the README's test command, with or
// without CI=true: they measure, need the cores to themselves and take minutes.
package loadlevel

import (
	"os"
	"testing"
)

// Of returns HAMCP_LOAD, "short" (CI's version) or "full"; unset, it skips the test, naming the
// script that runs it; anything else fails it.
func Of(t testing.TB, script string) string {
	t.Helper()
	switch lvl := os.Getenv("HAMCP_LOAD"); lvl {
	case "short", "full":
		return lvl
	case "":
		t.Skip("set HAMCP_LOAD=short or HAMCP_LOAD=full (" + script + ")")
	default:
		t.Fatalf("HAMCP_LOAD=%q: want short or full", lvl)
	}
	return ""
}
