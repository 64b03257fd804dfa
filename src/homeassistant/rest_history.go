package homeassistant

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HistoryQuery selects rows from GET /api/history/period[/<start>].
type HistoryQuery struct {
	EntityIDs []string  // required: HA refuses a history query without filter_entity_id
	Start     time.Time // zero: HA's default, one day ago
	End       time.Time // zero: HA's default, Start + 1 day
	// MinimalResponse returns only state and last_changed for rows between the first and last.
	MinimalResponse bool
	// NoAttributes drops attributes from every row.
	NoAttributes bool
	// SignificantChangesOnly keeps rows where the state itself changed (HA's default is true; this
	// client always sends the flag so the choice is explicit).
	SignificantChangesOnly bool
	// SkipInitialState omits the synthetic first row describing the state at Start.
	SkipInitialState bool
}

// History returns one list of rows per entity, each ordered by time; entities without rows in the
// period are absent. Minimal middle rows carry no entity_id in HA's answer; it is filled in here.
func (c *Client) History(ctx context.Context, q HistoryQuery) ([][]State, error) {
	if len(q.EntityIDs) == 0 {
		return nil, errors.New(`homeassistant: history needs at least one entity_id, e.g. ["sensor.outdoor_temperature"]`)
	}
	for _, id := range q.EntityIDs {
		if err := checkEntityID(id); err != nil {
			return nil, err
		}
	}
	if !q.Start.IsZero() && !q.End.IsZero() && q.End.Before(q.Start) {
		return nil, fmt.Errorf("homeassistant: history end_time %s is before start_time %s", isoTime(q.End), isoTime(q.Start))
	}
	path := "/api/history/period"
	if !q.Start.IsZero() {
		path += "/" + url.PathEscape(isoTime(q.Start))
	}
	v := url.Values{"filter_entity_id": {strings.Join(q.EntityIDs, ",")}}
	if !q.End.IsZero() {
		v.Set("end_time", isoTime(q.End))
	}
	if q.MinimalResponse {
		v.Set("minimal_response", "")
	}
	if q.NoAttributes {
		v.Set("no_attributes", "")
	}
	if q.SignificantChangesOnly {
		v.Set("significant_changes_only", "1")
	} else {
		v.Set("significant_changes_only", "0")
	}
	if q.SkipInitialState {
		v.Set("skip_initial_state", "")
	}
	var out [][]State
	if err := c.getJSON(ctx, path, v, &out); err != nil {
		return nil, err
	}
	for _, rows := range out {
		if len(rows) == 0 {
			continue
		}
		id := rows[0].EntityID
		for i := range rows {
			if rows[i].EntityID == "" {
				rows[i].EntityID = id
			}
		}
	}
	return out, nil
}

// LogbookQuery selects entries from GET /api/logbook[/<start>].
type LogbookQuery struct {
	Start     time.Time // zero: start of HA's local day
	End       time.Time // zero: Start + Period days
	Period    int       // days, used only without End; 0 means HA's default of 1
	EntityIDs []string
	ContextID string // cannot be combined with EntityIDs
}

// Logbook returns human-readable logbook entries.
func (c *Client) Logbook(ctx context.Context, q LogbookQuery) ([]LogbookEntry, error) {
	if len(q.EntityIDs) > 0 && q.ContextID != "" {
		return nil, errors.New("homeassistant: logbook takes entity_ids or context_id, not both")
	}
	if q.Period < 0 {
		return nil, fmt.Errorf("homeassistant: logbook period %d must be a positive number of days", q.Period)
	}
	for _, id := range q.EntityIDs {
		if err := checkEntityID(id); err != nil {
			return nil, err
		}
	}
	path := "/api/logbook"
	if !q.Start.IsZero() {
		path += "/" + url.PathEscape(isoTime(q.Start))
	}
	v := url.Values{}
	if !q.End.IsZero() {
		v.Set("end_time", isoTime(q.End))
	}
	if q.Period > 0 {
		v.Set("period", strconv.Itoa(q.Period))
	}
	if len(q.EntityIDs) > 0 {
		v.Set("entity", strings.Join(q.EntityIDs, ","))
	}
	if q.ContextID != "" {
		v.Set("context_id", q.ContextID)
	}
	var out []LogbookEntry
	err := c.getJSON(ctx, path, v, &out)
	return out, err
}

// Calendars lists calendar entities (GET /api/calendars).
func (c *Client) Calendars(ctx context.Context) ([]Calendar, error) {
	var out []Calendar
	err := c.getJSON(ctx, "/api/calendars", nil, &out)
	return out, err
}

// CalendarEvents lists a calendar's events between start and end (GET
// /api/calendars/<entity_id>). HA answers 400 with an empty body for an unknown calendar.
func (c *Client) CalendarEvents(ctx context.Context, entityID string, start, end time.Time) ([]CalendarEvent, error) {
	if err := checkEntityID(entityID); err != nil {
		return nil, err
	}
	if start.IsZero() || end.IsZero() {
		return nil, errors.New("homeassistant: calendar events need both start and end times")
	}
	if end.Before(start) {
		return nil, fmt.Errorf("homeassistant: calendar end %s is before start %s", isoTime(end), isoTime(start))
	}
	v := url.Values{"start": {isoTime(start)}, "end": {isoTime(end)}}
	var out []CalendarEvent
	err := c.getJSON(ctx, "/api/calendars/"+url.PathEscape(entityID), v, &out)
	return out, err
}

// isoTime formats t the way HA writes timestamps (UTC with "+00:00").
func isoTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999-07:00")
}
