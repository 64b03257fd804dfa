package oauth

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/hamcp/hamcp/src/authn"
)

// TestClaudeFlowWithDCR plays Claude end to end: discovery from the 401, registration, the HA login
// as an administrator, consent, code, tokens, MCP calls, refresh with rotation, revocation.
func TestClaudeFlowWithDCR(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()

	// 1. Unauthenticated POST /mcp → 401 pointing at the resource metadata.
	req, _ := http.NewRequest(http.MethodPost, e.issuer+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode != 401 || err != nil || len(challenges) == 0 {
		t.Fatalf("401 challenge: %d %v %v", resp.StatusCode, challenges, err)
	}
	prmURL := challenges[0].Params["resource_metadata"]
	if prmURL != e.issuer+"/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("resource_metadata = %q", prmURL)
	}

	// 2. Protected resource metadata, validated the way the SDK client validates it.
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, prmURL, e.issuer+"/mcp", http.DefaultClient)
	if err != nil || prm.Resource != e.issuer+"/mcp" || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != e.issuer {
		t.Fatalf("PRM: %+v %v", prm, err)
	}
	if !slices.Equal(prm.ScopesSupported, []string{authn.ScopeFull, authn.ScopeReadOnly}) {
		t.Errorf("PRM scopes = %v", prm.ScopesSupported)
	}

	// 3. Authorization server metadata (issuer match, PKCE support and URL safety checked by the SDK).
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], http.DefaultClient)
	if err != nil || asm == nil {
		t.Fatalf("AS metadata: %v", err)
	}
	if !slices.Equal(asm.CodeChallengeMethodsSupported, []string{"S256"}) || !slices.Contains(asm.TokenEndpointAuthMethodsSupported, "none") ||
		!asm.ClientIDMetadataDocumentSupported || !asm.AuthorizationResponseIssParameterSupported || asm.RegistrationEndpoint != e.issuer+"/register" ||
		asm.RevocationEndpoint != e.issuer+"/revoke" {
		t.Fatalf("AS metadata = %+v", asm)
	}

	// 4. Dynamic client registration, as Claude does it.
	reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{claudeCallback}, TokenEndpointAuthMethod: "none",
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, ClientName: "Claude",
	}, http.DefaultClient)
	if err != nil || reg.ClientID == "" || reg.ClientSecret != "" {
		t.Fatalf("register: %+v %v", reg, err)
	}
	c := e.clientFor(reg.ClientID, claudeCallback)

	// 5. /authorize with PKCE and resource → HA login page → admin logs in → consent page.
	verifier := oauth2.GenerateVerifier()
	b := newBrowser(t)
	page := e.loginAtHA(b, c.authURL(verifier, "claude-state"), "ada", "ada-pw", claudeCallback)
	for _, want := range []string{"Claude", "claude.ai", "Ada Admin", "Full control"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	if n := e.ha.RefreshTokenCount(); n != 0 {
		t.Errorf("hamcp kept %d Home Assistant login sessions; it must revoke them", n)
	}

	// 6. Consent → back to Claude with a code, the state and the issuer.
	back := e.consent(b, page, "allow", claudeCallback)
	if back.url == nil {
		t.Fatalf("consent did not return to the client: %+v", back)
	}
	q := back.url.Query()
	if q.Get("state") != "claude-state" || q.Get("iss") != e.issuer || !strings.HasPrefix(q.Get("code"), codePrefix) {
		t.Fatalf("authorization response = %v", back.url)
	}

	// 7. Token exchange.
	tok, err := e.exchange(c, q.Get("code"), verifier)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.AccessToken, accessPrefix) || !strings.HasPrefix(tok.RefreshToken, refreshPrefix) || tok.Extra("scope") != authn.ScopeFull ||
		time.Until(tok.Expiry) < 50*time.Minute || time.Until(tok.Expiry) > 61*time.Minute {
		t.Fatalf("token = %+v scope=%v", tok, tok.Extra("scope"))
	}

	// 8. MCP initialize, tools/list, tools/call with the access token.
	cs, tools := e.mcpSession(tok.AccessToken)
	if !slices.Contains(tools, "t_look") || !slices.Contains(tools, "t_change") {
		t.Fatalf("full-scope tools = %v", tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t_change", Arguments: map[string]any{"word": "lamp"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "lamp") {
		t.Fatalf("tools/call: %v %+v", err, res)
	}

	// 9. Refresh rotates; the old refresh token is refused afterwards (and that reuse is the
	// subject of TestRefreshReuseRevokesTheGrant).
	tok2, err := e.refresh(c, tok.RefreshToken)
	if err != nil || tok2.RefreshToken == tok.RefreshToken || tok2.AccessToken == tok.AccessToken {
		t.Fatalf("refresh: %v %+v", err, tok2)
	}
	if e.mcpStatus(tok2.AccessToken) != 200 {
		t.Fatal("refreshed access token refused")
	}
	// Both access tokens name the same caller and the same grant: a grant made with one holds for the other.
	var principals []*authn.Principal
	for _, access := range []string{tok.AccessToken, tok2.AccessToken} {
		ti, err := e.srv.Verifier().Verify(ctx, access)
		if err != nil {
			t.Fatal(err)
		}
		principals = append(principals, authn.PrincipalOf(ti))
	}
	p := principals[0]
	if p.Kind != authn.KindOAuth || p.UserID != "u-admin" || p.UserName != "Ada Admin" || p.ClientID != reg.ClientID || p.ClientName != "Claude" ||
		p.GrantID == "" || p.ReadOnly() || p.String() != "Ada Admin (u-admin) via Claude" {
		t.Fatalf("principal = %+v", p)
	}
	if q := principals[1]; q.Credential() != p.Credential() || q.Grant() != p.Grant() || q.Owner() != p.Owner() {
		t.Fatalf("refreshed token's principal %+v differs from %+v", q, p)
	}

	// 10. Revoke → 401.
	form := strings.NewReader("token=" + tok2.RefreshToken + "&token_type_hint=refresh_token&client_id=" + reg.ClientID)
	rresp, err := http.Post(e.issuer+"/revoke", "application/x-www-form-urlencoded", form)
	if err != nil || rresp.StatusCode != 200 {
		t.Fatalf("revoke: %v %v", err, rresp)
	}
	rresp.Body.Close()
	if st := e.mcpStatus(tok2.AccessToken); st != 401 {
		t.Fatalf("after revoke: %d, want 401", st)
	}
	if _, err := e.refresh(c, tok2.RefreshToken); oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("revoked refresh token: %v", err)
	}
}

