package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// GrantInfo is one live grant (one consent) as the panel shows it. It carries no token, hash or
// grant id: Ref is a short digest of the id, enough to name the grant to RevokeGrant and nothing else.
type GrantInfo struct {
	Ref        string    `json:"ref"`
	ClientID   string    `json:"client_id"` // public: a registration id or a metadata document URL
	ClientName string    `json:"client_name,omitempty"`
	UserID     string    `json:"user_id"`
	UserName   string    `json:"user_name,omitempty"`
	Scope      string    `json:"scope"`
	Created    time.Time `json:"created"`
	// LastUsed is when the grant last had a token issued (sign-in or refresh); zero if unknown.
	LastUsed time.Time `json:"last_used,omitzero"`
	Ends     time.Time `json:"ends"` // the grant's absolute end (Options.GrantLifetime)
}

// ClientInfo is one registered client.
type ClientInfo struct {
	ClientID string    `json:"client_id"`
	Name     string    `json:"name,omitempty"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used,omitzero"`
	Grants   int       `json:"grants"` // live grants
}

// ErrUnknownGrant is RevokeGrant's answer for a reference that names no live grant.
var ErrUnknownGrant = errors.New("oauth: no such grant: it was revoked or has ended")

// grantRef names a grant in the panel without giving away its id.
func grantRef(familyID string) string {
	sum := sha256.Sum256([]byte("hamcp-panel-grant:" + familyID))
	return hex.EncodeToString(sum[:8])
}

// liveFamilies is the condition for grants that can still be used.
const liveFamilies = `f.revoked_at = 0 AND f.created_at > ? AND (
	EXISTS (SELECT 1 FROM oauth_access_tokens a WHERE a.family_id = f.family_id AND a.expires_at > ?) OR
	EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.family_id = f.family_id AND r.expires_at > ? AND r.used_at = 0))`

// Grants lists the live grants, newest first.
func (s *Server) Grants(ctx context.Context) ([]GrantInfo, error) {
	now := s.now()
	ms := now.UnixMilli()
	rows, err := s.db.QueryContext(ctx, `SELECT f.family_id, f.client_id, COALESCE(c.name, ''), f.user_id, f.user_name, f.scope, f.created_at,
		COALESCE((SELECT max(a.expires_at) FROM oauth_access_tokens a WHERE a.family_id = f.family_id), 0)
		FROM oauth_families f LEFT JOIN oauth_clients c ON c.client_id = f.client_id
		WHERE `+liveFamilies+` ORDER BY f.created_at DESC LIMIT 500`,
		now.Add(-s.o.GrantLifetime).UnixMilli(), ms, ms)
	if err != nil {
		return nil, fmt.Errorf("oauth: list grants: %w", err)
	}
	defer rows.Close()
	out := []GrantInfo{}
	for rows.Next() {
		var g GrantInfo
		var id string
		var created, lastExp int64
		if err := rows.Scan(&id, &g.ClientID, &g.ClientName, &g.UserID, &g.UserName, &g.Scope, &created, &lastExp); err != nil {
			return nil, fmt.Errorf("oauth: list grants: %w", err)
		}
		g.Ref, g.Created = grantRef(id), time.UnixMilli(created)
		g.Ends = g.Created.Add(s.o.GrantLifetime)
		if lastExp > 0 {
			// An access token lives AccessTTL from its issue, or up to the grant's end if that is sooner.
			issued := time.UnixMilli(lastExp).Add(-s.o.AccessTTL)
			if issued.Before(g.Created) {
				issued = g.Created
			}
			g.LastUsed = issued
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// Clients lists the registered clients, most recently used first.
func (s *Server) Clients(ctx context.Context) ([]ClientInfo, error) {
	now := s.now()
	ms := now.UnixMilli()
	rows, err := s.db.QueryContext(ctx, `SELECT c.client_id, c.name, c.created_at, c.last_used_at,
		(SELECT count(*) FROM oauth_families f WHERE f.client_id = c.client_id AND `+liveFamilies+`)
		FROM oauth_clients c ORDER BY max(c.last_used_at, c.created_at) DESC LIMIT 500`,
		now.Add(-s.o.GrantLifetime).UnixMilli(), ms, ms)
	if err != nil {
		return nil, fmt.Errorf("oauth: list clients: %w", err)
	}
	defer rows.Close()
	out := []ClientInfo{}
	for rows.Next() {
		var c ClientInfo
		var created, used int64
		if err := rows.Scan(&c.ClientID, &c.Name, &created, &used, &c.Grants); err != nil {
			return nil, fmt.Errorf("oauth: list clients: %w", err)
		}
		c.Created = time.UnixMilli(created)
		if used > 0 {
			c.LastUsed = time.UnixMilli(used)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// RevokeGrant ends the grant Grants listed under ref: its access tokens stop working at once and its
// refresh tokens are refused. It returns what was revoked, for the caller's audit entry.
func (s *Server) RevokeGrant(ctx context.Context, ref string) (GrantInfo, error) {
	grants, err := s.Grants(ctx)
	if err != nil {
		return GrantInfo{}, err
	}
	var found *GrantInfo
	for i := range grants {
		if grants[i].Ref == ref {
			found = &grants[i]
		}
	}
	if found == nil || ref == "" {
		return GrantInfo{}, ErrUnknownGrant
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return GrantInfo{}, fmt.Errorf("oauth: revoke grant: %w", err)
	}
	defer tx.Rollback()
	// The ref is a digest: find the id among the live grants of that client and user.
	rows, err := tx.QueryContext(ctx, `SELECT family_id FROM oauth_families WHERE client_id = ? AND user_id = ? AND revoked_at = 0`,
		found.ClientID, found.UserID)
	if err != nil {
		return GrantInfo{}, fmt.Errorf("oauth: revoke grant: %w", err)
	}
	var id string
	for rows.Next() {
		var cand string
		if err := rows.Scan(&cand); err != nil {
			rows.Close()
			return GrantInfo{}, fmt.Errorf("oauth: revoke grant: %w", err)
		}
		if grantRef(cand) == ref {
			id = cand
		}
	}
	rows.Close()
	if id == "" {
		return GrantInfo{}, ErrUnknownGrant
	}
	if err := revokeFamily(ctx, tx, id, s.now()); err != nil {
		return GrantInfo{}, fmt.Errorf("oauth: revoke grant: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return GrantInfo{}, fmt.Errorf("oauth: revoke grant: %w", err)
	}
	s.log.Info("oauth: grant revoked in the panel", "client_id", found.ClientID, "grant", ref)
	return *found, nil
}
