// Package fakeclock is the one fake clock hamcp's tests share: it moves only when a test moves
// it, and timers due by then fire in order on the goroutine that moved it, each with the clock
// set to its own instant. Production code takes a func() time.Time (use Clock.Now) or an
// interface with Now and AfterFunc (rules.Clock).
package fakeclock

import (
	"slices"
	"sync"
	"time"
)

// Clock is a manual clock. The zero value is not usable: call New.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*timer
}

type timer struct {
	c   *Clock
	at  time.Time
	seq int
	f   func()
}

// New returns a clock reading start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms f to run once the clock reaches now+d. The result's Stop reports whether the
// timer was still pending. Its type is the unnamed interface so that Clock satisfies any
// interface declaring AfterFunc(time.Duration, func()) interface{ Stop() bool }.
func (c *Clock) AfterFunc(d time.Duration, f func()) interface{ Stop() bool } {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{c: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	i := slices.Index(t.c.timers, t)
	if i < 0 {
		return false
	}
	t.c.timers = slices.Delete(t.c.timers, i, i+1)
	return true
}

// Advance moves the clock by d, firing every timer due on the way (including timers those
// timers set, when they fall inside d).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	c.AdvanceTo(end)
}

// AdvanceTo moves the clock to end, firing the timers due by then. It never moves backwards:
// use Set for that.
func (c *Clock) AdvanceTo(end time.Time) {
	for {
		c.mu.Lock()
		var next *timer
		for _, t := range c.timers {
			if !t.at.After(end) && (next == nil || t.at.Before(next.at) || t.at.Equal(next.at) && t.seq < next.seq) {
				next = t
			}
		}
		if next == nil {
			if end.After(c.now) {
				c.now = end
			}
			c.mu.Unlock()
			return
		}
		c.timers = slices.DeleteFunc(c.timers, func(t *timer) bool { return t == next })
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

// Set puts the clock at t, forwards or backwards, without firing timers: for tests of what code
// does when the wall clock jumps.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Pending lists the instants of the armed timers, soonest first.
func (c *Clock) Pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Time, 0, len(c.timers))
	for _, t := range c.timers {
		out = append(out, t.at)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}
