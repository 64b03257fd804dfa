package oauth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/hamcp/hamcp/src/authn"
)

// family is one grant: what a user approved for a client, and every token issued under it.
type family struct {
	id, clientID, userID, userName, scope, resource string
	refresh                                         bool
	created                                         time.Time
}

// end is when the grant stops, however often it was refreshed (Options.GrantLifetime).
func (s *Server) grantEnd(f family) time.Time { return f.created.Add(s.o.GrantLifetime) }

func (s *Server) issueTokens(ctx context.Context, tx *sql.Tx, f family, now time.Time) (*tokenResponse, error) {
	end := s.grantEnd(f)
	accessExp := now.Add(s.o.AccessTTL)
	if accessExp.After(end) {
		accessExp = end
	}
	access := newSecret(accessPrefix)
	if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_access_tokens (token_hash, family_id, expires_at) VALUES (?, ?, ?)`,
		hashSecret(access), f.id, accessExp.UnixMilli()); err != nil {
		return nil, err
	}
	resp := &tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(accessExp.Sub(now).Seconds()), Scope: f.scope}
	if f.refresh {
		refreshExp := now.Add(s.o.RefreshTTL)
		if refreshExp.After(end) {
			refreshExp = end
		}
		resp.RefreshToken = newSecret(refreshPrefix)
		if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_refresh_tokens (token_hash, family_id, expires_at) VALUES (?, ?, ?)`,
			hashSecret(resp.RefreshToken), f.id, refreshExp.UnixMilli()); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// revokeFamily ends a grant: its access tokens stop working at once and its refresh tokens are
// refused (their rows stay until they expire, so a late reuse is still recognised).
func revokeFamily(ctx context.Context, tx *sql.Tx, familyID string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_families SET revoked_at = ? WHERE family_id = ? AND revoked_at = 0`, now.UnixMilli(), familyID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM oauth_access_tokens WHERE family_id = ?`, familyID)
	return err
}

type verifier struct{ s *Server }

// Verify implements authn.Verifier for hamcp's access tokens.
func (v verifier) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if !strings.HasPrefix(token, accessPrefix) {
		return nil, authn.ErrNotMine
	}
	var (
		expiresAt, revoked, created                                    int64
		familyID, clientID, clientName, userID, userName, scope, resrc string
	)
	err := v.s.db.QueryRowContext(ctx, `SELECT a.expires_at, f.family_id, f.client_id, COALESCE(c.name, ''), f.user_id, f.user_name, f.scope, f.resource, f.revoked_at, f.created_at
		FROM oauth_access_tokens a JOIN oauth_families f ON f.family_id = a.family_id
		LEFT JOIN oauth_clients c ON c.client_id = f.client_id WHERE a.token_hash = ?`, hashSecret(token)).
		Scan(&expiresAt, &familyID, &clientID, &clientName, &userID, &userName, &scope, &resrc, &revoked, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, authn.ErrInvalidToken
	case err != nil:
		return nil, fmt.Errorf("%w: reading the token store: %v", authn.ErrUnavailable, err)
	case revoked != 0, v.s.now().UnixMilli() >= expiresAt:
		return nil, authn.ErrInvalidToken
	case !v.s.now().Before(time.UnixMilli(created).Add(v.s.o.GrantLifetime)):
		// The grant's absolute lifetime, even if the option was shortened after the token was issued.
		return nil, authn.ErrInvalidToken
	case resrc != v.s.resource:
		// Audience check: a token issued for another resource URL (hamcp moved) is not for us.
		return nil, authn.ErrInvalidToken
	}
	p := &authn.Principal{Kind: authn.KindOAuth, UserID: userID, UserName: userName, ClientID: clientID, ClientName: clientName,
		Scopes: strings.Fields(scope), GrantID: familyID}
	return p.TokenInfo(time.UnixMilli(expiresAt)), nil
}

