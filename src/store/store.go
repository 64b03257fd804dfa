// Package store is hamcp's own SQLite file (/data/hamcp.db in the add-on): the audit log, token-level
// permission grants, OAuth clients and tokens, and the tables integrations bring (Migrate), which
// they read through DB. It knows nothing about MCP or HTTP.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// busyTimeout is how long a writer waits for another writer before SQLITE_BUSY. Writes here are tiny,
// so a few seconds only matters when the disk stalls.
const busyTimeout = 5 * time.Second

// Store is an open hamcp database. It is safe for concurrent use.
type Store struct {
	db          *sql.DB
	insertAudit *sql.Stmt
}

// Open opens (creating if needed) the database at path and brings its schema up to date.
func Open(path string) (*Store, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	// _txlock=immediate: every write transaction takes the write lock up front, so two writers wait on
	// busy_timeout instead of failing with SQLITE_BUSY when a read lock is upgraded. Read-only
	// transactions (sql.TxOptions{ReadOnly: true}) still begin deferred.
	dsn := path + "?_txlock=immediate" +
		fmt.Sprintf("&_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()) +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)" +
		"&_pragma=foreign_keys(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One idle connection per core is plenty for this small database and keeps the per-connection
	// pragmas from being re-run on every call.
	db.SetMaxIdleConns(4)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pingUntilFree(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w (is it a SQLite file, and is the folder writable?)", path, err)
	}
	if err := migrate(ctx, db, migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	s := &Store{db: db}
	if s.insertAudit, err = db.PrepareContext(ctx, insertAuditSQL); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: prepare audit insert: %w", err)
	}
	return s, nil
}

// pingUntilFree opens the first connection. Switching a new file to WAL needs the file to itself,
// and SQLite answers SQLITE_BUSY at once for that switch rather than waiting out busy_timeout, so
// two hamcp processes starting on a fresh file (or one slowed down by a busy machine) retry it.
func pingUntilFree(ctx context.Context, db *sql.DB) error {
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		err := db.PingContext(ctx)
		if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// checkPath turns the driver's opaque "unable to open database file" into an error saying what to fix.
func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("store: database path is empty: give a file path such as /data/hamcp.db")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return fmt.Errorf("store: database path %q is not a plain file path: give a file path such as /data/hamcp.db", path)
	case strings.ContainsAny(path, "?\x00"):
		return fmt.Errorf("store: database path %q contains '?' or a NUL byte, which SQLite cannot open: choose another file name", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("store: database folder %s: %w (create it, or choose another path)", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("store: database folder %s is not a directory: choose another path", dir)
	}
	return nil
}

// DB lends the shared handle to an integration's own tables (and to other features of hamcp's). Their
// tables come from migrations (this package's, or an integration's through Migrate), never from
// ad-hoc CREATE statements elsewhere.
func (s *Store) DB() *sql.DB { return s.db }

// Close releases the database. Pending writes made through the Store have already completed.
func (s *Store) Close() error {
	var errs []error
	if s.insertAudit != nil {
		errs = append(errs, s.insertAudit.Close())
	}
	errs = append(errs, s.db.Close())
	return errors.Join(errs...)
}

// Millis and TimeOf are the one place times are encoded, for the store's tables and an
// integration's alike: integer Unix milliseconds sort and compare cheaply in SQLite and read back
// as UTC.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// TimeOf reads a time Millis wrote.
func TimeOf(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
