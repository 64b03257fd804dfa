package home

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Calendar feature bits (CalendarEntityFeature).
const (
	calCreate = 1
	calDelete = 2
	calUpdate = 4
)

// calEvent is a stored event; all-day events keep local-midnight bounds
// with an exclusive end date, as iCalendar does.
type calEvent struct {
	uid, summary, description, location string
	start, end                          time.Time
	allDay                              bool
	rule                                *rrule
	exdates                             map[string]bool
	overrides                           map[string]*calEvent
}

type calendar struct {
	entityID, name string
	features       int
	events         []*calEvent
}

// CalendarInfo is one /api/calendars item.
type CalendarInfo struct {
	EntityID string `json:"entity_id"`
	Name     string `json:"name"`
}

// CalendarEvent is one (possibly recurring-instance) event in a window.
type CalendarEvent struct {
	UID, Summary, Description, Location string
	Start, End                          time.Time
	AllDay                              bool
	RecurrenceID, RRule                 string
}

// EventInput is the "event" object of calendar/event/create|update.
type EventInput struct {
	Summary, Description, Location string
	DTStart, DTEnd                 string
	RRule                          string
}

// APIJSON is the REST /api/calendars/<id> item (None fields as null).
func (e CalendarEvent) APIJSON(loc *time.Location) map[string]any {
	m := map[string]any{"summary": e.Summary, "description": nilIfEmpty(e.Description), "location": nilIfEmpty(e.Location),
		"uid": nilIfEmpty(e.UID), "recurrence_id": nilIfEmpty(e.RecurrenceID), "rrule": nilIfEmpty(e.RRule)}
	if e.AllDay {
		m["start"] = map[string]any{"date": e.Start.In(loc).Format("2006-01-02")}
		m["end"] = map[string]any{"date": e.End.In(loc).Format("2006-01-02")}
	} else {
		m["start"] = map[string]any{"dateTime": LocalISO(e.Start, loc)}
		m["end"] = map[string]any{"dateTime": LocalISO(e.End, loc)}
	}
	return m
}

