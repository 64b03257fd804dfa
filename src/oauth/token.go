package oauth

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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
	switch te.status {
	case http.StatusUnauthorized:
		c.Response().Header().Set("WWW-Authenticate", `Basic realm="hamcp"`)
	case http.StatusServiceUnavailable:
		c.Response().Header().Set("Retry-After", "30")
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
		scope: row.scope, resource: row.resource, refresh: row.refresh, created: now}
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

// refreshGrace is how long after a rotation the same client may present the old refresh token
// again and get the same new pair: two concurrent refreshes (Claude's tabs, mcp-remote) and a
// retry after a lost answer are the rightful client, not a thief. Later reuse still revokes.
const refreshGrace = 10 * time.Second

// grantRefresh rotates a refresh token. Presenting one that was already rotated, by another client
// or after refreshGrace, means it was copied: the whole family is revoked, the thief's tokens and
// the rightful client's alike. Before anything is issued Home Assistant confirms the user is still
// an administrator; when HA cannot answer, nothing is issued and the token stays usable.
func (s *Server) grantRefresh(ctx context.Context, clientID string, form url.Values) (*tokenResponse, error) {
	token := form.Get("refresh_token")
	if token == "" {
		return nil, &tokenErr{http.StatusBadRequest, "invalid_request", "refresh_token is required"}
	}
	if err := s.checkResource(form["resource"]); err != nil {
		return nil, &tokenErr{http.StatusBadRequest, "invalid_target", err.Error()}
	}
	// A concurrent refresh that loses the race to rotate sees the winner's rotation on its next
	// pass and takes the grace path; two passes are enough, the third is a safety bound.
	for range 3 {
		resp, lost, err := s.refreshOnce(ctx, clientID, token, form)
		if !lost {
			return resp, err
		}
	}
	return nil, grantErr("the refresh token was already used")
}

// refreshRow is what a refresh needs to know about the presented token and its grant.
type refreshRow struct {
	fam                        family
	expiresAt, usedAt, revoked int64
	successor                  string
}

func (s *Server) readRefresh(ctx context.Context, token string) (refreshRow, error) {
	var (
		r       refreshRow
		created int64
	)
	err := s.db.QueryRowContext(ctx, `SELECT r.expires_at, r.used_at, r.successor, f.family_id, f.client_id, f.user_id, f.user_name,
		f.scope, f.resource, f.refresh, f.revoked_at, f.created_at
		FROM oauth_refresh_tokens r JOIN oauth_families f ON f.family_id = r.family_id WHERE r.token_hash = ?`, hashSecret(token)).
		Scan(&r.expiresAt, &r.usedAt, &r.successor, &r.fam.id, &r.fam.clientID, &r.fam.userID, &r.fam.userName, &r.fam.scope,
			&r.fam.resource, &r.fam.refresh, &r.revoked, &created)
	r.fam.created = time.UnixMilli(created)
	return r, err
}

