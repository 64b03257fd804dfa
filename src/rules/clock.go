package rules

import "time"

// Clock is the engine's time source and timer factory: the real clock in production, a fake one
// in tests so that schedules, durations and delays are driven without sleeping.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a scheduled call that can be cancelled; Stop reports whether it was still pending.
type Timer = interface{ Stop() bool }

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }

func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
