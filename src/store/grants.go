package store

import (
	"context"
	"fmt"
	"time"
)

// GrantRecord is a permission grant that must survive a restart: one held by a token (sessionless HTTP),
// not by an MCP session, which ends with the process anyway.
type GrantRecord struct {
	Key       string // the token's grant key, never the token itself
	Category  string
	Via       string
	GrantedAt time.Time
	ExpiresAt time.Time
}

// SaveGrant records g, replacing any grant the key already held for that category.
func (s *Store) SaveGrant(ctx context.Context, g GrantRecord) error {
	if g.Key == "" || g.Category == "" {
		return fmt.Errorf("store: save grant: key and category are required (got key %q, category %q)", g.Key, g.Category)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO permission_grants (grant_key, category, via, granted_at, expires_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (grant_key, category) DO UPDATE SET
			via = excluded.via, granted_at = excluded.granted_at, expires_at = excluded.expires_at`,
		g.Key, g.Category, g.Via, Millis(g.GrantedAt), Millis(g.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: save grant: %w", err)
	}
	return nil
}

// DeleteGrant removes the key's grant for one category, if any.
func (s *Store) DeleteGrant(ctx context.Context, key, category string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM permission_grants WHERE grant_key = ? AND category = ?`, key, category); err != nil {
		return fmt.Errorf("store: delete grant: %w", err)
	}
	return nil
}

// DeleteGrants removes every grant the key holds (its token was revoked or its session ended).
func (s *Store) DeleteGrants(ctx context.Context, key string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM permission_grants WHERE grant_key = ?`, key); err != nil {
		return fmt.Errorf("store: delete grants: %w", err)
	}
	return nil
}

// LoadGrants drops grants that expired by now and returns the rest.
func (s *Store) LoadGrants(ctx context.Context, now time.Time) ([]GrantRecord, error) {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM permission_grants WHERE expires_at <= ?`, Millis(now)); err != nil {
		return nil, fmt.Errorf("store: prune grants: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT grant_key, category, via, granted_at, expires_at
		FROM permission_grants ORDER BY grant_key, category`)
	if err != nil {
		return nil, fmt.Errorf("store: load grants: %w", err)
	}
	defer rows.Close()
	var out []GrantRecord
	for rows.Next() {
		var g GrantRecord
		var granted, expires int64
		if err := rows.Scan(&g.Key, &g.Category, &g.Via, &granted, &expires); err != nil {
			return nil, fmt.Errorf("store: read grant row: %w", err)
		}
		g.GrantedAt, g.ExpiresAt = TimeOf(granted), TimeOf(expires)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: load grants: %w", err)
	}
	return out, nil
}
