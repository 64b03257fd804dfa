package rules

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ruleStore keeps rules, the trash and pending delays in hamcp's SQLite file (tables from
// hubstore's migration 7). The rule's editable part is one JSON column; counters are columns so a
// run can bump them without rewriting (or racing) an update of the rule.
//
// Its writes take w first: SQLite has one writer at a time, and concurrent runs that collide
// on the write lock wait in SQLite's busy handler, which sleeps (up to 100 ms a time) instead
// of queueing. In line they are 2–25 times faster (docs/performance.md).
type ruleStore struct {
	db *sql.DB
	w  sync.Mutex
}

// Bounds on what the model can make the store hold.
const (
	maxRules        = 500
	maxTrash        = 100
	maxDelaysOfRule = 100
)

// ErrTooManyRules is Create refusing a rule beyond maxRules.
var ErrTooManyRules = fmt.Errorf("rules: hamcp already holds %d rules; delete some first", maxRules)

// ErrTooManyDelays is a rule with too many runs waiting in a delay.
var ErrTooManyDelays = fmt.Errorf("rules: the rule already has %d runs waiting in a delay", maxDelaysOfRule)

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

const ruleColumns = `id, enabled, body, created_at, updated_at, last_triggered, execution_count, error_count, last_error`

func scanRule(row interface{ Scan(...any) error }) (Rule, error) {
	var (
		r                Rule
		body             string
		enabled          bool
		created, updated int64
		last             sql.NullInt64
	)
	var id string
	if err := row.Scan(&id, &enabled, &body, &created, &updated, &last, &r.ExecutionCount, &r.ErrorCount, &r.LastError); err != nil {
		return Rule{}, err
	}
	counters := r
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return Rule{}, fmt.Errorf("rules: stored rule %s is unreadable: %w", id, err)
	}
	r.ID, r.Enabled = id, enabled
	r.CreatedAt, r.UpdatedAt = fromMS(created), fromMS(updated)
	r.ExecutionCount, r.ErrorCount, r.LastError = counters.ExecutionCount, counters.ErrorCount, counters.LastError
	r.LastTriggered = nil
	if last.Valid {
		t := fromMS(last.Int64)
		r.LastTriggered = &t
	}
	return r, nil
}

// body is the rule's JSON without the fields kept in columns. Why hamcp stopped the rule has no
// column: it is kept in the body, which no write of the user's can set (runtimeFields).
func body(r Rule) (string, error) {
	m := editable(r)
	if r.DisabledReason != "" {
		m["disabledReason"], m["disabledAt"] = r.DisabledReason, r.DisabledAt
	}
	b, err := json.Marshal(m)
	return string(b), err
}

func (s *ruleStore) list(ctx context.Context) ([]Rule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+ruleColumns+` FROM hubitat_rules ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("rules: list: %w", err)
	}
	defer rows.Close()
	out := []Rule{}
	for rows.Next() {
		r, err := scanRule(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *ruleStore) get(ctx context.Context, id string) (Rule, error) {
	r, err := scanRule(s.db.QueryRowContext(ctx, `SELECT `+ruleColumns+` FROM hubitat_rules WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Rule{}, fmt.Errorf("%w: %q (list_rules shows the ids)", ErrNotFound, clipID(id))
	}
	return r, err
}

func clipID(id string) string {
	if len(id) > 40 {
		return id[:40] + "…"
	}
	return id
}

func (s *ruleStore) insert(ctx context.Context, r Rule) error {
	s.w.Lock()
	defer s.w.Unlock()
	b, err := body(r)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("rules: create: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM hubitat_rules`).Scan(&n); err != nil {
		return fmt.Errorf("rules: create: %w", err)
	}
	if n >= maxRules {
		return ErrTooManyRules
	}
	if err := insertRule(ctx, tx, r, b); err != nil {
		return fmt.Errorf("rules: create: %w", err)
	}
	return tx.Commit()
}

