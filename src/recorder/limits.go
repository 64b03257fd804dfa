package recorder

import (
	"context"
	"database/sql"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Engine limits on every connection that runs a statement someone else wrote, so that one query cannot
// make SQLite build a value or a row of any size (SELECT zeroblob(500000000), randomblob, printf or
// group_concat of a cross join): SQLite refuses with "string or blob too big" before allocating.
const (
	// maxValueBytes bounds one string or BLOB, and a row SQLite serialises (sorting, temp tables). Home
	// Assistant's own values are at most 16 KiB (attributes, event data).
	maxValueBytes = 1 << 20
	// maxColumns bounds the columns of a result (and so the values one row holds at once); recorder
	// tables have at most 20 and a join of three of them fits.
	maxColumns = 64
)

// DefaultMaxResultBytes is the default budget of one page of rows, measured while reading them.
const DefaultMaxResultBytes = 2 << 20

// limitedConn takes a connection from pool and applies the engine limits to it. Limits belong to a
// connection, and the pool opens and closes connections at will, so they are set on every use.
func limitedConn(ctx context.Context, pool *sql.DB) (*sql.Conn, error) {
	c, err := pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range []struct{ id, v int }{{sqlite3.SQLITE_LIMIT_LENGTH, maxValueBytes}, {sqlite3.SQLITE_LIMIT_COLUMN, maxColumns}} {
		if _, err := sqlite.Limit(c, l.id, l.v); err != nil {
			c.Close()
			return nil, fmt.Errorf("recorder: setting SQLite's limits: %w", err)
		}
	}
	return c, nil
}

// budget counts the bytes a page of rows holds while it is read, so a query stops at the response cap
// instead of holding everything it matched first.
type budget struct {
	max, used int
}

// add charges one cell (after jsonValue cut it) and reports whether the page is still within budget.
func (b *budget) add(v any) bool {
	switch x := v.(type) {
	case string:
		b.used += len(x) + 3 // quotes and comma
	case Blob:
		b.used += len(x.Hex) + len(x.Base64) + 40 // the object's keys
	default:
		b.used += 24 // numbers, null
	}
	return b.used <= b.max
}

func (b *budget) err() error {
	return fmt.Errorf("the result passed %d KB (the limit of one answer): add LIMIT or select fewer columns, or page with a smaller limit", b.max>>10)
}
