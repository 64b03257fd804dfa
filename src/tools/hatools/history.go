package hatools

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/recorder"
	"github.com/hamcp/hamcp/src/redact"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Recorder reads entities' state rows straight from Home Assistant's recorder file through
// src/recorder's typed history query (states, states_meta and state_attributes of the entity
// asked for; never SQL). It needs no grant: those rows are what HA's history API gives any
// admin token. The database grant guards the rest of the file.
type Recorder interface {
	StateHistory(ctx context.Context, entityID string, start, end time.Time, limit, offset int, opts ...recorder.HistoryOption) ([]recorder.StateRow, int, error)
}

// When the recorder answers first although Home Assistant is up. HA's history API returns every
// row of the period in one answer (hamcp pages afterwards); the recorder counts on its index and
// reads one page, so its lead grows with the rows: BenchmarkHistorySources measured 4.5× at 72 h
// and 6× at a week for a 5-minute sensor, one or five of them, against the simulated HA (real HA,
// in Python, is slower per row). Shorter periods stay with HA, whose answer is the reference.
const (
	recorderMaxEntities = 5 // each entity is its own indexed query
	recorderMinPeriod   = 72 * time.Hour
)

type historyArgs struct {
	EntityIDs              []string `json:"entity_ids" validate:"required,min=1,max=20,dive,entity_id" example:"[\"sensor.living_room_temperature\"]"`
	Start                  string   `json:"start,omitempty" jsonschema:"ISO-8601 (default: hours before end)" validate:"omitempty,iso8601"`
	End                    string   `json:"end,omitempty" jsonschema:"ISO-8601 (default now)" validate:"omitempty,iso8601"`
	Hours                  int      `json:"hours,omitempty" jsonschema:"when start is not given (default 24)" validate:"omitempty,min=1,max=87600"`
	SignificantChangesOnly *bool    `json:"significant_changes_only,omitempty" jsonschema:"default true"`
	MinimalResponse        *bool    `json:"minimal_response,omitempty" jsonschema:"only state and time for middle rows (default true)"`
	IncludeAttributes      bool     `json:"include_attributes,omitempty" jsonschema:"large"`
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
	Source   string          `json:"source"` // home_assistant or recorder
	Note     string          `json:"note,omitempty"`
	Entities []entityHistory `json:"entities"`
	Missing  []string        `json:"no_data,omitempty"`
}

// historyTools are the history tools, in the order tools/list shows them.
func historyTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{getHistory(d)} }

// getHistory is ha_get_history.
func getHistory(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[historyArgs, historyResult]{
		Name: "ha_get_history", Toolset: SetStates, Title: "Entity history",
		Description: "State changes of entities over a period (recorder), oldest first; the first row is the state at start. " +
			"Period: start/end or hours (default 24); limit/offset page each entity's rows. " +
			"Read through HA, or from the recorder file (source: recorder) when HA is down or for ≤5 entities over ≥72 h (faster). " +
			"Long numeric periods: ha_get_statistics; what happened and why: ha_get_logbook.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a historyArgs) (historyResult, error) {
			return d.history(ctx, a)
		},
	})
}

// history reads through Home Assistant, or from the recorder file when that is faster (few
// entities, long period) or HA cannot be reached.
func (d Deps) history(ctx context.Context, a historyArgs) (historyResult, error) {
	start, end, err := periodWindow(a.Start, a.End, a.Hours, 24)
	if err != nil {
		return historyResult{}, err
	}
	if d.Recorder != nil && len(a.EntityIDs) <= recorderMaxEntities && end.Sub(start) >= recorderMinPeriod {
		if out, err := recorderHistory(ctx, d.Recorder, a, start, end); err == nil {
			return out, nil
		}
		// The recorder was only the faster way; HA still answers.
	}
	out, err := entityHistories(ctx, d.HA, a, start, end)
	if err == nil {
		return out, nil
	}
	if !errors.Is(err, homeassistant.ErrUnavailable) || d.Recorder == nil {
		return historyResult{}, haError(err, false, "")
	}
	out, rerr := recorderHistory(ctx, d.Recorder, a, start, end)
	if rerr != nil {
		te := toolkit.AsError(haError(err, false, ""))
		te.Hint += "; the recorder file cannot be read either: " + rerr.Error()
		return historyResult{}, te
	}
	out.Note = "Home Assistant is not reachable: rows read from its recorder file (the last few seconds may be missing)"
	return out, nil
}

