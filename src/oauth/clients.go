package oauth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// client is a registered (DCR) or metadata-document (CIMD) client.
type client struct {
	ID           string
	Name         string
	RedirectURIs []string
	GrantTypes   []string
	AuthMethod   string // none, client_secret_post, client_secret_basic
	SecretHash   string
	CIMD         bool
}

func (c *client) refreshAllowed() bool { return slices.Contains(c.GrantTypes, "refresh_token") }

var errUnknownClient = errors.New("unknown client")

// clientMetadata is the part of RFC 7591 (and CIMD) metadata hamcp uses.
type clientMetadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	ApplicationType         string   `json:"application_type,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	ClientSecret            string   `json:"client_secret,omitempty"`
}

// metadataError is an RFC 7591 §3.2.2 error.
type metadataError struct{ code, desc string }

func (e *metadataError) Error() string { return e.code + ": " + e.desc }

func badMetadata(format string, a ...any) error {
	return &metadataError{"invalid_client_metadata", fmt.Sprintf(format, a...)}
}

const maxMetadataBytes = 64 << 10

// parseClientMetadata validates registration metadata. dcr is false for metadata documents, which
// may only describe public clients. It fills defaults and returns what the client will be held to.
func parseClientMetadata(body []byte, allowed hostSet, dcr bool) (*clientMetadata, error) {
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, badMetadata("the body must be a JSON object of client metadata (RFC 7591): %v", err)
	}
	if len(m.RedirectURIs) == 0 {
		return nil, &metadataError{"invalid_redirect_uri", "redirect_uris is required: list the exact URIs the client receives codes at"}
	}
	if len(m.RedirectURIs) > 20 {
		return nil, &metadataError{"invalid_redirect_uri", "redirect_uris lists more than 20 URIs"}
	}
	if err := checkClientName(m.ClientName); err != nil {
		return nil, err
	}
	if len(m.GrantTypes) == 0 {
		// RFC 7591 defaults to authorization_code only; hamcp also allows refresh so that clients
		// that leave the field out still keep their session past the first hour.
		m.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return nil, badMetadata("grant_types: %q is not supported; use authorization_code and refresh_token", g)
		}
	}
	if !slices.Contains(m.GrantTypes, "authorization_code") {
		return nil, badMetadata("grant_types must include authorization_code")
	}
	if len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{"code"}
	}
	for _, r := range m.ResponseTypes {
		if r != "code" {
			return nil, badMetadata("response_types: %q is not supported; use code", r)
		}
	}
	switch m.TokenEndpointAuthMethod {
	case "none":
	case "":
		if dcr {
			m.TokenEndpointAuthMethod = "client_secret_basic" // RFC 7591's default
		} else {
			m.TokenEndpointAuthMethod = "none"
		}
	case "client_secret_post", "client_secret_basic":
		if !dcr {
			return nil, badMetadata("token_endpoint_auth_method %q needs a secret, which a client metadata document cannot hold; use none", m.TokenEndpointAuthMethod)
		}
	default:
		return nil, badMetadata("token_endpoint_auth_method %q is not supported; use none, client_secret_post or client_secret_basic", m.TokenEndpointAuthMethod)
	}
	if m.ClientSecret != "" && !dcr {
		return nil, badMetadata("a client metadata document must not contain client_secret")
	}
	m.ClientSecret = ""
	if m.Scope != "" {
		if _, err := parseScope(m.Scope); err != nil {
			return nil, badMetadata("scope: %v", err)
		}
	}
	// A registration must be right as a whole; a metadata document is published for many servers,
	// so hamcp keeps the redirect URIs it allows and ignores the rest.
	var kept []string
	var firstErr error
	loopback := 0
	for _, r := range m.RedirectURIs {
		if err := validateRedirectURI(r, allowed); err != nil {
			if dcr {
				return nil, &metadataError{"invalid_redirect_uri", err.Error()}
			}
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		kept = append(kept, r)
		if strings.HasPrefix(r, "http:") {
			loopback++
		}
	}
	if len(kept) == 0 {
		return nil, &metadataError{"invalid_redirect_uri", firstErr.Error()}
	}
	m.RedirectURIs = kept
	switch m.ApplicationType {
	case "":
		m.ApplicationType = "web"
		if loopback == len(m.RedirectURIs) {
			m.ApplicationType = "native"
		}
	case "native":
	case "web":
		// OpenID Connect Registration: web clients must not redirect to plain-http localhost.
		if loopback > 0 {
			return nil, &metadataError{"invalid_redirect_uri", "application_type web may not use http loopback redirect URIs; register as application_type native"}
		}
	default:
		return nil, badMetadata("application_type %q is not supported; use web or native", m.ApplicationType)
	}
	return &m, nil
}

func checkClientName(name string) error {
	if utf8.RuneCountInString(name) > 200 || !utf8.ValidString(name) {
		return badMetadata("client_name must be valid UTF-8 of at most 200 characters")
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return badMetadata("client_name must not contain control characters")
		}
	}
	return nil
}

// register is POST /register (RFC 7591).
func (s *Server) register(c echo.Context) error {
	s.sweep(c.Request().Context())
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxMetadataBytes+1))
	if err != nil || len(body) > maxMetadataBytes {
		return oauthError(c, http.StatusBadRequest, "invalid_client_metadata", "the registration body must be a JSON object under 64 KB")
	}
	m, err := parseClientMetadata(body, s.allowed, true)
	if err != nil {
		var me *metadataError
		errors.As(err, &me)
		return oauthError(c, http.StatusBadRequest, me.code, me.desc)
	}
	ctx := c.Request().Context()
	now := s.now()
	from := addressKey(c.RealIP())
	id := "c_" + randomHex(16)
	secret, secretHash := "", ""
	if m.TokenEndpointAuthMethod != "none" {
		secret = newSecret(clientSecretPrefix)
		secretHash = hashSecret(secret)
	}
	resp := map[string]any{
		"client_id":                  id,
		"client_id_issued_at":        now.Unix(),
		"redirect_uris":              m.RedirectURIs,
		"grant_types":                m.GrantTypes,
		"response_types":             m.ResponseTypes,
		"token_endpoint_auth_method": m.TokenEndpointAuthMethod,
		"application_type":           m.ApplicationType,
	}
	if m.ClientName != "" {
		resp["client_name"] = m.ClientName
	}
	if m.Scope != "" {
		resp["scope"] = m.Scope
	}
	if m.ClientURI != "" {
		resp["client_uri"] = m.ClientURI
	}
	meta, _ := json.Marshal(resp)
	uris, _ := json.Marshal(m.RedirectURIs)
	var evicted int64
	if err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_clients
			(client_id, secret_hash, name, redirect_uris, grant_types, auth_method, application_type, scope, metadata, created_at, registered_from)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, secretHash, m.ClientName, string(uris), strings.Join(m.GrantTypes, " "), m.TokenEndpointAuthMethod,
			m.ApplicationType, m.Scope, string(meta), now.UnixMilli(), from); err != nil {
			return err
		}
		var err error
		evicted, err = evictUnusedClients(ctx, tx, s.limits, from, now.UnixMilli())
		return err
	}); err != nil {
		return s.serverError(c, "store client", err)
	}
	if evicted > 0 {
		s.log.Debug("oauth: unused registrations displaced by a new one", "count", evicted, "from", from)
	}
	if secret != "" {
		resp["client_secret"] = secret
		resp["client_secret_expires_at"] = 0
	}
	s.log.Info("client registered", "client_id", id, "client_name", m.ClientName, "redirect_uris", m.RedirectURIs)
	noStore(c)
	return c.JSON(http.StatusCreated, resp)
}

// lookupClient finds a client by id: a URL id is a metadata document, anything else a registration.
func (s *Server) lookupClient(ctx context.Context, id string) (*client, error) {
	if id == "" {
		return nil, errUnknownClient
	}
	if isURLClientID(id) {
		return s.fetchCIMD(ctx, id)
	}
	var (
		c      client
		uris   string
		grants string
	)
	err := s.db.QueryRowContext(ctx, `SELECT client_id, name, redirect_uris, grant_types, auth_method, secret_hash
		FROM oauth_clients WHERE client_id = ?`, id).Scan(&c.ID, &c.Name, &uris, &grants, &c.AuthMethod, &c.SecretHash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errUnknownClient
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return nil, fmt.Errorf("client %s: stored redirect_uris: %w", id, err)
	}
	c.GrantTypes = strings.Fields(grants)
	return &c, nil
}

func isURLClientID(id string) bool {
	return strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://")
}
