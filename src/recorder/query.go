package recorder

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// maxCellBytes caps one TEXT or BLOB value in a result; state_attributes
// rows are at most 16 KiB, so only odd data ever reaches it.
const maxCellBytes = 64 << 10

// Result is one page of a read statement's rows.
type Result struct {
	Columns    []string `json:"columns"`
	Rows       [][]any  `json:"rows"` // int64, float64, string, nil, Blob; DATETIME as ISO-8601 UTC text
	Count      int      `json:"count"`
	Offset     int      `json:"offset"`
	Truncated  bool     `json:"truncated"`             // more rows follow this page
	NextOffset int      `json:"next_offset,omitempty"` // offset of the next page when Truncated
	Warnings   []string `json:"warnings,omitempty"`
}

// Blob is how a BLOB value appears in a Result: hex when short (context ids
// are 16 bytes, and hex pastes straight into x'…' literals), base64 when
// long. The object shape marks it as a BLOB, never confused with text.
type Blob struct {
	Hex       string `json:"blob_hex,omitempty"`
	Base64    string `json:"blob_base64,omitempty"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Query runs one read statement and returns the page of rows at offset:
// at most limit rows (0 => MaxRows; more than MaxRows is capped with a
// warning). Each page re-runs the statement and skips offset rows, so no
// read transaction outlives the call. Args bind to ?, ?N, :name parameters
// (JSON numbers that are whole become integers).
func (db *DB) Query(ctx context.Context, sqlText string, args []any, limit, offset int) (*Result, error) {
	st, err := Classify(sqlText)
	if err != nil {
		return nil, err
	}
	if err := st.RequireRead(); err != nil {
		return nil, err
	}
	return db.query(ctx, st, sqlText, args, limit, offset)
}

// query runs sqlText on the read pool without the text guard; the pool's
// mode=ro, query_only and authorizer still apply (tests rely on that).
func (db *DB) query(ctx context.Context, st Statement, sqlText string, args []any, limit, offset int) (*Result, error) {
	bound, err := bindArgs(args)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("offset: %d is negative; use 0, or next_offset from the previous page", offset)
	}
	res := &Result{Offset: offset, Rows: [][]any{}}
	switch {
	case limit < 0:
		return nil, fmt.Errorf("limit: %d is negative; use 1..%d", limit, db.opts.MaxRows)
	case limit == 0:
		limit = db.opts.MaxRows
	case limit > db.opts.MaxRows:
		res.Warnings = append(res.Warnings, fmt.Sprintf("limit %d is above the cap: returning at most %d rows per page", limit, db.opts.MaxRows))
		limit = db.opts.MaxRows
	}
	if st.Kind == KindRead && !st.HasLimit {
		res.Warnings = append(res.Warnings, fmt.Sprintf("SELECT without LIMIT: capped at %d rows per page; add LIMIT, or page with offset", limit))
	}
	ctx, cancel := context.WithTimeout(ctx, db.opts.StatementTimeout)
	defer cancel()
	conn, err := limitedConn(ctx, db.r)
	if err != nil {
		return nil, db.runError(ctx, err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, sqlText, bound...)
	if err != nil {
		return nil, db.runError(ctx, err)
	}
	defer rows.Close()
	if res.Columns, err = rows.Columns(); err != nil {
		return nil, err
	}
	cells := make([]any, len(res.Columns))
	ptrs := make([]any, len(cells))
	for i := range cells {
		ptrs[i] = &cells[i]
	}
	for skipped := 0; skipped < offset && rows.Next(); skipped++ {
	}
	spent := budget{max: db.opts.MaxResultBytes}
	for rows.Next() {
		if len(res.Rows) == limit {
			res.Truncated, res.NextOffset = true, offset+limit
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, db.runError(ctx, err)
		}
		row := make([]any, len(cells))
		for i, v := range cells {
			var cut bool
			row[i], cut = jsonValue(v)
			cells[i] = nil // the scanned value may be a large copy; keep only the cut one
			if !spent.add(row[i]) {
				return nil, spent.err()
			}
			if cut {
				res.Warnings = append(res.Warnings, fmt.Sprintf("row %d column %s: value cut to %d bytes; select substr(%s, %d) for the rest",
					offset+len(res.Rows), res.Columns[i], maxCellBytes, res.Columns[i], maxCellBytes+1))
			}
		}
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, db.runError(ctx, err)
	}
	res.Count = len(res.Rows)
	return res, nil
}

// runError explains a failed read: our statement timeout, the caller's
// cancellation, or SQLite's own message (an authorizer refusal included).
func (db *DB) runError(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("query stopped after the %s statement timeout: narrow it (filter states on metadata_id and last_updated_ts, which are indexed) or add LIMIT: %w",
			db.opts.StatementTimeout, context.DeadlineExceeded)
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("query cancelled: %w", context.Canceled)
	}
	return fmt.Errorf("sqlite: %w", readError(err))
}

// bindArgs turns JSON-decoded values into SQL parameters.
func bindArgs(args []any) ([]any, error) {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil, string, int64, []byte:
			out[i] = v
		case bool: // SQLite has no boolean type: true is 1
			out[i] = int64(0)
			if v {
				out[i] = int64(1)
			}
		case int:
			out[i] = int64(v)
		case float64:
			if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
				out[i] = int64(v)
			} else {
				out[i] = v
			}
		case sql.NamedArg:
			inner, err := bindArgs([]any{v.Value})
			if err != nil {
				return nil, fmt.Errorf("args[%d] (%s): %w", i, v.Name, err)
			}
			out[i] = sql.Named(v.Name, inner[0])
		default:
			return nil, fmt.Errorf("args[%d]: a %T is not a SQL value; pass a string, number, boolean or null", i, a)
		}
	}
	return out, nil
}

// jsonValue makes a driver value safe for JSON, reporting whether it cut a
// long value.
func jsonValue(v any) (any, bool) {
	switch x := v.(type) {
	case []byte:
		b := Blob{Bytes: len(x)}
		if len(x) > maxCellBytes {
			x, b.Truncated = x[:maxCellBytes], true
		}
		if len(x) <= 32 {
			b.Hex = hex.EncodeToString(x)
		} else {
			b.Base64 = base64.StdEncoding.EncodeToString(x)
		}
		return b, b.Truncated
	case string:
		if len(x) > maxCellBytes {
			cut := maxCellBytes
			for cut > 0 && !utf8.RuneStart(x[cut]) {
				cut--
			}
			return x[:cut], true
		}
		return x, false
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "Infinity", false
		case math.IsInf(x, -1):
			return "-Infinity", false
		}
		return x, false
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano), false
	case bool:
		if x {
			return int64(1), false
		}
		return int64(0), false
	}
	return v, false
}