// TestRefreshReuseRevokesTheGrant: a rotated refresh token presented again after the grace period
// means it leaked; the whole family dies, including the tokens the rightful client holds now.
func TestRefreshReuseRevokesTheGrant(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	tok := e.grant(c)
	tok2, err := e.refresh(c, tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(refreshGrace + time.Second)
	if _, err := e.refresh(c, tok.RefreshToken); oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("old refresh token: %v, want invalid_grant", err)
	}
	if st := e.mcpStatus(tok2.AccessToken); st != 401 {
		t.Fatalf("access token of a revoked family: %d", st)
	}
	if _, err := e.refresh(c, tok2.RefreshToken); oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("newest refresh token of a revoked family: %v", err)
	}
	// Another grant of the same user and client is not touched.
	other := e.grant(c)
	if e.mcpStatus(other.AccessToken) != 200 {
		t.Fatal("an unrelated grant was revoked")
	}
}

// TestCIMDFlowWithSDKClient lets the go-sdk's own OAuth client drive the flow with a client id
// metadata document served over https from loopback.
func TestCIMDFlowWithSDKClient(t *testing.T) {
	docSrv := httptestTLS(t)
	clientID := docSrv.URL + "/oauth/client.json"
	redirect := "http://127.0.0.1:33418/callback"
	docSrv.set(200, `{"client_id":"`+clientID+`","client_name":"SDK Client","redirect_uris":["`+redirect+`"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none"}`)
	e := newEnv(t, func(o *Options) { o.HTTPClient = docSrv.Client(); o.cimdAllowLoopback = true })

	var fetcherErr error
	b := newBrowser(t)
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: clientID},
		RedirectURL:                    redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			page := e.loginAtHA(b, args.URL, "ada", "ada-pw", redirect)
			if !strings.Contains(page.body, "SDK Client") || !strings.Contains(page.body, clientID) {
				t.Errorf("consent page does not name the metadata-document client")
			}
			back := e.consent(b, page, "allow", redirect)
			if back.url == nil {
				fetcherErr = io.ErrUnexpectedEOF
				return nil, fetcherErr
			}
			q := back.url.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: e.issuer + "/mcp", OAuthHandler: h}, nil)
	if err != nil || fetcherErr != nil {
		t.Fatalf("connect with OAuth: %v %v", err, fetcherErr)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t_look", Arguments: map[string]any{"word": "door"}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call: %v %+v", err, res)
	}
	if docSrv.hits() != 1 {
		t.Errorf("metadata document fetched %d times; it should be cached", docSrv.hits())
	}
}

func TestNonAdminIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	b := newBrowser(t)
	page := e.loginAtHA(b, c.authURL(oauth2.GenerateVerifier(), "s"), "gus", "gus-pw", claudeCallback)
	if page.url != nil || page.status != http.StatusForbidden || !strings.Contains(page.body, "administrator") || !strings.Contains(page.body, "Gus Guest") {
		t.Fatalf("non-admin login: %d %v %s", page.status, page.url, page.body)
	}
	if n := e.ha.RefreshTokenCount(); n != 0 {
		t.Errorf("Home Assistant login session of the refused user left open (%d)", n)
	}
}

func TestReadOnlyScopeSeesReadOnlyTools(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	for _, tt := range []struct {
		name   string
		scope  []string
		action string
	}{
		{"client asks read-only", []string{authn.ScopeReadOnly}, "allow"},
		{"user narrows full to read-only", []string{authn.ScopeFull}, "allow_read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.cfg.Scopes = tt.scope
			v := oauth2.GenerateVerifier()
			b := newBrowser(t)
			page := e.loginAtHA(b, c.authURL(v, "s"), "ada", "ada-pw", claudeCallback)
			back := e.consent(b, page, tt.action, claudeCallback)
			tok, err := e.exchange(c, back.url.Query().Get("code"), v)
			if err != nil || tok.Extra("scope") != authn.ScopeReadOnly {
				t.Fatalf("exchange: %v scope=%v", err, tok.Extra("scope"))
			}
			_, tools := e.mcpSession(tok.AccessToken)
			if !slices.Equal(tools, []string{"t_look"}) {
				t.Fatalf("read-only session sees %v", tools)
			}
		})
	}
}

func TestDenyReturnsAccessDenied(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	b := newBrowser(t)
	page := e.loginAtHA(b, c.authURL(oauth2.GenerateVerifier(), "keep-me"), "ada", "ada-pw", claudeCallback)
	back := e.consent(b, page, "deny", claudeCallback)
	if back.url == nil || back.url.Query().Get("error") != "access_denied" || back.url.Query().Get("state") != "keep-me" || back.url.Query().Get("code") != "" {
		t.Fatalf("deny: %+v", back)
	}
}

func TestTokensSurviveRestart(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	tok := e.grant(c)
	e.restart()
	if st := e.mcpStatus(tok.AccessToken); st != 200 {
		t.Fatalf("access token after restart: %d", st)
	}
	tok2, err := e.refresh(c, tok.RefreshToken)
	if err != nil {
		t.Fatalf("refresh after restart: %v", err)
	}
	if e.mcpStatus(tok2.AccessToken) != 200 {
		t.Fatal("refreshed token refused")
	}
	var n int
	e.st.DB().QueryRow(`SELECT count(*) FROM oauth_access_tokens WHERE token_hash = ? OR token_hash = ?`, tok.AccessToken, tok2.AccessToken).Scan(&n)
	if n != 0 {
		t.Fatal("the store holds a token in clear text")
	}
}

func TestMetadataEndpoints(t *testing.T) {
	e := newEnv(t, nil)
	paths := []string{
		"/.well-known/oauth-authorization-server",
		"/.well-known/oauth-authorization-server/mcp",
		"/.well-known/openid-configuration",
		"/.well-known/openid-configuration/mcp",
		"/mcp/.well-known/openid-configuration",
	}
	for _, p := range paths {
		resp, err := http.Get(e.issuer + p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != 200 || m["issuer"] != e.issuer || m["authorization_endpoint"] != e.issuer+"/authorize" {
			t.Errorf("%s: %d %v", p, resp.StatusCode, m)
		}
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(e.issuer + p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != 200 || m["resource"] != e.issuer+"/mcp" || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: %d %v", p, resp.StatusCode, m)
		}
	}
}
