package recorder

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultCandidates are where the add-on finds Home Assistant's database:
// the /homeassistant mount (addon_config era) first, then the legacy /config.
var DefaultCandidates = []string{"/homeassistant/home-assistant_v2.db", "/config/home-assistant_v2.db"}

// Defaults for Options.
const (
	DefaultBusyTimeout      = 5 * time.Second
	DefaultStatementTimeout = 30 * time.Second
	DefaultMaxRows          = 1000
	// DefaultWriteTimeout stays under the ~5 s HA's recorder waits on a
	// locked database before its commit fails: an Exec that ran longer
	// could cost Home Assistant a batch of history.
	DefaultWriteTimeout = 4 * time.Second
	maxMaxRows          = 100000
)

// Options configures Open. Zero values take the defaults.
type Options struct {
	Path             string        // "" => the first existing file of Candidates
	Candidates       []string      // nil => DefaultCandidates
	BusyTimeout      time.Duration // how long a read waits on a lock (WAL checkpoint, recovery); default 5s
	StatementTimeout time.Duration // per read call (all its statements), through the context; default 30s
	MaxRows          int           // row cap per page; default 1000
	WriteTimeout     time.Duration // per Exec, lock wait included; default 4s
	MaxResultBytes   int           // bytes one page of rows may hold, counted while reading; default 2 MiB
}

func (o Options) withDefaults() (Options, error) {
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"busy_timeout", &o.BusyTimeout, DefaultBusyTimeout},
		{"statement_timeout", &o.StatementTimeout, DefaultStatementTimeout},
		{"write_timeout", &o.WriteTimeout, DefaultWriteTimeout},
	} {
		if *d.v < 0 {
			return o, fmt.Errorf("recorder: %s: %s is negative; use a positive duration such as %s", d.name, *d.v, d.def)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	switch {
	case o.MaxRows < 0 || o.MaxRows > maxMaxRows:
		return o, fmt.Errorf("recorder: max_rows: %d is out of range; use 1..%d (default %d)", o.MaxRows, maxMaxRows, DefaultMaxRows)
	case o.MaxRows == 0:
		o.MaxRows = DefaultMaxRows
	}
	switch {
	case o.MaxResultBytes < 0:
		return o, fmt.Errorf("recorder: max_result_bytes: %d is negative; use 0 for the default (%d)", o.MaxResultBytes, DefaultMaxResultBytes)
	case o.MaxResultBytes == 0:
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.Candidates == nil {
		o.Candidates = DefaultCandidates
	}
	return o, nil
}

// DB is a read-only handle on a recorder database. It is safe for
// concurrent use. Every call runs its statements in autocommit mode and
// returns with no transaction or lock held, so Home Assistant's writer and
// its WAL checkpoints are never held up between calls.
type DB struct {
	path string
	opts Options
	r    *sql.DB

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // see stmts.go
}

// Open finds and opens the recorder database read-only: mode=ro, PRAGMA
// query_only, a busy timeout, and an authorizer that lets only reads
// compile. It checks the file is a Home Assistant recorder database.
func Open(o Options) (*DB, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	path, err := locate(o)
	if err != nil {
		return nil, err
	}
	r := sql.OpenDB(connector{readDriver, readDSN(path, o.BusyTimeout)})
	// Enough connections that a quick history page never queues behind a
	// slow ad-hoc query (reads are CPU-bound, so more would not add speed);
	// idle ones close after a minute so an unused add-on holds no files.
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(2)
	r.SetConnMaxIdleTime(time.Minute)
	db := &DB{path: path, opts: o, r: r}
	ctx, cancel := context.WithTimeout(context.Background(), o.StatementTimeout)
	defer cancel()
	if _, err := db.schemaVersion(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the connection pool.
func (db *DB) Close() error {
	db.closeStmts()
	return db.r.Close()
}

// Path is the database file in use.
func (db *DB) Path() string { return db.path }

// locate picks the file: Options.Path, or the first candidate that exists.
func locate(o Options) (string, error) {
	paths := o.Candidates
	if o.Path != "" {
		paths = []string{o.Path}
	}
	var tried []string
	for _, p := range paths {
		if strings.IndexByte(p, 0) >= 0 {
			return "", fmt.Errorf("recorder: path %q contains a NUL byte", p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("recorder: path %q: %w", p, err)
		}
		fi, err := os.Stat(abs)
		switch {
		case err == nil && fi.Mode().IsRegular():
			return abs, checkHeader(abs)
		case err == nil:
			return "", fmt.Errorf("recorder: %s is not a regular file; give the path of home-assistant_v2.db", abs)
		case o.Path != "":
			return "", fmt.Errorf("recorder: database %s: %w (check the database path option)", abs, err)
		}
		tried = append(tried, abs)
	}
	return "", fmt.Errorf("recorder: no Home Assistant database found (tried %s); set the database path option, "+
		"or note that a recorder using MariaDB/PostgreSQL (db_url) has no SQLite file", strings.Join(tried, ", "))
}

// checkHeader turns "file is not a database" into an error that says which
// file and why.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("recorder: open %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, 16)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, []byte("SQLite format 3\x00")) {
		return fmt.Errorf("recorder: %s is not a SQLite database file", path)
	}
	return nil
}

// uriPath escapes what SQLite's URI parser would otherwise take as the
// start of the query or fragment, or as an escape.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
}

// readDSN: mode=ro (the file cannot be written through this connection,
// whatever runs on it), query_only as a second lock, defensive mode. No
// immutable=1: the WAL must be read to see what HA committed.
func readDSN(path string, busy time.Duration) string {
	return fmt.Sprintf("file:%s?mode=ro&_pragma=busy_timeout(%d)&_pragma=query_only(1)&_defensive=1",
		uriPath(path), busy.Milliseconds())
}

// writeDSN: mode=rw never creates a file; foreign_keys as HA sets them;
// _txlock=immediate takes the write lock at BEGIN so a busy database fails
// fast instead of deadlocking on a lock upgrade.
func writeDSN(path string, busy time.Duration) string {
	return fmt.Sprintf("file:%s?mode=rw&_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_txlock=immediate&_defensive=1",
		uriPath(path), busy.Milliseconds())
}

// ErrNotRecorder means the file is SQLite but not HA's recorder database.
var ErrNotRecorder = errors.New("not a Home Assistant recorder database")

func (db *DB) schemaVersion(ctx context.Context) (int, error) {
	return schemaVersion(ctx, db.r, db.path)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func schemaVersion(ctx context.Context, q queryer, path string) (int, error) {
	var v sql.NullInt64
	err := q.QueryRowContext(ctx, "SELECT schema_version FROM schema_changes ORDER BY change_id DESC LIMIT 1").Scan(&v)
	switch {
	case err != nil && strings.Contains(err.Error(), "no such table"):
		return 0, fmt.Errorf("recorder: %s: %w (it has no schema_changes table)", path, ErrNotRecorder)
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("recorder: read %s: %w", path, readError(err))
	case err != nil || !v.Valid:
		return 0, fmt.Errorf("recorder: %s: %w (schema_changes has no version row)", path, ErrNotRecorder)
	}
	return int(v.Int64), nil
}

// readError adds the usual fix to SQLite's terse open errors.
func readError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "unable to open") || strings.Contains(msg, "readonly"):
		return fmt.Errorf("%w (a reader of a WAL database needs the -wal and -shm files next to it, or a writable folder to create them)", err)
	case strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed"):
		return fmt.Errorf("%w (the file is damaged or not SQLite)", err)
	}
	return err
}
