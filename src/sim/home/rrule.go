package home

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// rrule is the subset of RFC 5545 recurrence rules the local calendar
// accepts here: FREQ (DAILY/WEEKLY/MONTHLY/YEARLY), INTERVAL, COUNT, UNTIL
// and BYDAY (plain weekdays).
type rrule struct {
	freq     string
	interval int
	count    int
	until    time.Time
	byday    []time.Weekday
}

var weekdayCodes = map[string]time.Weekday{"MO": time.Monday, "TU": time.Tuesday, "WE": time.Wednesday, "TH": time.Thursday, "FR": time.Friday, "SA": time.Saturday, "SU": time.Sunday}

func parseRRule(s string, loc *time.Location) (rrule, error) {
	r := rrule{interval: 1}
	s = strings.TrimPrefix(strings.TrimSpace(s), "RRULE:")
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return r, fmt.Errorf("invalid rrule part %q", part)
		}
		switch strings.ToUpper(k) {
		case "FREQ":
			r.freq = strings.ToUpper(v)
			if r.freq != "DAILY" && r.freq != "WEEKLY" && r.freq != "MONTHLY" && r.freq != "YEARLY" {
				return r, fmt.Errorf("unsupported FREQ %q (use DAILY, WEEKLY, MONTHLY or YEARLY)", v)
			}
		case "INTERVAL":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1000 {
				return r, fmt.Errorf("invalid INTERVAL %q", v)
			}
			r.interval = n
		case "COUNT":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				return r, fmt.Errorf("invalid COUNT %q", v)
			}
			r.count = n
		case "UNTIL":
			t, err := parseICalTime(v, loc)
			if err != nil {
				return r, fmt.Errorf("invalid UNTIL %q", v)
			}
			r.until = t
		case "BYDAY":
			for _, d := range strings.Split(v, ",") {
				wd, ok := weekdayCodes[strings.ToUpper(d)]
				if !ok {
					return r, fmt.Errorf("unsupported BYDAY %q (plain weekdays only)", d)
				}
				r.byday = append(r.byday, wd)
			}
		case "WKST":
		default:
			return r, fmt.Errorf("unsupported rrule part %q", k)
		}
	}
	if r.freq == "" {
		return r, fmt.Errorf("rrule needs FREQ")
	}
	return r, nil
}

// String writes the rule back in canonical order.
func (r rrule) String() string {
	parts := []string{"FREQ=" + r.freq}
	if r.interval > 1 {
		parts = append(parts, "INTERVAL="+strconv.Itoa(r.interval))
	}
	if r.count > 0 {
		parts = append(parts, "COUNT="+strconv.Itoa(r.count))
	}
	if !r.until.IsZero() {
		parts = append(parts, "UNTIL="+r.until.UTC().Format("20060102T150405Z"))
	}
	if len(r.byday) > 0 {
		var d []string
		for _, wd := range r.byday {
			for code, w := range weekdayCodes {
				if w == wd {
					d = append(d, code)
				}
			}
		}
		parts = append(parts, "BYDAY="+strings.Join(d, ","))
	}
	return strings.Join(parts, ";")
}

func parseICalTime(v string, loc *time.Location) (time.Time, error) {
	if strings.HasSuffix(v, "Z") {
		return time.Parse("20060102T150405Z", v)
	}
	if len(v) == 8 {
		return time.ParseInLocation("20060102", v, loc)
	}
	return time.ParseInLocation("20060102T150405", v, loc)
}

// occurrences lists instance starts from dtstart up to (not after) limit,
// honouring COUNT and UNTIL. The walk is bounded so a hostile rule cannot spin.
func (r rrule) occurrences(dtstart, limit time.Time, loc *time.Location) []time.Time {
	var out []time.Time
	base := dtstart.In(loc)
	emit := func(t time.Time) bool {
		if t.Before(dtstart) {
			return true
		}
		if !r.until.IsZero() && t.After(r.until) || t.After(limit) {
			return false
		}
		out = append(out, t)
		return r.count == 0 || len(out) < r.count
	}
	for step := 0; step < 20000; step++ {
		var cands []time.Time
		switch r.freq {
		case "DAILY":
			t := base.AddDate(0, 0, step*r.interval)
			if len(r.byday) == 0 || weekdayIn(t.Weekday(), r.byday) {
				cands = append(cands, t)
			}
		case "WEEKLY":
			weekStart := base.AddDate(0, 0, -((int(base.Weekday())+6)%7)+7*step*r.interval)
			if len(r.byday) == 0 {
				cands = append(cands, base.AddDate(0, 0, 7*step*r.interval))
			}
			for i := 0; i < 7 && len(r.byday) > 0; i++ {
				t := weekStart.AddDate(0, 0, i)
				if weekdayIn(t.Weekday(), r.byday) {
					cands = append(cands, t)
				}
			}
		case "MONTHLY":
			t := base.AddDate(0, step*r.interval, 0)
			if t.Day() == base.Day() {
				cands = append(cands, t)
			}
		case "YEARLY":
			t := base.AddDate(step*r.interval, 0, 0)
			if t.Day() == base.Day() {
				cands = append(cands, t)
			}
		}
		for _, c := range cands {
			if !emit(c) {
				return out
			}
		}
		if base.AddDate(0, 0, step).After(limit) && r.freq == "DAILY" {
			return out
		}
	}
	return out
}

func weekdayIn(d time.Weekday, l []time.Weekday) bool {
	for _, x := range l {
		if x == d {
			return true
		}
	}
	return false
}
