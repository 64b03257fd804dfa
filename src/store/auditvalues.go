package store

import (
	"context"
	"fmt"
)

// AuditColumn names a column whose values AuditValues lists.
type AuditColumn string

// Columns the panel's audit filters offer.
const (
	AuditSession  AuditColumn = "session_id"
	AuditClient   AuditColumn = "client"
	AuditTool     AuditColumn = "tool"
	AuditCategory AuditColumn = "category"
	AuditOutcome  AuditColumn = "outcome"
	AuditKind     AuditColumn = "kind"
)

// AuditValues lists the distinct non-empty values of one column, most recently seen first, at most
// limit of them: the choices of a filter.
func (s *Store) AuditValues(ctx context.Context, col AuditColumn, limit int) ([]string, error) {
	switch col {
	case AuditSession, AuditClient, AuditTool, AuditCategory, AuditOutcome, AuditKind:
	default:
		return nil, fmt.Errorf("store: audit column %q cannot be listed: use session_id, client, tool, category, outcome or kind", col)
	}
	if limit <= 0 || limit > MaxAuditLimit {
		limit = DefaultAuditLimit
	}
	c := string(col) // one of the constants above, never caller text
	rows, err := s.db.QueryContext(ctx, `SELECT `+c+` FROM audit_log WHERE `+c+` != '' GROUP BY `+c+
		` ORDER BY max(time) DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list audit %s values: %w", col, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("store: list audit %s values: %w", col, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
