package oauth

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func TestRegistration(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		name    string
		body    string
		status  int
		errCode string
		check   func(t *testing.T, m map[string]any)
	}{
		{"claude public client", `{"redirect_uris":["https://claude.ai/api/mcp/auth_callback","https://claude.com/api/mcp/auth_callback"],"token_endpoint_auth_method":"none","client_name":"Claude"}`, 201, "",
			func(t *testing.T, m map[string]any) {
				if m["client_secret"] != nil || m["application_type"] != "web" || m["client_name"] != "Claude" {
					t.Errorf("%v", m)
				}
			}},
		{"native loopback client", `{"redirect_uris":["http://localhost:8976/callback"],"token_endpoint_auth_method":"none"}`, 201, "",
			func(t *testing.T, m map[string]any) {
				if m["application_type"] != "native" {
					t.Errorf("application_type = %v", m["application_type"])
				}
			}},
		{"confidential client gets a secret", `{"redirect_uris":["https://claude.ai/cb"],"token_endpoint_auth_method":"client_secret_post"}`, 201, "",
			func(t *testing.T, m map[string]any) {
				if s, _ := m["client_secret"].(string); !strings.HasPrefix(s, clientSecretPrefix) {
					t.Errorf("client_secret = %v", m["client_secret"])
				}
			}},
		{"no redirect uris", `{"client_name":"x"}`, 400, "invalid_redirect_uri", nil},
		{"host not allowed", `{"redirect_uris":["https://evil.example/cb"]}`, 400, "invalid_redirect_uri", nil},
		{"plain http off loopback", `{"redirect_uris":["http://claude.ai/cb"]}`, 400, "invalid_redirect_uri", nil},
		{"custom scheme", `{"redirect_uris":["cursor://cb"]}`, 400, "invalid_redirect_uri", nil},
		{"fragment", `{"redirect_uris":["https://claude.ai/cb#x"]}`, 400, "invalid_redirect_uri", nil},
		{"web app on loopback http", `{"redirect_uris":["http://127.0.0.1:9/cb"],"application_type":"web"}`, 400, "invalid_redirect_uri", nil},
		{"implicit grant", `{"redirect_uris":["https://claude.ai/cb"],"grant_types":["implicit"]}`, 400, "invalid_client_metadata", nil},
		{"token response type", `{"redirect_uris":["https://claude.ai/cb"],"response_types":["token"]}`, 400, "invalid_client_metadata", nil},
		{"unknown auth method", `{"redirect_uris":["https://claude.ai/cb"],"token_endpoint_auth_method":"private_key_jwt"}`, 400, "invalid_client_metadata", nil},
		{"control characters in name", `{"redirect_uris":["https://claude.ai/cb"],"client_name":"a\u0007b"}`, 400, "invalid_client_metadata", nil},
		{"not json", `redirect_uris=x`, 400, "invalid_client_metadata", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(e.issuer+"/register", "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m map[string]any
			json.NewDecoder(resp.Body).Decode(&m)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, tt.status, m)
			}
			if tt.errCode != "" && (m["error"] != tt.errCode || m["error_description"] == "") {
				t.Fatalf("error = %v, want %s with a description", m, tt.errCode)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

// TestConfidentialClient: a client registered with a secret must present it, in the body or by
// HTTP Basic.
func TestConfidentialClient(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := http.Post(e.issuer+"/register", "application/json", strings.NewReader(`{"redirect_uris":["`+claudeCallback+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Method       string `json:"token_endpoint_auth_method"`
	}
	json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if reg.Method != "client_secret_basic" || reg.ClientSecret == "" {
		t.Fatalf("registration without a method = %+v (RFC 7591 defaults to client_secret_basic)", reg)
	}
	c := e.clientFor(reg.ClientID, claudeCallback)
	for _, tt := range []struct {
		name   string
		style  oauth2.AuthStyle
		secret string
		want   string
	}{
		{"no secret", oauth2.AuthStyleInParams, "", "invalid_client"},
		{"wrong secret", oauth2.AuthStyleInHeader, "hamcp_cs_wrong", "invalid_client"},
		{"secret by Basic", oauth2.AuthStyleInHeader, reg.ClientSecret, ""},
		{"secret in the body", oauth2.AuthStyleInParams, reg.ClientSecret, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := *c.cfg
			cfg.ClientSecret = tt.secret
			cfg.Endpoint.AuthStyle = tt.style
			cc := oauthClient{cfg: &cfg, resource: c.resource}
			v := oauth2.GenerateVerifier()
			_, err := e.exchange(cc, e.code(cc, v), v)
			if got := oauthErrorCode(err); got != tt.want {
				t.Fatalf("error %q (%v), want %q", got, err, tt.want)
			}
		})
	}
}

func TestRevokeIsQuietAboutOtherTokens(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	other := e.register(claudeCallback, "Other")
	tok := e.grant(c)
	for _, form := range []url.Values{
		{"token": {"hamcp_at_unknown"}},
		{"token": {"not-even-ours"}},
		{"token": {tok.AccessToken}, "client_id": {other.cfg.ClientID}}, // another client cannot revoke it
	} {
		resp, err := http.PostForm(e.issuer+"/revoke", form)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("revoke %v: %v %v", form, err, resp)
		}
		resp.Body.Close()
	}
	if e.mcpStatus(tok.AccessToken) != 200 {
		t.Fatal("a token was revoked by a request that did not own it")
	}
	resp, _ := http.PostForm(e.issuer+"/revoke", url.Values{"token": {tok.AccessToken}, "client_id": {c.cfg.ClientID}})
	resp.Body.Close()
	if e.mcpStatus(tok.AccessToken) != 401 {
		t.Fatal("revoking the access token did not end the grant")
	}
}

// TestSweepForgetsDeadGrants: expired tokens, spent codes, dead grants and idle clients leave the
// store, on the next token or registration request.
func TestSweepForgetsDeadGrants(t *testing.T) {
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	e.grant(c)
	e.register(claudeCallback, "Never used")
	count := func(table string) int {
		var n int
		if err := e.st.DB().QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := map[string]int{}
	for _, tb := range []string{"oauth_clients", "oauth_codes", "oauth_families", "oauth_access_tokens", "oauth_refresh_tokens"} {
		before[tb] = count(tb)
		if before[tb] == 0 {
			t.Fatalf("%s is empty before the sweep", tb)
		}
	}
	e.clock.Advance(defaultRefreshTTL + 3*24*time.Hour)
	e.register(claudeCallback, "Fresh") // triggers the sweep
	want := map[string]int{"oauth_clients": 1, "oauth_codes": 0, "oauth_families": 0, "oauth_access_tokens": 0, "oauth_refresh_tokens": 0}
	for tb, n := range want {
		if got := count(tb); got != n {
			t.Errorf("%s: %d rows after the sweep, want %d (before: %d)", tb, got, n, before[tb])
		}
	}
}
