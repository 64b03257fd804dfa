package recorder

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"
)

// Schema versions: 43 introduced states_meta, the layout every query here relies on; 52
// (Home Assistant 2025.11, which added statistics_meta.unit_class) is the newest checked
// against HA's db_schema.py. Versions after it have kept the tables and columns used here,
// so a newer version is read as it is (and purged offline once purgeLayout finds every
// column); only a version before MinSchemaVersion has a layout this package does not know.
const (
	MinSchemaVersion = 43
	MaxSchemaVersion = 52
)

// exactCountBelow: tables whose rowid range is below this are counted
// exactly; COUNT(*) on them takes milliseconds even on a 10 GB file.
const exactCountBelow = 200_000

// Info describes the database without scanning it: every figure comes from
// the file system, a PRAGMA, an index edge or a small table.
type Info struct {
	Path          string       `json:"path"`
	FileBytes     int64        `json:"file_bytes"`
	WALBytes      int64        `json:"wal_bytes"` // 0 when there is no -wal file
	PageSize      int64        `json:"page_size"`
	PageCount     int64        `json:"page_count"`
	FreePages     int64        `json:"free_pages"` // reusable; VACUUM (HA's repack) returns them
	JournalMode   string       `json:"journal_mode"`
	SchemaVersion int          `json:"schema_version"`
	SchemaKnown   bool         `json:"schema_known"` // ≥ MinSchemaVersion: a layout this package reads
	Tables        []TableCount `json:"tables"`
	Entities      int64        `json:"entities"`   // rows in states_meta
	Statistics    int64        `json:"statistics"` // rows in statistics_meta
	OldestState   *time.Time   `json:"oldest_state,omitempty"`
	NewestState   *time.Time   `json:"newest_state,omitempty"`
}

// TableCount is one table's row count. Estimated counts are the span of
// rowids (MAX - MIN + 1, two index lookups): exact when no row in between
// was deleted, which is what HA's purge, deleting oldest first, leaves.
type TableCount struct {
	Name      string `json:"name"`
	Rows      int64  `json:"rows"`
	Estimated bool   `json:"estimated"`
	Method    string `json:"method"` // "count" | "rowid_range"
}

// Info reports size, schema version, row counts, and the time span of the
// states; it stays fast on a 10 GB file.
func (db *DB) Info(ctx context.Context) (*Info, error) {
	ctx, cancel := context.WithTimeout(ctx, db.opts.StatementTimeout)
	defer cancel()
	in := &Info{Path: db.path}
	fi, err := os.Stat(db.path)
	if err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	in.FileBytes = fi.Size()
	if wal, err := os.Stat(db.path + "-wal"); err == nil {
		in.WALBytes = wal.Size()
	}
	if in.SchemaVersion, err = db.schemaVersion(ctx); err != nil {
		return nil, err
	}
	in.SchemaKnown = in.SchemaVersion >= MinSchemaVersion
	for _, p := range []struct {
		q   string
		dst any
	}{
		{"PRAGMA page_size", &in.PageSize},
		{"PRAGMA page_count", &in.PageCount},
		{"PRAGMA freelist_count", &in.FreePages},
		{"PRAGMA journal_mode", &in.JournalMode},
		{"SELECT COUNT(*) FROM states_meta", &in.Entities},
		{"SELECT COUNT(*) FROM statistics_meta", &in.Statistics},
	} {
		if err := db.r.QueryRowContext(ctx, p.q).Scan(p.dst); err != nil {
			return nil, fmt.Errorf("recorder: info: %s: %w", p.q, db.runError(ctx, err))
		}
	}
	// Separate statements: SQLite turns MIN or MAX alone into one index-edge
	// lookup, but scans the whole table for MIN and MAX together.
	var oldest, newest sql.NullFloat64
	if err := db.r.QueryRowContext(ctx, "SELECT MIN(last_updated_ts) FROM states").Scan(&oldest); err != nil {
		return nil, fmt.Errorf("recorder: info: oldest state: %w", db.runError(ctx, err))
	}
	if err := db.r.QueryRowContext(ctx, "SELECT MAX(last_updated_ts) FROM states").Scan(&newest); err != nil {
		return nil, fmt.Errorf("recorder: info: newest state: %w", db.runError(ctx, err))
	}
	if oldest.Valid && newest.Valid {
		o, n := fromTS(oldest.Float64), fromTS(newest.Float64)
		in.OldestState, in.NewestState = &o, &n
	}
	if in.Tables, err = db.tableCounts(ctx); err != nil {
		return nil, err
	}
	return in, nil
}

func (db *DB) tableCounts(ctx context.Context) ([]TableCount, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("recorder: info: list tables: %w", db.runError(ctx, err))
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, db.runError(ctx, err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, db.runError(ctx, err)
	}
	out := make([]TableCount, 0, len(names))
	for _, n := range names {
		tc := TableCount{Name: n, Method: "count"}
		q := quoteIdent(n)
		var lo, hi sql.NullInt64
		// Two statements for two index-edge lookups (see Info). A WITHOUT
		// ROWID table fails here and is counted; none is big in HA's schema.
		err := db.r.QueryRowContext(ctx, "SELECT MIN(rowid) FROM "+q).Scan(&lo)
		if err == nil {
			err = db.r.QueryRowContext(ctx, "SELECT MAX(rowid) FROM "+q).Scan(&hi)
		}
		if err == nil && lo.Valid && hi.Int64-lo.Int64+1 >= exactCountBelow {
			tc.Rows, tc.Estimated, tc.Method = hi.Int64-lo.Int64+1, true, "rowid_range"
		} else if err := db.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+q).Scan(&tc.Rows); err != nil {
			return nil, fmt.Errorf("recorder: info: count %s: %w", n, db.runError(ctx, err))
		}
		out = append(out, tc)
	}
	return out, nil
}

// quoteIdent quotes a table name taken from sqlite_schema.
func quoteIdent(s string) string {
	out := []byte{'"'}
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}
