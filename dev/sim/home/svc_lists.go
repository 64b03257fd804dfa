package home

import (
	"fmt"
	"hash/fnv"
	"time"
)

// todoItem is a local_todo item.
type todoItem struct {
	uid, summary, status, description, due string
}

type todoList struct{ items []*todoItem }

func (t *todoList) open() int {
	n := 0
	for _, it := range t.items {
		if it.status == "needs_action" {
			n++
		}
	}
	return n
}

func (t *todoList) find(ref string) *todoItem {
	for _, it := range t.items {
		if it.uid == ref || it.summary == ref {
			return it
		}
	}
	return nil
}

func (it *todoItem) json() map[string]any {
	m := map[string]any{"uid": it.uid, "summary": it.summary, "status": it.status}
	if it.description != "" {
		m["description"] = it.description
	}
	if it.due != "" {
		m["due"] = it.due
	}
	return m
}

func itemNotFound(ref string) error {
	return &ServiceValidationError{Msg: "Unable to find To-do item: " + ref, Key: "item_not_found", Domain: "todo", Placeholders: map[string]string{"item": ref}}
}

func (h *Home) registerTodoWeatherCalendar() {
	todo := func(name, title, desc string, fields []field, resp SupportsResponse, do func(c *call, st *State, l *todoList) (any, error)) {
		h.addService(&serviceDef{domain: "todo", name: name, title: title, desc: desc, target: "todo", fields: fields, response: resp,
			entity: func(c *call, st *State) (any, error) {
				l := c.h.todos[st.EntityID]
				if l == nil {
					return nil, nil
				}
				r, err := do(c, st, l)
				if err == nil && resp == ResponseNone {
					a := cloneAttrs(st.Attributes)
					c.set(st.EntityID, itoa(l.open()), a)
				}
				return r, err
			}})
	}
	due := []field{
		{name: "due_date", kind: kDate, desc: "The date the to-do item is expected to be completed."},
		{name: "due_datetime", kind: kDateTime, desc: "The date and time the to-do item is expected to be completed."},
		{name: "description", kind: kString, desc: "A more complete description of the to-do item than provided by the item name."},
	}
	todo("add_item", "Add to-do list item", "Adds a new to-do list item.", append([]field{{name: "item", kind: kString, required: true, desc: "The name that represents the to-do item.", example: "Submit income tax return"}}, due...), ResponseNone,
		func(c *call, st *State, l *todoList) (any, error) {
			it := &todoItem{uid: c.h.newUID(), summary: c.str("item"), status: "needs_action", description: c.str("description"), due: c.str("due_date")}
			if c.has("due_datetime") {
				t, _ := parseHATime(c.str("due_datetime"), c.h.loc)
				it.due = LocalISO(t, c.h.loc)
			}
			l.items = append(l.items, it)
			return nil, nil
		})
	todo("update_item", "Update to-do list item", "Updates an existing to-do list item based on its name or UID.", append([]field{
		{name: "item", kind: kString, required: true, desc: "The current name of the to-do item."},
		{name: "rename", kind: kString, desc: "The new name for the to-do item."},
		{name: "status", kind: kEnum, options: []string{"needs_action", "completed"}, desc: "A status or confirmation of the to-do item."},
	}, due...), ResponseNone,
		func(c *call, st *State, l *todoList) (any, error) {
			it := l.find(c.str("item"))
			if it == nil {
				return nil, itemNotFound(c.str("item"))
			}
			if !c.has("rename") && !c.has("status") && !c.has("due_date") && !c.has("due_datetime") && !c.has("description") {
				return nil, invalidf("must contain at least one of rename, status, due_date, due_datetime, description.")
			}
			if c.has("rename") {
				it.summary = c.str("rename")
			}
			if c.has("status") {
				it.status = c.str("status")
			}
			if c.has("description") {
				it.description = c.str("description")
			}
			if c.has("due_date") {
				it.due = c.str("due_date")
			}
			return nil, nil
		})
	todo("remove_item", "Remove a to-do list item", "Removes an existing to-do list item by its name or UID.",
		[]field{{name: "item", kind: kStrList, required: true, desc: "The name/summary of the to-do item."}}, ResponseNone,
		func(c *call, st *State, l *todoList) (any, error) {
			for _, ref := range c.data["item"].([]any) {
				if l.find(ref.(string)) == nil {
					return nil, itemNotFound(ref.(string))
				}
			}
			for _, ref := range c.data["item"].([]any) {
				it := l.find(ref.(string))
				for i, x := range l.items {
					if x == it {
						l.items = append(l.items[:i], l.items[i+1:]...)
						break
					}
				}
			}
			return nil, nil
		})
	todo("remove_completed_items", "Remove all completed to-do list items", "Removes all to-do list items that have been completed.", nil, ResponseNone,
		func(c *call, st *State, l *todoList) (any, error) {
			var keep []*todoItem
			for _, it := range l.items {
				if it.status != "completed" {
					keep = append(keep, it)
				}
			}
			l.items = keep
			return nil, nil
		})
	todo("get_items", "Get to-do list items", "Gets items on a to-do list.",
		[]field{{name: "status", kind: kStrList, desc: "Only return to-do items with the specified statuses. Returns not completed actions by default."}}, ResponseOnly,
		func(c *call, st *State, l *todoList) (any, error) {
			want := map[string]bool{"needs_action": true, "completed": true}
			if c.has("status") {
				want = map[string]bool{}
				for _, s := range c.data["status"].([]any) {
					want[s.(string)] = true
				}
			}
			items := []any{}
			for _, it := range l.items {
				if want[it.status] {
					items = append(items, it.json())
				}
			}
			return map[string]any{"items": items}, nil
		})

	h.addService(&serviceDef{domain: "weather", name: "get_forecasts", title: "Get forecasts", desc: "Get weather forecasts.", target: "weather", response: ResponseOnly,
		fields: []field{{name: "type", kind: kEnum, options: []string{"daily", "hourly", "twice_daily"}, required: true, desc: "Forecast type: daily, hourly or twice daily."}},
		entity: func(c *call, st *State) (any, error) {
			typ := c.str("type")
			if typ == "twice_daily" {
				return nil, &ServiceValidationError{Msg: fmt.Sprintf("Weather entity '%s' does not support 'twice_daily' forecast", st.EntityID), Key: "forecast_not_supported", Domain: "weather"}
			}
			return map[string]any{"forecast": c.h.forecast(typ)}, nil
		}})

	h.addService(&serviceDef{domain: "calendar", name: "get_events", title: "Get events", desc: "Get events on a calendar within a time range.", target: "calendar", response: ResponseOnly,
		fields: []field{
			{name: "start_date_time", kind: kDateTime, desc: "Returns active events after this time (exclusive). When not set, defaults to now."},
			{name: "end_date_time", kind: kDateTime, desc: "Returns active events before this time (exclusive). Cannot be used with 'duration'.", group: "end"},
			{name: "duration", kind: kObject, desc: "Returns active events from start_date_time until the specified duration.", group: "end"},
		},
		entity: func(c *call, st *State) (any, error) {
			cal := c.h.calendars[st.EntityID]
			if cal == nil {
				return nil, nil
			}
			start := c.h.now()
			if c.has("start_date_time") {
				start, _ = parseHATime(c.str("start_date_time"), c.h.loc)
			}
			end := start.Add(24 * time.Hour)
			if c.has("end_date_time") {
				end, _ = parseHATime(c.str("end_date_time"), c.h.loc)
			} else if d, ok := c.data["duration"].(map[string]any); ok {
				end = start.Add(durationOf(d))
			} else if !c.has("end_date_time") {
				return nil, invalidf("must contain at least one of end_date_time, duration.")
			}
			if !end.After(start) {
				return nil, &ServiceValidationError{Msg: "Expected end time to be after start time", Key: "end_date_before_start", Domain: "calendar"}
			}
			evs := []any{}
			for _, e := range c.h.eventsIn(cal, start, end) {
				evs = append(evs, e.ServiceJSON(c.h.loc))
			}
			return map[string]any{"events": evs}, nil
		}})
	h.addService(&serviceDef{domain: "calendar", name: "create_event", title: "Create event", desc: "Adds a new calendar event.", target: "calendar", feature: calCreate,
		fields: []field{
			{name: "summary", kind: kString, required: true, desc: "Defines the short summary or subject for the event.", example: "Department Party"},
			{name: "description", kind: kString, desc: "A more complete description of the event than the one provided by the summary."},
			{name: "start_date_time", kind: kDateTime, desc: "The date and time the event should start."},
			{name: "end_date_time", kind: kDateTime, desc: "The date and time the event should end."},
			{name: "start_date", kind: kDate, desc: "The date the all-day event should start."},
			{name: "end_date", kind: kDate, desc: "The date the all-day event should end (exclusive)."},
			{name: "location", kind: kString, desc: "The location of the event."},
		},
		entity: func(c *call, st *State) (any, error) {
			in := EventInput{Summary: c.str("summary"), Description: c.str("description"), Location: c.str("location"), DTStart: c.str("start_date_time"), DTEnd: c.str("end_date_time")}
			if c.has("start_date") {
				in.DTStart, in.DTEnd = c.str("start_date"), c.str("end_date")
			}
			if in.DTStart == "" || in.DTEnd == "" {
				return nil, invalidf("must contain at least one of start_date, start_date_time, in.")
			}
			ev, err := c.h.parseEventInput(in)
			if err != nil {
				return nil, err
			}
			ev.uid = c.h.newUID()
			cal := c.h.calendars[st.EntityID]
			cal.events = append(cal.events, ev)
			c.h.refreshCalendarState(cal)
			return nil, nil
		}})
}

