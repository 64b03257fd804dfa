package hubstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/store"
)

// What hamcp keeps for its Hubitat tools, the state the hub's own MCP app keeps in its app state:
// captured device states (capture_state/restore_state), the debug log ring buffer with its level,
// and the hub backups taken through hamcp (the admin write gate asks for one within the hour).

// createHubitat is the schema of this file's tables.
func createHubitat(ctx context.Context, tx *sql.Tx) error {
	return store.ExecAll(ctx, tx,
		`CREATE TABLE hubitat_captured_states (
			state_id     TEXT    PRIMARY KEY,
			devices      TEXT    NOT NULL, -- JSON object: device id -> {attribute: value}
			device_count INTEGER NOT NULL,
			captured_at  INTEGER NOT NULL  -- Unix milliseconds, UTC
		) WITHOUT ROWID`,
		`CREATE INDEX hubitat_captured_states_time ON hubitat_captured_states (captured_at)`,
		`CREATE TABLE hubitat_debug_log (
			id        INTEGER PRIMARY KEY AUTOINCREMENT,
			time      INTEGER NOT NULL,
			level     TEXT    NOT NULL,
			component TEXT    NOT NULL DEFAULT '',
			rule_id   TEXT    NOT NULL DEFAULT '',
			message   TEXT    NOT NULL,
			details   TEXT    NOT NULL DEFAULT ''
		)`,
		`CREATE TABLE hubitat_settings (
			key   TEXT PRIMARY KEY,
			value TEXT NOT NULL
		) WITHOUT ROWID`,
		`CREATE TABLE hubitat_backups (
			id       INTEGER PRIMARY KEY AUTOINCREMENT,
			taken_at INTEGER NOT NULL,
			file     TEXT    NOT NULL DEFAULT '', -- base name in the backup folder; '' once pruned
			size     INTEGER NOT NULL,
			sha256   TEXT    NOT NULL
		)`,
	)
}

// ---- captured states ----

// Captured states: upstream's maxCapturedStates setting defaults to 20 and is clamped to 1–100.
const (
	DefaultMaxCapturedStates = 20
	MaxCapturedStatesLimit   = 100
	maxStateIDLen            = 100
)

// CapturedState is a snapshot of some devices' attributes, restored later by a rule.
type CapturedState struct {
	ID string
	// Devices maps a device id to the attributes captured (switch, level, hue, saturation,
	// colorTemperature…) as text.
	Devices    map[string]map[string]string
	CapturedAt time.Time
}

// SaveCapturedState stores cs under its id, replacing an older capture with the same id. A new id
// when max captures exist evicts the oldest ones; their ids are returned so the caller can log it.
// max is clamped to 1–100 (0 means the default).
func (s *Store) SaveCapturedState(ctx context.Context, cs CapturedState, max int) (evicted []string, err error) {
	if cs.ID == "" || len(cs.ID) > maxStateIDLen || !utf8.ValidString(cs.ID) {
		return nil, fmt.Errorf("store: captured state id %q must be 1 to %d characters of text", store.Clip(cs.ID, 40), maxStateIDLen)
	}
	max = clampCaptures(max)
	devices, err := json.Marshal(cs.Devices)
	if err != nil {
		return nil, fmt.Errorf("store: captured state %s: %w", cs.ID, err)
	}
	if cs.Devices == nil {
		devices = []byte("{}")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: save captured state: %w", err)
	}
	defer tx.Rollback()
	var exists int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM hubitat_captured_states WHERE state_id = ?`, cs.ID).Scan(&exists); err != nil {
		return nil, fmt.Errorf("store: save captured state: %w", err)
	}
	if exists == 0 {
		rows, err := tx.QueryContext(ctx, `SELECT state_id FROM hubitat_captured_states ORDER BY captured_at DESC, state_id LIMIT -1 OFFSET ?`, max-1)
		if err != nil {
			return nil, fmt.Errorf("store: save captured state: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: save captured state: %w", err)
			}
			evicted = append(evicted, id)
		}
		rows.Close()
		for _, id := range evicted {
			if _, err := tx.ExecContext(ctx, `DELETE FROM hubitat_captured_states WHERE state_id = ?`, id); err != nil {
				return nil, fmt.Errorf("store: evict captured state: %w", err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO hubitat_captured_states (state_id, devices, device_count, captured_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (state_id) DO UPDATE SET devices = excluded.devices, device_count = excluded.device_count, captured_at = excluded.captured_at`,
		cs.ID, string(devices), len(cs.Devices), store.Millis(cs.CapturedAt)); err != nil {
		return nil, fmt.Errorf("store: save captured state: %w", err)
	}
	return evicted, tx.Commit()
}

