package rules

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// hamcp's rules run in the add-on, not on the hub: while it is stopped nothing fires. The engine
// keeps a heartbeat (when it was last running) and the last hub event it saw, so diagnostics can
// say how long it was down, and it records each time trigger's last fired instant, so that a
// restart never runs an instant twice. A time trigger whose instant fell while hamcp was down runs
// once at start when it is at most CatchUpWindow late (a restart at 07:05 still turns on the 07:00
// lights); later than that it is skipped and noted, so nobody's heating comes on hours late.

// CatchUpWindow is how late a missed time trigger may still run, once, when hamcp starts.
const CatchUpWindow = 15 * time.Minute

// heartbeatEvery is how often the engine records that it is running; a downtime is measured from
// the last heartbeat, so it is at most this much too long.
const heartbeatEvery = time.Minute

// Keys in hubstore's hubitat_settings table.
const (
	keyHeartbeat = "rules.heartbeat"  // Unix ms: the engine was running then
	keyLastEvent = "rules.last_event" // Unix ms: the last hub event the engine saw
	keyFired     = "rules.fired."     // + rule id + "." + trigger index: Unix ms of the instant fired
)

// Availability is when hamcp's rule engine was running and when it last heard from the hub.
type Availability struct {
	RunningSince  time.Time  `json:"runningSince"`
	LastSeenEvent *time.Time `json:"lastSeenEvent,omitempty"`
	// PreviousStop is the previous run's last heartbeat; DownFor how long hamcp was not running
	// before RunningSince (absent on the first start).
	PreviousStop *time.Time `json:"previousStop,omitempty"`
	DownFor      string     `json:"downFor,omitempty"`
	Note         string     `json:"note"`
}

// AvailabilityNote is what a user creating a rule should know.
const AvailabilityNote = "hamcp's rules run in the add-on, not on the hub: while the add-on (or Home Assistant) is stopped, " +
	"no trigger fires and hub events are missed. A time trigger missed by up to 15 minutes runs once when it comes back; " +
	"one missed by more is skipped and noted in hubitat_get_rule_diagnostics."

// downtime is what Start learnt from the store; guarded by Engine.mu after Start.
type downtime struct {
	since     time.Time
	prevBeat  *time.Time
	lastEvent time.Time
	fired     map[string]time.Time
	beat      Timer
}

func firedKey(ruleID string, i int) string { return keyFired + ruleID + "." + strconv.Itoa(i) }

func (s *ruleStore) getMS(ctx context.Context, key string) (time.Time, bool, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM hubitat_settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, false, nil // a damaged value counts as none
	}
	return fromMS(n), true, nil
}

func (s *ruleStore) setMS(ctx context.Context, key string, t time.Time) error {
	s.w.Lock()
	defer s.w.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO hubitat_settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, strconv.FormatInt(ms(t), 10))
	return err
}

// firedInstants reads every recorded fired instant, by key.
func (s *ruleStore) firedInstants(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key, value FROM hubitat_settings WHERE key LIKE 'rules.fired.%'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = fromMS(n)
		}
	}
	return out, rows.Err()
}

// loadDowntime reads the previous run's heartbeat, last event and fired instants.
func (e *Engine) loadDowntime(ctx context.Context) (downtime, error) {
	d := downtime{since: e.clock.Now()}
	beat, ok, err := e.db.getMS(ctx, keyHeartbeat)
	if err != nil {
		return d, fmt.Errorf("rules: reading the heartbeat: %w", err)
	}
	if ok {
		d.prevBeat = &beat
	}
	if d.lastEvent, _, err = e.db.getMS(ctx, keyLastEvent); err != nil {
		return d, fmt.Errorf("rules: reading the last event time: %w", err)
	}
	if d.fired, err = e.db.firedInstants(ctx); err != nil {
		return d, fmt.Errorf("rules: reading fired time triggers: %w", err)
	}
	return d, nil
}

// heartbeat records that the engine runs (and the last event it saw), then again every
// heartbeatEvery until Close.
func (e *Engine) heartbeat() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	now, last := e.clock.Now(), e.down.lastEvent
	// A real timer, not e.clock's: the beat is bookkeeping, and a test stepping through the
	// rule schedule on a fake clock must not meet it among the rules' timers.
	e.down.beat = time.AfterFunc(heartbeatEvery, e.heartbeat)
	e.mu.Unlock()
	e.writeBeat(now, last)
}

