package hatools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

type calEventFields struct {
	Summary     string `json:"summary,omitempty"`
	Start       string `json:"start,omitempty" jsonschema:"date-time, or date: all-day"`
	End         string `json:"end,omitempty" jsonschema:"all-day: exclusive date"`
	Description string `json:"description,omitempty"`
	Location    string `json:"location,omitempty"`
	RRule       string `json:"rrule,omitempty"`
}

type manageCalendarEventArgs struct {
	Action          string          `json:"action" validate:"required,oneof=create update delete"`
	EntityID        string          `json:"entity_id" validate:"required,entity_id"`
	UID             string          `json:"uid,omitempty"`
	RecurrenceID    string          `json:"recurrence_id,omitempty"`
	RecurrenceRange string          `json:"recurrence_range,omitempty" validate:"omitempty,oneof=THISANDFUTURE"`
	Event           *calEventFields `json:"event,omitempty" jsonschema:"update: the changes"`
}

type calendarEventResult struct {
	Action   string     `json:"action"`
	Calendar string     `json:"calendar"`
	Event    *eventView `json:"event,omitempty"`
	RRule    string     `json:"rrule,omitempty"`
	Note     string     `json:"note,omitempty"`
}

func calendarEventTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{manageCalendarEvent(d)} }

// manageCalendarEvent is ha_manage_calendar_events.
func manageCalendarEvent(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageCalendarEventArgs, calendarEventResult]{
		Name: "ha_manage_calendar_events", Toolset: SetCalendars, Title: "Edit calendar events",
		Confirm: calendarEventConfirm(d),
		Description: "Create, update, delete events of a writable calendar; uid, recurrence_id: ha_get_calendar_events. " +
			"recurrence_id alone: one instance; with recurrence_range also later ones; neither: the series. " +
			"User confirms delete (result keeps the event) and events their automations trigger on.",
		Destructive: true,
		Summary:     func(a manageCalendarEventArgs) string { return a.Action + " " + a.EntityID + " " + a.UID },
		Handler: func(ctx context.Context, c *toolkit.Call, a manageCalendarEventArgs) (calendarEventResult, error) {
			return calendarEventAction(ctx, d.HA, a)
		},
	})
}

// calendarEventConfirm: deleting is a delete; any write counts what the user's automations with a
// calendar trigger on that calendar do, since the event starts them.
func calendarEventConfirm(d Deps) *toolkit.Confirm[manageCalendarEventArgs] {
	return &toolkit.Confirm[manageCalendarEventArgs]{
		When: "delete (`delete`); with what the automations triggered by the calendar do",
		Check: func(ctx context.Context, c *toolkit.Call, a manageCalendarEventArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			w.follow(ctx, "calendar event "+a.Action, "calendar", a.Action+"_event", sensitive.Target{EntityIDs: []string{a.EntityID}})
			var always []sensitive.Class
			what := map[string]string{"create": "Add an event to ", "update": "Change an event of ", "delete": "Delete an event of "}[a.Action] + a.EntityID
			if a.Action == "delete" {
				always = append(always, sensitive.Delete)
				what = "Delete the event " + a.UID + " from " + a.EntityID
			}
			return w.ask(what, always...)
		},
	}
}

func calendarEventAction(ctx context.Context, ha *homeassistant.Client, a manageCalendarEventArgs) (calendarEventResult, error) {
	out := calendarEventResult{Action: a.Action, Calendar: a.EntityID}
	if !strings.HasPrefix(a.EntityID, "calendar.") {
		return out, toolkit.InvalidArg("entity_id", "must be a calendar (calendar.*); ha_list_calendars lists them", `{"entity_id": "calendar.family"}`)
	}
	if a.RecurrenceRange != "" && a.RecurrenceID == "" {
		return out, toolkit.InvalidArg("recurrence_range", "needs recurrence_id: the instance from which on", `{"recurrence_id": "20260302T090000", "recurrence_range": "THISANDFUTURE"}`)
	}
	if a.Action == "create" {
		if a.Event == nil {
			return out, toolkit.InvalidArg("event", "is required to create an event", `{"event": {"summary": "Dentist", "start": "2026-03-01T09:00:00+01:00", "end": "2026-03-01T10:00:00+01:00"}}`)
		}
		in, err := eventInput(*a.Event)
		if err != nil {
			return out, err
		}
		if err := ha.CreateCalendarEvent(ctx, a.EntityID, in); err != nil {
			return out, calendarRefusal(err, a)
		}
		out.Event, out.RRule = viewOfInput(a.EntityID, in), in.RRule
		return out, nil
	}
	if a.UID == "" {
		return out, toolkit.InvalidArg("uid", "is required for action "+a.Action+" (ha_get_calendar_events shows it)", `{"uid": "5f3c…"}`)
	}
	cur, found := findCalendarEvent(ctx, ha, a.EntityID, a.UID, a.RecurrenceID)
	if a.Action == "delete" {
		if err := ha.DeleteCalendarEvent(ctx, a.EntityID, a.UID, a.RecurrenceID, a.RecurrenceRange); err != nil {
			return out, calendarRefusal(err, a)
		}
		if found {
			out.Event, out.RRule = &cur.view, cur.rrule
		} else {
			out.Note = "deleted; hamcp could not read the event first, so its fields are not shown"
		}
		return out, nil
	}
	if a.Event == nil {
		return out, toolkit.InvalidArg("event", "is required for update: the fields to change", `{"event": {"start": "2026-03-01T10:00:00+01:00", "end": "2026-03-01T11:00:00+01:00"}}`)
	}
	f := *a.Event
	if found { // Home Assistant takes the whole event: fill in what the model did not change
		f = mergeEventFields(cur, f, a.RecurrenceID != "" && a.RecurrenceRange == "")
	}
	in, err := eventInput(f)
	if err != nil {
		return out, err
	}
	if err := ha.UpdateCalendarEvent(ctx, a.EntityID, a.UID, a.RecurrenceID, a.RecurrenceRange, in); err != nil {
		return out, calendarRefusal(err, a)
	}
	out.Event, out.RRule = viewOfInput(a.EntityID, in), in.RRule
	out.Event.UID = a.UID
	return out, nil
}