func durationOf(d map[string]any) time.Duration {
	var total time.Duration
	for k, unit := range map[string]time.Duration{"days": 24 * time.Hour, "hours": time.Hour, "minutes": time.Minute, "seconds": time.Second} {
		if v, ok := toFloat(d[k]); ok {
			total += time.Duration(v * float64(unit))
		}
	}
	return total
}

// forecast is stable for a given day and hour: derived from a hash, not the
// home's random source, so asking twice gives the same answer.
func (h *Home) forecast(typ string) []any {
	now := h.now().In(h.loc)
	conds := []string{"sunny", "partlycloudy", "cloudy", "rainy", "partlycloudy", "clear-night"}
	pick := func(t time.Time, salt string, n int) int {
		f := fnv.New32a()
		fmt.Fprintf(f, "%s|%s", t.Format("2006010215"), salt)
		return int(f.Sum32() % uint32(n))
	}
	var out []any
	if typ == "hourly" {
		base := now.Truncate(time.Hour).Add(time.Hour)
		for i := 0; i < 24; i++ {
			t := base.Add(time.Duration(i) * time.Hour)
			c := conds[pick(t, "c", 5)]
			if t.Hour() < 7 || t.Hour() >= 20 {
				c = "clear-night"
			}
			out = append(out, map[string]any{"datetime": ISOTime(t), "condition": c, "temperature": float64(8 + pick(t, "t", 10)),
				"precipitation": float64(pick(t, "p", 4)) / 2, "humidity": 60 + pick(t, "h", 35), "wind_speed": float64(5 + pick(t, "w", 25)), "wind_bearing": float64(pick(t, "b", 360))})
		}
		return out
	}
	base := time.Date(now.Year(), now.Month(), now.Day(), 12, 0, 0, 0, h.loc)
	for i := 0; i < 5; i++ {
		t := base.AddDate(0, 0, i)
		hi := float64(10 + pick(t, "t", 9))
		out = append(out, map[string]any{"datetime": ISOTime(t), "condition": conds[pick(t, "c", 5)], "temperature": hi, "templow": hi - float64(4+pick(t, "l", 5)),
			"precipitation": float64(pick(t, "p", 8)) / 2, "humidity": 60 + pick(t, "h", 35), "wind_speed": float64(5 + pick(t, "w", 25)), "wind_bearing": float64(pick(t, "b", 360))})
	}
	return out
}

