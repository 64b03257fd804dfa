package demo_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/config"
)

// The OAuth flow as Claude drives it, against the real app and the simulated Home Assistant over
// loopback: registration, the HA login page, consent, code, tokens, MCP, and the refresh rules
// (two refreshes at once, HA re-checked on every refresh, fail closed while HA is down), and a
// refused login that returns to the client instead of leaving it waiting.

var (
	hiddenInputRe = regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)">`)
	formActionRe  = regexp.MustCompile(`<form method="post" action="([^"]+)">`)
	continueRe    = regexp.MustCompile(`<a id="continue" href="([^"]+)">`)
)

// claudeClient is a registered client, its redirect target and what arrived there.
type claudeClient struct {
	cfg      *oauth2.Config
	back     chan url.Values
	resource string
}

func newClaudeClient(t *testing.T, e *env) *claudeClient {
	t.Helper()
	c := &claudeClient{back: make(chan url.Values, 4), resource: e.url + "/mcp"}
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.back <- r.URL.Query()
		io.WriteString(w, "connected")
	}))
	t.Cleanup(cb.Close)
	redirect := cb.URL + "/api/mcp/auth_callback"
	reg, err := oauthex.RegisterClient(t.Context(), e.url+"/register", &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none", ClientName: "Claude",
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
	}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	c.cfg = &oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect, Scopes: []string{"hamcp:full"},
		Endpoint: oauth2.Endpoint{AuthURL: e.url + "/authorize", TokenURL: e.url + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	return c
}

// signIn plays the person in the browser: /authorize, HA's login page as login, and (when hamcp
// shows it) Allow on the consent page. It returns the last page the browser shows, if any.
func (c *claudeClient) signIn(t *testing.T, e *env, login sim.Login, verifier, state string) (page string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar}
	get := func(u string) string {
		resp, err := b.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	post := func(u string, form url.Values) string {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		pu, _ := url.Parse(u)
		req.Header.Set("Origin", pu.Scheme+"://"+pu.Host)
		resp, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	fields := func(page string) (string, url.Values) {
		f := url.Values{}
		for _, m := range hiddenInputRe.FindAllStringSubmatch(page, -1) {
			f.Set(m[1], html.UnescapeString(m[2]))
		}
		m := formActionRe.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no form on the page: %.400s", page)
		}
		return html.UnescapeString(m[1]), f
	}
	haPage := get(c.cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", c.resource)))
	action, f := fields(haPage)
	f.Set("username", login.Username)
	f.Set("password", login.Password)
	page = post(e.d.Info.HAURL+action, f)
	if !strings.Contains(page, `value="allow"`) {
		return page
	}
	action, f = fields(page)
	f.Set("action", "allow")
	return post(e.url+action, f)
}

func (c *claudeClient) arrived(t *testing.T) url.Values {
	t.Helper()
	select {
	case q := <-c.back:
		return q
	case <-time.After(10 * time.Second):
		t.Fatal("nothing came back to the client's redirect URI")
		return nil
	}
}

type tokenAnswer struct {
	status int
	body   map[string]any
}

func (c *claudeClient) refresh(t *testing.T, refreshToken string) tokenAnswer {
	t.Helper()
	resp, err := http.PostForm(c.cfg.Endpoint.TokenURL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken},
		"client_id": {c.cfg.ClientID}, "resource": {c.resource}})
	if err != nil {
		t.Error(err)
		return tokenAnswer{}
	}
	defer resp.Body.Close()
	a := tokenAnswer{status: resp.StatusCode}
	json.NewDecoder(resp.Body).Decode(&a.body)
	return a
}

func (a tokenAnswer) str(k string) string { s, _ := a.body[k].(string); return s }

