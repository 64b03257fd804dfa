package hubstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// createRuleVariables is the Hubitat rule engine's own variable store (upstream's
// state.ruleVariables): where hubitat_set_variable writes when the hub has no such hub variable.
func createRuleVariables(ctx context.Context, tx *sql.Tx) error {
	return store.ExecAll(ctx, tx,
		`CREATE TABLE hubitat_rule_variables (
			name       TEXT    PRIMARY KEY,
			value      TEXT    NOT NULL,
			updated_at INTEGER NOT NULL -- Unix milliseconds, UTC
		) WITHOUT ROWID`,
	)
}

// RuleVariable is one variable of the Hubitat rule engine's store.
type RuleVariable struct {
	Name      string
	Value     string
	UpdatedAt time.Time
}

// maxRuleVariables bounds the store: the model sets these, so it must not grow without end.
const maxRuleVariables = 1000

// ErrTooManyRuleVariables is SetRuleVariable refusing a new name when the store is full.
var ErrTooManyRuleVariables = fmt.Errorf("store: the Hubitat rule engine already holds %d variables", maxRuleVariables)

// SetRuleVariable creates or replaces one rule-engine variable.
func (s *Store) SetRuleVariable(ctx context.Context, name, value string, now time.Time) error {
	if name == "" {
		return errors.New("store: set rule variable: name is required")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: set rule variable: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM hubitat_rule_variables WHERE name <> ?`, name).Scan(&n); err != nil {
		return fmt.Errorf("store: set rule variable: %w", err)
	}
	if n >= maxRuleVariables {
		return ErrTooManyRuleVariables
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO hubitat_rule_variables (name, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		name, value, store.Millis(now)); err != nil {
		return fmt.Errorf("store: set rule variable: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: set rule variable: %w", err)
	}
	return nil
}

// RuleVariable reads one rule-engine variable; ok is false when there is none of that name.
func (s *Store) RuleVariable(ctx context.Context, name string) (v RuleVariable, ok bool, err error) {
	var ms int64
	err = s.db.QueryRowContext(ctx, `SELECT name, value, updated_at FROM hubitat_rule_variables WHERE name = ?`, name).Scan(&v.Name, &v.Value, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return RuleVariable{}, false, nil
	}
	if err != nil {
		return RuleVariable{}, false, fmt.Errorf("store: read rule variable: %w", err)
	}
	v.UpdatedAt = store.TimeOf(ms)
	return v, true, nil
}

// RuleVariables lists every rule-engine variable by name.
func (s *Store) RuleVariables(ctx context.Context) ([]RuleVariable, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, value, updated_at FROM hubitat_rule_variables ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list rule variables: %w", err)
	}
	defer rows.Close()
	var out []RuleVariable
	for rows.Next() {
		var v RuleVariable
		var ms int64
		if err := rows.Scan(&v.Name, &v.Value, &ms); err != nil {
			return nil, fmt.Errorf("store: list rule variables: %w", err)
		}
		v.UpdatedAt = store.TimeOf(ms)
		out = append(out, v)
	}
	return out, rows.Err()
}