func insertRule(ctx context.Context, tx *sql.Tx, r Rule, b string) error {
	var last any
	if r.LastTriggered != nil {
		last = ms(*r.LastTriggered)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO hubitat_rules (`+ruleColumns+`, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Enabled, b, ms(r.CreatedAt), ms(r.UpdatedAt), last, r.ExecutionCount, r.ErrorCount, r.LastError, r.Name)
	return err
}

// update replaces the editable part and enabled flag; counters are left to recordRun.
func (s *ruleStore) update(ctx context.Context, r Rule) error {
	s.w.Lock()
	defer s.w.Unlock()
	b, err := body(r)
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE hubitat_rules SET name = ?, enabled = ?, body = ?, updated_at = ? WHERE id = ?`,
		r.Name, r.Enabled, b, ms(r.UpdatedAt), r.ID)
	if err != nil {
		return fmt.Errorf("rules: update: %w", err)
	}
	return oneRow(res, r.ID)
}

func oneRow(res sql.Result, id string) error {
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("%w: %q", ErrNotFound, clipID(id))
	}
	return nil
}

// setEnabled turns a rule on or off; turning it on clears why hamcp stopped it.
func (s *ruleStore) setEnabled(ctx context.Context, id string, on bool, now time.Time) (Rule, error) {
	s.w.Lock()
	defer s.w.Unlock()
	res, err := s.db.ExecContext(ctx, `UPDATE hubitat_rules SET enabled = ?, updated_at = ?,
			body = CASE WHEN ? THEN json_remove(body, '$.disabledReason', '$.disabledAt') ELSE body END
		WHERE id = ?`, on, ms(now), on, id)
	if err != nil {
		return Rule{}, fmt.Errorf("rules: enable: %w", err)
	}
	if err := oneRow(res, id); err != nil {
		return Rule{}, err
	}
	return s.get(ctx, id)
}

// disable turns a runaway rule off and keeps why (not its updatedAt: the user did not edit it).
func (s *ruleStore) disable(ctx context.Context, id, reason string, at time.Time) error {
	s.w.Lock()
	defer s.w.Unlock()
	_, err := s.db.ExecContext(ctx, `UPDATE hubitat_rules SET enabled = 0,
			body = json_set(body, '$.disabledReason', ?, '$.disabledAt', ?)
		WHERE id = ?`, reason, at.UTC().Format(time.RFC3339Nano), id)
	if err != nil {
		return fmt.Errorf("rules: disable: %w", err)
	}
	return nil
}

// recordRun bumps a rule's counters after a trigger fired (triggered) and/or a run ended.
func (s *ruleStore) recordRun(ctx context.Context, id string, triggered *time.Time, executed int, runErr string) error {
	s.w.Lock()
	defer s.w.Unlock()
	var last any
	if triggered != nil {
		last = ms(*triggered)
	}
	errInc := 0
	if runErr != "" {
		errInc = 1
	}
	_, err := s.db.ExecContext(ctx, `UPDATE hubitat_rules SET
			last_triggered = coalesce(?, last_triggered),
			execution_count = execution_count + ?,
			error_count = error_count + ?,
			last_error = CASE WHEN ? <> '' THEN ? ELSE last_error END
		WHERE id = ?`, last, executed, errInc, runErr, runErr, id)
	return err
}

// trash moves a rule into the trash and drops its delays, in one transaction.
func (s *ruleStore) trash(ctx context.Context, id, trashID string, now time.Time) error {
	s.w.Lock()
	defer s.w.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("rules: delete: %w", err)
	}
	defer tx.Rollback()
	r, err := scanRule(tx.QueryRowContext(ctx, `SELECT `+ruleColumns+` FROM hubitat_rules WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %q (list_rules shows the ids)", ErrNotFound, clipID(id))
	}
	if err != nil {
		return err
	}
	full, err := json.Marshal(r)
	if err != nil {
		return err
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO hubitat_rule_trash (trash_id, rule_id, deleted_at, body) VALUES (?, ?, ?, ?)`, []any{trashID, id, ms(now), string(full)}},
		{`DELETE FROM hubitat_rules WHERE id = ?`, []any{id}},
		{`DELETE FROM hubitat_rule_delays WHERE rule_id = ?`, []any{id}},
		{`DELETE FROM hubitat_rule_trash WHERE trash_id IN (SELECT trash_id FROM hubitat_rule_trash ORDER BY deleted_at DESC, trash_id LIMIT -1 OFFSET ?)`, []any{maxTrash}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("rules: delete: %w", err)
		}
	}
	return tx.Commit()
}

// restore puts a trashed rule back, disabled, under its old id (a new one if that id is taken).
func (s *ruleStore) restore(ctx context.Context, trashID string, now time.Time) (Rule, error) {
	s.w.Lock()
	defer s.w.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Rule{}, fmt.Errorf("rules: restore: %w", err)
	}
	defer tx.Rollback()
	var full string
	err = tx.QueryRowContext(ctx, `SELECT body FROM hubitat_rule_trash WHERE trash_id = ?`, trashID).Scan(&full)
	if errors.Is(err, sql.ErrNoRows) {
		return Rule{}, fmt.Errorf("%w: no deleted rule with trash id %q (list the trash to see them)", ErrNotFound, clipID(trashID))
	}
	if err != nil {
		return Rule{}, fmt.Errorf("rules: restore: %w", err)
	}
	var r Rule
	if err := json.Unmarshal([]byte(full), &r); err != nil {
		return Rule{}, fmt.Errorf("rules: restore: the trashed rule is unreadable: %w", err)
	}
	var n, total int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM hubitat_rules WHERE id = ?`, r.ID).Scan(&n); err != nil {
		return Rule{}, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM hubitat_rules`).Scan(&total); err != nil {
		return Rule{}, err
	}
	if total >= maxRules {
		return Rule{}, ErrTooManyRules
	}
	if n > 0 || r.ID == "" {
		r.ID = newID()
	}
	r.Enabled, r.UpdatedAt = false, now
	b, err := body(r)
	if err != nil {
		return Rule{}, err
	}
	if err := insertRule(ctx, tx, r, b); err != nil {
		return Rule{}, fmt.Errorf("rules: restore: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM hubitat_rule_trash WHERE trash_id = ?`, trashID); err != nil {
		return Rule{}, fmt.Errorf("rules: restore: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Rule{}, fmt.Errorf("rules: restore: %w", err)
	}
	return r, nil
}

func (s *ruleStore) trashed(ctx context.Context) ([]TrashedRule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT trash_id, deleted_at, body FROM hubitat_rule_trash ORDER BY deleted_at DESC, trash_id`)
	if err != nil {
		return nil, fmt.Errorf("rules: trash: %w", err)
	}
	defer rows.Close()
	out := []TrashedRule{}
	for rows.Next() {
		var (
			t    TrashedRule
			at   int64
			full string
		)
		if err := rows.Scan(&t.TrashID, &at, &full); err != nil {
			return nil, err
		}
		t.DeletedAt = fromMS(at)
		if err := json.Unmarshal([]byte(full), &t.Rule); err != nil {
			return nil, fmt.Errorf("rules: trash %s is unreadable: %w", t.TrashID, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// addDelay stores a run waiting in a delay.
func (s *ruleStore) addDelay(ctx context.Context, d PendingDelay) error {
	s.w.Lock()
	defer s.w.Unlock()
	c, err := json.Marshal(d.Context)
	if err != nil {
		return err
	}
	pos, err := json.Marshal(d.Position)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("rules: store delay: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM hubitat_rule_delays WHERE rule_id = ?`, d.RuleID).Scan(&n); err != nil {
		return fmt.Errorf("rules: store delay: %w", err)
	}
	if n >= maxDelaysOfRule {
		return ErrTooManyDelays
	}
	// A run that reaches its delay after the rule was deleted leaves nothing behind.
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM hubitat_rules WHERE id = ?`, d.RuleID).Scan(&n); err != nil {
		return fmt.Errorf("rules: store delay: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %q was deleted while it ran", ErrNotFound, clipID(d.RuleID))
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO hubitat_rule_delays (id, rule_id, delay_id, position, due_at, context) VALUES (?, ?, ?, ?, ?, ?)`,
		d.ID, d.RuleID, d.DelayID, string(pos), ms(d.Due), string(c)); err != nil {
		return fmt.Errorf("rules: store delay: %w", err)
	}
	return tx.Commit()
}