func (e *Engine) writeBeat(now, lastEvent time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.db.setMS(ctx, keyHeartbeat, now); err != nil {
		e.log.Warn("recording the rule engine's heartbeat", "error", err)
	}
	if !lastEvent.IsZero() {
		if err := e.db.setMS(ctx, keyLastEvent, lastEvent); err != nil {
			e.log.Warn("recording the last hub event's time", "error", err)
		}
	}
}

// markFiredLocked records that trigger i of rule id fired for instant at, before its run is
// queued: a restart right after must not run it again.
func (e *Engine) markFiredLocked(id string, i int, at time.Time) {
	k := firedKey(id, i)
	e.down.fired[k] = at
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.db.setMS(ctx, k, at); err != nil {
		e.log.Warn("recording a fired time trigger", "rule", id, "error", err)
	}
}

// catchUpLocked handles the time triggers of a rule whose instant fell while hamcp was down:
// the latest such instant runs once if it is at most CatchUpWindow late and has not run, else it
// is noted as skipped. Periodic triggers are noted only: their next instant comes soon.
func (e *Engine) catchUpLocked(st *ruleState) {
	if e.down.prevBeat == nil || !st.rule.Enabled {
		return
	}
	now, from := e.clock.Now(), *e.down.prevBeat
	for i, t := range st.rule.Triggers {
		if t.Type != "time" && t.Type != "periodic" {
			continue
		}
		missed, last := missedInstants(t, from, now, e.site)
		if missed == 0 {
			continue
		}
		if fired, ok := e.down.fired[firedKey(st.rule.ID, i)]; ok && !fired.Before(last) {
			continue // it ran before hamcp stopped
		}
		late := now.Sub(last)
		switch {
		case t.Type == "time" && late <= CatchUpWindow:
			e.markFiredLocked(st.rule.ID, i, last)
			e.enqueueLocked(st, job{rc: Context{RuleID: st.rule.ID, Trigger: t.Type, At: now}, trigger: i})
			e.noteLocked(st, fmt.Sprintf("Trigger %d (time, due %s) fell while hamcp was down; it ran once at start, %s late.",
				i, last.Format(time.RFC3339), roundDur(late)))
		case t.Type == "time":
			e.noteLocked(st, fmt.Sprintf("Trigger %d (time, due %s) fell while hamcp was down and was skipped: %s late, more than %s.",
				i, last.Format(time.RFC3339), roundDur(late), roundDur(CatchUpWindow)))
		default:
			e.noteLocked(st, fmt.Sprintf("Trigger %d (periodic) missed %d run(s) while hamcp was down (last due %s); it goes on at its next instant.",
				i, missed, last.Format(time.RFC3339)))
		}
	}
}

// maxMissed bounds the instants counted in one downtime (every minute for a long holiday).
const maxMissed = 10000

// missedInstants counts a trigger's instants in (from, now] and returns the latest.
func missedInstants(t Trigger, from, now time.Time, s site) (n int, last time.Time) {
	for at := from; n < maxMissed; n++ {
		next, err := nextFire(t, at, s)
		if err != nil || next.After(now) {
			return n, last
		}
		at, last = next, next
	}
	return n, last
}

func (e *Engine) noteLocked(st *ruleState, note string) {
	st.notes = append(st.notes, note)
	if len(st.notes) > keepNotes {
		st.notes = st.notes[len(st.notes)-keepNotes:]
	}
	id := st.rule.ID
	e.wg.Add(1)
	go func() { // not under e.mu: the log is a store write
		defer e.wg.Done()
		e.logf(e.ctx, "warn", id, "%s", note)
	}()
}

// Availability reports when the engine started, how long it was down before, and the last hub
// event it saw.
func (e *Engine) Availability() Availability {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := Availability{RunningSince: e.down.since.UTC(), Note: AvailabilityNote}
	if !e.down.lastEvent.IsZero() {
		t := e.down.lastEvent.UTC()
		a.LastSeenEvent = &t
	}
	if p := e.down.prevBeat; p != nil {
		t := p.UTC()
		a.PreviousStop = &t
		a.DownFor = roundDur(e.down.since.Sub(*p))
	}
	return a
}

func roundDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := d.Round(time.Second).String() // "1h0m0s", "5m0s", "30s"
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