// revoke is POST /revoke (RFC 7009). Revoking either token of a grant ends the whole grant. Unknown
// tokens, and tokens of another client, get the same 200 so the endpoint reveals nothing.
func (s *Server) revoke(c echo.Context) error {
	r := c.Request()
	if err := r.ParseForm(); err != nil {
		return oauthError(c, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
	}
	token := r.PostForm.Get("token")
	if token == "" {
		return oauthError(c, http.StatusBadRequest, "invalid_request", "token is required")
	}
	clientID := ""
	if r.PostForm.Get("client_id") != "" || r.Header.Get("Authorization") != "" {
		id, terr := s.authenticateClient(r.Context(), r, r.PostForm)
		if terr != nil {
			return s.tokenFailure(c, terr)
		}
		clientID = id
	}
	var q string
	switch {
	case strings.HasPrefix(token, accessPrefix):
		q = `SELECT f.family_id, f.client_id FROM oauth_access_tokens a JOIN oauth_families f ON f.family_id = a.family_id WHERE a.token_hash = ?`
	case strings.HasPrefix(token, refreshPrefix):
		q = `SELECT f.family_id, f.client_id FROM oauth_refresh_tokens t JOIN oauth_families f ON f.family_id = t.family_id WHERE t.token_hash = ?`
	default:
		noStore(c)
		return c.NoContent(http.StatusOK)
	}
	ctx := r.Context()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.serverError(c, "revoke the token", err)
	}
	defer tx.Rollback()
	var familyID, owner string
	err = tx.QueryRowContext(ctx, q, hashSecret(token)).Scan(&familyID, &owner)
	if err == nil && (clientID == "" || clientID == owner) {
		if err := revokeFamily(ctx, tx, familyID, s.now()); err != nil {
			return s.serverError(c, "revoke the token", err)
		}
		if err := tx.Commit(); err != nil {
			return s.serverError(c, "revoke the token", err)
		}
		s.log.Info("oauth: grant revoked by its client", "client_id", owner, "grant", familyID)
	} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return s.serverError(c, "revoke the token", err)
	}
	noStore(c)
	return c.NoContent(http.StatusOK)
}

const sweepEvery = 10 * time.Minute

// sweep deletes what can no longer be used, at most every ten minutes, riding on token and
// registration requests so the server needs no background goroutine.
func (s *Server) sweep(ctx context.Context) {
	now := s.now()
	last := s.lastSweep.Load()
	if now.UnixMilli()-last < sweepEvery.Milliseconds() || !s.lastSweep.CompareAndSwap(last, now.UnixMilli()) {
		return
	}
	ms := now.UnixMilli()
	day := (24 * time.Hour).Milliseconds()
	stmts := []struct {
		sql  string
		args []any
	}{
		// Used codes are kept a day past expiry so a late replay still revokes what they issued.
		{`DELETE FROM oauth_codes WHERE expires_at < ?`, []any{ms - day}},
		{`DELETE FROM oauth_access_tokens WHERE expires_at < ?`, []any{ms}},
		{`DELETE FROM oauth_refresh_tokens WHERE expires_at < ?`, []any{ms}},
		{`UPDATE oauth_refresh_tokens SET successor = '' WHERE successor != '' AND used_at < ?`, []any{ms - refreshGrace.Milliseconds()}},
		{`DELETE FROM oauth_families WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.family_id = oauth_families.family_id)
			AND NOT EXISTS (SELECT 1 FROM oauth_access_tokens a WHERE a.family_id = oauth_families.family_id)`, []any{ms - day}},
		// Registrations nobody signed in with within a day, and clients idle longer than a refresh
		// token lives, are gone; Claude registers again when told invalid_client.
		{`DELETE FROM oauth_clients WHERE (last_used_at = 0 AND created_at < ?)
			OR (last_used_at > 0 AND last_used_at < ? AND NOT EXISTS
				(SELECT 1 FROM oauth_families f WHERE f.client_id = oauth_clients.client_id AND f.revoked_at = 0))`,
			[]any{ms - day, ms - s.o.RefreshTTL.Milliseconds() - day}},
	}
	for _, st := range stmts {
		if _, err := s.db.ExecContext(ctx, st.sql, st.args...); err != nil {
			s.log.Warn("oauth: cleanup failed", "err", err)
			return
		}
	}
}
