package rules

import (
	"errors"
	"fmt"
	"time"
)

// The scheduler: each time or periodic trigger has one timer on the Clock for its next instant.
// Instants are computed as wall-clock times in the hub's time zone and turned into a duration
// only when the timer is set, so "07:00" is 07:00 on both sides of a DST change, and the next
// instant is recomputed after each firing.

// maxSunSearch bounds the days searched for a next sunrise or sunset (polar night).
const maxSunSearch = 370

// scheduleLocked sets trigger i's timer for its next instant after `after`.
func (e *Engine) scheduleLocked(st *ruleState, i int, after time.Time) {
	t := st.rule.Triggers[i]
	next, err := nextFire(t, after, e.site)
	if old := st.sched[i]; old != nil && old.timer != nil {
		old.timer.Stop()
	}
	if err != nil {
		st.sched[i] = &scheduled{detail: err.Error()}
		return
	}
	s := &scheduled{next: next}
	st.sched[i] = s
	gen, id := st.gen, st.rule.ID
	s.timer = e.clock.AfterFunc(next.Sub(e.clock.Now()), func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		cur, ok := e.rules[id]
		if !ok || cur.gen != gen || cur.sched[i] != s || e.closed || !cur.rule.Enabled {
			return
		}
		rc := Context{RuleID: id, Trigger: t.Type, At: e.clock.Now()}
		e.markFiredLocked(id, i, next)
		e.enqueueLocked(cur, job{rc: rc, trigger: i})
		// The next instant is after both this one and now: a late timer (a suspended machine)
		// fires once, not once per missed instant.
		from := next
		if now := e.clock.Now(); now.After(from) {
			from = now
		}
		e.scheduleLocked(cur, i, from)
	})
}

// nextFire is a time or periodic trigger's first instant strictly after `after`.
func nextFire(t Trigger, after time.Time, s site) (time.Time, error) {
	after = after.In(s.loc)
	switch t.Type {
	case "time":
		if t.Sunrise || t.Sunset {
			return nextSun(t, after, s)
		}
		return nextClock(t.Time, after, s.loc)
	case "periodic":
		return nextPeriodic(t.Interval, t.Unit, after, s.loc)
	}
	return time.Time{}, fmt.Errorf("trigger type %q is not scheduled", t.Type)
}

// nextClock is the next day's HH:mm in loc. A time that does not exist on a spring-forward day
// (01:30 in London on the last Sunday of March) fires at the same wall time shifted by the
// gap, as time.Date normalises it; one that exists twice (autumn) fires once, at the first.
func nextClock(v string, after time.Time, loc *time.Location) (time.Time, error) {
	ts, err := ParseTimeSpec(v)
	if err != nil || ts.Sun != "" {
		return time.Time{}, fmt.Errorf("time %q must be HH:mm (24-hour), e.g. \"07:30\"", v)
	}
	y, mo, d := after.Date()
	for i := 0; i < 3; i++ {
		c := time.Date(y, mo, d+i, 0, ts.Minutes, 0, 0, loc)
		if c.After(after) {
			return c, nil
		}
	}
	return time.Time{}, errors.New("no next time found")
}

// nextSun is the next sunrise or sunset plus the offset (minutes) after `after`.
func nextSun(t Trigger, after time.Time, s site) (time.Time, error) {
	y, mo, d := after.Date()
	var lastErr error
	for i := -1; i < maxSunSearch; i++ {
		day := time.Date(y, mo, d+i, 12, 0, 0, 0, s.loc)
		rise, set, err := s.sun(day)
		if errors.Is(err, errNoSun) {
			return time.Time{}, err
		}
		if err != nil {
			lastErr = err
			continue
		}
		at := rise
		if t.Sunset {
			at = set
		}
		at = at.Add(time.Duration(t.Offset) * time.Minute)
		if at.After(after) {
			return at, nil
		}
	}
	return time.Time{}, fmt.Errorf("no sunrise or sunset within a year at the hub's latitude: %v", lastErr)
}

// nextPeriodic is upstream's cron schedule in the hub's time zone: every N minutes at second 0
// of the minutes of the day divisible by N (restarting at midnight), every N hours at minute 0 of
// the hours divisible by N, every N days at midnight of days 1, 1+N, … of the month.
func nextPeriodic(n int, unit string, after time.Time, loc *time.Location) (time.Time, error) {
	if n <= 0 {
		return time.Time{}, fmt.Errorf("interval %d must be at least 1", n)
	}
	y, mo, d := after.Date()
	switch unit {
	case "", "minutes":
		for day := 0; day < 3; day++ {
			for m := 0; m < 24*60; m += n {
				c := time.Date(y, mo, d+day, 0, m, 0, 0, loc)
				if c.After(after) {
					return c, nil
				}
			}
		}
	case "hours":
		for day := 0; day < 3; day++ {
			for h := 0; h < 24; h += n {
				c := time.Date(y, mo, d+day, h, 0, 0, 0, loc)
				if c.After(after) {
					return c, nil
				}
			}
		}
	case "days":
		for day := 0; day < 64; day++ {
			c := time.Date(y, mo, d+day, 0, 0, 0, 0, loc)
			if (c.Day()-1)%n == 0 && c.After(after) {
				return c, nil
			}
		}
	default:
		return time.Time{}, fmt.Errorf("unit %q must be minutes, hours or days", unit)
	}
	return time.Time{}, fmt.Errorf("no next instant for every %d %s", n, unit)
}

// triggerStatus describes a rule's triggers for test_rule and diagnostics.
func (e *Engine) triggerStatus(r Rule) []TriggerStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.rules[r.ID]
	live := e.started && !e.closed && r.Enabled
	out := make([]TriggerStatus, len(r.Triggers))
	for i, t := range r.Triggers {
		ts := TriggerStatus{Index: i, Type: t.Type}
		switch t.Type {
		case "time", "periodic":
			if st != nil && st.sched[i] != nil {
				s := st.sched[i]
				if s.timer != nil {
					next := s.next
					ts.Armed, ts.Next = live, &next
				}
				ts.Detail = s.detail
			} else if live {
				ts.Detail = "not scheduled"
			}
		default:
			ts.Armed = live && e.o.Hub != nil
			if live && e.o.Hub != nil && !e.o.Hub.Cache().Live() {
				ts.Detail = "the hub's event link is down; events are missed until it reconnects"
			}
		}
		if !r.Enabled {
			ts.Detail = "the rule is disabled"
		}
		out[i] = ts
	}
	return out
}
