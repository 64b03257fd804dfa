package fakeclock

import (
	"testing"
	"time"
)

func TestTimersFireInOrderAtTheirInstant(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := New(start)
	var fired []time.Duration
	note := func() { fired = append(fired, c.Now().Sub(start)) }
	c.AfterFunc(3*time.Second, note)
	c.AfterFunc(time.Second, func() {
		note()
		c.AfterFunc(time.Second, note) // due at 2s, inside the same Advance
	})
	stopped := c.AfterFunc(2500*time.Millisecond, note)
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop: want true once, then false")
	}
	c.Advance(5 * time.Second)
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	if len(fired) != len(want) {
		t.Fatalf("fired at %v, want %v", fired, want)
	}
	for i := range want {
		if fired[i] != want[i] {
			t.Fatalf("fired at %v, want %v", fired, want)
		}
	}
	if got := c.Now().Sub(start); got != 5*time.Second {
		t.Fatalf("now = start+%v, want start+5s", got)
	}
	c.AfterFunc(time.Hour, note)
	if p := c.Pending(); len(p) != 1 || !p[0].Equal(start.Add(5*time.Second+time.Hour)) {
		t.Fatalf("Pending = %v", p)
	}
	c.Set(start)
	if !c.Now().Equal(start) || len(c.Pending()) != 1 {
		t.Fatal("Set must move the clock without firing timers")
	}
}
