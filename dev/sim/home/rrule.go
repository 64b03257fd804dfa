package home

import (
	"fmt"
	"strings"
	"time"

	rrulego "github.com/teambition/rrule-go"
)

// rrule is an RFC 5545 recurrence rule of a local-calendar event, parsed
// and expanded by rrule-go (a port of python-dateutil's rrule, which HA's
// ical library follows).
type rrule struct{ opt rrulego.ROption }

// Bounds that keep a hostile rule cheap to expand.
const (
	maxRRuleInterval = 1000
	maxRRuleCount    = 10000
	maxOccurrences   = 20000
)

func parseRRule(s string, loc *time.Location) (rrule, error) {
	s = strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "RRULE:")
	if strings.ContainsAny(s, "\r\n") {
		return rrule{}, fmt.Errorf("rrule must be one line")
	}
	opt, err := rrulego.StrToROptionInLocation(s, loc)
	if err != nil {
		return rrule{}, fmt.Errorf("invalid rrule %q: %v", s, err)
	}
	switch opt.Freq {
	case rrulego.DAILY, rrulego.WEEKLY, rrulego.MONTHLY, rrulego.YEARLY:
	default:
		return rrule{}, fmt.Errorf("unsupported FREQ %v (use DAILY, WEEKLY, MONTHLY or YEARLY)", opt.Freq)
	}
	if opt.Interval < 0 || opt.Interval > maxRRuleInterval {
		return rrule{}, fmt.Errorf("invalid INTERVAL %d (1 to %d)", opt.Interval, maxRRuleInterval)
	}
	if opt.Count < 0 || opt.Count > maxRRuleCount {
		return rrule{}, fmt.Errorf("invalid COUNT %d (1 to %d)", opt.Count, maxRRuleCount)
	}
	if !opt.Dtstart.IsZero() || len(opt.Byhour)+len(opt.Byminute)+len(opt.Bysecond)+len(opt.Byeaster) > 0 {
		return rrule{}, fmt.Errorf("unsupported rrule part in %q (DTSTART belongs to the event; no BYHOUR, BYMINUTE, BYSECOND, BYEASTER)", s)
	}
	opt.Dtstart = time.Date(2000, 1, 1, 0, 0, 0, 0, loc) // rrule-go validates with a start; the event's own comes in occurrences
	if _, err := rrulego.NewRRule(*opt); err != nil {
		return rrule{}, fmt.Errorf("invalid rrule %q: %v", s, err)
	}
	opt.Dtstart = time.Time{}
	return rrule{*opt}, nil
}

// String writes the rule back in canonical order.
func (r rrule) String() string { return r.opt.RRuleString() }

// endBefore ends the series before t (deleting "this and future").
func (r *rrule) endBefore(t time.Time) { r.opt.Until, r.opt.Count = t, 0 }

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
	opt := r.opt
	opt.Dtstart = dtstart.In(loc)
	rule, err := rrulego.NewRRule(opt)
	if err != nil {
		return nil
	}
	var out []time.Time
	next := rule.Iterator()
	for len(out) < maxOccurrences {
		t, ok := next()
		if !ok || t.After(limit) {
			break
		}
		out = append(out, t)
	}
	return out
}
