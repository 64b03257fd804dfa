// Package livecache is the bookkeeping shared by the in-memory copies the backend clients keep of
// a remote state (Home Assistant's state mirror, the Hubitat device cache): whether the copy was
// primed once, whether a connected link feeds it right now, a version that moves on every change,
// and when the last full snapshot arrived.
package livecache

import (
	"sync/atomic"
	"time"
)

// Sync is embedded by a cache. Its owner changes it while holding the lock that guards the
// cached data, so that a change and its version move together; readers need no lock. The zero
// value is a cache never primed and not live.
type Sync struct {
	ready    atomic.Bool
	live     atomic.Bool
	version  atomic.Uint64
	syncedAt atomic.Pointer[time.Time]
}

// Ready reports that the cache has been primed at least once. Its content may be stale while
// the link is reconnecting; Live tells that apart.
func (s *Sync) Ready() bool { return s.ready.Load() }

// Live reports that the cache is primed and fed by a connected link right now.
func (s *Sync) Live() bool { return s.ready.Load() && s.live.Load() }

// Version increases on every change, so callers can tell whether anything moved.
func (s *Sync) Version() uint64 { return s.version.Load() }

// SyncedAt is when the last full snapshot was applied (zero before the first).
func (s *Sync) SyncedAt() time.Time {
	if t := s.syncedAt.Load(); t != nil {
		return *t
	}
	return time.Time{}
}

// Changed records a change of the cached data.
func (s *Sync) Changed() { s.version.Add(1) }

// Synced records that a full snapshot was installed now: the cache is primed and has changed.
func (s *Sync) Synced() {
	now := time.Now()
	s.syncedAt.Store(&now)
	s.version.Add(1)
	s.ready.Store(true)
}

// SetLive records whether a connected link feeds the cache.
func (s *Sync) SetLive(live bool) { s.live.Store(live) }
