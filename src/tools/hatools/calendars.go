package hatools

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetCalendars is the toolset of calendars.
const SetCalendars = "calendars"

type listCalendarsArgs struct {
	toolkit.Page
}

type calendarView struct {
	EntityID string `json:"entity_id"`
	Name     string `json:"name"`
	Busy     bool   `json:"busy_now"`
	Next     string `json:"next_event,omitempty"`
	NextAt   string `json:"next_start_local,omitempty"` // HA's attribute: local time without zone
}

type calendarEventsArgs struct {
	EntityIDs []string `json:"entity_ids,omitempty" jsonschema:"default all" validate:"omitempty,max=20,dive,entity_id" example:"[\"calendar.family\"]"`
	Start     string   `json:"start,omitempty" jsonschema:"ISO-8601 start (default now)" validate:"omitempty,iso8601"`
	End       string   `json:"end,omitempty" jsonschema:"ISO-8601 end" validate:"omitempty,iso8601"`
	Days      int      `json:"days,omitempty" jsonschema:"when no end (default 7)" validate:"omitempty,min=1,max=366"`
	Search    string   `json:"search,omitempty" jsonschema:"text in summary, description or location"`
	toolkit.Page
}

type eventView struct {
	Calendar    string `json:"calendar"`
	Summary     string `json:"summary"`
	Start       string `json:"start"`
	End         string `json:"end"`
	AllDay      bool   `json:"all_day,omitempty"`
	Location    string `json:"location,omitempty"`
	Description string `json:"description,omitempty"`
	UID         string `json:"uid,omitempty"`
	Recurring   bool   `json:"recurring,omitempty"`
	// RecurrenceID names one instance of a recurring event, for ha_manage_calendar_events.
	RecurrenceID string `json:"recurrence_id,omitempty"`
}

// maxDescription trims long event descriptions (meeting invitations run to pages).
const maxDescription = 300

// calTime turns HA's {dateTime}|{date} into an ISO-8601 UTC time or a date, and reports whether
// the event is all-day.
func calTime(t homeassistant.CalendarTime) (string, bool, time.Time) {
	if t.DateTime != "" {
		if at, err := time.Parse(time.RFC3339, t.DateTime); err == nil {
			return at.UTC().Format(time.RFC3339), false, at
		}
		return t.DateTime, false, time.Time{}
	}
	at, _ := time.Parse("2006-01-02", t.Date)
	return t.Date, true, at
}

// calendarTools are the calendar tools, in the order tools/list shows them.
func calendarTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{listCalendars(d), getCalendarEvents(d)}
}

// listCalendars is ha_list_calendars.
func listCalendars(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listCalendarsArgs, toolkit.List[calendarView]]{
		Name: "ha_list_calendars", Toolset: SetCalendars, Title: "List calendars",
		Description: "Calendars, with whether an event is on now and the next one. Events of a period: ha_get_calendar_events.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listCalendarsArgs) (toolkit.List[calendarView], error) {
			cals, err := d.HA.Calendars(ctx)
			if err != nil {
				return toolkit.List[calendarView]{}, haError(err, false, "")
			}
			out := make([]calendarView, 0, len(cals))
			m := d.HA.Mirror()
			for _, cal := range cals {
				v := calendarView{EntityID: cal.EntityID, Name: cal.Name}
				if st, ok := m.Get(cal.EntityID); ok {
					v.Busy = st.State == "on"
					v.Next, _ = st.Attributes["message"].(string)
					v.NextAt, _ = st.Attributes["start_time"].(string)
				}
				out = append(out, v)
			}
			return toolkit.Paginate(out, a.Page), nil
		},
	})
}

// getCalendarEvents is ha_get_calendar_events.
func getCalendarEvents(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[calendarEventsArgs, toolkit.List[eventView]]{
		Name: "ha_get_calendar_events", Toolset: SetCalendars, Title: "Calendar events",
		Description: "Events of a period (default the next 7 days) from calendars (default all), sorted by start; times UTC, all-day events as dates.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a calendarEventsArgs) (toolkit.List[eventView], error) {
			events, err := d.calendarEvents(ctx, a)
			if err != nil {
				return toolkit.List[eventView]{}, err
			}
			return toolkit.Paginate(events, a.Page), nil
		},
	})
}

// calendarEvents reads the events of a period from the asked calendars (all by default),
// sorted by start.
func (d Deps) calendarEvents(ctx context.Context, a calendarEventsArgs) ([]eventView, error) {
	start := time.Now().UTC()
	if a.Start != "" {
		start, _ = toolkit.ParseTime(a.Start)
	}
	days := a.Days
	if days == 0 {
		days = 7
	}
	end := start.AddDate(0, 0, days)
	if a.End != "" {
		end, _ = toolkit.ParseTime(a.End)
	}
	if !start.Before(end) {
		return nil, toolkit.InvalidArg("end", "must be after start", `{"start": "2026-02-01T00:00:00Z", "end": "2026-02-08T00:00:00Z"}`)
	}
	ids := a.EntityIDs
	if len(ids) == 0 {
		cals, err := d.HA.Calendars(ctx)
		if err != nil {
			return nil, haError(err, false, "")
		}
		for _, cal := range cals {
			ids = append(ids, cal.EntityID)
		}
	}
	search := strings.ToLower(a.Search)
	type timed struct {
		v  eventView
		at time.Time
	}
	var all []timed
	for _, id := range ids {
		evs, err := d.HA.CalendarEvents(ctx, id, start, end)
		var api *homeassistant.APIError
		if errors.As(err, &api) && api.Status == http.StatusBadRequest {
			// HA answers a bare 400 for an entity that is not a calendar.
			return nil, toolkit.NotFound("Home Assistant has no calendar "+id+" (it answered 400)", "list calendars with ha_list_calendars")
		}
		if err != nil {
			return nil, haError(err, false, "")
		}
		for _, ev := range evs {
			if search != "" && !strings.Contains(strings.ToLower(ev.Summary+" "+ev.Description+" "+ev.Location), search) {
				continue
			}
			s, allDay, at := calTime(ev.Start)
			e, _, _ := calTime(ev.End)
			desc := ev.Description
			if len(desc) > maxDescription {
				desc = strings.ToValidUTF8(desc[:maxDescription], "") + "…"
			}
			all = append(all, timed{eventView{Calendar: id, Summary: ev.Summary, Start: s, End: e, AllDay: allDay, Location: ev.Location,
				Description: desc, UID: ev.UID, Recurring: ev.RRule != "" || ev.RecurrenceID != "", RecurrenceID: ev.RecurrenceID}, at})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	out := make([]eventView, len(all))
	for i, t := range all {
		out[i] = t.v
	}
	return out, nil
}
