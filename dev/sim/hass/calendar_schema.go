package hass

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// checkCalendarMessage is the part of calendar/event/create|update|delete's schema the field kinds
// cannot say (components/calendar/__init__.py): cv.entity_id, and WEBSOCKET_EVENT_SCHEMA — start and
// end each a date or a date-time (vol.Any(cv.date, cv.datetime)), both of one type and one zone, at
// least a second apart, no other keys, an rrule of DAILY or longer. The text is humanize_error's.
func checkCalendarMessage(m map[string]any, loc *time.Location) error {
	if id, _ := m["entity_id"].(string); !home.ValidEntityID(id) {
		return &invalid{fmt.Sprintf("Entity ID %s is an invalid entity ID for dictionary value @ data['entity_id']. Got %s", id, pyRepr(id))}
	}
	ev, ok := m["event"].(map[string]any)
	if !ok {
		return nil
	}
	at := func(k string) string { return "@ data['event']['" + k + "']" }
	for _, k := range sortedKeys(ev) {
		switch k {
		case "dtstart", "dtend", "summary", "description", "location", "rrule":
		default:
			return &invalid{"extra keys not allowed " + at(k) + ". Got " + pyRepr(fromGo(ev[k]))}
		}
	}
	for _, k := range []string{"dtstart", "dtend", "summary"} {
		if _, ok := ev[k]; !ok {
			return &invalid{"required key not provided " + at(k) + ". Got None"}
		}
	}
	whole := func(msg string) error {
		return &invalid{msg + " for dictionary value @ data['event']. Got " + pyRepr(fromGo(ev))}
	}
	times := [2]time.Time{}
	dated := [2]bool{}
	zones := [2]string{}
	for i, k := range []string{"dtstart", "dtend"} {
		s, _ := ev[k].(string)
		t, date, zone, ok := calendarTime(s, loc)
		if !ok {
			return &invalid{"Could not parse date for dictionary value " + at(k) + ". Got " + pyRepr(fromGo(ev[k]))}
		}
		times[i], dated[i], zones[i] = t, date, zone
	}
	if dated[0] != dated[1] {
		return whole("Expected all values to be the same type: ('dtstart', 'dtend')")
	}
	if !dated[0] && zones[0] != zones[1] {
		return whole("Expected all values to have the same timezone")
	}
	if times[1].Sub(times[0]) < time.Second {
		return whole(fmt.Sprintf("Expected minimum event duration of 0:00:01 (%s, %s)", pyCalTime(times[0], dated[0], loc), pyCalTime(times[1], dated[1], loc)))
	}
	if r, given := ev["rrule"]; given {
		if msg := rruleError(r); msg != "" {
			return &invalid{msg + " for dictionary value " + at("rrule") + ". Got " + pyRepr(fromGo(r))}
		}
	}
	return nil
}

var naiveClock = regexp.MustCompile(`[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$`)

// calendarTime parses a date or a date-time; zone is its offset as written ("" when naive).
func calendarTime(s string, loc *time.Location) (t time.Time, date bool, zone string, ok bool) {
	if d, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return d, true, "", true
	}
	t, err := home.ParseTime(s, loc)
	if err != nil {
		return time.Time{}, false, "", false
	}
	if !naiveClock.MatchString(s) {
		_, off := t.Zone()
		zone = fmt.Sprint(off)
	}
	return t, false, zone, true
}

// pyCalTime is str() of the date or the (local) datetime, as the duration message prints them.
func pyCalTime(t time.Time, date bool, loc *time.Location) string {
	if date {
		return t.Format("2006-01-02")
	}
	return pyDatetime(t.In(loc))
}

// rruleError is _validate_rrule's refusal, "" when the rule is acceptable.
func rruleError(v any) string {
	s, ok := v.(string)
	if !ok {
		return "rrule value expected a string"
	}
	freq := ""
	for _, part := range strings.Split(s, ";") {
		k, val, found := strings.Cut(part, "=")
		if !found {
			return fmt.Sprintf("Invalid rrule '%s': unknown parameter name", s)
		}
		if k == "FREQ" {
			freq = val
		}
	}
	switch freq {
	case "":
		return "rrule did not contain FREQ"
	case "DAILY", "WEEKLY", "MONTHLY", "YEARLY":
		return ""
	case "SECONDLY", "MINUTELY", "HOURLY":
		return "Invalid frequency for rule: " + s
	}
	return fmt.Sprintf("Invalid rrule '%s': invalid frequency", s)
}

// calendarChecked runs checkCalendarMessage before a calendar/event command's handler.
func calendarChecked(handle func(c *wsConn, id int64, m map[string]any)) func(c *wsConn, id int64, m map[string]any) {
	return func(c *wsConn, id int64, m map[string]any) {
		if err := checkCalendarMessage(m, c.s.h.Location()); err != nil {
			c.sendError(id, "invalid_format", err.Error())
			return
		}
		handle(c, id, m)
	}
}
