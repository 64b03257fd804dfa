package recorder

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ExecResult is the outcome of a committed write.
type ExecResult struct {
	Kind         Kind     `json:"kind"`
	RowsAffected int64    `json:"rows_affected"`
	Warnings     []string `json:"warnings"`
}

// CacheWarning goes with every write: HA's recorder keeps ids in memory and
// does not expect anyone else to change its tables.
const CacheWarning = "Home Assistant caches recorder ids in memory (states_meta, state_attributes, statistics_meta, event_types, " +
	"the last state of each entity): rows written while it runs can be duplicated or linked wrongly. " +
	"Restart Home Assistant after writing, or stop it before writing."

// writeBusyTimeout is how long Exec waits for HA's write lock. Short: if HA
// is mid-commit we would rather fail than queue behind it.
const writeBusyTimeout = 2 * time.Second

// Exec runs one write or DDL statement (the caller decides whether writes
// are allowed) on a read-write connection opened for this call only, inside
// a BEGIN IMMEDIATE transaction bounded by Options.WriteTimeout. On any
// error the transaction is rolled back and nothing has changed.
func (db *DB) Exec(ctx context.Context, sqlText string, args []any) (*ExecResult, error) {
	st, err := Classify(sqlText)
	if err != nil {
		return nil, err
	}
	switch st.Kind {
	case KindWrite, KindDDL:
	case KindTransaction:
		return nil, refuse("%s is not needed: each write runs in its own transaction, committed when it succeeds", st.Verb)
	case KindOther:
		return nil, refuse("%s is not allowed: it locks the whole database for a long time; Home Assistant repacks it itself (recorder.purge with repack: true)", st.Verb)
	default:
		return nil, refuse("%s is a %s statement: run it as a read, not as a write", st.Verb, st.Kind)
	}
	bound, err := bindArgs(args)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, db.opts.WriteTimeout)
	defer cancel()
	w := sql.OpenDB(connector{writeDriver, writeDSN(db.path, min(writeBusyTimeout, db.opts.WriteTimeout/2))})
	defer w.Close()
	w.SetMaxOpenConns(1)
	var n int64
	conn, err := limitedConn(ctx, w)
	if err == nil {
		n, err = execTx(ctx, conn, sqlText, bound)
		conn.Close()
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%v; stopped after the %s write timeout: %w", err, db.opts.WriteTimeout, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("write rolled back, nothing changed: %w", readError(err))
	}
	return &ExecResult{Kind: st.Kind, RowsAffected: n, Warnings: []string{CacheWarning}}, nil
}

func execTx(ctx context.Context, w *sql.Conn, sqlText string, args []any) (int64, error) {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("begin (is Home Assistant holding the write lock?): %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, sqlText, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return n, nil
}
