package home

import (
	"errors"
	"strings"
	"time"
)

var errBadTime = errors.New("invalid datetime")

// parseHATime parses what HA's dt_util.parse_datetime accepts: ISO 8601 with
// "T" or a space, optional fraction, "Z" or an offset; a value without a zone
// is local time in loc. A bare date is midnight local.
func parseHATime(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, errBadTime
	}
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return t, nil
	}
	s = strings.Replace(s, " ", "T", 1)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errBadTime
}

// ParseTime is parseHATime for other packages (REST query parameters, WS fields).
func ParseTime(s string, loc *time.Location) (time.Time, error) { return parseHATime(s, loc) }
