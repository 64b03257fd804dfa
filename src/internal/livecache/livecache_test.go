package livecache

import (
	"sync"
	"testing"
)

func TestSync(t *testing.T) {
	steps := []struct {
		name                string
		do                  func(*Sync)
		ready, live, synced bool
		version             uint64
	}{
		{"zero value", func(*Sync) {}, false, false, false, 0},
		{"live before the first snapshot is not live", func(s *Sync) { s.SetLive(true) }, false, false, false, 0},
		{"a change before the snapshot moves the version", (*Sync).Changed, false, false, false, 1},
		{"first snapshot", (*Sync).Synced, true, true, true, 2},
		{"link down keeps the content ready", func(s *Sync) { s.SetLive(false) }, true, false, true, 2},
		{"resync while down", (*Sync).Synced, true, false, true, 3},
		{"link back", func(s *Sync) { s.SetLive(true) }, true, true, true, 3},
		{"a change", (*Sync).Changed, true, true, true, 4},
	}
	var s Sync
	for _, st := range steps {
		st.do(&s)
		if s.Ready() != st.ready || s.Live() != st.live || s.SyncedAt().IsZero() == st.synced || s.Version() != st.version {
			t.Fatalf("%s: ready %v live %v synced at %v version %d; want ready %v live %v synced %v version %d",
				st.name, s.Ready(), s.Live(), s.SyncedAt(), s.Version(), st.ready, st.live, st.synced, st.version)
		}
	}
}

func TestSyncSyncedAtMoves(t *testing.T) {
	var s Sync
	s.Synced()
	first := s.SyncedAt()
	s.Synced()
	if s.SyncedAt().Before(first) {
		t.Fatalf("second snapshot at %v is before the first at %v", s.SyncedAt(), first)
	}
}

// Readers take no lock: run under -race with writers.
func TestSyncConcurrent(t *testing.T) {
	var s Sync
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				s.Changed()
				s.Synced()
				s.SetLive(true)
				_, _, _, _ = s.Ready(), s.Live(), s.Version(), s.SyncedAt()
			}
		})
	}
	wg.Wait()
	if s.Version() != 800 {
		t.Fatalf("version %d, want 800", s.Version())
	}
}
