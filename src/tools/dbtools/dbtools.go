// Package dbtools is the database toolset: read-only SQL on Home Assistant's recorder database,
// state history and statistics straight from its indexes, database facts, and purging. Every
// tool is in the database permission category. Writes need allow_write and purges go through
// Home Assistant's own recorder.purge service while HA runs.
package dbtools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/recorder"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetDatabase is the toolset name.
const SetDatabase = "database"

// Opener opens the recorder database on first use, so hamcp starts even when it is missing.
type Opener struct {
	Options recorder.Options
	once    sync.Once
	db      *recorder.DB
	err     error
}

// DB returns the open database or an error the model can act on.
func (o *Opener) DB() (*recorder.DB, error) {
	o.once.Do(func() { o.db, o.err = recorder.Open(o.Options) })
	if o.err != nil {
		return nil, &toolkit.Error{Code: "database_unavailable", Message: "the recorder database cannot be opened: " + o.err.Error(),
			Hint: "the recorder must use its default SQLite file (home-assistant_v2.db); set recorder_db to its path if it lives elsewhere"}
	}
	return o.db, nil
}

// Close closes the database if it was opened.
func (o *Opener) Close() error {
	if o.db != nil {
		return o.db.Close()
	}
	return nil
}

// Deps are what the database tools need.
type Deps struct {
	DB *Opener
	HA *homeassistant.Client
}

func dbError(err error) error {
	var te *toolkit.Error
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, recorder.ErrRefused):
		return &toolkit.Error{Code: "statement_refused", Field: "sql", Message: err.Error()}
	case errors.Is(err, recorder.ErrNotFound):
		return &toolkit.Error{Code: "not_found", Message: err.Error(), Hint: "list entities with ha_get_states or statistic ids with ha_query_statistics_db and no statistic_id"}
	case errors.Is(err, context.DeadlineExceeded):
		return &toolkit.Error{Code: "timeout", Message: "the query took too long and was stopped: " + err.Error(), Hint: "add a WHERE on an indexed column (metadata_id, last_updated_ts, start_ts) and a LIMIT"}
	}
	return &toolkit.Error{Code: "database_error", Message: err.Error()}
}

type sqlArgs struct {
	SQL        string `json:"sql" jsonschema:"one SQL statement; SELECT unless allow_write" validate:"required" example:"SELECT entity_id FROM states_meta LIMIT 10"`
	Params     []any  `json:"params,omitempty" jsonschema:"values bound to ? placeholders"`
	AllowWrite bool   `json:"allow_write,omitempty" jsonschema:"allow INSERT/UPDATE/DELETE (dangerous while Home Assistant runs: it caches ids)"`
	toolkit.Page
}

type historyArgs struct {
	EntityID          string `json:"entity_id" validate:"required,entity_id" example:"sensor.living_room_temperature"`
	Start             string `json:"start,omitempty" jsonschema:"ISO-8601 (default: hours before end)" validate:"omitempty,iso8601"`
	End               string `json:"end,omitempty" jsonschema:"ISO-8601 (default now)" validate:"omitempty,iso8601"`
	Hours             int    `json:"hours,omitempty" jsonschema:"period length when start is absent (default 24)" validate:"omitempty,min=1,max=87600"`
	IncludeAttributes bool   `json:"include_attributes,omitempty"`
	SignificantOnly   bool   `json:"significant_only,omitempty" jsonschema:"drop attribute-only updates"`
	toolkit.Page
}

type statsArgs struct {
	StatisticID string `json:"statistic_id,omitempty" jsonschema:"e.g. sensor.energy_total; omit to list statistic ids (filtered by search)"`
	Search      string `json:"search,omitempty" jsonschema:"when listing ids: substring of id or name"`
	Table       string `json:"table,omitempty" jsonschema:"statistics (hourly, kept forever; default) or statistics_short_term (5-minute, ~10 days)" validate:"omitempty,oneof=statistics statistics_short_term"`
	Start       string `json:"start,omitempty" validate:"omitempty,iso8601"`
	End         string `json:"end,omitempty" validate:"omitempty,iso8601"`
	Days        int    `json:"days,omitempty" jsonschema:"period length when start is absent (default 7)" validate:"omitempty,min=1,max=3650"`
	toolkit.Page
}

type purgeArgs struct {
	KeepDays int  `json:"keep_days" jsonschema:"keep this many days of history" validate:"required,min=1,max=3650" example:"10"`
	Repack   bool `json:"repack,omitempty" jsonschema:"rewrite the file to return free space (slow)"`
}

