package hass

import (
	"sort"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
	"github.com/hamcp/hamcp/dev/sim/recorder"
)

func recorderCommands() map[string]wsCommand {
	return map[string]wsCommand{
		"history/history_during_period": {needsRecorder: true, schema: schema{{name: "start_time", req: true, kind: "str"}, {name: "end_time", kind: "str"},
			{name: "entity_ids", req: true, kind: "list"}, {name: "include_start_time_state", kind: "bool"}, {name: "significant_changes_only", kind: "bool"},
			{name: "minimal_response", kind: "bool"}, {name: "no_attributes", kind: "bool"}}, handle: wsHistory},
		"logbook/get_events": {needsRecorder: true, schema: schema{{name: "start_time", req: true, kind: "str"}, {name: "end_time", kind: "str"},
			{name: "entity_ids", kind: "list"}, {name: "device_ids", kind: "list"}, {name: "context_id", kind: "str"}}, handle: wsLogbook},
		"recorder/statistics_during_period": {needsRecorder: true, schema: schema{{name: "start_time", req: true, kind: "str"}, {name: "end_time", kind: "str"},
			{name: "statistic_ids", kind: "list"}, {name: "period", req: true, kind: "str", opts: []string{"5minute", "hour", "day", "week", "month"}},
			{name: "types", kind: "list"}, {name: "units", kind: "dict"}}, handle: wsStatistics},
		"recorder/list_statistic_ids": {needsRecorder: true, schema: schema{{name: "statistic_type", kind: "str", opts: []string{"mean", "sum"}}}, handle: wsListStatistics},
	}
}

// wsTimes parses start_time/end_time with the error codes HA uses.
func wsTimes(c *wsConn, id int64, m map[string]any, defEnd time.Time) (time.Time, time.Time, bool) {
	start, err := home.ParseTime(str(m, "start_time"), time.UTC)
	if err != nil {
		c.sendError(id, "invalid_start_time", "Invalid start_time")
		return start, start, false
	}
	end := defEnd
	if v := str(m, "end_time"); v != "" {
		if end, err = home.ParseTime(v, time.UTC); err != nil {
			c.sendError(id, "invalid_end_time", "Invalid end_time")
			return start, end, false
		}
	}
	return start, end, true
}

func wsHistory(c *wsConn, id int64, m map[string]any) {
	now := c.s.h.Now()
	start, end, ok := wsTimes(c, id, m, now)
	if !ok {
		return
	}
	ids := strList(m["entity_ids"])
	if len(ids) == 0 {
		c.sendError(id, "invalid_entity_ids", "Invalid entity_ids")
		return
	}
	for _, e := range ids {
		if !home.ValidEntityID(e) {
			c.sendError(id, "invalid_entity_ids", "Invalid entity_ids")
			return
		}
	}
	if start.After(now) || !end.After(start) {
		c.result(id, map[string]any{})
		return
	}
	noAttrs := boolOr(m, "no_attributes", false)
	res, err := c.s.rec.History(c.ctx, historyOpts(ids, start, end, boolOr(m, "include_start_time_state", true),
		boolOr(m, "significant_changes_only", true), boolOr(m, "minimal_response", false), noAttrs))
	if err != nil {
		c.sendError(id, "unknown_error", "Unknown error")
		return
	}
	out := map[string]any{}
	for eid, rows := range res {
		list := make([]any, 0, len(rows))
		for _, r := range rows {
			row := map[string]any{"s": r.State, "lu": home.Epoch(r.LastUpdated)}
			if r.Attributes != nil && !noAttrs {
				row["a"] = r.Attributes
			}
			if r.Attributes != nil && !r.LastChanged.Equal(r.LastUpdated) {
				row["lc"] = home.Epoch(r.LastChanged)
			}
			list = append(list, row)
		}
		out[eid] = list
	}
	c.result(id, out)
}

func wsLogbook(c *wsConn, id int64, m map[string]any) {
	now := c.s.h.Now()
	start, end, ok := wsTimes(c, id, m, now)
	if !ok {
		return
	}
	if start.After(now) {
		c.result(id, []any{})
		return
	}
	ids := strList(m["entity_ids"])
	if devs := strList(m["device_ids"]); len(devs) > 0 {
		want := map[string]bool{}
		for _, d := range devs {
			want[d] = true
		}
		for _, e := range c.s.h.EntityEntries() {
			if e.DeviceID != nil && want[*e.DeviceID] {
				ids = append(ids, e.EntityID)
			}
		}
		if len(ids) == 0 {
			c.result(id, []any{})
			return
		}
	}
	entries, err := c.s.rec.Logbook(c.ctx, start, end, ids)
	if err != nil {
		c.sendError(id, "unknown_error", "Unknown error")
		return
	}
	ctxID := str(m, "context_id")
	out := []any{}
	for _, e := range entries {
		if ctxID != "" && e.ContextID != ctxID {
			continue
		}
		row := logbookJSON(e, false)
		row["when"] = home.Epoch(e.When)
		out = append(out, row)
	}
	c.result(id, out)
}