func TestClaudeLikeOAuthClient(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	c := newClaudeClient(t, e)
	admin, guest := e.d.Info.Logins[0], e.d.Info.Logins[1]

	// 1. The administrator connects.
	verifier := oauth2.GenerateVerifier()
	c.signIn(t, e, admin, verifier, "claude-state")
	q := c.arrived(t)
	if q.Get("code") == "" || q.Get("state") != "claude-state" || q.Get("iss") != e.url {
		t.Fatalf("authorization response: %v", q)
	}
	tok, err := c.cfg.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", c.resource))
	if err != nil {
		t.Fatal(err)
	}

	// 2. Two refreshes with the same token at once (Claude's tabs, mcp-remote): both succeed with
	// the same new pair, and the grant lives on. Each refresh asked HA about the user.
	var wg sync.WaitGroup
	answers := make([]tokenAnswer, 2)
	for i := range answers {
		wg.Go(func() { answers[i] = c.refresh(t, tok.RefreshToken) })
	}
	wg.Wait()
	for i, a := range answers {
		if a.status != http.StatusOK || a.str("access_token") != answers[0].str("access_token") || a.str("refresh_token") != answers[0].str("refresh_token") {
			t.Fatalf("concurrent refresh %d: %d %v", i, a.status, a.body["error_description"])
		}
	}
	access, refresh := answers[0].str("access_token"), answers[0].str("refresh_token")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: c.resource, HTTPClient: &http.Client{Transport: bearer{access}}}, nil)
	if err != nil {
		t.Fatalf("MCP with the refreshed token: %v", err)
	}
	var lights struct{ Total int }
	if res := callJSON(t, cs, "ha_get_states", map[string]any{"domain": "light", "limit": 1}, &lights); res.IsError || lights.Total == 0 {
		t.Fatalf("tool call with the refreshed token: %s", text(res))
	}
	cs.Close()

	// 3. A non-administrator is told why, and the client is told access_denied at once.
	page := c.signIn(t, e, guest, oauth2.GenerateVerifier(), "guest-state")
	m := continueRe.FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, "not an administrator") {
		t.Fatalf("refusal page: %.600s", page)
	}
	resp, err := http.Get(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if q := c.arrived(t); q.Get("error") != "access_denied" || q.Get("state") != "guest-state" || q.Get("iss") != e.url || q.Get("code") != "" {
		t.Fatalf("refused login reached the client as %v", q)
	}

	// 4. While Home Assistant is down a refresh fails closed without spending the token; once HA
	// is back the same token refreshes.
	e.d.Home.SetDown(true)
	a := c.refresh(t, refresh)
	if a.status != http.StatusServiceUnavailable || a.str("error") != "temporarily_unavailable" {
		e.d.Home.SetDown(false)
		t.Fatalf("refresh with HA down: %d %v", a.status, a.body)
	}
	e.d.Home.SetDown(false)
	// hamcp's HA client reconnects with backoff: 503 until it has.
	testkit.Eventually(t, "a refresh once HA is back", func() bool {
		a = c.refresh(t, refresh)
		return a.status != http.StatusServiceUnavailable
	})
	if a.status != http.StatusOK || a.str("refresh_token") == "" {
		t.Fatalf("refresh after HA came back: %d %v", a.status, a.body)
	}
}

// nodeWithSDK finds Node and the official TypeScript SDK that .ci/run installs into
// .ci/node_modules. Missing, the test fails under CI=true and is skipped elsewhere.
func nodeWithSDK(t *testing.T) (node, modules string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	modules = filepath.Join(root, ".ci", "node_modules")
	node = filepath.Join(modules, ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		node, _ = exec.LookPath("node")
	}
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); node == "" || err != nil {
		msg := "needs Node and @modelcontextprotocol/sdk in .ci/node_modules (bash .ci/run installs them)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, modules
}