func period(start, end string, def time.Duration) (time.Time, time.Time, error) {
	e := time.Now().UTC()
	if end != "" {
		e, _ = toolkit.ParseTime(end)
	}
	s := e.Add(-def)
	if start != "" {
		s, _ = toolkit.ParseTime(start)
	}
	if !s.Before(e) {
		return s, e, toolkit.InvalidArg("start", "must be before end", `{"start": "2026-01-30T00:00:00Z"}`)
	}
	return s, e, nil
}

// Tools returns the database tools.
func Tools(d Deps) []*toolkit.Tool {
	execSQL := toolkit.Define(toolkit.Spec[sqlArgs, any]{
		Name: "ha_execute_sql", Toolset: SetDatabase, Title: "Query the recorder database", Category: toolkit.Database,
		Description: "Run one SQL statement on Home Assistant's recorder database (SQLite, HA's schema: states + states_meta, state_attributes, events, statistics, statistics_meta…). " +
			"Read-only by default; rows are paged (limit, offset) and a SELECT without LIMIT is capped. Times are *_ts columns in Unix seconds; join states to states_meta on metadata_id. " +
			"ATTACH, load_extension and file-changing PRAGMAs are refused. Writes need allow_write=true and are risky while HA runs (it caches ids): prefer HA services. " +
			"For one entity's history use ha_get_state_history (it uses the right index). Needs the database permission.",
		Destructive: true,
		Summary:     func(a sqlArgs) string { return truncate(a.SQL, 300) },
		Handler: func(ctx context.Context, c *toolkit.Call, a sqlArgs) (any, error) {
			db, err := d.DB.DB()
			if err != nil {
				return nil, err
			}
			st, err := recorder.Classify(a.SQL)
			if err != nil {
				return nil, dbError(err)
			}
			if st.Kind != recorder.KindRead && st.Kind != recorder.KindPragma {
				if !a.AllowWrite {
					return nil, &toolkit.Error{Code: "write_not_allowed", Field: "allow_write", Message: fmt.Sprintf("this is a %s statement and the call did not set allow_write", st.Kind),
						Hint: "ask the user; changing the recorder database while Home Assistant runs can corrupt its history — prefer HA services (e.g. recorder.purge_entities)"}
				}
				res, err := db.Exec(ctx, a.SQL, a.Params)
				if err != nil {
					return nil, dbError(err)
				}
				return res, nil
			}
			limit, offset := a.Page.Effective()
			if a.Limit == 0 {
				limit = 0 // the recorder's own cap applies, with its warning
			}
			res, err := db.Query(ctx, a.SQL, a.Params, limit, offset)
			if err != nil {
				return nil, dbError(err)
			}
			return res, nil
		},
	})

	history := toolkit.Define(toolkit.Spec[historyArgs, toolkit.List[recorder.StateRow]]{
		Name: "ha_get_state_history", Toolset: SetDatabase, Title: "State history from the database", Category: toolkit.Database,
		Description: "Read one entity's recorded states straight from the recorder database (fast index, any age the database keeps): the state at start first, then every change, oldest first. " +
			"Paged (limit default 100). Use it for long or dense periods; ha_get_history (through HA) is enough for recent ones. Needs the database permission.",
		ReadOnly: true,
		Summary:  func(a historyArgs) string { return a.EntityID },
		Handler: func(ctx context.Context, c *toolkit.Call, a historyArgs) (toolkit.List[recorder.StateRow], error) {
			db, err := d.DB.DB()
			if err != nil {
				return toolkit.List[recorder.StateRow]{}, err
			}
			hours := a.Hours
			if hours == 0 {
				hours = 24
			}
			start, end, err := period(a.Start, a.End, time.Duration(hours)*time.Hour)
			if err != nil {
				return toolkit.List[recorder.StateRow]{}, err
			}
			opts := []recorder.HistoryOption{recorder.WithStartState}
			if a.IncludeAttributes {
				opts = append(opts, recorder.WithAttributes)
			}
			if a.SignificantOnly {
				opts = append(opts, recorder.SignificantOnly)
			}
			limit, offset := a.Page.Effective()
			rows, total, err := db.StateHistory(ctx, a.EntityID, start, end, limit, offset, opts...)
			if err != nil {
				return toolkit.List[recorder.StateRow]{}, dbError(err)
			}
			return toolkit.Window(rows, total, a.Page), nil
		},
	})

	stats := toolkit.Define(toolkit.Spec[statsArgs, any]{
		Name: "ha_query_statistics_db", Toolset: SetDatabase, Title: "Statistics from the database", Category: toolkit.Database,
		Description: "Read long-term statistics from the recorder database: hourly rows (statistics, kept forever) or 5-minute rows (statistics_short_term) with mean/min/max or state/sum. " +
			"Without statistic_id it lists the statistic ids (filter with search). Paged (limit default 100). Needs the database permission.",
		ReadOnly: true,
		Summary:  func(a statsArgs) string { return a.StatisticID + a.Search },
		Handler: func(ctx context.Context, c *toolkit.Call, a statsArgs) (any, error) {
			db, err := d.DB.DB()
			if err != nil {
				return nil, err
			}
			limit, offset := a.Page.Effective()
			if a.StatisticID == "" {
				metas, total, err := db.ListStatisticIDs(ctx, a.Search, limit, offset)
				if err != nil {
					return nil, dbError(err)
				}
				return toolkit.Window(metas, total, a.Page), nil
			}
			days := a.Days
			if days == 0 {
				days = 7
			}
			start, end, err := period(a.Start, a.End, time.Duration(days)*24*time.Hour)
			if err != nil {
				return nil, err
			}
			table := a.Table
			if table == "" {
				table = recorder.TableStatistics
			}
			rows, total, err := db.Statistics(ctx, table, a.StatisticID, start, end, limit, offset)
			if err != nil {
				return nil, dbError(err)
			}
			return toolkit.Window(rows, total, a.Page), nil
		},
	})

	info := toolkit.Define(toolkit.Spec[struct{}, *recorder.Info]{
		Name: "ha_database_info", Toolset: SetDatabase, Title: "Recorder database facts", Category: toolkit.Database,
		Description: "Describe the recorder database without scanning it: file and WAL size, schema version, row counts per table, number of entities and statistics, oldest and newest state. " +
			"Use it before heavy queries or to judge whether a purge is worthwhile. Needs the database permission.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ struct{}) (*recorder.Info, error) {
			db, err := d.DB.DB()
			if err != nil {
				return nil, err
			}
			i, err := db.Info(ctx)
			if err != nil {
				return nil, dbError(err)
			}
			return i, nil
		},
	})

	purge := toolkit.Define(toolkit.Spec[purgeArgs, map[string]any]{
		Name: "ha_purge_database", Toolset: SetDatabase, Title: "Purge old history", Category: toolkit.Database,
		Confirm: &toolkit.Confirm[purgeArgs]{When: "always (`delete`)",
			Check: func(ctx context.Context, c *toolkit.Call, a purgeArgs) (toolkit.Ask, error) {
				return toolkit.Ask{Classes: []string{string(sensitive.Delete)},
					Question: fmt.Sprintf("Delete all recorded history older than %d days? It cannot come back.", a.KeepDays)}, nil
			}},
		Description: "Delete recorded history older than keep_days (long-term statistics are kept). While Home Assistant runs this calls its recorder.purge service, which purges in the background; " +
			"only when HA is stopped does hamcp delete in batches itself. Deleted history cannot come back: the user confirms it. Needs the database permission.",
		Destructive: true,
		Summary:     func(a purgeArgs) string { return fmt.Sprintf("keep_days=%d repack=%v", a.KeepDays, a.Repack) },
		Handler: func(ctx context.Context, c *toolkit.Call, a purgeArgs) (map[string]any, error) {
			if err := d.HA.Ping(ctx); err == nil {
				if _, _, err := d.HA.CallService(ctx, "recorder", "purge", map[string]any{"keep_days": a.KeepDays, "repack": a.Repack}, false); err != nil {
					return nil, toolkit.Backend("Home Assistant", err, false, "")
				}
				return map[string]any{"via": "recorder.purge", "status": "Home Assistant is purging in the background; ha_database_info shows the result when it is done"}, nil
			} else if !errors.Is(err, homeassistant.ErrUnavailable) {
				return nil, toolkit.Backend("Home Assistant", err, false, "")
			}
			db, err := d.DB.DB()
			if err != nil {
				return nil, err
			}
			res, err := recorder.PurgeOffline(ctx, db.Path(), a.KeepDays, func(done, total int64) {
				c.Progress(ctx, float64(done), float64(total), "purging")
			})
			if err != nil {
				return map[string]any{"via": "direct", "partial": res}, dbError(err)
			}
			return map[string]any{"via": "direct (Home Assistant is not running)", "deleted": res}, nil
		},
	})
	return []*toolkit.Tool{execSQL, history, stats, info, purge}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
