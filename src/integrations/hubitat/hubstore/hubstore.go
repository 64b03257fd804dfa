// Package hubstore is the Hubitat integration's tables in hamcp's store: captured device states,
// the debug log and its level, the hub backups taken through hamcp, the rule engine's variables,
// and the tables of its rules, their trash and their pending delays (which src/rules reads and
// writes itself through DB). The generic store (src/store) lends the database handle and applies
// Migrations; it knows nothing of these tables. It knows nothing about MCP.
package hubstore

import (
	"context"
	"database/sql"

	"github.com/hamcp/hamcp/src/store"
)

// Store is the Hubitat tables of an open hamcp store. It is safe for concurrent use, and closes
// with the store it wraps.
type Store struct {
	db *sql.DB
}

// New wraps st, whose file must already hold Migrations (the app applies them before the
// integration starts; Open does both).
func New(st *store.Store) *Store { return &Store{db: st.DB()} }

// Open applies Migrations to st (each at most once) and wraps it.
func Open(ctx context.Context, st *store.Store) (*Store, error) {
	if err := st.Migrate(ctx, Migrations()...); err != nil {
		return nil, err
	}
	return New(st), nil
}

// DB is the shared handle, for the rule engine's own queries on the rule tables.
func (s *Store) DB() *sql.DB { return s.db }

// Migrations are the Hubitat tables' steps. Their versions and names are the ones the store
// applied itself before the tables moved here, so a file from then has them all recorded and
// opens with nothing applied again. Never edit or reorder a step that has shipped; a new one takes
// the next version free in the whole file (store.Migration says how).
func Migrations() []store.Migration {
	return []store.Migration{
		{Version: 5, Name: "hubitat_rule_variables", Up: createRuleVariables},
		{Version: 6, Name: "hubitat_captures_debug_log_backups", Up: createHubitat},
		{Version: 7, Name: "hubitat_rules", Up: createRules},
	}
}

// createRules holds the Hubitat rule engine's rules (src/rules): the rule as JSON with its
// counters in columns, deleted rules kept for restore, and delays waiting to resume a run.
func createRules(ctx context.Context, tx *sql.Tx) error {
	return store.ExecAll(ctx, tx,
		`CREATE TABLE hubitat_rules (
			id              TEXT    PRIMARY KEY,
			name            TEXT    NOT NULL,
			enabled         INTEGER NOT NULL,
			body            TEXT    NOT NULL, -- the rule as JSON, without the columns below
			created_at      INTEGER NOT NULL, -- Unix milliseconds, UTC
			updated_at      INTEGER NOT NULL,
			last_triggered  INTEGER,
			execution_count INTEGER NOT NULL DEFAULT 0,
			error_count     INTEGER NOT NULL DEFAULT 0,
			last_error      TEXT    NOT NULL DEFAULT ''
		) WITHOUT ROWID`,
		`CREATE TABLE hubitat_rule_trash (
			trash_id   TEXT    PRIMARY KEY,
			rule_id    TEXT    NOT NULL,
			deleted_at INTEGER NOT NULL,
			body       TEXT    NOT NULL -- the whole rule as JSON
		) WITHOUT ROWID`,
		`CREATE TABLE hubitat_rule_delays (
			id           TEXT    PRIMARY KEY,
			rule_id      TEXT    NOT NULL,
			delay_id     TEXT    NOT NULL DEFAULT '',
			position     TEXT    NOT NULL, -- where the run waits (rules.Pending) as JSON
			due_at       INTEGER NOT NULL,
			context      TEXT    NOT NULL -- the run's Context (trigger, event) as JSON
		) WITHOUT ROWID`,
		`CREATE INDEX hubitat_rule_delays_rule ON hubitat_rule_delays (rule_id)`,
	)
}