func clampCaptures(max int) int {
	switch {
	case max <= 0:
		return DefaultMaxCapturedStates
	case max > MaxCapturedStatesLimit:
		return MaxCapturedStatesLimit
	}
	return max
}

// CapturedStates lists every capture, newest first.
func (s *Store) CapturedStates(ctx context.Context) ([]CapturedState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state_id, devices, captured_at FROM hubitat_captured_states ORDER BY captured_at DESC, state_id`)
	if err != nil {
		return nil, fmt.Errorf("store: list captured states: %w", err)
	}
	defer rows.Close()
	var out []CapturedState
	for rows.Next() {
		cs, err := scanCapture(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	return out, rows.Err()
}

// CapturedState reads one capture; ok is false when there is none with that id.
func (s *Store) CapturedState(ctx context.Context, id string) (cs CapturedState, ok bool, err error) {
	row := s.db.QueryRowContext(ctx, `SELECT state_id, devices, captured_at FROM hubitat_captured_states WHERE state_id = ?`, id)
	cs, err = scanCapture(row)
	if errors.Is(err, sql.ErrNoRows) {
		return CapturedState{}, false, nil
	}
	return cs, err == nil, err
}

func scanCapture(r interface{ Scan(...any) error }) (CapturedState, error) {
	var cs CapturedState
	var devices string
	var at int64
	if err := r.Scan(&cs.ID, &devices, &at); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return cs, err
		}
		return cs, fmt.Errorf("store: read captured state: %w", err)
	}
	if err := json.Unmarshal([]byte(devices), &cs.Devices); err != nil {
		return cs, fmt.Errorf("store: captured state %s: %w", cs.ID, err)
	}
	cs.CapturedAt = store.TimeOf(at)
	return cs, nil
}

// DeleteCapturedState removes one capture and reports whether it existed.
func (s *Store) DeleteCapturedState(ctx context.Context, id string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM hubitat_captured_states WHERE state_id = ?`, id)
	if err != nil {
		return false, fmt.Errorf("store: delete captured state: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// ClearCapturedStates removes every capture and returns how many there were.
func (s *Store) ClearCapturedStates(ctx context.Context) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM hubitat_captured_states`)
	if err != nil {
		return 0, fmt.Errorf("store: clear captured states: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ---- debug log ----

// The debug log keeps the newest DebugLogCapacity entries at or above the configured level, as
// upstream's ring buffer in app state does (100 entries, level "error" until changed).
const (
	DebugLogCapacity    = 100
	DefaultDebugLevel   = "error"
	maxDebugMessage     = 2000
	maxDebugDetails     = 4000
	debugLevelKey       = "debug_log_level"
	maxDebugComponentID = 100
)

// DebugLevels are the levels in increasing severity.
var DebugLevels = []string{"debug", "info", "warn", "error"}

// DebugLevelRank is a level's place in DebugLevels, -1 for an unknown one.
func DebugLevelRank(level string) int { return slices.Index(DebugLevels, level) }

// DebugEntry is one debug log line. Message and Details must already be free of secrets: callers
// never pass tokens, passwords, lock codes or command arguments.
type DebugEntry struct {
	ID        int64
	Time      time.Time
	Level     string
	Component string // "server", "hub-admin", "rule", "device", …
	RuleID    string
	Message   string
	Details   string
}

// AppendDebugLog records e when its level is at or above the configured one, dropping the oldest
// entries beyond the capacity. It reports whether e was kept.
func (s *Store) AppendDebugLog(ctx context.Context, e DebugEntry) (bool, error) {
	rank := DebugLevelRank(e.Level)
	if rank < 0 {
		return false, fmt.Errorf("store: debug log level %q must be one of %s", store.Clip(e.Level, 20), strings.Join(DebugLevels, ", "))
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: debug log: %w", err)
	}
	defer tx.Rollback()
	min, err := debugLevel(ctx, tx)
	if err != nil {
		return false, err
	}
	if rank < DebugLevelRank(min) {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO hubitat_debug_log (time, level, component, rule_id, message, details) VALUES (?, ?, ?, ?, ?, ?)`,
		store.Millis(e.Time), e.Level, store.Clip(e.Component, maxDebugComponentID), store.Clip(e.RuleID, maxDebugComponentID),
		store.Clip(e.Message, maxDebugMessage), store.Clip(e.Details, maxDebugDetails)); err != nil {
		return false, fmt.Errorf("store: debug log: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM hubitat_debug_log WHERE id <= (SELECT id FROM hubitat_debug_log ORDER BY id DESC LIMIT 1 OFFSET ?)`,
		DebugLogCapacity); err != nil {
		return false, fmt.Errorf("store: debug log: %w", err)
	}
	return true, tx.Commit()
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func debugLevel(ctx context.Context, q querier) (string, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM hubitat_settings WHERE key = ?`, debugLevelKey).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) || err == nil && DebugLevelRank(v) < 0 {
		return DefaultDebugLevel, nil
	}
	if err != nil {
		return "", fmt.Errorf("store: debug log level: %w", err)
	}
	return v, nil
}

// DebugLogLevel is the minimum level the debug log keeps.
func (s *Store) DebugLogLevel(ctx context.Context) (string, error) { return debugLevel(ctx, s.db) }

// SetDebugLogLevel changes the minimum level and returns the previous one.
func (s *Store) SetDebugLogLevel(ctx context.Context, level string) (previous string, err error) {
	if DebugLevelRank(level) < 0 {
		return "", fmt.Errorf("store: debug log level %q must be one of %s", store.Clip(level, 20), strings.Join(DebugLevels, ", "))
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("store: set debug log level: %w", err)
	}
	defer tx.Rollback()
	if previous, err = debugLevel(ctx, tx); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO hubitat_settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
		debugLevelKey, level); err != nil {
		return "", fmt.Errorf("store: set debug log level: %w", err)
	}
	return previous, tx.Commit()
}

// DebugQuery filters DebugLogs. Empty fields do not filter.
type DebugQuery struct {
	Level     string // exactly this level
	Component string // substring of the component
	RuleID    string
	Limit     int // the newest Limit matches; 0 means all
}

// DebugLogs returns the newest entries matching q, oldest first (the order they happened).
func (s *Store) DebugLogs(ctx context.Context, q DebugQuery) ([]DebugEntry, error) {
	where, args := []string{"1=1"}, []any{}
	if q.Level != "" {
		where, args = append(where, "level = ?"), append(args, q.Level)
	}
	if q.Component != "" {
		where, args = append(where, "instr(component, ?) > 0"), append(args, q.Component)
	}
	if q.RuleID != "" {
		where, args = append(where, "rule_id = ?"), append(args, q.RuleID)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, time, level, component, rule_id, message, details FROM hubitat_debug_log
		WHERE `+strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: read debug log: %w", err)
	}
	defer rows.Close()
	var out []DebugEntry
	for rows.Next() {
		var e DebugEntry
		var at int64
		if err := rows.Scan(&e.ID, &at, &e.Level, &e.Component, &e.RuleID, &e.Message, &e.Details); err != nil {
			return nil, fmt.Errorf("store: read debug log: %w", err)
		}
		e.Time = store.TimeOf(at)
		out = append(out, e)
	}
	slices.Reverse(out)
	return out, rows.Err()
}

// ClearDebugLogs empties the debug log and returns how many entries it held.
func (s *Store) ClearDebugLogs(ctx context.Context) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM hubitat_debug_log`)
	if err != nil {
		return 0, fmt.Errorf("store: clear debug log: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// DebugStatus summarises the debug log.
type DebugStatus struct {
	Level          string
	Total          int
	Capacity       int
	ByLevel        map[string]int
	Oldest, Newest time.Time // zero when empty
}

// DebugLogStatus reads the level, counts per level and the oldest and newest entry times.
func (s *Store) DebugLogStatus(ctx context.Context) (DebugStatus, error) {
	st := DebugStatus{Capacity: DebugLogCapacity, ByLevel: map[string]int{}}
	var err error
	if st.Level, err = s.DebugLogLevel(ctx); err != nil {
		return st, err
	}
	for _, l := range DebugLevels {
		st.ByLevel[l] = 0
	}
	rows, err := s.db.QueryContext(ctx, `SELECT level, count(*), min(time), max(time) FROM hubitat_debug_log GROUP BY level`)
	if err != nil {
		return st, fmt.Errorf("store: debug log status: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var level string
		var n int
		var lo, hi int64
		if err := rows.Scan(&level, &n, &lo, &hi); err != nil {
			return st, fmt.Errorf("store: debug log status: %w", err)
		}
		st.ByLevel[level] += n
		st.Total += n
		if t := store.TimeOf(lo); st.Oldest.IsZero() || t.Before(st.Oldest) {
			st.Oldest = t
		}
		if t := store.TimeOf(hi); t.After(st.Newest) {
			st.Newest = t
		}
	}
	return st, rows.Err()
}

// ---- hub backups ----

// HubBackupsKept is how many hub backup files hamcp keeps beside its database; older files are
// deleted (their rows stay, so the time of the last backup survives).
const HubBackupsKept = 3

// hubBackupDir is the folder of backup files, beside the database (/data/hubitat-backups in the
// add-on: inside the add-on's own backups, outside every folder the file tools can reach).
const hubBackupDir = "hubitat-backups"

// HubBackup is one hub backup taken through hamcp.
type HubBackup struct {
	ID      int64
	TakenAt time.Time
	Path    string // the file; "" once pruned
	Size    int64
	SHA256  string
}

// SaveHubBackup writes a hub backup file beside the database (mode 0600, written whole or not at
// all), records it, and deletes all but the newest HubBackupsKept files.
func (s *Store) SaveHubBackup(ctx context.Context, takenAt time.Time, data []byte) (HubBackup, error) {
	if len(data) == 0 {
		return HubBackup{}, errors.New("store: hub backup is empty")
	}
	dir, err := s.backupDir(ctx)
	if err != nil {
		return HubBackup{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return HubBackup{}, fmt.Errorf("store: hub backup folder %s: %w", dir, err)
	}
	sum := sha256.Sum256(data)
	b := HubBackup{TakenAt: takenAt.UTC(), Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	name := "hub-" + b.TakenAt.Format("20060102T150405.000Z") + "-" + b.SHA256[:8] + ".lzf"
	b.Path = filepath.Join(dir, name)
	if err := writeFileAtomic(b.Path, data); err != nil {
		return HubBackup{}, fmt.Errorf("store: hub backup %s: %w", b.Path, err)
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO hubitat_backups (taken_at, file, size, sha256) VALUES (?, ?, ?, ?)`,
		store.Millis(b.TakenAt), name, b.Size, b.SHA256)
	if err != nil {
		os.Remove(b.Path)
		return HubBackup{}, fmt.Errorf("store: record hub backup: %w", err)
	}
	b.ID, _ = res.LastInsertId()
	return b, s.pruneHubBackups(ctx, dir)
}

