package recorder

import (
	"context"
	"database/sql"
)

// The fixed statements of the typed calls (history, statistics) are
// prepared once per DB: parsing them was a fifth of a history call.
// database/sql re-prepares a Stmt on each pooled connection as needed.
// Caller-supplied SQL (Query) is never cached.

func (db *DB) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if st, ok := db.stmts[q]; ok {
		return st, nil
	}
	st, err := db.r.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if db.stmts == nil {
		db.stmts = map[string]*sql.Stmt{}
	}
	db.stmts[q] = st
	return st, nil
}

func (db *DB) queryRows(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := db.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// rowScanner is the part of *sql.Row used here, so errors from preparing
// surface through Scan like QueryRowContext's do.
type rowScanner interface{ Scan(dest ...any) error }

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (db *DB) queryRow(ctx context.Context, q string, args ...any) rowScanner {
	st, err := db.stmt(ctx, q)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

func (db *DB) closeStmts() {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, st := range db.stmts {
		st.Close()
	}
	db.stmts = nil
}
