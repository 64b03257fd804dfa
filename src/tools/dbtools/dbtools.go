// Package dbtools is the database toolset: SQL on Home Assistant's recorder database, database
// facts, and purging. The SQL and facts tools are in the database permission category, the one
// that writes SQL also needs database_write; purging is the user's confirmation of
// the deletion (class delete), as recorder.purge is, and goes through that service while HA runs. An entity's state history and long-term statistics are hatools' ha_get_history
// and ha_get_statistics, which read those rows without a grant (the history one from this
// package's Opener when that is faster or HA is down).
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

// StateHistory is recorder.DB.StateHistory on the database, opened on first use. It lets
// ha_get_history read an entity's rows straight from the file (hatools.Recorder) without the
// rest of this toolset.
func (o *Opener) StateHistory(ctx context.Context, entityID string, start, end time.Time, limit, offset int, opts ...recorder.HistoryOption) ([]recorder.StateRow, int, error) {
	db, err := o.DB()
	if err != nil {
		return nil, 0, err
	}
	return db.StateHistory(ctx, entityID, start, end, limit, offset, opts...)
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
		return &toolkit.Error{Code: "not_found", Message: err.Error(), Hint: "list entities with ha_get_states"}
	case errors.Is(err, context.DeadlineExceeded):
		return &toolkit.Error{Code: "timeout", Message: "the query took too long and was stopped: " + err.Error(), Hint: "add a WHERE on an indexed column (metadata_id, last_updated_ts, start_ts) and a LIMIT"}
	}
	return &toolkit.Error{Code: "database_error", Message: err.Error()}
}

type querySQLArgs struct {
	SQL    string `json:"sql" jsonschema:"one read-only statement (SELECT, WITH, VALUES, EXPLAIN, read-only PRAGMA)" validate:"required" example:"SELECT entity_id FROM states_meta LIMIT 10"`
	Params []any  `json:"params,omitempty" jsonschema:"values bound to ? placeholders" items:"a string, number, boolean or null"`
	toolkit.Page
}

type writeSQLArgs struct {
	SQL    string `json:"sql" jsonschema:"one INSERT, UPDATE, DELETE, REPLACE or CREATE/DROP/ALTER statement" validate:"required" example:"DELETE FROM states WHERE metadata_id = 42"`
	Params []any  `json:"params,omitempty" jsonschema:"values bound to ? placeholders" items:"a string, number, boolean or null"`
}

type purgeArgs struct {
	KeepDays int  `json:"keep_days" jsonschema:"keep this many days of history" validate:"required,min=1,max=3650" example:"10"`
	Repack   bool `json:"repack,omitempty" jsonschema:"rewrite the file to return free space (slow)"`
}

// Tools returns the database tools, in the order tools/list shows them.
func Tools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{querySQL(d), writeSQL(d), databaseInfo(d), purgeDatabase(d)}
}

// isRead says whether the guard classed st as a read; only those go to the read-only connection.
func isRead(st recorder.Statement) bool {
	return st.Kind == recorder.KindRead || st.Kind == recorder.KindPragma
}

