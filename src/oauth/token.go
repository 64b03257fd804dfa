package oauth

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"
)

// tokenErr is an RFC 6749 §5.2 error from a grant.
type tokenErr struct {
	status     int
	code, desc string
}

func (e *tokenErr) Error() string { return e.code + ": " + e.desc }

func grantErr(desc string) *tokenErr { return &tokenErr{http.StatusBadRequest, "invalid_grant", desc} }

// tokenResponse is the successful answer of POST /token.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

// token is POST /token: authorization_code and refresh_token grants.
func (s *Server) token(c echo.Context) error {
	s.sweep(c.Request().Context())
	r := c.Request()
	if err := r.ParseForm(); err != nil {
		return oauthError(c, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
	}
	form := r.PostForm
	for _, p := range []string{"grant_type", "code", "code_verifier", "redirect_uri", "refresh_token", "client_id", "client_secret", "scope"} {
		if len(form[p]) > 1 {
			return oauthError(c, http.StatusBadRequest, "invalid_request", p+" appears more than once")
		}
	}
	clientID, terr := s.authenticateClient(r.Context(), r, form)
	if terr != nil {
		return s.tokenFailure(c, terr)
	}
	var (
		resp *tokenResponse
		err  error
	)
	switch form.Get("grant_type") {
	case "authorization_code":
		resp, err = s.grantCode(r.Context(), clientID, form)
	case "refresh_token":
		resp, err = s.grantRefresh(r.Context(), clientID, form)
	case "":
		return oauthError(c, http.StatusBadRequest, "invalid_request", "grant_type is required: authorization_code or refresh_token")
	default:
		return oauthError(c, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
	if err != nil {
		var te *tokenErr
		if errors.As(err, &te) {
			return s.tokenFailure(c, te)
		}
		return s.serverError(c, "issue tokens", err)
	}
	noStore(c)
	return c.JSON(http.StatusOK, resp)
}

func (s *Server) tokenFailure(c echo.Context, te *tokenErr) error {
	if te.status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Basic realm="hamcp"`)
	}
	return oauthError(c, te.status, te.code, te.desc)
}

// authenticateClient identifies the client of a token or revocation request. Public clients (and
// every metadata-document client) only name themselves; registered confidential clients must also
// prove their secret, in the body or with HTTP Basic. An unknown client gets invalid_client, which
// makes Claude register again.
func (s *Server) authenticateClient(ctx context.Context, r *http.Request, form url.Values) (string, *tokenErr) {
	clientID, secret := form.Get("client_id"), form.Get("client_secret")
	if user, pass, ok := r.BasicAuth(); ok {
		u, err1 := url.QueryUnescape(user)
		p, err2 := url.QueryUnescape(pass)
		if err1 != nil || err2 != nil || (clientID != "" && clientID != u) {
			return "", &tokenErr{http.StatusUnauthorized, "invalid_client", "the Basic credentials are malformed or name another client"}
		}
		clientID, secret = u, p
	}
	if clientID == "" {
		return "", &tokenErr{http.StatusUnauthorized, "invalid_client", "client_id is required"}
	}
	if isURLClientID(clientID) {
		return clientID, nil // metadata-document clients are public; the code or token binds them
	}
	cl, err := s.lookupClient(ctx, clientID)
	if errors.Is(err, errUnknownClient) {
		return "", &tokenErr{http.StatusUnauthorized, "invalid_client", "this client is not registered (any more); register again"}
	}
	if err != nil {
		return "", &tokenErr{http.StatusInternalServerError, "server_error", "hamcp could not read its client list"}
	}
	if cl.SecretHash != "" && subtle.ConstantTimeCompare([]byte(hashSecret(secret)), []byte(cl.SecretHash)) != 1 {
		return "", &tokenErr{http.StatusUnauthorized, "invalid_client", "client authentication failed: send the client_secret issued at registration"}
	}
	return clientID, nil
}

// grantCode redeems an authorization code. The code is marked used before anything is checked, so
// a failed attempt also spends it; a second redemption revokes every token the first one issued.
func (s *Server) grantCode(ctx context.Context, clientID string, form url.Values) (*tokenResponse, error) {
	code := form.Get("code")
	if code == "" {
		return nil, &tokenErr{http.StatusBadRequest, "invalid_request", "code is required"}
	}
	now := s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var (
		row           codeRow
		usedAt        int64
		redirectGiven bool
	)
	err = tx.QueryRowContext(ctx, `SELECT client_id, redirect_uri, redirect_given, code_challenge, scope, resource,
		user_id, user_name, refresh, expires_at, used_at, family_id FROM oauth_codes WHERE code_hash = ?`, hashSecret(code)).
		Scan(&row.clientID, &row.redirectURI, &redirectGiven, &row.challenge, &row.scope, &row.resource,
			&row.userID, &row.userName, &row.refresh, &row.expiresAt, &usedAt, &row.familyID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, grantErr("the authorization code is unknown or expired; sign in again")
	}
	if err != nil {
		return nil, err
	}
	if usedAt != 0 {
		if row.familyID != "" {
			if err := revokeFamily(ctx, tx, row.familyID, now); err != nil {
				return nil, err
			}
			s.log.Warn("oauth: authorization code used twice; the grant it issued is revoked", "client_id", row.clientID, "grant", row.familyID)
		}
		if err := tx.Commit(); err != nil {
			return nil, err
		}
		return nil, grantErr("the authorization code was already used; every token issued from it has been revoked")
	}
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_codes SET used_at = ? WHERE code_hash = ?`, now.UnixMilli(), hashSecret(code)); err != nil {
		return nil, err
	}
	if cerr := s.checkCode(row, redirectGiven, clientID, form, now); cerr != nil {
		if err := tx.Commit(); err != nil {
			return nil, err
		}
		return nil, cerr
	}
	fam := family{id: "g_" + randomHex(16), clientID: row.clientID, userID: row.userID, userName: row.userName,
		scope: row.scope, resource: row.resource, refresh: row.refresh}
	if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_families (family_id, client_id, user_id, user_name, scope, resource, refresh, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, fam.id, fam.clientID, fam.userID, fam.userName, fam.scope, fam.resource, fam.refresh, now.UnixMilli()); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_codes SET family_id = ? WHERE code_hash = ?`, fam.id, hashSecret(code)); err != nil {
		return nil, err
	}
	resp, err := s.issueTokens(ctx, tx, fam, now)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?`, now.UnixMilli(), row.clientID); err != nil {
		return nil, err
	}
	return resp, tx.Commit()
}

type codeRow struct {
	clientID, redirectURI, challenge, scope, resource, userID, userName, familyID string
	refresh                                                                       bool
	expiresAt                                                                     int64
}

// checkCode verifies everything a code is bound to: its life, client, redirect URI, PKCE verifier
// and resource.
func (s *Server) checkCode(row codeRow, redirectGiven bool, clientID string, form url.Values, now time.Time) *tokenErr {
	switch {
	case now.UnixMilli() >= row.expiresAt:
		return grantErr("the authorization code expired (codes live 10 minutes); sign in again")
	case row.clientID != clientID:
		return grantErr("the authorization code was issued to another client")
	case (redirectGiven || form.Has("redirect_uri")) && form.Get("redirect_uri") != row.redirectURI:
		return grantErr("redirect_uri does not match the one in the authorization request")
	case form.Get("code_verifier") == "":
		return &tokenErr{http.StatusBadRequest, "invalid_request", "code_verifier is required (PKCE)"}
	case !verifyPKCE(form.Get("code_verifier"), row.challenge):
		return grantErr("code_verifier does not match the code_challenge of the authorization request")
	}
	if err := s.checkResource(form["resource"]); err != nil {
		return &tokenErr{http.StatusBadRequest, "invalid_target", err.Error()}
	}
	return nil
}

// grantRefresh rotates a refresh token. Presenting one that was already rotated means it was copied:
// the whole family is revoked, the thief's tokens and the rightful client's alike.
func (s *Server) grantRefresh(ctx context.Context, clientID string, form url.Values) (*tokenResponse, error) {
	token := form.Get("refresh_token")
	if token == "" {
		return nil, &tokenErr{http.StatusBadRequest, "invalid_request", "refresh_token is required"}
	}
	now := s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var (
		fam                        family
		expiresAt, usedAt, revoked int64
	)
	err = tx.QueryRowContext(ctx, `SELECT r.expires_at, r.used_at, f.family_id, f.client_id, f.user_id, f.user_name,
		f.scope, f.resource, f.refresh, f.revoked_at
		FROM oauth_refresh_tokens r JOIN oauth_families f ON f.family_id = r.family_id WHERE r.token_hash = ?`, hashSecret(token)).
		Scan(&expiresAt, &usedAt, &fam.id, &fam.clientID, &fam.userID, &fam.userName, &fam.scope, &fam.resource, &fam.refresh, &revoked)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, grantErr("the refresh token is unknown or expired; sign in again")
	case err != nil:
		return nil, err
	case revoked != 0:
		return nil, grantErr("this grant was revoked; sign in again")
	case usedAt != 0:
		if err := revokeFamily(ctx, tx, fam.id, now); err != nil {
			return nil, err
		}
		if err := tx.Commit(); err != nil {
			return nil, err
		}
		s.log.Warn("oauth: a rotated refresh token was used again; the grant is revoked", "client_id", fam.clientID, "user", fam.userName, "grant", fam.id)
		return nil, grantErr("the refresh token was already used; the grant has been revoked, sign in again")
	case now.UnixMilli() >= expiresAt:
		return nil, grantErr("the refresh token expired; sign in again")
	case fam.clientID != clientID:
		return nil, grantErr("the refresh token was issued to another client")
	}
	if form.Has("scope") {
		want, err := parseScope(form.Get("scope"))
		if err != nil || !scopeWithin(want, fam.scope) {
			return nil, &tokenErr{http.StatusBadRequest, "invalid_scope", "a refresh may keep or narrow the granted scope " + fam.scope + ", not widen it"}
		}
	}
	if err := s.checkResource(form["resource"]); err != nil {
		return nil, &tokenErr{http.StatusBadRequest, "invalid_target", err.Error()}
	}
	res, err := tx.ExecContext(ctx, `UPDATE oauth_refresh_tokens SET used_at = ? WHERE token_hash = ? AND used_at = 0`, now.UnixMilli(), hashSecret(token))
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, grantErr("the refresh token was already used")
	}
	resp, err := s.issueTokens(ctx, tx, fam, now)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?`, now.UnixMilli(), fam.clientID); err != nil {
		return nil, err
	}
	return resp, tx.Commit()
}
