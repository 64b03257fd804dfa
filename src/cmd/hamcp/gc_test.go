package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGC: hamcp's collector defaults apply only where the user set nothing; GOGC and
// GOMEMLIMIT in the environment (already applied by the runtime) win, each on its own.
// Not parallel: the collector's settings are the process's.
func TestTuneGC(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	tests := []struct {
		env         map[string]string
		wantPercent int
		wantLimit   int64
	}{
		{nil, defaultGCPercent, defaultMemoryLimit},
		{map[string]string{"GOGC": "100"}, 100, defaultMemoryLimit},
		{map[string]string{"GOMEMLIMIT": "off"}, defaultGCPercent, math.MaxInt64},
		{map[string]string{"GOGC": "off", "GOMEMLIMIT": "48MiB"}, 100, math.MaxInt64},           // whatever the runtime made of them stands
		{map[string]string{"GOGC": "", "GOMEMLIMIT": ""}, defaultGCPercent, defaultMemoryLimit}, // empty is unset, for the runtime too
	}
	for _, tc := range tests {
		// What the runtime made of the environment before main ran.
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		tuneGC(func(name string) string { return tc.env[name] })
		if got := debug.SetGCPercent(100); got != tc.wantPercent {
			t.Errorf("env %v: GC percent %d, want %d", tc.env, got, tc.wantPercent)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.wantLimit {
			t.Errorf("env %v: memory limit %d, want %d", tc.env, got, tc.wantLimit)
		}
	}
}