// TestOAuthWithTypeScriptClient: the official TypeScript SDK's OAuth client (what Claude Desktop's
// mcp-remote runs) registers, signs in, uses MCP, survives two refreshes with the same token at once,
// and learns at once that a non-administrator's login was refused. Every request carries claude.ai's
// Origin (allowed by default: it used to get 403 before the 401 that starts OAuth), the connector
// URL is tried with and without a trailing slash (/mcp/ used to sign in and then get 404), and an
// unknown method inside the session is an MCP error (-32601), not a transport failure.
//
// With a client ID metadata document (CIMD) the SDK's client id is an https URL. Its document is
// served from loopback with a self-signed certificate, as a household's own client on the LAN
// would be, so the demo lists exactly that host:port in oauth_cimd_private_hosts and trusts the
// certificate through oauth_cimd_ca_file; hamcp still refuses every other private address.
func TestOAuthWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	node, modules := nodeWithSDK(t)
	for _, tt := range []struct {
		name, path, origin string
		cimd               bool
	}{
		{"DCR/mcp", "/mcp", "https://claude.ai", false},
		{"DCR/mcp/", "/mcp/", "https://claude.com", false},
		{"CIMD/mcp", "/mcp", "https://claude.ai", true},
		{"CIMD/mcp/", "/mcp/", "https://claude.ai", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var doc *metadataDocument
			mutate := func(*config.Config) {}
			if tt.cimd {
				doc = serveClientMetadata(t)
				mutate = doc.configure
			}
			e := startDemo(t, mutate)
			admin, guest := e.d.Info.Logins[0], e.d.Info.Logins[1]
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "testdata/oauth_client.cjs", e.url+tt.path, admin.Username, admin.Password, guest.Username, guest.Password)
			cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "MCP_ORIGIN="+tt.origin)
			if doc != nil {
				cmd.Env = append(cmd.Env, "MCP_CLIENT_METADATA_URL="+doc.id)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("oauth_client.cjs: %v\n%s\n%s", err, stderr.String(), out)
			}
			var got struct {
				Iss, ClientID                    string
				AdminState                       bool
				ToolsBefore, ToolsAfter          int
				UnknownMethod                    any
				ToolsAfterUnknown                int
				SameAccess, SameRefresh, Rotated bool
				RefreshAfter                     bool
				GuestStatus                      int
				GuestError                       string
				GuestState                       bool
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			switch {
			case got.Iss != e.url || !got.AdminState || got.ToolsBefore == 0:
				t.Fatalf("sign-in: %+v", got)
			case doc != nil && (got.ClientID != doc.id || doc.fetches.Load() == 0):
				t.Fatalf("CIMD: the client signed in as %q after %d fetches of %s", got.ClientID, doc.fetches.Load(), doc.id)
			case doc == nil && strings.HasPrefix(got.ClientID, "http"):
				t.Fatalf("DCR: the client id is a URL: %q", got.ClientID)
			case got.UnknownMethod != float64(-32601) || got.ToolsAfterUnknown != got.ToolsBefore:
				t.Fatalf("unknown method in the session: %v (tools after: %d)", got.UnknownMethod, got.ToolsAfterUnknown)
			case !got.SameAccess || !got.SameRefresh || !got.Rotated || got.ToolsAfter != got.ToolsBefore || !got.RefreshAfter:
				t.Fatalf("concurrent refresh: %+v", got)
			case got.GuestStatus != http.StatusForbidden || got.GuestError != "access_denied" || !got.GuestState:
				t.Fatalf("non-administrator: %+v", got)
			}
		})
	}
}

// metadataDocument is the TypeScript client's client ID metadata document, served over https
// from loopback with httptest's self-signed certificate.
type metadataDocument struct {
	id      string // https://127.0.0.1:PORT/ts-client.json, the client id
	host    string // 127.0.0.1:PORT
	caFile  string // the server's certificate as PEM
	fetches atomic.Int32
}

func serveClientMetadata(t *testing.T) *metadataDocument {
	t.Helper()
	d := &metadataDocument{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ts-client.json" {
			http.NotFound(w, r)
			return
		}
		d.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"client_id": d.id, "client_name": "Claude (TypeScript SDK, CIMD)",
			// The script's redirect URI (oauth_client.cjs).
			"redirect_uris": []string{"http://127.0.0.1:33418/callback"}, "token_endpoint_auth_method": "none",
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		})
	}))
	t.Cleanup(srv.Close)
	d.host = srv.Listener.Addr().String()
	d.id = "https://" + d.host + "/ts-client.json"
	d.caFile = filepath.Join(t.TempDir(), "client-ca.pem")
	if err := os.WriteFile(d.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *metadataDocument) configure(c *config.Config) {
	c.OAuthCIMDPrivateHosts = []string{d.host}
	c.OAuthCIMDCAFile = d.caFile
}
