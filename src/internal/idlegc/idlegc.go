// Package idlegc hands memory back to the system when hamcp goes quiet.
//
// Go's collector sizes the heap for the load it last saw: with hamcp's collection target (400 %,
// chosen for throughput) the heap may grow to five times what is live, and after a burst of calls
// nothing collects until the runtime's two-minute forced collection, after which the scavenger
// still keeps about the heap goal mapped. On a Raspberry Pi beside Home Assistant an idle hamcp
// should cost what it holds, not what its last burst needed: once a busy period is followed by a
// quiet one, one collection returns the garbage and the free pages to the system.
package idlegc

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

const allocsMetric = "/gc/heap/allocs:bytes"

// Tracker decides, from the bytes allocated in each interval, when to trim: after an interval in
// which at least Quiet bytes were allocated (busy), the next interval with less (quiet) trims once.
// The first interval counts from the program's start, so start-up's garbage goes in the first
// quiet interval.
type Tracker struct {
	Quiet uint64
	last  uint64
	idle  bool // already trimmed since the last busy interval
}

// Observe takes the cumulative bytes allocated so far and says whether to trim now.
func (t *Tracker) Observe(allocated uint64) bool {
	d := allocated - t.last
	t.last = allocated
	if d >= t.Quiet {
		t.idle = false
		return false
	}
	if t.idle {
		return false
	}
	t.idle = true
	return true
}

// Run checks every interval until ctx ends and calls debug.FreeOSMemory when the tracker says so.
// A trim costs one collection of the live heap (a few MB when idle).
func Run(ctx context.Context, every time.Duration, quiet uint64) {
	t := &Tracker{Quiet: quiet}
	sample := []metrics.Sample{{Name: allocsMetric}}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // the runtime no longer offers the metric: nothing to go by
		}
		if t.Observe(sample[0].Value.Uint64()) {
			debug.FreeOSMemory()
		}
	}
}