// refreshOnce is one attempt; lost reports that another request rotated the token between the
// read and the write, so the caller reads again.
func (s *Server) refreshOnce(ctx context.Context, clientID, token string, form url.Values) (resp *tokenResponse, lost bool, err error) {
	now := s.now()
	r, err := s.readRefresh(ctx, token)
	fam := r.fam
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, grantErr("the refresh token is unknown or expired; sign in again")
	case err != nil:
		return nil, false, err
	case r.revoked != 0:
		return nil, false, grantErr("this grant was revoked; sign in again")
	case r.usedAt != 0:
		if resp := s.graceReplay(ctx, r, clientID, token, now); resp != nil {
			return resp, false, nil
		}
		if err := s.inTx(ctx, func(tx *sql.Tx) error { return revokeFamily(ctx, tx, fam.id, now) }); err != nil {
			return nil, false, err
		}
		s.log.Warn("oauth: a rotated refresh token was used again; the grant is revoked", "client_id", fam.clientID, "presented_by", clientID, "user", fam.userName, "grant", fam.id)
		return nil, false, grantErr("the refresh token was already used; the grant has been revoked, sign in again")
	case !now.Before(s.grantEnd(fam)):
		return nil, false, grantErr("the grant reached its maximum lifetime (" + days(s.o.GrantLifetime) + " after the sign-in); sign in again")
	case now.UnixMilli() >= r.expiresAt:
		return nil, false, grantErr("the refresh token expired; sign in again")
	case fam.clientID != clientID:
		return nil, false, grantErr("the refresh token was issued to another client")
	}
	if form.Has("scope") {
		want, err := parseScope(form.Get("scope"))
		if err != nil || !scopeWithin(want, fam.scope) {
			return nil, false, &tokenErr{http.StatusBadRequest, "invalid_scope", "a refresh may keep or narrow the granted scope " + fam.scope + ", not widen it"}
		}
	}
	// Outside any transaction: this waits on the network.
	ok, why, herr := s.haUserStanding(ctx, fam.userID)
	if herr != nil {
		s.log.Warn("oauth: refresh refused, Home Assistant could not confirm the user", "user", fam.userName, "client_id", fam.clientID, "err", herr)
		return nil, false, &tokenErr{http.StatusServiceUnavailable, "temporarily_unavailable",
			"Home Assistant could not be reached to confirm the user is still an administrator; the refresh token is still valid, try again later"}
	}
	if !ok {
		if err := s.inTx(ctx, func(tx *sql.Tx) error { return revokeFamily(ctx, tx, fam.id, now) }); err != nil {
			return nil, false, err
		}
		s.log.Warn("oauth: grant revoked at refresh", "reason", why, "user", fam.userName, "client_id", fam.clientID, "grant", fam.id)
		return nil, false, grantErr(why + "; the grant has been revoked, sign in again with an administrator")
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE oauth_refresh_tokens SET used_at = ? WHERE token_hash = ? AND used_at = 0`, now.UnixMilli(), hashSecret(token))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			lost = true
			return errLostRace
		}
		if resp, err = s.issueTokens(ctx, tx, fam, now); err != nil {
			return err
		}
		plain, _ := json.Marshal(resp)
		sealed, err := sealSuccessor(token, plain)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE oauth_refresh_tokens SET successor = ? WHERE token_hash = ?`, sealed, hashSecret(token)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?`, now.UnixMilli(), fam.clientID)
		return err
	})
	if lost {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return resp, false, nil
}

// days writes whole days as days (the lifetime option's usual unit), anything else as Go does.
func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

var errLostRace = errors.New("the refresh token was rotated by a concurrent request")

// graceReplay answers a replay of a just-rotated token by the client it belongs to with the pair
// that rotation issued, as long as that pair's refresh token has not itself been rotated. Any
// other replay gets nil, and the caller revokes the grant.
func (s *Server) graceReplay(ctx context.Context, r refreshRow, clientID, token string, now time.Time) *tokenResponse {
	if r.fam.clientID != clientID || r.successor == "" || now.Sub(time.UnixMilli(r.usedAt)) > refreshGrace {
		return nil
	}
	plain, err := openSuccessor(token, r.successor)
	if err != nil {
		return nil
	}
	var resp tokenResponse
	if json.Unmarshal(plain, &resp) != nil || resp.RefreshToken == "" {
		return nil
	}
	next, err := s.readRefresh(ctx, resp.RefreshToken)
	if err != nil || next.usedAt != 0 || next.revoked != 0 || next.fam.id != r.fam.id {
		return nil
	}
	resp.ExpiresIn -= int64(now.Sub(time.UnixMilli(r.usedAt)).Seconds()) // the same access token, a few seconds older
	s.log.Info("oauth: refresh token replayed within the grace period; the same pair is returned", "client_id", clientID, "grant", r.fam.id)
	return &resp
}

// inTx runs fn in a write transaction and commits it when fn succeeds.
func (s *Server) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