func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (s *Store) pruneHubBackups(ctx context.Context, dir string) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, file FROM hubitat_backups WHERE file != '' ORDER BY taken_at DESC, id DESC LIMIT -1 OFFSET ?`, HubBackupsKept)
	if err != nil {
		return fmt.Errorf("store: prune hub backups: %w", err)
	}
	type old struct {
		id   int64
		file string
	}
	var olds []old
	for rows.Next() {
		var o old
		if err := rows.Scan(&o.id, &o.file); err != nil {
			rows.Close()
			return fmt.Errorf("store: prune hub backups: %w", err)
		}
		olds = append(olds, o)
	}
	rows.Close()
	for _, o := range olds {
		if err := os.Remove(filepath.Join(dir, filepath.Base(o.file))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: prune hub backup %s: %w", o.file, err)
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE hubitat_backups SET file = '' WHERE id = ?`, o.id); err != nil {
			return fmt.Errorf("store: prune hub backups: %w", err)
		}
	}
	return nil
}

// LastHubBackup is the newest backup taken through hamcp; ok is false when there was none.
func (s *Store) LastHubBackup(ctx context.Context) (b HubBackup, ok bool, err error) {
	var at int64
	var file string
	err = s.db.QueryRowContext(ctx, `SELECT id, taken_at, file, size, sha256 FROM hubitat_backups ORDER BY taken_at DESC, id DESC LIMIT 1`).
		Scan(&b.ID, &at, &file, &b.Size, &b.SHA256)
	if errors.Is(err, sql.ErrNoRows) {
		return HubBackup{}, false, nil
	}
	if err != nil {
		return HubBackup{}, false, fmt.Errorf("store: last hub backup: %w", err)
	}
	b.TakenAt = store.TimeOf(at)
	if file != "" {
		dir, err := s.backupDir(ctx)
		if err != nil {
			return HubBackup{}, false, err
		}
		b.Path = filepath.Join(dir, file)
	}
	return b, true, nil
}

// backupDir is the backup folder beside the database file, which SQLite names for us.
func (s *Store) backupDir(ctx context.Context) (string, error) {
	rows, err := s.db.QueryContext(ctx, `PRAGMA database_list`)
	if err != nil {
		return "", fmt.Errorf("store: locate database: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int
		var name, file string
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return "", fmt.Errorf("store: locate database: %w", err)
		}
		if name == "main" && file != "" {
			return filepath.Join(filepath.Dir(file), hubBackupDir), nil
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("store: locate database: %w", err)
	}
	return "", errors.New("store: the database has no file, so hub backups have nowhere to go")
}
