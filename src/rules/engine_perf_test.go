package rules

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/hubitat"
)

// TestEngineThroughput is the figure in docs/performance.md: 100 enabled rules on the wall
// clock, a burst of 1,000 hub events each matching exactly one rule (every event is matched
// against all 100), each run sending one command to the hub over HTTP. The events come through
// the simulated hub's eventsocket, paced to its buffer. It logs events/s (first
// event emitted to last run finished) and the lag from an event's emission to its run's start.
//
//	go test -race=false -run TestEngineThroughput -v ./src/rules
func TestEngineThroughput(t *testing.T) {
	t.Parallel()
	const rulesN, eventsN = 100, 1000
	h, c := ownHub(t, simhub.Options{})
	st := openTestStore(t, t.TempDir())

	var (
		mu     sync.Mutex
		starts = map[string][]time.Time{} // rule id → when each run started, in order
		ran    int
	)
	e := New(Options{Hub: c, Store: st, Logger: slog.New(slog.DiscardHandler),
		Log: func(_ context.Context, level, _, ruleID, _ string) {
			if level != "info" {
				return // the "triggered" line is the only info line a run of these rules writes
			}
			mu.Lock()
			starts[ruleID] = append(starts[ruleID], time.Now())
			ran++
			mu.Unlock()
		}})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	te := &testEngine{Engine: e, t: t, sim: h, hub: c, st: st}
	te.prime(14, "temperature", "-1")

	ids := make([]string, rulesN)
	for i := range rulesN {
		ids[i] = te.create(Rule{Name: "rule " + strconv.Itoa(i),
			Triggers: []Trigger{{Type: "device_event", DeviceID: "14", Attribute: "temperature", Value: N(float64(i))}},
			Actions:  []Action{hubCmd("3", "on")}}).ID
	}

	// The burst is paced to the eventsocket: the hub drops a client more than 512 frames
	// behind (as a real server would), so at most 256 events are in flight.
	var received atomic.Int64
	defer c.Cache().OnEvent(func(ev hubitat.Event) {
		if ev.DeviceID == "14" && ev.Name == "temperature" {
			received.Add(1)
		}
	})()
	emitted := make([]time.Time, eventsN)
	begin := time.Now()
	for s := range eventsN {
		for int64(s)-received.Load() > 256 {
			time.Sleep(100 * time.Microsecond)
		}
		emitted[s] = time.Now()
		te.set(14, "temperature", strconv.Itoa(s%rulesN))
	}
	testkit.EventuallyNoError(t, "every run of the burst", func() error {
		mu.Lock()
		n := ran
		mu.Unlock()
		if n != eventsN {
			return fmt.Errorf("%d of %d runs (hub status %+v)", n, eventsN, c.Status())
		}
		return nil
	})
	for _, id := range ids {
		te.idle(id)
	}
	elapsed := time.Since(begin)

	var lags []time.Duration
	mu.Lock()
	for i, id := range ids {
		if len(starts[id]) != eventsN/rulesN {
			t.Fatalf("rule %d ran %d times; want %d", i, len(starts[id]), eventsN/rulesN)
		}
		for k, at := range starts[id] {
			lags = append(lags, at.Sub(emitted[i+k*rulesN]))
		}
	}
	mu.Unlock()
	slices.Sort(lags)
	p50, p99, maxLag := lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1]
	t.Logf("%d rules, %d events: %.0f events/s (%s for the burst and every run), lag to run start p50 %s, p99 %s, max %s",
		rulesN, eventsN, float64(eventsN)/elapsed.Seconds(), elapsed.Round(time.Millisecond),
		p50.Round(time.Microsecond), p99.Round(time.Microsecond), maxLag.Round(time.Microsecond))
}
