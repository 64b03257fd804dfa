package hatools

import (
	"testing"
	"time"
)

// FuzzCalendarEventInput: whatever the model gives, eventInput either refuses it with an argument
// error or builds an event Home Assistant's schema takes: both dates or both date-times, end after
// start, a rule of DAILY or longer.
func FuzzCalendarEventInput(f *testing.F) {
	f.Add("Dentist", "2026-03-01T09:00:00+01:00", "2026-03-01T10:00:00+01:00", "")
	f.Add("Trip", "2026-03-01", "", "FREQ=WEEKLY;BYDAY=MO")
	f.Add("x", "2026-03-01T09:00", "2026-03-01", "FREQ=HOURLY")
	f.Add("x", "2026-13-01", "2026-03-01T09:00:00Z", "COUNT=3;")
	f.Fuzz(func(t *testing.T, summary, start, end, rule string) {
		in, err := eventInput(calEventFields{Summary: summary, Start: start, End: end, RRule: rule})
		if err != nil {
			return
		}
		s, sDay, err1 := parseEventTime(in.DTStart)
		e, eDay, err2 := parseEventTime(in.DTEnd)
		if err1 != nil || err2 != nil || sDay != eDay || e.Sub(s) < time.Second || in.Summary == "" || checkRRule(in.RRule) != nil {
			t.Fatalf("accepted an event Home Assistant refuses: %+v", in)
		}
	})
}
