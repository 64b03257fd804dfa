package hatools

import (
	"context"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

type historyArgs struct {
	EntityIDs              []string `json:"entity_ids" jsonschema:"entities to read (1 to 20)" validate:"required,min=1,max=20,dive,entity_id" example:"[\"sensor.living_room_temperature\"]"`
	Start                  string   `json:"start,omitempty" jsonschema:"ISO-8601 start time (default: hours before end)" validate:"omitempty,iso8601"`
	End                    string   `json:"end,omitempty" jsonschema:"ISO-8601 end time (default: now)" validate:"omitempty,iso8601"`
	Hours                  int      `json:"hours,omitempty" jsonschema:"length of the period when start is not given (default 24, max 720)" validate:"omitempty,min=1,max=720"`
	SignificantChangesOnly *bool    `json:"significant_changes_only,omitempty" jsonschema:"only rows where the state itself changed (default true)"`
	MinimalResponse        *bool    `json:"minimal_response,omitempty" jsonschema:"only state and time for middle rows (default true)"`
	IncludeAttributes      bool     `json:"include_attributes,omitempty" jsonschema:"include attributes in each row (large; default false)"`
	toolkit.Page
}

type historyRow struct {
	State      string         `json:"state"`
	At         string         `json:"at"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

type entityHistory struct {
	EntityID   string       `json:"entity_id"`
	Total      int          `json:"total"`
	Offset     int          `json:"offset"`
	NextOffset *int         `json:"next_offset,omitempty"`
	Rows       []historyRow `json:"rows"`
}

type historyResult struct {
	Start    string          `json:"start"`
	End      string          `json:"end"`
	Entities []entityHistory `json:"entities"`
	Missing  []string        `json:"no_data,omitempty"`
}

func historyTools(d Deps) []*toolkit.Tool {
	getHistory := toolkit.Define(toolkit.Spec[historyArgs, historyResult]{
		Name: "ha_get_history", Toolset: SetStates, Title: "Entity history",
		Description: "Read how entities' states changed over a period (from Home Assistant's recorder): rows of state and time, oldest first, the first row being the state at the start. " +
			"Give entity_ids and either start/end or hours (default last 24 h). limit/offset page the rows of each entity. " +
			"For long periods of numeric sensors prefer statistics over raw history; for what happened and why, the logbook.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a historyArgs) (historyResult, error) {
			end := time.Now().UTC()
			if a.End != "" {
				end, _ = toolkit.ParseTime(a.End)
			}
			hours := a.Hours
			if hours == 0 {
				hours = 24
			}
			start := end.Add(-time.Duration(hours) * time.Hour)
			if a.Start != "" {
				start, _ = toolkit.ParseTime(a.Start)
			}
			if !start.Before(end) {
				return historyResult{}, toolkit.InvalidArg("start", "must be before end", `{"start": "2026-01-30T00:00:00Z", "end": "2026-01-31T00:00:00Z"}`)
			}
			rows, err := d.HA.History(ctx, homeassistant.HistoryQuery{
				EntityIDs:              a.EntityIDs,
				Start:                  start,
				End:                    end,
				MinimalResponse:        boolOr(a.MinimalResponse, true) && !a.IncludeAttributes,
				NoAttributes:           !a.IncludeAttributes,
				SignificantChangesOnly: boolOr(a.SignificantChangesOnly, true),
			})
			if err != nil {
				return historyResult{}, haError(err, false, "")
			}
			out := historyResult{Start: isoUTC(start), End: isoUTC(end), Entities: []entityHistory{}}
			seen := map[string]bool{}
			for _, list := range rows {
				if len(list) == 0 {
					continue
				}
				id := list[0].EntityID
				seen[id] = true
				page := toolkit.Paginate(list, a.Page)
				eh := entityHistory{EntityID: id, Total: page.Total, Offset: page.Offset, NextOffset: page.NextOffset, Rows: make([]historyRow, 0, page.Count)}
				for _, s := range page.Items {
					r := historyRow{State: s.State, At: isoUTC(s.LastChanged)}
					if a.IncludeAttributes {
						r.Attributes = s.Attributes
					}
					eh.Rows = append(eh.Rows, r)
				}
				out.Entities = append(out.Entities, eh)
			}
			for _, id := range a.EntityIDs {
				if !seen[id] {
					out.Missing = append(out.Missing, id)
				}
			}
			return out, nil
		},
	})
	return []*toolkit.Tool{getHistory}
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}