// ServiceJSON is the calendar.get_events item: only non-empty fields.
func (e CalendarEvent) ServiceJSON(loc *time.Location) map[string]any {
	m := map[string]any{"summary": e.Summary}
	if e.AllDay {
		m["start"], m["end"] = e.Start.In(loc).Format("2006-01-02"), e.End.In(loc).Format("2006-01-02")
	} else {
		m["start"], m["end"] = LocalISO(e.Start, loc), LocalISO(e.End, loc)
	}
	if e.Description != "" {
		m["description"] = e.Description
	}
	if e.Location != "" {
		m["location"] = e.Location
	}
	return m
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Calendars lists calendar entities sorted by name.
func (h *Home) Calendars() []CalendarInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []CalendarInfo
	for _, c := range h.calendars {
		out = append(out, CalendarInfo{EntityID: c.entityID, Name: c.name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CalendarEvents lists events overlapping [start, end), recurring ones expanded.
func (h *Home) CalendarEvents(entityID string, start, end time.Time) ([]CalendarEvent, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.calendars[entityID]
	if c == nil {
		return nil, &NotFoundError{Msg: "Entity not found"}
	}
	return h.eventsIn(c, start, end), nil
}

func (h *Home) eventsIn(c *calendar, start, end time.Time) []CalendarEvent {
	var out []CalendarEvent
	for _, ev := range c.events {
		for _, inst := range h.instances(ev, end) {
			if inst.End.After(start) && inst.Start.Before(end) {
				out = append(out, inst)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

func recurrenceID(t time.Time, allDay bool, loc *time.Location) string {
	if allDay {
		return t.In(loc).Format("20060102")
	}
	return t.In(loc).Format("20060102T150405")
}

// instances expands one stored event up to limit.
func (h *Home) instances(ev *calEvent, limit time.Time) []CalendarEvent {
	plain := CalendarEvent{UID: ev.uid, Summary: ev.summary, Description: ev.description, Location: ev.location, Start: ev.start, End: ev.end, AllDay: ev.allDay}
	if ev.rule == nil {
		return []CalendarEvent{plain}
	}
	dur := ev.end.Sub(ev.start)
	var out []CalendarEvent
	for _, t := range ev.rule.occurrences(ev.start, limit, h.loc) {
		rid := recurrenceID(t, ev.allDay, h.loc)
		if ev.exdates[rid] {
			continue
		}
		inst := plain
		inst.Start, inst.End, inst.RecurrenceID, inst.RRule = t, t.Add(dur), rid, ev.rule.String()
		if ev.allDay {
			inst.End = t.AddDate(0, 0, int(dur.Hours()/24+0.5))
		}
		if o := ev.overrides[rid]; o != nil {
			inst.Summary, inst.Description, inst.Location, inst.Start, inst.End, inst.AllDay = o.summary, o.description, o.location, o.start, o.end, o.allDay
		}
		out = append(out, inst)
	}
	return out
}

func (h *Home) writableCalendar(entityID string, feature int, verb string) (*calendar, error) {
	c := h.calendars[entityID]
	if c == nil {
		return nil, &NotFoundError{Msg: "Entity not found"}
	}
	if c.features&feature == 0 {
		return nil, &NotSupportedError{Msg: "Calendar does not support event " + verb}
	}
	return c, nil
}

// parseEventInput turns the WS event object into a stored event.
func (h *Home) parseEventInput(in EventInput) (*calEvent, error) {
	if strings.TrimSpace(in.Summary) == "" {
		return nil, invalidf("required key not provided @ data['event']['summary']")
	}
	ev := &calEvent{summary: in.Summary, description: in.Description, location: in.Location, exdates: map[string]bool{}, overrides: map[string]*calEvent{}}
	sd, errS := time.ParseInLocation("2006-01-02", in.DTStart, h.loc)
	ed, errE := time.ParseInLocation("2006-01-02", in.DTEnd, h.loc)
	switch {
	case errS == nil && errE == nil:
		ev.start, ev.end, ev.allDay = sd, ed, true
	case errS == nil || errE == nil:
		return nil, invalidf("Expected all values to be the same type @ data['event']")
	default:
		s, err := parseHATime(in.DTStart, h.loc)
		if err != nil {
			return nil, invalidf("Invalid datetime specified: %s for dictionary value @ data['event']['dtstart']", in.DTStart)
		}
		e, err := parseHATime(in.DTEnd, h.loc)
		if err != nil {
			return nil, invalidf("Invalid datetime specified: %s for dictionary value @ data['event']['dtend']", in.DTEnd)
		}
		ev.start, ev.end = s, e
	}
	if !ev.end.After(ev.start) {
		return nil, invalidf("Expected minimum event duration of 0:00:01 (%s, %s) @ data['event']", in.DTStart, in.DTEnd)
	}
	if in.RRule != "" {
		r, err := parseRRule(in.RRule, h.loc)
		if err != nil {
			return nil, &HAError{Msg: "Error creating event: " + err.Error()}
		}
		ev.rule = &r
	}
	return ev, nil
}

func (h *Home) newUID() string {
	x := h.hexID()
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// CreateCalendarEvent is calendar/event/create.
func (h *Home) CreateCalendarEvent(entityID string, in EventInput) error {
	h.mu.Lock()
	defer h.flushAfter()()
	c, err := h.writableCalendar(entityID, calCreate, "creation")
	if err != nil {
		return err
	}
	ev, err := h.parseEventInput(in)
	if err != nil {
		return err
	}
	ev.uid = h.newUID()
	c.events = append(c.events, ev)
	h.refreshCalendarState(c)
	return nil
}

func (c *calendar) find(uid string) (int, *calEvent) {
	for i, ev := range c.events {
		if ev.uid == uid {
			return i, ev
		}
	}
	return -1, nil
}

// DeleteCalendarEvent is calendar/event/delete; recurrenceID (+ range
// "THISANDFUTURE") removes instances of a recurring event.
func (h *Home) DeleteCalendarEvent(entityID, uid, recurrenceID, rng string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	c, err := h.writableCalendar(entityID, calDelete, "deletion")
	if err != nil {
		return err
	}
	i, ev := c.find(uid)
	if ev == nil {
		return &HAError{Msg: fmt.Sprintf("Unable to find event with uid %s", uid)}
	}
	switch {
	case recurrenceID == "" || ev.rule == nil:
		c.events = append(c.events[:i], c.events[i+1:]...)
	case rng == "THISANDFUTURE":
		t, err := parseICalTime(recurrenceID, h.loc)
		if err != nil {
			return &HAError{Msg: "Invalid recurrence_id " + recurrenceID}
		}
		if !t.After(ev.start) {
			c.events = append(c.events[:i], c.events[i+1:]...)
		} else {
			ev.rule.endBefore(t.Add(-time.Second))
		}
	default:
		ev.exdates[recurrenceID] = true
	}
	h.refreshCalendarState(c)
	return nil
}

// UpdateCalendarEvent is calendar/event/update.
func (h *Home) UpdateCalendarEvent(entityID, uid, recurrenceID, rng string, in EventInput) error {
	h.mu.Lock()
	defer h.flushAfter()()
	c, err := h.writableCalendar(entityID, calUpdate, "update")
	if err != nil {
		return err
	}
	i, ev := c.find(uid)
	if ev == nil {
		return &HAError{Msg: fmt.Sprintf("Unable to find event with uid %s", uid)}
	}
	upd, err := h.parseEventInput(in)
	if err != nil {
		return err
	}
	upd.uid = uid
	if recurrenceID != "" && ev.rule != nil && rng != "THISANDFUTURE" {
		upd.rule = nil
		ev.overrides[recurrenceID] = upd
	} else {
		if upd.rule == nil && recurrenceID != "" {
			upd.rule = ev.rule
		}
		upd.exdates, upd.overrides = ev.exdates, ev.overrides
		c.events[i] = upd
	}
	h.refreshCalendarState(c)
	return nil
}

// flushAfter unlocks and delivers events a mutation queued: `defer h.flushAfter()()`.
func (h *Home) flushAfter() func() {
	return func() {
		h.mu.Unlock()
		h.bus.flush()
	}
}

// refreshCalendarState writes the calendar entity: on while an event runs,
// attributes describe the current or next event.
func (h *Home) refreshCalendarState(c *calendar) {
	now := h.now()
	attrs := map[string]any{"friendly_name": c.name, "supported_features": c.features}
	evs := h.eventsIn(c, now, now.AddDate(1, 0, 0))
	state := "off"
	if len(evs) > 0 {
		e := evs[0]
		layout := "2006-01-02 15:04:05"
		attrs["message"], attrs["all_day"] = e.Summary, e.AllDay
		attrs["start_time"], attrs["end_time"] = e.Start.In(h.loc).Format(layout), e.End.In(h.loc).Format(layout)
		attrs["location"], attrs["description"] = e.Location, e.Description
		attrs["offset_reached"] = false
		if !e.Start.After(now) {
			state = "on"
		}
	}
	h.writeState(c.entityID, state, attrs, false, h.newContext("", nil))
}
