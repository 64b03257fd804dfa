package idlegc

import (
	"context"
	"runtime/metrics"
	"testing"
	"testing/synctest"
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

// TestRunTrimsWhenQuiet runs the real loop on this process, its ticker on a synctest clock: with a
// threshold no test reaches, the first interval is quiet, and Run forces exactly one collection
// (FreeOSMemory's), then none while it stays quiet.
func TestRunTrimsWhenQuiet(t *testing.T) {
	// Not parallel: it counts the process's forced collections.
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	synctest.Test(t, func(t *testing.T) {
		before := forced()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { Run(ctx, time.Second, 1<<40); close(done) }()
		time.Sleep(time.Second) // the first interval
		synctest.Wait()
		if got := forced() - before; got != 1 {
			t.Errorf("after the first quiet interval: %d forced collections, want 1", got)
		}
		time.Sleep(10 * time.Second) // ten more quiet intervals: no further trim
		synctest.Wait()
		cancel()
		<-done
		if got := forced() - before; got != 1 {
			t.Errorf("after ten more quiet intervals: %d forced collections, want 1", got)
		}
	})
}