// entityHistories reads the period through HA's history API and pages each entity's rows; errors
// are the client's.
func entityHistories(ctx context.Context, ha *homeassistant.Client, a historyArgs, start, end time.Time) (historyResult, error) {
	rows, err := ha.History(ctx, homeassistant.HistoryQuery{
		EntityIDs:              a.EntityIDs,
		Start:                  start,
		End:                    end,
		MinimalResponse:        boolOr(a.MinimalResponse, true) && !a.IncludeAttributes,
		NoAttributes:           !a.IncludeAttributes,
		SignificantChangesOnly: boolOr(a.SignificantChangesOnly, true),
	})
	if err != nil {
		return historyResult{}, err
	}
	out := historyResult{Start: isoUTC(start), End: isoUTC(end), Source: "home_assistant", Entities: []entityHistory{}}
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
				r.Attributes = redact.Map(s.Attributes)
			}
			eh.Rows = append(eh.Rows, r)
		}
		out.Entities = append(out.Entities, eh)
	}
	out.Missing = missing(a.EntityIDs, seen)
	return out, nil
}

// recorderHistory reads the same rows from the recorder file, one indexed page per entity, in
// HA's shape: the state at start is dated start; HA's minimal response drops repeated states
// (attribute-only updates), as significant_changes_only does, and dates rows by last_updated.
func recorderHistory(ctx context.Context, rec Recorder, a historyArgs, start, end time.Time) (historyResult, error) {
	opts := []recorder.HistoryOption{recorder.WithStartState}
	if a.IncludeAttributes {
		opts = append(opts, recorder.WithAttributes)
	}
	updated := boolOr(a.SignificantChangesOnly, true) || boolOr(a.MinimalResponse, true) && !a.IncludeAttributes
	if updated {
		opts = append(opts, recorder.SignificantOnly)
	}
	limit, offset := a.Page.Effective()
	out := historyResult{Start: isoUTC(start), End: isoUTC(end), Source: "recorder", Entities: []entityHistory{}}
	seen := map[string]bool{}
	for _, id := range a.EntityIDs {
		if seen[id] {
			continue
		}
		rows, total, err := rec.StateHistory(ctx, id, start, end, limit, offset, opts...)
		if errors.Is(err, recorder.ErrNotFound) || err == nil && total == 0 {
			continue
		}
		if err != nil {
			return historyResult{}, err
		}
		seen[id] = true
		page := toolkit.Window(rows, total, toolkit.Page{Limit: limit, Offset: min(offset, total)})
		eh := entityHistory{EntityID: id, Total: page.Total, Offset: page.Offset, NextOffset: page.NextOffset, Rows: make([]historyRow, 0, len(rows))}
		for _, s := range rows {
			r := historyRow{State: s.State, At: isoUTC(s.LastChanged)}
			if updated {
				r.At = isoUTC(s.LastUpdated)
			}
			if s.BeforeStart {
				r.At = isoUTC(start)
			}
			if a.IncludeAttributes && s.Attributes != nil {
				_ = json.Unmarshal(s.Attributes, &r.Attributes) // damaged rows come as a JSON string: no attributes
				r.Attributes = redact.Map(r.Attributes)
			}
			eh.Rows = append(eh.Rows, r)
		}
		out.Entities = append(out.Entities, eh)
	}
	out.Missing = missing(a.EntityIDs, seen)
	return out, nil
}

// missing are the asked-for entities without rows, in the order asked.
func missing(ids []string, seen map[string]bool) []string {
	var out []string
	for _, id := range ids {
		if !seen[id] {
			out = append(out, id)
			seen[id] = true
		}
	}
	return out
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}