// takeDelay removes a delay and reports whether it was still there: the one caller that gets
// true resumes the run, so a delay never resumes twice (or after it was cancelled).
func (s *ruleStore) takeDelay(ctx context.Context, id string) (bool, error) {
	s.w.Lock()
	defer s.w.Unlock()
	res, err := s.db.ExecContext(ctx, `DELETE FROM hubitat_rule_delays WHERE id = ?`, id)
	if err != nil {
		return false, fmt.Errorf("rules: resume delay: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// delays lists pending delays, of one rule or (ruleID "") of all, soonest first.
func (s *ruleStore) delays(ctx context.Context, ruleID string) ([]PendingDelay, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, rule_id, delay_id, position, due_at, context FROM hubitat_rule_delays
		WHERE ? = '' OR rule_id = ? ORDER BY due_at, id`, ruleID, ruleID)
	if err != nil {
		return nil, fmt.Errorf("rules: read delays: %w", err)
	}
	defer rows.Close()
	out := []PendingDelay{}
	for rows.Next() {
		var (
			d      PendingDelay
			due    int64
			c, pos string
		)
		if err := rows.Scan(&d.ID, &d.RuleID, &d.DelayID, &pos, &due, &c); err != nil {
			return nil, err
		}
		d.Due = fromMS(due)
		if err := errors.Join(json.Unmarshal([]byte(c), &d.Context), json.Unmarshal([]byte(pos), &d.Position)); err != nil {
			return nil, fmt.Errorf("rules: delay %s is unreadable: %w", d.ID, err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// cancelDelays removes a rule's delays: all of them, or those with one delayId. It returns the
// row ids removed so their timers can be stopped.
func (s *ruleStore) cancelDelays(ctx context.Context, ruleID, delayID string) ([]string, error) {
	s.w.Lock()
	defer s.w.Unlock()
	q := `DELETE FROM hubitat_rule_delays WHERE rule_id = ? AND (? = 'all' OR delay_id = ?) RETURNING id`
	rows, err := s.db.QueryContext(ctx, q, ruleID, delayID, delayID)
	if err != nil {
		return nil, fmt.Errorf("rules: cancel delays: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// setLocal changes one local variable of a stored rule (set_local_variable) without touching
// anything else, so it cannot undo an update made meanwhile.
func (s *ruleStore) setLocal(ctx context.Context, id, name, value string) error {
	s.w.Lock()
	defer s.w.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("rules: set local variable: %w", err)
	}
	defer tx.Rollback()
	var b string
	if err := tx.QueryRowContext(ctx, `SELECT body FROM hubitat_rules WHERE id = ?`, id).Scan(&b); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %q", ErrNotFound, clipID(id))
		}
		return fmt.Errorf("rules: set local variable: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(b), &m); err != nil {
		return fmt.Errorf("rules: set local variable: %w", err)
	}
	locals, _ := m["localVariables"].(map[string]any)
	if locals == nil {
		locals = map[string]any{}
	}
	if _, exists := locals[name]; !exists && len(locals) >= maxLocals {
		return fmt.Errorf("rules: the rule already has %d local variables", maxLocals)
	}
	locals[name] = value
	m["localVariables"] = locals
	nb, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE hubitat_rules SET body = ? WHERE id = ?`, string(nb), id); err != nil {
		return fmt.Errorf("rules: set local variable: %w", err)
	}
	return tx.Commit()
}

// maxLocals bounds a rule's local variables (a repeat of set_local_variable with new names).
const maxLocals = 100