var periodLength = map[string]func(time.Time) time.Time{
	"5minute": func(t time.Time) time.Time { return t.Add(5 * time.Minute) },
	"hour":    func(t time.Time) time.Time { return t.Add(time.Hour) },
	"day":     func(t time.Time) time.Time { return t.AddDate(0, 0, 1) },
	"week":    func(t time.Time) time.Time { return t.AddDate(0, 0, 7) },
	"month":   func(t time.Time) time.Time { return t.AddDate(0, 1, 0) },
}

// wsStatistics answers with epoch-millisecond start/end, the requested
// types, and "change" computed from consecutive sums.
func wsStatistics(c *wsConn, id int64, m map[string]any) {
	now := c.s.h.Now()
	start, end, ok := wsTimes(c, id, m, now)
	if !ok {
		return
	}
	period := str(m, "period")
	types := map[string]bool{"change": true, "last_reset": true, "max": true, "mean": true, "min": true, "state": true, "sum": true}
	if m["types"] != nil {
		types = map[string]bool{}
		for _, t := range strList(m["types"]) {
			types[t] = true
		}
	}
	ids := strList(m["statistic_ids"])
	if m["statistic_ids"] == nil {
		metas, err := c.s.rec.ListStatistics(c.ctx)
		if err != nil {
			c.sendError(id, "unknown_error", "Unknown error")
			return
		}
		for _, s := range metas {
			ids = append(ids, s.StatisticID)
		}
	}
	if len(ids) == 0 || !end.After(start) {
		c.result(id, map[string]any{})
		return
	}
	// one period earlier, so the first row's change has a base
	prevStart := start.Add(-periodSpan(period, start))
	res, err := c.s.rec.Statistics(c.ctx, ids, prevStart, end, period)
	if err != nil {
		c.sendError(id, "invalid_format", err.Error())
		return
	}
	out := map[string]any{}
	for sid, rows := range res {
		var list []any
		var prevSum *float64
		for _, r := range rows {
			if r.Start.Before(start) {
				prevSum = r.Sum
				continue
			}
			row := map[string]any{"start": r.Start.UnixMilli(), "end": periodLength[period](r.Start).UnixMilli()}
			set := func(k string, v *float64) {
				if types[k] {
					if v == nil {
						row[k] = nil
					} else {
						row[k] = *v
					}
				}
			}
			set("mean", r.Mean)
			set("min", r.Min)
			set("max", r.Max)
			set("state", r.State)
			set("sum", r.Sum)
			if types["last_reset"] {
				row["last_reset"] = nil
			}
			if types["change"] {
				if r.Sum != nil && prevSum != nil {
					row["change"] = *r.Sum - *prevSum
				} else if r.Sum != nil {
					row["change"] = 0.0
				} else {
					row["change"] = nil
				}
			}
			prevSum = r.Sum
			list = append(list, row)
		}
		if len(list) > 0 {
			out[sid] = list
		}
	}
	c.result(id, out)
}

func periodSpan(period string, at time.Time) time.Duration {
	return periodLength[period](at).Sub(at)
}

// unitClass is statistics_meta.unit_class for common units.
func unitClass(unit string) any {
	switch unit {
	case "°C", "°F", "K":
		return "temperature"
	case "W", "kW":
		return "power"
	case "Wh", "kWh", "MWh":
		return "energy"
	case "V", "mV":
		return "voltage"
	case "m³", "L", "ft³":
		return "volume"
	case "lx":
		return "illuminance"
	case "ppm", "µg/m³":
		return "concentration"
	}
	return nil
}

func wsListStatistics(c *wsConn, id int64, m map[string]any) {
	metas, err := c.s.rec.ListStatistics(c.ctx)
	if err != nil {
		c.sendError(id, "unknown_error", "Unknown error")
		return
	}
	want := str(m, "statistic_type")
	sort.Slice(metas, func(i, j int) bool { return metas[i].StatisticID < metas[j].StatisticID })
	out := []any{}
	for _, s := range metas {
		if want == "mean" && s.MeanType == recorder.MeanNone || want == "sum" && !s.HasSum {
			continue
		}
		out = append(out, statMetaJSON(s))
	}
	c.result(id, out)
}

// statMetaJSON is one list_statistic_ids item. has_mean is HA's deprecated field ("can be
// removed with 2026.4" in statistics.py), still sent and true only for an arithmetic mean: a
// circular mean (wind direction) has mean_type 2 and has_mean false.
func statMetaJSON(s recorder.StatMeta) map[string]any {
	hasMean := s.MeanType == recorder.MeanArithmetic
	var unit, name any
	if s.Unit != "" {
		unit = s.Unit
	}
	if s.Name != "" {
		name = s.Name
	}
	return map[string]any{"statistic_id": s.StatisticID, "source": s.Source, "name": name,
		"display_unit_of_measurement": unit, "statistics_unit_of_measurement": unit,
		"has_mean": hasMean, "has_sum": s.HasSum, "mean_type": s.MeanType, "unit_class": unitClass(s.Unit)}
}