// foundEvent is an event as Home Assistant lists it, in the form the tool takes.
type foundEvent struct {
	view   eventView
	fields calEventFields
	rrule  string
}

// findCalendarEvent reads the event from the calendar: the instance with recurrenceID, else the
// first with uid, in the year behind and the two ahead.
func findCalendarEvent(ctx context.Context, ha *homeassistant.Client, entityID, uid, recurrenceID string) (foundEvent, bool) {
	now := time.Now().UTC()
	evs, err := ha.CalendarEvents(ctx, entityID, now.AddDate(-1, 0, 0), now.AddDate(2, 0, 0))
	if err != nil {
		return foundEvent{}, false
	}
	for _, ev := range evs {
		if ev.UID != uid || recurrenceID != "" && ev.RecurrenceID != recurrenceID {
			continue
		}
		s, allDay, _ := calTime(ev.Start)
		e, _, _ := calTime(ev.End)
		start, end := ev.Start.DateTime, ev.End.DateTime
		if allDay {
			start, end = ev.Start.Date, ev.End.Date
		}
		return foundEvent{
			view: eventView{Calendar: entityID, Summary: ev.Summary, Start: s, End: e, AllDay: allDay, Location: ev.Location,
				Description: ev.Description, UID: ev.UID, Recurring: ev.RRule != "" || ev.RecurrenceID != ""},
			fields: calEventFields{Summary: ev.Summary, Start: start, End: end, Description: ev.Description, Location: ev.Location, RRule: ev.RRule},
			rrule:  ev.RRule,
		}, true
	}
	return foundEvent{}, false
}

// mergeEventFields puts the given fields over the current event. Changing one instance drops the
// rule (the instance does not recur); moving the start of an event keeps its length.
func mergeEventFields(cur foundEvent, f calEventFields, instance bool) calEventFields {
	out := cur.fields
	if instance {
		out.RRule = ""
	}
	if f.Start != "" && f.End == "" {
		if s0, e0, ok := spanOf(cur.fields.Start, cur.fields.End); ok {
			if s1, dateOnly, err := parseEventTime(f.Start); err == nil {
				end := s1.Add(e0.Sub(s0))
				f.End = end.Format(time.RFC3339)
				if dateOnly {
					f.End = end.Format(time.DateOnly)
				}
			}
		}
	}
	for _, p := range []struct{ dst, src *string }{{&out.Summary, &f.Summary}, {&out.Start, &f.Start}, {&out.End, &f.End},
		{&out.Description, &f.Description}, {&out.Location, &f.Location}, {&out.RRule, &f.RRule}} {
		if *p.src != "" {
			*p.dst = *p.src
		}
	}
	return out
}

func spanOf(start, end string) (time.Time, time.Time, bool) {
	s, _, err1 := parseEventTime(start)
	e, _, err2 := parseEventTime(end)
	return s, e, err1 == nil && err2 == nil
}

// parseEventTime reads a date (all-day) or a date-time with or without an offset.
func parseEventTime(s string) (time.Time, bool, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, false, nil
		}
	}
	return time.Time{}, false, errors.New("not a date or date-time")
}