// querySQL is ha_query_sql: reads only, on the read-only connection, under the database grant.
func querySQL(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[querySQLArgs, *recorder.Result]{
		Name: "ha_query_sql", Toolset: SetDatabase, Title: "Query the recorder database", Category: toolkit.Database,
		Description: "Run one read-only SQL statement on Home Assistant's recorder database (SQLite: states + states_meta, state_attributes, events, statistics + statistics_meta…); rows paged. " +
			"Times are *_ts columns in Unix seconds; join states to states_meta on metadata_id. " +
			"For one entity's history ha_get_history, for statistics ha_get_statistics; writes ha_write_sql. Needs the database permission.",
		ReadOnly: true,
		Summary:  func(a querySQLArgs) string { return truncate(a.SQL, 300) },
		Handler: func(ctx context.Context, c *toolkit.Call, a querySQLArgs) (*recorder.Result, error) {
			db, err := d.DB.DB()
			if err != nil {
				return nil, err
			}
			st, err := recorder.Classify(a.SQL)
			if err != nil {
				return nil, dbError(err)
			}
			if !isRead(st) {
				return nil, &toolkit.Error{Code: "statement_refused", Field: "sql", Message: fmt.Sprintf("%s is a %s statement and ha_query_sql only reads", st.Verb, st.Kind),
					Hint: "to change the database use ha_write_sql, which the user grants separately (database_write); prefer Home Assistant services (recorder.purge_entities)"}
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
}

// writeSQL is ha_write_sql: one write in its own transaction, under the database grant and the
// database_write grant on top, which the user gives separately.
func writeSQL(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[writeSQLArgs, *recorder.ExecResult]{
		Name: "ha_write_sql", Toolset: SetDatabase, Title: "Change the recorder database", Category: toolkit.Database,
		Conditional: &toolkit.Condition[writeSQLArgs]{Category: toolkit.DatabaseWrite, When: "it runs (every call)",
			Applies: func(writeSQLArgs) bool { return true }},
		Description: "Run one statement that changes Home Assistant's recorder database, in its own transaction (rolled back on error). " +
			"Risky while HA runs (it caches ids): prefer ha_purge_database or recorder.purge_entities. Reads go to ha_query_sql. Needs the database and database_write permissions.",
		Destructive: true,
		Summary:     func(a writeSQLArgs) string { return truncate(a.SQL, 300) },
		Handler: func(ctx context.Context, c *toolkit.Call, a writeSQLArgs) (*recorder.ExecResult, error) {
			db, err := d.DB.DB()
			if err != nil {
				return nil, err
			}
			st, err := recorder.Classify(a.SQL)
			if err != nil {
				return nil, dbError(err)
			}
			if isRead(st) {
				return nil, &toolkit.Error{Code: "statement_refused", Field: "sql", Message: fmt.Sprintf("%s is a %s statement: ha_write_sql only changes the database", st.Verb, st.Kind),
					Hint: "run reads with ha_query_sql"}
			}
			res, err := db.Exec(ctx, a.SQL, a.Params)
			if err != nil {
				return nil, dbError(err)
			}
			return res, nil
		},
	})
}

// databaseInfo is ha_database_info.
func databaseInfo(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[struct{}, *recorder.Info]{
		Name: "ha_database_info", Toolset: SetDatabase, Title: "Recorder database facts", Category: toolkit.Database,
		Description: "The recorder database without scanning it: file and WAL size, schema version, rows per table, entities and statistics, oldest and newest state. " +
			"Use it before heavy queries or to judge a purge. Needs the database permission.",
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
}

// purgeDatabase is ha_purge_database. A purge deletes history but runs no code and reads no secret, so
// it needs no category (asking for command would hand over a root shell to delete old rows): the user's
// yes to this deletion (class delete) gates it, as it gates ha_call_service recorder.purge.
func purgeDatabase(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[purgeArgs, map[string]any]{
		Name: "ha_purge_database", Toolset: SetDatabase, Title: "Purge old history",
		Confirm: &toolkit.Confirm[purgeArgs]{When: "always (`delete`)",
			Check: func(ctx context.Context, c *toolkit.Call, a purgeArgs) (toolkit.Ask, error) {
				return toolkit.Ask{Classes: []string{string(sensitive.Delete)},
					Question: fmt.Sprintf("Delete all recorded history older than %d days? It cannot come back.", a.KeepDays)}, nil
			}},
		Description: "Delete recorded history older than keep_days (long-term statistics stay). While Home Assistant runs its recorder.purge service does it in the background; " +
			"only when HA is stopped does hamcp delete in batches itself. The user confirms each purge.",
		Destructive: true,
		Summary:     func(a purgeArgs) string { return fmt.Sprintf("keep_days=%d repack=%v", a.KeepDays, a.Repack) },
		Handler: func(ctx context.Context, c *toolkit.Call, a purgeArgs) (map[string]any, error) {
			return d.purge(ctx, c, a)
		},
	})
}

func (d Deps) purge(ctx context.Context, c *toolkit.Call, a purgeArgs) (map[string]any, error) {
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
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
