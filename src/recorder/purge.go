package recorder

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// purgeBatch is HA's batch size (SQLITE_MAX_BIND_VARS-bounded in
// recorder/purge.py): each batch is one short transaction.
const purgeBatch = 4000

// PurgeResult counts what PurgeOffline deleted.
type PurgeResult struct {
	Cutoff              time.Time `json:"cutoff"`
	States              int64     `json:"states"`
	Attributes          int64     `json:"state_attributes"`
	Events              int64     `json:"events"`
	EventData           int64     `json:"event_data"`
	ShortTermStatistics int64     `json:"statistics_short_term"`
	RecorderRuns        int64     `json:"recorder_runs"`
	StatisticsRuns      int64     `json:"statistics_runs"`
	Batches             int       `json:"batches"`
	WALCheckpointed     bool      `json:"wal_checkpointed"` // the -wal file was emptied
}

// PurgeOffline deletes history older than keepDays the way HA's
// recorder.purge does, for when Home Assistant is STOPPED (the caller
// checks; while HA runs, call its recorder.purge service instead — HA caches
// ids and holds the write connection). Order and batching follow
// purge.py: states in batches of ≤4000 with old_state_id links to them set
// NULL first, then their orphaned state_attributes; events and their
// orphaned event_data; statistics_short_term older than the cutoff
// (long-term statistics are never purged); old recorder_runs and
// statistics_runs, keeping the newest of each. It ends with
// wal_checkpoint(TRUNCATE). Each batch commits on its own, so a cancelled
// purge leaves a consistent, partly purged database; the counts so far are
// returned with the error. progress, if set, gets rows deleted so far and
// rows to delete.
func PurgeOffline(ctx context.Context, path string, keepDays int, progress func(done, total int64)) (*PurgeResult, error) {
	return purgeOffline(ctx, path, keepDays, time.Now(), purgeBatch, progress)
}

