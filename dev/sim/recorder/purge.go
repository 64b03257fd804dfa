package recorder

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// purgeBatch bounds each purge transaction, as HA does (it re-queues purge
// tasks in batches sized by the max bind variables) so the write lock is
// released between batches and readers/writers are not stalled.
var purgeBatch = 4000

// Purge removes history older than keepDays like the recorder.purge service:
// states (after unlinking old_state_id references), orphaned
// state_attributes, events and orphaned event_data, short-term statistics,
// and finished recorder/statistics runs. Long-term statistics are kept. It
// ends with PRAGMA wal_checkpoint(TRUNCATE) and, when repack, VACUUM.
func (db *DB) Purge(ctx context.Context, keepDays int, repack bool) error {
	if keepDays < 0 {
		return fmt.Errorf("recorder: purge: keep_days %d: must be 0 or more", keepDays)
	}
	now := time.Now()
	cutoff := toTS(now.Add(-time.Duration(keepDays) * 24 * time.Hour))
	db.mu.Lock()
	defer db.mu.Unlock()
	steps := []struct {
		name string
		run  func(context.Context, *sql.Tx) (int64, error)
	}{
		{"states", func(ctx context.Context, tx *sql.Tx) (int64, error) { return purgeStates(ctx, tx, cutoff) }},
		{"state_attributes", orphanDeleter("state_attributes", "attributes_id", "states")},
		{"events", batchDeleter("DELETE FROM events WHERE event_id IN (SELECT event_id FROM events WHERE time_fired_ts < ? LIMIT ?)", cutoff)},
		{"event_data", orphanDeleter("event_data", "data_id", "events")},
		{"statistics_short_term", batchDeleter("DELETE FROM statistics_short_term WHERE id IN (SELECT id FROM statistics_short_term WHERE start_ts < ? LIMIT ?)", cutoff)},
		{"recorder_runs", batchDeleter(`DELETE FROM recorder_runs WHERE run_id IN (SELECT run_id FROM recorder_runs WHERE "end" IS NOT NULL AND start < ? LIMIT ?)`, sqliteDatetime(fromTS(cutoff)))},
		{"statistics_runs", batchDeleter(`DELETE FROM statistics_runs WHERE run_id IN (SELECT run_id FROM statistics_runs WHERE start < ?
			AND run_id != (SELECT run_id FROM statistics_runs ORDER BY start DESC LIMIT 1) LIMIT ?)`, sqliteDatetime(fromTS(cutoff)))},
	}
	for _, s := range steps {
		for {
			n, err := db.inTx(ctx, s.run)
			if err != nil {
				return fmt.Errorf("recorder: purge %s: %w", s.name, err)
			}
			if n < int64(purgeBatch) {
				break
			}
		}
	}
	// Deleted rows may be cached; the next write must not link to them.
	clear(db.attrIDs)
	clear(db.dataIDs)
	if err := db.dropPurgedLastStates(ctx); err != nil {
		return fmt.Errorf("recorder: purge: %w", err)
	}
	for _, q := range []string{"PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA optimize"} {
		if _, err := db.w.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("recorder: purge: %s: %w", q, err)
		}
	}
	if repack {
		if _, err := db.w.ExecContext(ctx, "VACUUM"); err != nil {
			return fmt.Errorf("recorder: purge: repack (VACUUM): %w", err)
		}
	}
	return nil
}

func (db *DB) inTx(ctx context.Context, f func(context.Context, *sql.Tx) (int64, error)) (int64, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n, err := f(ctx, tx)
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// purgeStates deletes one batch of old states, first clearing the
// old_state_id of rows that point at them (HA's disconnect step).
func purgeStates(ctx context.Context, tx *sql.Tx, cutoff float64) (int64, error) {
	rows, err := tx.QueryContext(ctx, "SELECT state_id FROM states WHERE last_updated_ts < ? LIMIT ?", cutoff, purgeBatch)
	if err != nil {
		return 0, err
	}
	var ids []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return 0, err
	}
	in := "(" + placeholders(len(ids)) + ")"
	if _, err := tx.ExecContext(ctx, "UPDATE states SET old_state_id = NULL WHERE old_state_id IN "+in, ids...); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM states WHERE state_id IN "+in, ids...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func batchDeleter(q string, arg any) func(context.Context, *sql.Tx) (int64, error) {
	return func(ctx context.Context, tx *sql.Tx) (int64, error) {
		res, err := tx.ExecContext(ctx, q, arg, purgeBatch)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
}

// orphanDeleter removes shared rows no longer referenced by their users.
func orphanDeleter(tbl, idCol, users string) func(context.Context, *sql.Tx) (int64, error) {
	q := fmt.Sprintf(`DELETE FROM %[1]s WHERE %[2]s IN (SELECT t.%[2]s FROM %[1]s t
		WHERE NOT EXISTS (SELECT 1 FROM %[3]s u WHERE u.%[2]s = t.%[2]s) LIMIT ?)`, tbl, idCol, users)
	return func(ctx context.Context, tx *sql.Tx) (int64, error) {
		res, err := tx.ExecContext(ctx, q, purgeBatch)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
}

// dropPurgedLastStates forgets cached last state ids that no longer exist.
func (db *DB) dropPurgedLastStates(ctx context.Context) error {
	if len(db.lastState) == 0 {
		return nil
	}
	ids := make([]any, 0, len(db.lastState))
	for _, id := range db.lastState {
		ids = append(ids, id)
	}
	alive := map[int64]bool{}
	for start := 0; start < len(ids); start += purgeBatch {
		chunk := ids[start:min(start+purgeBatch, len(ids))]
		rows, err := db.w.QueryContext(ctx, "SELECT state_id FROM states WHERE state_id IN ("+placeholders(len(chunk))+")", chunk...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			alive[id] = true
		}
		rows.Close()
	}
	for meta, id := range db.lastState {
		if !alive[id] {
			delete(db.lastState, meta)
		}
	}
	return nil
}