// buildCalendarsAndLists creates calendars with events in the coming days
// and to-do lists with items.
func (h *Home) buildCalendarsAndLists(devs map[string]string) {
	now := h.now().In(h.loc)
	day := func(d, hh, mm int) time.Time {
		return time.Date(now.Year(), now.Month(), now.Day()+d, hh, mm, 0, 0, h.loc)
	}
	ev := func(summary, loc string, s, e time.Time, allDay bool, rule string) *calEvent {
		x := &calEvent{uid: h.newUID(), summary: summary, location: loc, start: s, end: e, allDay: allDay, exdates: map[string]bool{}, overrides: map[string]*calEvent{}}
		if rule != "" {
			r, _ := parseRRule(rule, h.loc)
			x.rule = &r
		}
		return x
	}
	family := &calendar{entityID: "calendar.family", name: "Family", features: calCreate | calDelete | calUpdate, events: []*calEvent{
		ev("Football practice", "Sportpark West", day(0, 18, 30), day(0, 20, 0), false, ""),
		ev("Garbage collection: paper", "", day(1, 0, 0), day(2, 0, 0), true, ""),
		ev("Dentist", "Tandartspraktijk Centrum, Damrak 12", day(1, 9, 0), day(1, 9, 30), false, ""),
		ev("Dinner with friends", "Restaurant De Kas", day(2, 19, 0), day(2, 22, 0), false, ""),
		ev("Alex's birthday", "", day(3, 0, 0), day(4, 0, 0), true, ""),
		ev("Plumber visit", "", day(5, 10, 0), day(5, 12, 0), false, ""),
		ev("Piano lesson", "Muziekschool", day(-7, 16, 0), day(-7, 16, 45), false, "FREQ=WEEKLY;BYDAY="+[]string{"SU", "MO", "TU", "WE", "TH", "FR", "SA"}[day(2, 0, 0).Weekday()]),
	}}
	family.events[6].description = "Bring the new sheet music"
	work := &calendar{entityID: "calendar.work", name: "Work", features: calCreate | calDelete | calUpdate, events: []*calEvent{
		ev("Standup", "Video call", day(-14, 9, 30), day(-14, 9, 45), false, "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR"),
		ev("Quarterly review", "Room 4.12", day(2, 14, 0), day(2, 15, 30), false, ""),
		ev("Team offsite", "Utrecht", day(6, 0, 0), day(8, 0, 0), true, ""),
	}}
	holidays := &calendar{entityID: "calendar.holidays", name: "Holidays", features: 0}
	for y := now.Year(); y <= now.Year()+1; y++ {
		for _, hd := range []struct {
			name string
			m    time.Month
			d    int
		}{{"New Year's Day", 1, 1}, {"King's Day", 4, 27}, {"Liberation Day", 5, 5}, {"Christmas Day", 12, 25}, {"Second Day of Christmas", 12, 26}} {
			s := time.Date(y, hd.m, hd.d, 0, 0, 0, 0, h.loc)
			holidays.events = append(holidays.events, ev(hd.name, "", s, s.AddDate(0, 0, 1), true, ""))
		}
	}
	for _, c := range []*calendar{family, work, holidays} {
		h.calendars[c.entityID] = c
		platform := "local_calendar"
		if c.features == 0 {
			platform = "holiday"
		}
		h.addEntity(devs, c.entityID, c.name, "off", map[string]any{}, entOpt{platform: platform})
		h.refreshCalendarState(c)
	}
	lists := map[string][]string{
		"todo.shopping_list": {"Milk", "Coffee beans", "Bread", "Tomatoes", "Dish soap"},
		"todo.chores":        {"Clean the gutters", "Replace hallway smoke detector battery", "Mow the lawn"},
	}
	for _, id := range []string{"todo.shopping_list", "todo.chores"} {
		l := &todoList{}
		for i, s := range lists[id] {
			st := "needs_action"
			if i == 1 {
				st = "completed"
			}
			l.items = append(l.items, &todoItem{uid: h.newUID(), summary: s, status: st})
		}
		h.todos[id] = l
		name := map[string]string{"todo.shopping_list": "Shopping List", "todo.chores": "Chores"}[id]
		h.addEntity(devs, id, name, itoa(l.open()), map[string]any{"supported_features": 127}, entOpt{platform: "local_todo"})
	}
}

func timeAt(day time.Time, hour, min int, loc *time.Location) time.Time {
	return time.Date(day.Year(), day.Month(), day.Day(), hour, min, 0, 0, loc)
}
