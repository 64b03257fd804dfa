package recorder

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is an open recorder database. Like HA's recorder it has one writer
// connection (serialised by mu) and caches the ids it has written; readers use
// a separate pool so queries never wait behind a write transaction.
type DB struct {
	path string
	w    *sql.DB // single connection, BEGIN IMMEDIATE
	r    *sql.DB // read pool, query_only

	mu         sync.Mutex // guards the caches and serialises writes
	metaIDs    map[string]int64
	attrIDs    map[string]int64
	dataIDs    map[string]int64
	eventTypes map[string]int64
	// lastState holds the state_id of the newest row written by this DB per
	// metadata_id: HA links old_state_id only to states it wrote since it
	// started, so the first state after a restart has no old_state_id.
	lastState map[int64]int64
}

// cacheLimit bounds the attribute/event-data caches like HA's LRUs.
const cacheLimit = 4096

// dsn builds the modernc DSN with HA's per-connection PRAGMAs (util.py):
// cache_size -16384, synchronous NORMAL, foreign_keys ON. HA relies on
// pysqlite's 5 s busy handler; busy_timeout(5000) is its equivalent.
func dsn(path string, write bool) (string, error) {
	if strings.Contains(path, "?") {
		return "", fmt.Errorf("recorder path %q: must not contain '?' (it starts the driver's options); rename the file", path)
	}
	q := "?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-16384)"
	if write {
		q += "&_txlock=immediate"
	} else {
		q += "&_pragma=query_only(1)"
	}
	return path + q, nil
}

func openPools(path string) (*DB, error) {
	wdsn, err := dsn(path, true)
	if err != nil {
		return nil, err
	}
	rdsn, _ := dsn(path, false)
	w, err := sql.Open("sqlite", wdsn)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open("sqlite", rdsn)
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(4)
	return &DB{
		path: path, w: w, r: r,
		metaIDs: map[string]int64{}, attrIDs: map[string]int64{}, dataIDs: map[string]int64{},
		eventTypes: map[string]int64{}, lastState: map[int64]int64{},
	}, nil
}

// Create makes a new recorder file at path: WAL journal, HA's schema with
// every index, the schema_changes, statistics_runs, migration_changes and
// recorder_runs rows HA writes when it initialises an empty database.
func Create(path string) (*DB, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("recorder: %s already exists; Create makes a new file, use Open for an existing one", path)
	}
	db, err := openPools(path)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if _, err := db.w.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		db.Close()
		return nil, fmt.Errorf("recorder: set WAL on %s: %w", path, err)
	}
	now := time.Now().UTC()
	if err := initSchema(ctx, db.w, now, true); err != nil {
		db.Close()
		removeDB(path)
		return nil, err
	}
	if _, err := db.w.ExecContext(ctx,
		`INSERT INTO recorder_runs (start, "end", closed_incorrect, created) VALUES (?, NULL, 0, ?)`,
		sqliteDatetime(now), sqliteDatetime(now)); err != nil {
		db.Close()
		return nil, fmt.Errorf("recorder: insert recorder_runs: %w", err)
	}
	return db, nil
}

// initSchema creates the tables (and the indexes when withIndexes) and the
// bookkeeping rows of a fresh database, in one transaction.
func initSchema(ctx context.Context, conn *sql.DB, now time.Time, withIndexes bool) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmts := tableDDL()
	if withIndexes {
		stmts = append(stmts, indexDDL()...)
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("recorder: create schema: %w (in %q)", err, firstLine(s))
		}
	}
	// HA's get_start_time(): the 5-minute period before the current one, so
	// the statistics compiler does not back-fill the past of a new database.
	period := now.Truncate(5 * time.Minute).Add(-5 * time.Minute)
	if _, err := tx.ExecContext(ctx, "INSERT INTO statistics_runs (start) VALUES (?)", sqliteDatetime(period)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_changes (schema_version, changed) VALUES (?, ?)", SchemaVersion, sqliteDatetime(now)); err != nil {
		return err
	}
	for _, m := range migrationsDone {
		if _, err := tx.ExecContext(ctx, "INSERT INTO migration_changes (migration_id, version) VALUES (?, ?)", m.id, m.version); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// removeDB deletes a half-made database with its WAL companions.
func removeDB(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		os.Remove(p)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Open opens an existing recorder file and checks it carries HA's schema.
func Open(path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("recorder: open %s: %w (use Create or Generate to make one)", path, err)
	}
	db, err := openPools(path)
	if err != nil {
		return nil, err
	}
	v, err := db.schemaVersion(context.Background())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("recorder: %s is not a Home Assistant recorder database: %w", path, err)
	}
	if v < 43 {
		db.Close()
		return nil, fmt.Errorf("recorder: %s has schema version %d; this emulator needs >= 43 (states_meta era)", path, v)
	}
	return db, nil
}

func (db *DB) schemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := db.r.QueryRowContext(ctx, "SELECT schema_version FROM schema_changes ORDER BY change_id DESC LIMIT 1").Scan(&v)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !v.Valid) {
		return 0, errors.New("schema_changes has no version row")
	}
	return int(v.Int64), err
}

// Close closes both connection pools.
func (db *DB) Close() error {
	if db == nil {
		return nil
	}
	return errors.Join(db.r.Close(), db.w.Close())
}

// Path is the file path of the database.
func (db *DB) Path() string { return db.path }
