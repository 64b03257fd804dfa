package home

import (
	"strings"
	"testing"
	"time"
)

func TestRRuleOccurrences(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 31, 9, 0, 0, 0, loc) // a Saturday, the 31st
	day := func(m time.Month, d int) string { return time.Date(2026, m, d, 9, 0, 0, 0, loc).Format("01-02") }
	cases := []struct {
		rule  string
		limit time.Time
		want  []string
		canon string
	}{
		{"FREQ=DAILY;COUNT=3", start.AddDate(1, 0, 0), []string{day(1, 31), day(2, 1), day(2, 2)}, "FREQ=DAILY;COUNT=3"},
		{"RRULE:freq=weekly;byday=MO,WE;count=4", start.AddDate(1, 0, 0), []string{day(2, 2), day(2, 4), day(2, 9), day(2, 11)}, "FREQ=WEEKLY;COUNT=4;BYDAY=MO,WE"},
		{"FREQ=WEEKLY;INTERVAL=2;COUNT=3", start.AddDate(1, 0, 0), []string{day(1, 31), day(2, 14), day(2, 28)}, "FREQ=WEEKLY;INTERVAL=2;COUNT=3"},
		// A month without a 31st has no instance (RFC 5545), not the 28th.
		{"FREQ=MONTHLY;COUNT=3", start.AddDate(1, 0, 0), []string{day(1, 31), day(3, 31), day(5, 31)}, "FREQ=MONTHLY;COUNT=3"},
		{"FREQ=MONTHLY;BYMONTHDAY=1,15;COUNT=4", start.AddDate(1, 0, 0), []string{day(2, 1), day(2, 15), day(3, 1), day(3, 15)}, "FREQ=MONTHLY;COUNT=4;BYMONTHDAY=1,15"},
		{"FREQ=MONTHLY;BYDAY=-1FR;COUNT=2", start.AddDate(1, 0, 0), []string{day(2, 27), day(3, 27)}, "FREQ=MONTHLY;COUNT=2;BYDAY=-1FR"},
		{"FREQ=DAILY;UNTIL=20260203T080000Z", start.AddDate(1, 0, 0), []string{day(1, 31), day(2, 1), day(2, 2), day(2, 3)}, "FREQ=DAILY;UNTIL=20260203T080000Z"},
		{"FREQ=DAILY", start.AddDate(0, 0, 2), []string{day(1, 31), day(2, 1), day(2, 2)}, "FREQ=DAILY"},
		// Wall-clock time survives the switch to summer time (29 March).
		{"FREQ=WEEKLY;BYDAY=SU;UNTIL=20260405", start.AddDate(1, 0, 0), []string{day(2, 1), day(2, 8), day(2, 15), day(2, 22), day(3, 1), day(3, 8), day(3, 15), day(3, 22), day(3, 29)}, ""},
		// Impossible rules end (no 30 February) within the occurrence cap.
		{"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", start.AddDate(5, 0, 0), nil, ""},
		{"FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", start.AddDate(5, 0, 0), nil, ""},
		{"FREQ=WEEKLY;BYMONTH=2;BYMONTHDAY=31;BYDAY=MO", start.AddDate(5, 0, 0), nil, ""},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			r, err := parseRRule(c.rule, loc)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range r.occurrences(start, c.limit, loc) {
				if o.Hour() != 9 {
					t.Errorf("instance %v lost its 09:00 wall-clock time", o)
				}
				got = append(got, o.Format("01-02"))
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if c.canon != "" && r.String() != c.canon {
				t.Errorf("canonical form %q, want %q", r.String(), c.canon)
			}
		})
	}
}

func TestRRuleRefused(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "FREQ=SECONDLY", "FREQ=HOURLY", "FREQ=DAILY;COUNT=100000", "FREQ=DAILY;INTERVAL=5000", "FREQ=DAILY;BYDAY=XX",
		"BYDAY=MO", "FREQ=DAILY;FOO=1", "FREQ=DAILY;BYHOUR=3", "FREQ=DAILY;BYMONTHDAY=40", "DTSTART:20260101T000000Z\nRRULE:FREQ=DAILY", "FREQ=DAILY;UNTIL=tomorrow"} {
		if _, err := parseRRule(s, time.UTC); err == nil {
			t.Errorf("%q: accepted", s)
		}
	}
}
