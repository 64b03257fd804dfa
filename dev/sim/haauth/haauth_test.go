package haauth

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
)

var testUsers = []User{
	{ID: "u-owner", Name: "Owner", Username: "owner", Password: "pw-owner", Admin: true},
	{ID: "u-kid", Name: "Kid", Username: "kid", Password: "pw-kid"},
}

func start(t *testing.T) (*Provider, *fakeclock.Clock, string) {
	t.Helper()
	clk := fakeclock.New(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC))
	p := New(testUsers, WithClock(clk.Now))
	mux := http.NewServeMux()
	p.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return p, clk, srv.URL
}

func postJSON(t *testing.T, u string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(u, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func postForm(t *testing.T, u string, v url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(u, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

const clientID = "http://hamcp.test:8080/"
const redirect = "http://hamcp.test:8080/oauth/ha-callback"

// login runs the JSON login flow the way HA's frontend does and returns the code.
func login(t *testing.T, base, user, pass string) string {
	t.Helper()
	st, form := postJSON(t, base+"/auth/login_flow", map[string]any{"client_id": clientID, "handler": []any{"homeassistant", nil}, "redirect_uri": redirect, "type": "authorize"})
	if st != 200 || form["type"] != "form" || form["step_id"] != "init" {
		t.Fatalf("start flow: %d %v", st, form)
	}
	st, res := postJSON(t, base+"/auth/login_flow/"+form["flow_id"].(string), map[string]any{"client_id": clientID, "username": user, "password": pass})
	if st != 200 || res["type"] != "create_entry" {
		t.Fatalf("login step: %d %v", st, res)
	}
	return res["result"].(string)
}

func TestLoginFlowShapes(t *testing.T) {
	_, _, base := start(t)
	resp, err := http.Get(base + "/auth/providers")
	if err != nil {
		t.Fatal(err)
	}
	var prov struct {
		Providers []map[string]any `json:"providers"`
		Preselect bool             `json:"preselect_remember_me"`
	}
	json.NewDecoder(resp.Body).Decode(&prov)
	resp.Body.Close()
	if len(prov.Providers) != 1 || prov.Providers[0]["type"] != "homeassistant" || !prov.Preselect {
		t.Fatalf("providers = %+v", prov)
	}
	tests := []struct {
		name   string
		body   map[string]any
		status int
		msg    string
	}{
		{"ok", map[string]any{"client_id": clientID, "handler": []any{"homeassistant", nil}, "redirect_uri": redirect}, 200, ""},
		{"redirect on other host", map[string]any{"client_id": clientID, "handler": []any{"homeassistant", nil}, "redirect_uri": "http://evil.test/cb"}, 400, "invalid client id or redirect uri"},
		{"redirect other scheme", map[string]any{"client_id": clientID, "handler": []any{"homeassistant", nil}, "redirect_uri": "https://hamcp.test:8080/cb"}, 400, "invalid client id or redirect uri"},
		{"client id with fragment", map[string]any{"client_id": clientID + "#x", "handler": []any{"homeassistant", nil}, "redirect_uri": redirect}, 400, "invalid client id or redirect uri"},
		{"public ip client", map[string]any{"client_id": "http://8.8.8.8/", "handler": []any{"homeassistant", nil}, "redirect_uri": "http://8.8.8.8/cb"}, 400, "invalid client id or redirect uri"},
		{"unknown handler", map[string]any{"client_id": clientID, "handler": []any{"trusted_networks", nil}, "redirect_uri": redirect}, 404, "Invalid handler specified"},
		{"missing client", map[string]any{"handler": []any{"homeassistant", nil}, "redirect_uri": redirect}, 400, "Message format incorrect: required key not provided @ data['client_id']"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, out := postJSON(t, base+"/auth/login_flow", tt.body)
			if st != tt.status {
				t.Fatalf("status %d want %d: %v", st, tt.status, out)
			}
			if tt.msg != "" && out["message"] != tt.msg {
				t.Fatalf("message %q want %q", out["message"], tt.msg)
			}
			if tt.status == 200 {
				schema, _ := out["data_schema"].([]any)
				if len(schema) != 2 || out["flow_id"] == "" {
					t.Fatalf("form step = %v", out)
				}
			}
		})
	}

	_, form := postJSON(t, base+"/auth/login_flow", tests[0].body)
	flowURL := base + "/auth/login_flow/" + form["flow_id"].(string)
	steps := []struct {
		name   string
		body   map[string]any
		status int
		check  func(map[string]any) bool
	}{
		{"bad client id", map[string]any{"client_id": "not a url", "username": "owner", "password": "pw-owner"}, 400, func(m map[string]any) bool { return m["message"] == "Invalid client id" }},
		{"wrong password keeps the flow", map[string]any{"client_id": clientID, "username": "owner", "password": "nope"}, 200, func(m map[string]any) bool {
			e, _ := m["errors"].(map[string]any)
			return m["type"] == "form" && e["base"] == "invalid_auth"
		}},
		{"right password", map[string]any{"client_id": clientID, "username": "Owner", "password": "pw-owner"}, 200, func(m map[string]any) bool {
			return m["type"] == "create_entry" && len(m["result"].(string)) == 32
		}},
		{"flow is gone afterwards", map[string]any{"client_id": clientID, "username": "owner", "password": "pw-owner"}, 404, func(m map[string]any) bool { return m["message"] == "Invalid flow specified" }},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			st, out := postJSON(t, flowURL, s.body)
			if st != s.status || !s.check(out) {
				t.Fatalf("%d %v", st, out)
			}
		})
	}
}

func TestTokenEndpoint(t *testing.T) {
	p, clk, base := start(t)
	code := login(t, base, "owner", "pw-owner")

	st, out := postForm(t, base+"/auth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {"http://other.test/"}})
	if st != 400 || out["error"] != "invalid_request" || out["error_description"] != "Invalid code" {
		t.Fatalf("code for another client: %d %v", st, out)
	}
	// The failed attempt burned the code.
	st, _ = postForm(t, base+"/auth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID}})
	if st != 400 {
		t.Fatalf("burned code accepted: %d", st)
	}

	code = login(t, base, "owner", "pw-owner")
	st, tok := postForm(t, base+"/auth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID}})
	if st != 200 || tok["token_type"] != "Bearer" || tok["expires_in"] != float64(1800) || tok["ha_auth_provider"] != "homeassistant" || tok["refresh_token"] == "" {
		t.Fatalf("exchange: %d %v", st, tok)
	}
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	if u, ok := p.CurrentUser(access); !ok || u.ID != "u-owner" || !u.Admin {
		t.Fatalf("current user = %+v %v", u, ok)
	}
	if r := p.CurrentUserResult(testUsers[0]); r["is_owner"] != true || r["is_admin"] != true {
		t.Fatalf("current_user result = %v", r)
	}
	if r := p.CurrentUserResult(testUsers[1]); r["is_owner"] != false || r["is_admin"] != false {
		t.Fatalf("current_user result = %v", r)
	}

	refreshCases := []struct {
		name   string
		form   url.Values
		status int
		err    string
	}{
		{"unknown refresh token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}, "client_id": {clientID}}, 400, "invalid_grant"},
		{"other client", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"http://other.test/"}}, 400, "invalid_request"},
		{"unsupported grant", url.Values{"grant_type": {"password"}}, 400, "unsupported_grant_type"},
		{"ok", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}}, 200, ""},
	}
	for _, tt := range refreshCases {
		t.Run(tt.name, func(t *testing.T) {
			st, out := postForm(t, base+"/auth/token", tt.form)
			if st != tt.status || (tt.err != "" && out["error"] != tt.err) {
				t.Fatalf("%d %v", st, out)
			}
			if st == 200 && (out["access_token"] == "" || out["refresh_token"] != nil) {
				t.Fatalf("refresh answer = %v", out)
			}
		})
	}

	clk.Advance(AccessTokenLifetime + time.Second)
	if _, ok := p.CurrentUser(access); ok {
		t.Fatal("access token valid after 30 minutes")
	}
	if p.RefreshTokenCount() != 1 {
		t.Fatalf("refresh tokens = %d", p.RefreshTokenCount())
	}
	resp, err := http.PostForm(base+"/auth/revoke", url.Values{"token": {refresh}})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("revoke: %v %v", err, resp)
	}
	resp.Body.Close()
	if p.RefreshTokenCount() != 0 {
		t.Fatal("refresh token survived revoke")
	}
	st, out = postForm(t, base+"/auth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
	if st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("revoked refresh token: %d %v", st, out)
	}

	code = login(t, base, "kid", "pw-kid")
	clk.Advance(CodeLifetime + time.Second)
	st, _ = postForm(t, base+"/auth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID}})
	if st != 400 {
		t.Fatalf("expired code accepted: %d", st)
	}
}

// TestBrowserLoginPage submits the real HTML form the way a browser without JavaScript would.
func TestBrowserLoginPage(t *testing.T) {
	_, _, base := start(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"xyz"}}
	resp, err := noFollow.Get(base + "/auth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	action := between(string(page), `action="`, `"`)
	if resp.StatusCode != 200 || !strings.HasPrefix(action, "/auth/login_flow/") || !strings.Contains(string(page), `name="password"`) {
		t.Fatalf("login page %d: %s", resp.StatusCode, page)
	}
	form := url.Values{"client_id": {clientID}, "redirect_uri": {redirect}, "state": {"xyz"}, "username": {"owner"}, "password": {"wrong"}}
	resp, _ = noFollow.PostForm(base+action, form)
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Invalid username or password") {
		t.Fatalf("wrong password page: %d %s", resp.StatusCode, page)
	}
	form.Set("password", "pw-owner")
	resp, _ = noFollow.PostForm(base+action, form)
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc == nil || loc.Host != "hamcp.test:8080" || loc.Path != "/oauth/ha-callback" || loc.Query().Get("state") != "xyz" || len(loc.Query().Get("code")) != 32 {
		t.Fatalf("after login: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	bad := url.Values{"client_id": {clientID}, "redirect_uri": {"http://evil.test/cb"}}
	resp, _ = noFollow.Get(base + "/auth/authorize?" + bad.Encode())
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || strings.Contains(string(page), "<form") {
		t.Fatalf("mismatched redirect shows a login form: %d", resp.StatusCode)
	}
}

func between(s, a, b string) string {
	_, rest, ok := strings.Cut(s, a)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, b)
	return v
}

func TestIndieAuthRules(t *testing.T) {
	tests := []struct {
		client, redirect string
		ok               bool
	}{
		{"https://mcp.example.com/", "https://mcp.example.com/oauth/ha-callback", true},
		{"https://MCP.example.com", "https://mcp.example.com/cb", true},
		{"http://127.0.0.1:8099/", "http://127.0.0.1:8099/cb", true},
		{"http://192.168.1.5:8099/", "http://192.168.1.5:8099/cb", true},
		{"https://mcp.example.com/", "https://mcp.example.com:444/cb", false},
		{"https://mcp.example.com/", "http://mcp.example.com/cb", false},
		{"https://mcp.example.com/a/../b", "https://mcp.example.com/cb", false},
		{"https://user:pw@mcp.example.com/", "https://mcp.example.com/cb", false},
		{"ftp://mcp.example.com/", "ftp://mcp.example.com/cb", false},
		{"https://1.1.1.1/", "https://1.1.1.1/cb", false},
		{"https://mcp.example.com:abc/", "https://mcp.example.com:abc/cb", false},
	}
	for _, tt := range tests {
		if got := verifyRedirectURI(tt.client, tt.redirect); got != tt.ok {
			t.Errorf("verifyRedirectURI(%q, %q) = %v, want %v", tt.client, tt.redirect, got, tt.ok)
		}
	}
}

func FuzzIndieAuth(f *testing.F) {
	f.Add("https://mcp.example.com/", "https://mcp.example.com/cb")
	f.Add("http://[::1]:80/x", "http://[::1]:80/y")
	f.Add("https://a/%2e%2e/", "https://a/")
	f.Fuzz(func(t *testing.T, client, redirect string) {
		ok := verifyRedirectURI(client, redirect)
		if !ok {
			return
		}
		c, err := parseClientID(client)
		if err != nil {
			t.Fatalf("accepted redirect for invalid client id %q: %v", client, err)
		}
		r, _ := parseIndieURL(redirect)
		if c.Scheme != r.Scheme || c.Host != r.Host || c.User != nil {
			t.Fatalf("accepted %q for %q", redirect, client)
		}
	})
}
