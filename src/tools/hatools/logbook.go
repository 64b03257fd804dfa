package hatools

import (
	"context"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetLogbook is the toolset of the logbook.
const SetLogbook = "logbook"

// logRow is the compact form of a logbook entry.
type logRow struct {
	When     string `json:"when"`
	EntityID string `json:"entity_id,omitempty"`
	Name     string `json:"name,omitempty"`
	State    string `json:"state,omitempty"`
	Message  string `json:"message,omitempty"`
	By       string `json:"by,omitempty"`
}

// logRowOf shortens an entry; "by" says what caused it (an automation or script, a service
// call, an event, a user) from HA's context fields.
func logRowOf(e homeassistant.LogbookEntry) logRow {
	r := logRow{When: e.When, EntityID: e.EntityID, Name: e.Name, State: e.State, Message: e.Message}
	if t, err := time.Parse(time.RFC3339Nano, e.When); err == nil {
		r.When = t.UTC().Format(time.RFC3339)
	}
	if r.Name == e.EntityID {
		r.Name = ""
	}
	switch {
	case e.ContextEntityID != "":
		r.By = e.ContextEntityID
	case e.ContextEventType == "call_service" && e.ContextDomain != "":
		r.By = "service " + e.ContextDomain + "." + e.ContextService
	case e.ContextEventType != "":
		r.By = "event " + e.ContextEventType
	case e.ContextUserID != "":
		r.By = "user " + e.ContextUserID
	}
	return r
}

type logbookArgs struct {
	Start     string   `json:"start,omitempty" jsonschema:"ISO-8601 (default: hours before end)" validate:"omitempty,iso8601"`
	End       string   `json:"end,omitempty" jsonschema:"ISO-8601 (default now)" validate:"omitempty,iso8601"`
	Hours     int      `json:"hours,omitempty" jsonschema:"when start is not given (default 24)" validate:"omitempty,min=1,max=720"`
	EntityIDs []string `json:"entity_ids,omitempty" validate:"omitempty,max=50,dive,entity_id"`
	Search    string   `json:"search,omitempty" jsonschema:"text in id, name, state or message"`
	Oldest    bool     `json:"oldest_first,omitempty"`
	toolkit.Page
}

// periodWindow resolves start/end/hours arguments: end defaults to now, start to hours before end.
func periodWindow(start, end string, hours, defHours int) (time.Time, time.Time, error) {
	e := time.Now().UTC()
	if end != "" {
		e, _ = toolkit.ParseTime(end)
	}
	if hours == 0 {
		hours = defHours
	}
	s := e.Add(-time.Duration(hours) * time.Hour)
	if start != "" {
		s, _ = toolkit.ParseTime(start)
	}
	if !s.Before(e) {
		return s, e, toolkit.InvalidArg("start", "must be before end", `{"start": "2026-01-30T00:00:00Z", "end": "2026-01-31T00:00:00Z"}`)
	}
	return s, e, nil
}

// logbookTools are the logbook tools, in the order tools/list shows them.
func logbookTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{getLogbook(d)} }

// getLogbook is ha_get_logbook.
func getLogbook(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[logbookArgs, toolkit.List[logRow]]{
		Name: "ha_get_logbook", Toolset: SetLogbook, Title: "Logbook",
		Description: "Logbook over a period (default last 24 h): state changes and events with their cause, newest first. Paged. " +
			"Last hour: ha_get_recent_activity; raw values: ha_get_history.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a logbookArgs) (toolkit.List[logRow], error) {
			start, end, err := periodWindow(a.Start, a.End, a.Hours, 24)
			if err != nil {
				return toolkit.List[logRow]{}, err
			}
			entries, err := d.HA.Logbook(ctx, homeassistant.LogbookQuery{Start: start, End: end, EntityIDs: a.EntityIDs})
			if err != nil {
				return toolkit.List[logRow]{}, haError(err, false, "check the entity ids with ha_search_entities")
			}
			search := strings.ToLower(a.Search)
			rows := make([]logRow, 0, len(entries))
			for i := range entries {
				e := entries[i]
				if !a.Oldest {
					e = entries[len(entries)-1-i]
				}
				if search != "" && !strings.Contains(strings.ToLower(e.EntityID+" "+e.Name+" "+e.State+" "+e.Message), search) {
					continue
				}
				rows = append(rows, logRowOf(e))
			}
			return toolkit.Paginate(rows, a.Page), nil
		},
	})
}