// eventInput checks the fields the way calendar's WEBSOCKET_EVENT_SCHEMA does, so the model hears
// which field is wrong, and builds Home Assistant's event object.
func eventInput(f calEventFields) (homeassistant.CalendarEventInput, error) {
	in := homeassistant.CalendarEventInput{Summary: strings.TrimSpace(f.Summary), Description: f.Description, Location: f.Location, RRule: strings.TrimSpace(f.RRule)}
	const example = `{"event": {"summary": "Dentist", "start": "2026-03-01T09:00:00+01:00", "end": "2026-03-01T10:00:00+01:00"}}`
	if in.Summary == "" {
		return in, toolkit.InvalidArg("event.summary", "is required", example)
	}
	start, allDay, err := parseEventTime(f.Start)
	if err != nil {
		return in, toolkit.InvalidArg("event.start", "must be a date-time (2026-03-01T09:00:00+01:00) or, for an all-day event, a date (2026-03-01)", example)
	}
	if f.End == "" && allDay {
		f.End = start.AddDate(0, 0, 1).Format(time.DateOnly)
	}
	end, endDay, err := parseEventTime(f.End)
	if err != nil {
		return in, toolkit.InvalidArg("event.end", "must be a date-time after start or, for an all-day event, a date (the day after the last)", example)
	}
	if allDay != endDay {
		return in, toolkit.InvalidArg("event.end", "must be of start's kind: both dates (all-day) or both date-times", `{"start": "2026-03-01", "end": "2026-03-02"}`)
	}
	if hasOffset(f.Start) != hasOffset(f.End) {
		return in, toolkit.InvalidArg("event.end", "must name a time zone offset when start does, and not when start does not", example)
	}
	if end.Sub(start) < time.Second {
		why := "must be after start"
		if allDay {
			why += " (all-day end is exclusive: a one-day event on 2026-03-01 ends 2026-03-02)"
		}
		return in, toolkit.InvalidArg("event.end", why, example)
	}
	if err := checkRRule(in.RRule); err != nil {
		return in, toolkit.InvalidArg("event.rrule", err.Error(), `{"rrule": "FREQ=WEEKLY;BYDAY=MO,WE"}`)
	}
	in.DTStart, in.DTEnd = strings.TrimSpace(f.Start), strings.TrimSpace(f.End)
	return in, nil
}

func hasOffset(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) <= len("2006-01-02") {
		return false
	}
	clock := s[len("2006-01-02"):]
	return strings.HasSuffix(clock, "Z") || strings.ContainsAny(clock, "+") || strings.Count(clock, "-") > 0
}

// checkRRule is calendar's _validate_rrule: NAME=value parts, a FREQ of DAILY or longer.
func checkRRule(rule string) error {
	if rule == "" {
		return nil
	}
	freq := ""
	for _, part := range strings.Split(rule, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" || v == "" || strings.ToUpper(k) != k {
			return fmt.Errorf("must be NAME=value parts separated by ';' (got %q)", part)
		}
		if k == "FREQ" {
			freq = v
		}
	}
	switch freq {
	case "DAILY", "WEEKLY", "MONTHLY", "YEARLY":
		return nil
	case "":
		return errors.New("needs FREQ (DAILY, WEEKLY, MONTHLY or YEARLY)")
	}
	return errors.New("FREQ must be DAILY, WEEKLY, MONTHLY or YEARLY: Home Assistant does not take rules more frequent than daily")
}

func viewOfInput(entityID string, in homeassistant.CalendarEventInput) *eventView {
	v := &eventView{Calendar: entityID, Summary: in.Summary, Start: in.DTStart, End: in.DTEnd, Location: in.Location, Description: in.Description, Recurring: in.RRule != ""}
	if s, allDay, err := parseEventTime(in.DTStart); err == nil && !allDay && hasOffset(in.DTStart) {
		v.Start = s.UTC().Format(time.RFC3339)
		if e, _, err := parseEventTime(in.DTEnd); err == nil {
			v.End = e.UTC().Format(time.RFC3339)
		}
	} else {
		v.AllDay = allDay
	}
	return v
}

// calendarRefusal words Home Assistant's answers: not_found (no such calendar), not_supported (a
// read-only calendar), invalid_format (the schema), failed (the calendar refused: unknown uid...).
func calendarRefusal(err error, a manageCalendarEventArgs) error {
	var api *homeassistant.APIError
	if !errors.As(err, &api) {
		return haError(err, false, "")
	}
	switch api.Code {
	case "not_found":
		return toolkit.NotFound("Home Assistant has no calendar "+a.EntityID, "ha_list_calendars lists them")
	case "not_supported":
		return &toolkit.Error{Code: "not_supported", Field: "entity_id", Message: a.EntityID + " is read-only here: " + api.Message,
			Hint: "use a calendar that allows it (a Local Calendar)", Changed: new(bool)}
	case "invalid_format":
		return toolkit.InvalidArg("event", "was refused by Home Assistant: "+api.Message, "")
	case "failed":
		if a.Action == "create" {
			return toolkit.InvalidArg("event", "was refused by the calendar: "+api.Message+"; nothing changed", "")
		}
		return toolkit.InvalidArg("uid", "was refused by the calendar: "+api.Message+"; nothing changed", "ha_get_calendar_events shows uid and recurrence_id")
	}
	return haError(err, false, "")
}