func purgeOffline(ctx context.Context, path string, keepDays int, now time.Time, batch int, progress func(done, total int64)) (*PurgeResult, error) {
	if keepDays < 0 || keepDays > 36500 {
		return nil, fmt.Errorf("keep_days: %d is out of range; use 0..36500 (Home Assistant's default is 10)", keepDays)
	}
	if path == "" {
		return nil, fmt.Errorf("path: empty; give the recorder database file, e.g. /config/home-assistant_v2.db")
	}
	abs, err := locate(Options{Path: path})
	if err != nil {
		return nil, err
	}
	// Our own fixed statements only, so the plain driver (no authorizer:
	// the checkpoint PRAGMA must run). mode=rw never creates a file.
	conn, err := sql.Open("sqlite", writeDSN(abs, DefaultBusyTimeout))
	if err != nil {
		return nil, fmt.Errorf("recorder: purge: %w", err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	v, err := schemaVersion(ctx, conn, abs)
	if err != nil {
		return nil, err
	}
	// An older layout lacks states_meta and the *_ts columns: HA migrates it on start. A newer
	// version is fine as long as every column the purge touches is still there.
	if v < MinSchemaVersion {
		return nil, fmt.Errorf("recorder: purge: %s has schema version %d, older than this purge knows (%d and later); "+
			"start Home Assistant (it migrates the database) and use its recorder.purge service instead", abs, v, MinSchemaVersion)
	}
	if err := purgeLayout(ctx, conn); err != nil {
		return nil, fmt.Errorf("recorder: purge: %s (schema version %d): %w; start Home Assistant and use its recorder.purge service instead", abs, v, err)
	}
	p := &purger{conn: conn, res: &PurgeResult{Cutoff: now.UTC().Add(-time.Duration(keepDays) * 24 * time.Hour)}, batchSize: batch, progress: progress}
	p.cut = ts(p.res.Cutoff)
	if err := p.run(ctx); err != nil {
		return p.res, fmt.Errorf("recorder: purge stopped after %d batches (each committed; the database is consistent): %w", p.res.Batches, err)
	}
	return p.res, nil
}

// purgeColumns are the tables and columns the purge statements use.
var purgeColumns = []struct {
	table string
	cols  []string
}{
	{"states", []string{"state_id", "attributes_id", "old_state_id", "last_updated_ts"}},
	{"state_attributes", []string{"attributes_id"}},
	{"events", []string{"event_id", "data_id", "time_fired_ts"}},
	{"event_data", []string{"data_id"}},
	{"statistics_short_term", []string{"id", "start_ts"}},
	{"recorder_runs", []string{"run_id", "start"}},
	{"statistics_runs", []string{"run_id", "start"}},
}

// purgeLayout checks that every table and column the purge uses exists, naming the first
// one missing.
func purgeLayout(ctx context.Context, conn *sql.DB) error {
	for _, t := range purgeColumns {
		have := map[string]bool{}
		rows, err := conn.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", t.table)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			have[n] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(have) == 0 {
			return fmt.Errorf("it has no %s table", t.table)
		}
		for _, c := range t.cols {
			if !have[c] {
				return fmt.Errorf("its %s table has no %s column", t.table, c)
			}
		}
	}
	return nil
}

type purger struct {
	conn        *sql.DB
	res         *PurgeResult
	cut         float64
	batchSize   int
	done, total int64
	progress    func(done, total int64)
	eventFK     bool // legacy states.event_id foreign key still in the table
}

func (p *purger) run(ctx context.Context) error {
	for _, c := range []string{
		"SELECT COUNT(*) FROM states WHERE last_updated_ts < ?",
		"SELECT COUNT(*) FROM events WHERE time_fired_ts < ?",
		"SELECT COUNT(*) FROM statistics_short_term WHERE start_ts < ?",
	} {
		var n int64
		if err := p.conn.QueryRowContext(ctx, c, p.cut).Scan(&n); err != nil {
			return err
		}
		p.total += n
	}
	var fk int
	if err := p.conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_foreign_key_list('states') WHERE \"from\" = 'event_id'").Scan(&fk); err != nil {
		return err
	}
	p.eventFK = fk > 0
	p.report()
	for _, step := range []func(context.Context, *sql.Tx) (bool, error){p.statesBatch, p.eventsBatch, p.shortTermBatch} {
		for {
			more, err := p.batch(ctx, step)
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	if _, err := p.batch(ctx, p.runs); err != nil {
		return err
	}
	var busy, logFrames, checkpointed int64
	if err := p.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &checkpointed); err != nil {
		return fmt.Errorf("wal_checkpoint: %w", err)
	}
	p.res.WALCheckpointed = busy == 0
	return nil
}

func (p *purger) report() {
	if p.progress != nil {
		p.progress(p.done, p.total)
	}
}

// batch runs one step in its own transaction and reports progress.
func (p *purger) batch(ctx context.Context, step func(context.Context, *sql.Tx) (bool, error)) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	tx, err := p.conn.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin (is Home Assistant still running?): %w", err)
	}
	defer tx.Rollback()
	more, err := step(ctx, tx)
	if err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("commit: %w", err)
	}
	p.res.Batches++
	p.report()
	return more, nil
}

func (p *purger) statesBatch(ctx context.Context, tx *sql.Tx) (bool, error) {
	ids, attrIDs, err := pairs(ctx, tx, "SELECT state_id, attributes_id FROM states WHERE last_updated_ts < ? LIMIT ?", p.cut, p.batchSize)
	if err != nil || len(ids) == 0 {
		return false, err
	}
	in, args := inList(ids)
	if _, err := tx.ExecContext(ctx, "UPDATE states SET old_state_id = NULL WHERE old_state_id IN ("+in+")", args...); err != nil {
		return false, fmt.Errorf("unlink old_state_id: %w", err)
	}
	n, err := execCount(ctx, tx, "DELETE FROM states WHERE state_id IN ("+in+")", args...)
	if err != nil {
		return false, fmt.Errorf("delete states: %w", err)
	}
	p.res.States += n
	p.done += n
	a, err := deleteUnused(ctx, tx, attrIDs, "states", "attributes_id", "state_attributes")
	if err != nil {
		return false, fmt.Errorf("delete state_attributes: %w", err)
	}
	p.res.Attributes += a
	return len(ids) == p.batchSize, nil
}

