package idlegc

import (
	"context"
	"runtime/metrics"
	"testing"
	"time"
)

func TestTracker(t *testing.T) {
	t.Parallel()
	const mb = 1 << 20
	tests := []struct {
		name   string
		deltas []uint64 // bytes allocated in each interval
		trims  []bool
	}{
		{"start-up garbage goes in the first quiet interval", []uint64{7 * mb, 0, 0, 0}, []bool{false, true, false, false}},
		{"a steady trickle below the threshold trims once", []uint64{100 << 10, 100 << 10, 100 << 10}, []bool{true, false, false}},
		{"load, then quiet: one trim per quiet spell", []uint64{50 * mb, 80 * mb, mb, mb, 40 * mb, 0, 0}, []bool{false, false, true, false, false, true, false}},
		{"exactly the threshold counts as busy", []uint64{4 * mb, 4*mb - 1}, []bool{false, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := &Tracker{Quiet: 4 * mb}
			var total uint64
			for i, d := range tc.deltas {
				total += d
				if got := tr.Observe(total); got != tc.trims[i] {
					t.Errorf("interval %d (%d bytes): trim %v, want %v", i, d, got, tc.trims[i])
				}
			}
		})
	}
}

// TestRunTrimsWhenQuiet runs the real loop on this process: with a threshold no test reaches,
// the first interval is quiet, and Run forces exactly one collection (FreeOSMemory's), then none
// while it stays quiet.
func TestRunTrimsWhenQuiet(t *testing.T) {
	// Not parallel: it counts the process's forced collections.
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := forced()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Run(ctx, 10*time.Millisecond, 1<<40); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for forced() == before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // ten more quiet intervals: no further trim
	cancel()
	<-done
	if got := forced() - before; got != 1 {
		t.Errorf("%d forced collections, want 1", got)
	}
}
