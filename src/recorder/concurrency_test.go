package recorder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	simrec "github.com/hamcp/hamcp/dev/sim/recorder"
)

// TestWriterNeverBlocked stands in for HA: a writer on its own connection
// commits a state every ~50 ms while the heaviest reads this package offers
// run flat out. No commit may wait more than 1 s (HA's own commit gives up
// after ~5 s), and afterwards a TRUNCATE checkpoint must find no reader in
// its way: nothing is held between calls.
func TestWriterNeverBlocked(t *testing.T) {
	path := copyOf(t)
	// The cross join holds one read snapshot for the full statement timeout.
	db := openDB(t, path, Options{StatementTimeout: 2 * time.Second})
	writer, err := simrec.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var worst atomic.Int64
	var commits atomic.Int64
	var lastWritten atomic.Int64
	writeErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		at := fixedNow
		for i := 0; ctx.Err() == nil; i++ {
			at = at.Add(time.Second)
			begin := time.Now()
			err := writer.RecordState(context.Background(), simrec.State{EntityID: "sensor.kitchen_temperature",
				State: fmt.Sprintf("%d", 20+i%5), Attributes: map[string]any{"unit_of_measurement": "°C"}, LastUpdated: at})
			took := time.Since(begin)
			if err != nil {
				writeErr <- err
				return
			}
			commits.Add(1)
			lastWritten.Store(at.UnixMicro())
			if took.Nanoseconds() > worst.Load() {
				worst.Store(took.Nanoseconds())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	readers := []struct {
		name string
		run  func() error
	}{
		{"cross join until the statement timeout", func() error {
			_, err := db.Query(ctx, "SELECT COUNT(*) FROM states a, states b, states c WHERE a.state = b.state AND b.state = c.state", nil, 0, 0)
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}},
		{"full scan with joins", func() error {
			_, err := db.Query(ctx, `SELECT m.entity_id, COUNT(*), AVG(CAST(s.state AS REAL)), MAX(LENGTH(a.shared_attrs))
				FROM states s JOIN states_meta m ON m.metadata_id = s.metadata_id
				LEFT JOIN state_attributes a ON a.attributes_id = s.attributes_id GROUP BY m.entity_id`, nil, 0, 0)
			return err
		}},
		{"paging deep", func() error {
			_, err := db.Query(ctx, "SELECT * FROM states ORDER BY last_updated_ts", nil, 100, 1500)
			return err
		}},
		{"history with attributes", func() error {
			_, _, err := db.StateHistory(ctx, "sensor.kitchen_temperature", fixedNow.Add(-72*time.Hour), fixedNow.Add(time.Hour), 1000, 0, WithAttributes, WithStartState)
			return err
		}},
		{"info", func() error { _, err := db.Info(ctx); return err }},
	}
	// One reader goroutine cycles through the reads, heaviest first: the
	// point is overlap with the writer, not saturating two shared cores
	// (CPU starvation would be measured as lock waits).
	runs := make([]int, len(readers))
	readErr := make(chan error, len(readers))
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			for i, r := range readers {
				if err := r.run(); err != nil && ctx.Err() == nil {
					readErr <- fmt.Errorf("%s: %w", r.name, err)
					return
				}
				runs[i]++
			}
		}
	}()
	time.Sleep(4 * time.Second)
	stop()
	wg.Wait()
	close(readErr)
	for err := range readErr {
		t.Error(err)
	}
	select {
	case err := <-writeErr:
		t.Fatalf("writer: %v", err)
	default:
	}
	if w := time.Duration(worst.Load()); w > time.Second {
		t.Errorf("a commit waited %s behind our reads; HA must never wait more than a moment", w)
	}
	if commits.Load() < 10 {
		t.Errorf("only %d commits in 4 s", commits.Load())
	}
	for i, r := range readers {
		if runs[i] == 0 {
			t.Errorf("%s never completed", r.name)
		}
	}
	t.Logf("%d commits, worst %s; reads completed: %v", commits.Load(), time.Duration(worst.Load()), runs)

	// The reader sees the newest commit: no stale snapshot survives a call.
	rows, _, err := db.StateHistory(context.Background(), "sensor.kitchen_temperature", fixedNow, fixedNow.Add(time.Hour), 1000, 0)
	if err != nil || len(rows) == 0 || rows[len(rows)-1].LastUpdated.UnixMicro() != lastWritten.Load() {
		t.Fatalf("history after the writes: %d rows, %v; want the last write", len(rows), err)
	}
	// With our pool still open, a TRUNCATE checkpoint finds no reader.
	raw := rawDB(t, path)
	var busy, logFrames, done int64
	if err := raw.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		t.Fatal(err)
	}
	if busy != 0 {
		t.Errorf("wal_checkpoint(TRUNCATE) was blocked by a reader (busy=%d)", busy)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("-wal still holds %d bytes after TRUNCATE", fi.Size())
	}
}