func (p *purger) eventsBatch(ctx context.Context, tx *sql.Tx) (bool, error) {
	ids, dataIDs, err := pairs(ctx, tx, "SELECT event_id, data_id FROM events WHERE time_fired_ts < ? LIMIT ?", p.cut, p.batchSize)
	if err != nil || len(ids) == 0 {
		return false, err
	}
	in, args := inList(ids)
	if p.eventFK {
		if _, err := tx.ExecContext(ctx, "UPDATE states SET event_id = NULL WHERE event_id IN ("+in+")", args...); err != nil {
			return false, fmt.Errorf("unlink legacy states.event_id: %w", err)
		}
	}
	n, err := execCount(ctx, tx, "DELETE FROM events WHERE event_id IN ("+in+")", args...)
	if err != nil {
		return false, fmt.Errorf("delete events: %w", err)
	}
	p.res.Events += n
	p.done += n
	d, err := deleteUnused(ctx, tx, dataIDs, "events", "data_id", "event_data")
	if err != nil {
		return false, fmt.Errorf("delete event_data: %w", err)
	}
	p.res.EventData += d
	return len(ids) == p.batchSize, nil
}

func (p *purger) shortTermBatch(ctx context.Context, tx *sql.Tx) (bool, error) {
	n, err := execCount(ctx, tx, "DELETE FROM statistics_short_term WHERE id IN (SELECT id FROM statistics_short_term WHERE start_ts < ? LIMIT ?)", p.cut, p.batchSize)
	if err != nil {
		return false, fmt.Errorf("delete statistics_short_term: %w", err)
	}
	p.res.ShortTermStatistics += n
	p.done += n
	return n == int64(p.batchSize), nil
}

// runs drops run bookkeeping older than the cutoff, keeping the newest row
// of each table (HA's current run and last statistics run). Their DATETIME
// columns are text, compared through julianday.
func (p *purger) runs(ctx context.Context, tx *sql.Tx) (bool, error) {
	cut := p.res.Cutoff.Format("2006-01-02 15:04:05.000000")
	n, err := execCount(ctx, tx, "DELETE FROM recorder_runs WHERE julianday(start) < julianday(?) AND run_id != (SELECT MAX(run_id) FROM recorder_runs)", cut)
	if err != nil {
		return false, fmt.Errorf("delete recorder_runs: %w", err)
	}
	p.res.RecorderRuns = n
	if n, err = execCount(ctx, tx, "DELETE FROM statistics_runs WHERE julianday(start) < julianday(?) AND run_id != (SELECT MAX(run_id) FROM statistics_runs)", cut); err != nil {
		return false, fmt.Errorf("delete statistics_runs: %w", err)
	}
	p.res.StatisticsRuns = n
	return false, nil
}

// pairs reads (id, ref) rows; refs are deduplicated and NULLs dropped.
func pairs(ctx context.Context, tx *sql.Tx, q string, args ...any) (ids, refs []int64, err error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	seen := map[int64]bool{}
	for rows.Next() {
		var id int64
		var ref sql.NullInt64
		if err := rows.Scan(&id, &ref); err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
		if ref.Valid && !seen[ref.Int64] {
			seen[ref.Int64] = true
			refs = append(refs, ref.Int64)
		}
	}
	return ids, refs, rows.Err()
}

// deleteUnused deletes the rows of table whose ids (among candidates) no
// row of user references any more.
func deleteUnused(ctx context.Context, tx *sql.Tx, candidates []int64, user, col, table string) (int64, error) {
	if len(candidates) == 0 {
		return 0, nil
	}
	in, args := inList(candidates)
	rows, err := tx.QueryContext(ctx, "SELECT DISTINCT "+col+" FROM "+user+" WHERE "+col+" IN ("+in+")", args...)
	if err != nil {
		return 0, err
	}
	used := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		used[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var unused []int64
	for _, id := range candidates {
		if !used[id] {
			unused = append(unused, id)
		}
	}
	if len(unused) == 0 {
		return 0, nil
	}
	in, args = inList(unused)
	return execCount(ctx, tx, "DELETE FROM "+table+" WHERE "+col+" IN ("+in+")", args...)
}

func execCount(ctx context.Context, tx *sql.Tx, q string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func inList(ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return strings.TrimSuffix(strings.Repeat("?,", len(ids)), ","), args
}
