// Package reconnect holds what every backend client with a live link (Home Assistant's WebSocket,
// the Hubitat eventsocket) shares: the states the link goes through, and the delay between attempts.
package reconnect

import (
	"math/rand/v2"
	"time"
)

// State is where a live link is; callers use it to decide between waiting for the link and failing
// fast, and health endpoints show its String.
type State int

const (
	Idle State = iota
	Connecting
	Connected
	Down
	Closed
)

func (s State) String() string {
	if s < Idle || s > Closed {
		return "unknown"
	}
	return [...]string{"not_started", "connecting", "connected", "down", "closed"}[s]
}

// Backoff is the delay before reconnect attempt n (0 for the first retry): exponential from base,
// capped at limit, with "equal jitter" — half the delay fixed, half random — so many clients that
// lost the same server (HA restarting, a hub rebooting) do not come back in lock-step.
func Backoff(n int, base, limit time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half+1)
}
