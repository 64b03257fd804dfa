package recorder

import (
	"math"
	"time"
)

const (
	fiveMin   = int64(5 * time.Minute / time.Microsecond)
	oneHour   = int64(time.Hour / time.Microsecond)
	keepShort = int64(10 * 24 * time.Hour / time.Microsecond) // purge_keep_days default
)

// statRow is one compiled statistics period (times in unix microseconds).
type statRow struct {
	meta                       int64
	start                      int64
	mean, min, max, state, sum *float64
}

// statAcc compiles an entity's samples into 5-minute and hourly statistics
// the way HA's sensor recorder platform does: a time-weighted mean with
// min/max over the values held in the period for measurements (circular for
// angles), the period's last value and the running increase for sums.
type statAcc struct {
	meta     int64
	hasSum   bool
	circular bool
	now      int64 // periods ending after now are not compiled yet

	started        bool
	bucket         int64
	cur            float64
	since          int64
	first          float64
	wsum, sin, cos float64
	dur            int64
	lo, hi         float64

	hour      int64
	hourRows  []statRow
	emitShort func(statRow)
	emitHour  func(statRow)
}

func (a *statAcc) add(ts int64, v float64) {
	if !a.started {
		a.started, a.bucket, a.cur, a.since, a.first = true, ts-ts%fiveMin, v, ts, v
		a.lo, a.hi, a.hour = v, v, ts-ts%oneHour
		return
	}
	a.advance(ts)
	a.hold(ts)
	a.cur, a.lo, a.hi = v, math.Min(a.lo, v), math.Max(a.hi, v)
}

// hold accounts the current value up to ts within the open bucket.
func (a *statAcc) hold(ts int64) {
	d := ts - a.since
	if d <= 0 {
		return
	}
	w := float64(d)
	a.wsum += a.cur * w
	rad := a.cur * math.Pi / 180
	a.sin += math.Sin(rad) * w
	a.cos += math.Cos(rad) * w
	a.dur += d
	a.since = ts
}

// advance closes every 5-minute bucket that ends at or before ts (and before
// now), emitting hourly rows as hours complete.
func (a *statAcc) advance(ts int64) {
	for a.bucket+fiveMin <= ts && a.bucket+fiveMin <= a.now {
		end := a.bucket + fiveMin
		a.hold(end)
		a.closeBucket()
		a.bucket, a.since = end, end
		a.wsum, a.sin, a.cos, a.dur, a.lo, a.hi = 0, 0, 0, 0, a.cur, a.cur
	}
}

func (a *statAcc) closeBucket() {
	r := statRow{meta: a.meta, start: a.bucket}
	if a.hasSum {
		st, sum := a.cur, a.cur-a.first
		r.state, r.sum = &st, &sum
	} else if a.dur > 0 {
		mean := a.wsum / float64(a.dur)
		if a.circular {
			mean = math.Mod(math.Atan2(a.sin, a.cos)*180/math.Pi+360, 360)
		}
		lo, hi := a.lo, a.hi
		r.mean, r.min, r.max = &mean, &lo, &hi
	}
	if r.start >= a.now-keepShort {
		a.emitShort(r)
	}
	if h := r.start - r.start%oneHour; h != a.hour {
		a.flushHour()
		a.hour = h
	}
	a.hourRows = append(a.hourRows, r)
	if r.start+fiveMin == a.hour+oneHour {
		a.flushHour()
		a.hour += oneHour
	}
}

// flushHour compiles the hour's 5-minute rows like HA compiles long-term
// statistics from short-term ones.
func (a *statAcc) flushHour() {
	if len(a.hourRows) == 0 {
		return
	}
	rows := a.hourRows
	a.hourRows = a.hourRows[:0]
	last := rows[len(rows)-1]
	h := statRow{meta: a.meta, start: a.hour, state: last.state, sum: last.sum}
	if !a.hasSum {
		var sum, sin, cos, lo, hi float64
		lo, hi = math.Inf(1), math.Inf(-1)
		n := 0
		for _, r := range rows {
			if r.mean == nil {
				continue
			}
			n++
			sum += *r.mean
			rad := *r.mean * math.Pi / 180
			sin, cos = sin+math.Sin(rad), cos+math.Cos(rad)
			lo, hi = math.Min(lo, *r.min), math.Max(hi, *r.max)
		}
		if n == 0 {
			return
		}
		mean := sum / float64(n)
		if a.circular {
			mean = math.Mod(math.Atan2(sin, cos)*180/math.Pi+360, 360)
		}
		h.mean, h.min, h.max = &mean, &lo, &hi
	}
	a.emitHour(h)
}

// finish closes all periods that ended by now. A partial last hour is not
// compiled, as HA compiles an hour only after it ends.
func (a *statAcc) finish() {
	if !a.started {
		return
	}
	a.advance(a.now)
	a.hourRows = a.hourRows[:0]
}
