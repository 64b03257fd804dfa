package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/hamcp/hamcp/dev/sim/haauth"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/httpserver"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
)

var haUsers = []haauth.User{
	{ID: "u-admin", Name: "Ada Admin", Username: "ada", Password: "ada-pw", Admin: true},
	{ID: "u-guest", Name: "Gus Guest", Username: "gus", Password: "gus-pw"},
	{ID: "u-ops", Name: "Olga Ops", Username: "olga", Password: "olga-pw", Admin: true}, // not the owner: can be demoted
}

const claudeCallback = "https://claude.ai/api/mcp/auth_callback"

// env is one simulated Home Assistant plus one hamcp (HTTP server, OAuth, SQLite store) on loopback.
type env struct {
	t         *testing.T
	ha        *haauth.Provider
	haURL     string
	issuer    string
	addr      string
	storePath string
	st        *store.Store
	srv       *Server
	clock     *fakeclock.Clock
	opts      func(*Options)
	stop      func()
	haDown    atomic.Bool // the simulated HA refuses WebSocket connections
}

// haAdminLLAT is the long-lived token hamcp's own administrator access uses at the simulated HA
// (in the add-on: the Supervisor token).
const haAdminLLAT = "llat-hamcp-admin"

func newEnv(t *testing.T, opts func(*Options)) *env {
	t.Helper()
	e := &env{t: t, clock: fakeclock.New(time.Now()), opts: opts}
	e.ha = haauth.New(haUsers)
	mux := http.NewServeMux()
	e.ha.Register(mux)
	mux.HandleFunc("/api/websocket", e.haWebSocket)
	ha := httptest.NewServer(mux)
	t.Cleanup(ha.Close)
	e.haURL = ha.URL
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	e.issuer = "http://" + e.addr
	e.storePath = filepath.Join(t.TempDir(), "hamcp.db")
	e.start(ln)
	t.Cleanup(func() { e.stop() })
	return e
}

// start opens the store and serves hamcp on ln.
func (e *env) start(ln net.Listener) {
	t := e.t
	st, err := store.Open(e.storePath)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Store: st, Issuer: e.issuer, HAInternalURL: e.haURL, Now: e.clock.Now, Logger: slog.New(slog.DiscardHandler), HACommand: e.haCommand}
	if e.opts != nil {
		e.opts(&o)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	reg := toolkit.NewRegistry()
	reg.Add(toolkit.Define(toolkit.Spec[echoArgs, map[string]string]{
		Name: "t_look", Toolset: "t", Description: "reads", ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a echoArgs) (map[string]string, error) {
			return map[string]string{"saw": a.Word}, nil
		},
	}))
	reg.Add(toolkit.Define(toolkit.Spec[echoArgs, map[string]string]{
		Name: "t_change", Toolset: "t", Description: "changes",
		Handler: func(ctx context.Context, c *toolkit.Call, a echoArgs) (map[string]string, error) {
			return map[string]string{"changed": a.Word}, nil
		},
	}))
	hs := httpserver.New(httpserver.Options{
		Builder:             mcpserver.New(mcpserver.Options{Name: "hamcp", Version: "test", Registry: reg}),
		Verifier:            authn.Chain{srv.Verifier()},
		ResourceMetadataURL: srv.ResourceMetadataURL(),
		ExternalURL:         e.issuer,
		Mount:               []func(*echo.Echo){srv.Mount},
		Logger:              slog.New(slog.DiscardHandler),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ctx, ln, time.Second) }()
	e.st, e.srv = st, srv
	e.stop = func() { cancel(); <-done; st.Close() }
}

// restart stops hamcp, reopens its store file and serves again on the same address.
func (e *env) restart() {
	e.stop()
	// A keep-alive connection to the stopped server may not have seen its close yet; a POST sent
	// on it would fail with EOF (POSTs are not retried), so none is reused.
	http.DefaultClient.CloseIdleConnections()
	var ln net.Listener
	testkit.EventuallyNoError(e.t, "listening again on "+e.addr, func() (err error) {
		ln, err = net.Listen("tcp", e.addr)
		return err
	})
	e.start(ln)
}

type echoArgs struct {
	Word string `json:"word,omitempty"`
}

// haWebSocket is the minimal piece of HA's WebSocket API the login needs: the auth handshake and
// auth/current_user, answered from the simulated provider.
func (e *env) haWebSocket(w http.ResponseWriter, r *http.Request) {
	if e.haDown.Load() {
		http.Error(w, "502 Bad Gateway", http.StatusBadGateway) // what the Supervisor proxy answers while HA restarts
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := r.Context()
	wsjson.Write(ctx, c, map[string]any{"type": "auth_required", "ha_version": "2026.8.1"})
	var auth struct {
		Type        string `json:"type"`
		AccessToken string `json:"access_token"`
	}
	if wsjson.Read(ctx, c, &auth) != nil {
		return
	}
	user, ok := e.ha.CurrentUser(auth.AccessToken)
	if auth.AccessToken == haAdminLLAT {
		user, ok = haUsers[0], true
	}
	if auth.Type != "auth" || !ok {
		wsjson.Write(ctx, c, map[string]any{"type": "auth_invalid", "message": "Invalid access token or password"})
		return
	}
	wsjson.Write(ctx, c, map[string]any{"type": "auth_ok", "ha_version": "2026.8.1"})
	for {
		var cmd struct {
			ID   int    `json:"id"`
			Type string `json:"type"`
		}
		if wsjson.Read(ctx, c, &cmd) != nil {
			return
		}
		if cmd.Type == "auth/current_user" {
			wsjson.Write(ctx, c, map[string]any{"id": cmd.ID, "type": "result", "success": true, "result": e.ha.CurrentUserResult(user)})
			continue
		}
		if cmd.Type == "config/auth/list" && user.Admin {
			wsjson.Write(ctx, c, map[string]any{"id": cmd.ID, "type": "result", "success": true, "result": e.ha.UserList()})
			continue
		}
		wsjson.Write(ctx, c, map[string]any{"id": cmd.ID, "type": "result", "success": false, "error": map[string]string{"code": "unknown_command", "message": "Unknown command."}})
	}
}

// haCommand is Options.HACommand for the tests: one WebSocket command with hamcp's administrator
// token on a connection of its own (the app uses its long-lived HA client instead).
func (e *env) haCommand(ctx context.Context, msgType string, payload any, out any) error {
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.haURL, "http")+"/api/websocket", nil)
	if err != nil {
		return err
	}
	defer c.CloseNow()
	var msg struct {
		ID      int             `json:"id"`
		Type    string          `json:"type"`
		Success bool            `json:"success"`
		Result  json.RawMessage `json:"result"`
	}
	if err := wsjson.Read(ctx, c, &msg); err != nil {
		return err
	}
	if err := wsjson.Write(ctx, c, map[string]string{"type": "auth", "access_token": haAdminLLAT}); err != nil {
		return err
	}
	if err := wsjson.Read(ctx, c, &msg); err != nil || msg.Type != "auth_ok" {
		return fmt.Errorf("auth: %s %v", msg.Type, err)
	}
	if err := wsjson.Write(ctx, c, map[string]any{"id": 1, "type": msgType}); err != nil {
		return err
	}
	if err := wsjson.Read(ctx, c, &msg); err != nil {
		return err
	}
	if !msg.Success {
		return fmt.Errorf("%s failed", msgType)
	}
	return json.Unmarshal(msg.Result, out)
}

// browser is a cookie-keeping user agent that follows redirects itself, so a test can stop where
// hamcp sends it back to the client.
type browser struct {
	t    *testing.T
	c    *http.Client
	home []string // with stop == outside, the browser stops anywhere but these
}

// outside stops a browser at the first redirect that leaves hamcp and the simulated HA.
const outside = "outside"

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// newBrowserFrom is a browser whose connections come from the loopback address ip (127.0.0.2,
// 127.0.0.3, ...), so the server sees distinct client addresses over real sockets.
func newBrowserFrom(t *testing.T, ip string) *browser {
	b := newBrowser(t)
	b.c.Transport = transportFrom(t, ip)
	return b
}

func transportFrom(t *testing.T, ip string) *http.Transport {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

type landing struct {
	status int
	body   string
	url    *url.URL // set when the browser was sent to the client's redirect URI
}

// do sends req and follows redirects until a page is shown or the browser is sent to stop.
func (b *browser) do(req *http.Request, stop string) landing {
	b.t.Helper()
	for range 10 {
		resp, err := b.c.Do(req)
		if err != nil {
			b.t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 300 || resp.StatusCode >= 400 {
			return landing{status: resp.StatusCode, body: string(body)}
		}
		loc, err := resp.Location()
		if err != nil {
			b.t.Fatalf("redirect without Location: %v", err)
		}
		if stop == outside && !slices.ContainsFunc(b.home, func(h string) bool { return strings.HasPrefix(loc.String(), h+"/") }) ||
			stop != "" && stop != outside && strings.HasPrefix(loc.String(), stop) {
			return landing{status: resp.StatusCode, url: loc}
		}
		req, _ = http.NewRequest(http.MethodGet, loc.String(), nil)
	}
	b.t.Fatal("too many redirects")
	return landing{}
}

func (b *browser) get(u, stop string) landing {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return b.do(req, stop)
}

func (b *browser) postForm(u string, form url.Values, stop string) landing {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if pu, err := url.Parse(u); err == nil {
		req.Header.Set("Origin", pu.Scheme+"://"+pu.Host) // a browser submitting a same-origin form
	}
	return b.do(req, stop)
}

var (
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)">`)
	actionRe = regexp.MustCompile(`<form method="post" action="([^"]+)">`)
)

func formFields(page string) (action string, fields url.Values) {
	fields = url.Values{}
	if m := actionRe.FindStringSubmatch(page); m != nil {
		action = html.UnescapeString(m[1])
	}
	for _, m := range hiddenRe.FindAllStringSubmatch(page, -1) {
		fields.Set(m[1], html.UnescapeString(m[2]))
	}
	return action, fields
}

// loginAtHA opens authURL, lands on the simulated HA login page, submits it as user, and returns
// where hamcp leaves the browser: the consent page, an error page, or the client (stop).
func (e *env) loginAtHA(b *browser, authURL, user, pass, stop string) landing {
	e.t.Helper()
	page := b.get(authURL, stop)
	if page.url != nil || page.status != 200 || !strings.Contains(page.body, `name="password"`) {
		return page
	}
	action, fields := formFields(page.body)
	fields.Set("username", user)
	fields.Set("password", pass)
	return b.postForm(e.haURL+action, fields, stop)
}

// consent answers the consent page with action (allow, allow_read, deny).
func (e *env) consent(b *browser, page landing, action, stop string) landing {
	e.t.Helper()
	if page.status != 200 || !strings.Contains(page.body, "Allow") {
		e.t.Fatalf("expected the consent page, got %d: %s", page.status, page.body)
	}
	path, fields := formFields(page.body)
	fields.Set("action", action)
	return b.postForm(e.issuer+path, fields, stop)
}

// oauthClient is what a client like Claude holds after registering.
type oauthClient struct {
	cfg      *oauth2.Config
	resource string
}

func (e *env) register(redirect, name string) oauthClient {
	e.t.Helper()
	body := `{"redirect_uris":["` + redirect + `"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"client_name":"` + name + `"}`
	resp, err := http.Post(e.issuer+"/register", "application/json", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&reg)
	if resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		e.t.Fatalf("register: %d", resp.StatusCode)
	}
	return e.clientFor(reg.ClientID, redirect)
}

func (e *env) clientFor(clientID, redirect string) oauthClient {
	return oauthClient{resource: e.issuer + "/mcp", cfg: &oauth2.Config{
		ClientID:    clientID,
		RedirectURL: redirect,
		Scopes:      []string{authn.ScopeFull},
		Endpoint:    oauth2.Endpoint{AuthURL: e.issuer + "/authorize", TokenURL: e.issuer + "/token", AuthStyle: oauth2.AuthStyleInParams},
	}}
}

func (c oauthClient) authURL(verifier, state string, opts ...oauth2.AuthCodeOption) string {
	opts = append([]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", c.resource)}, opts...)
	return c.cfg.AuthCodeURL(state, opts...)
}

// code runs the whole browser part as the admin and returns the code the client receives.
func (e *env) code(c oauthClient, verifier string, opts ...oauth2.AuthCodeOption) string {
	e.t.Helper()
	return e.codeAs(newBrowser(e.t), "ada", "ada-pw", c, verifier, opts...)
}

// codeAs is code for another user, in browser b.
func (e *env) codeAs(b *browser, user, pass string, c oauthClient, verifier string, opts ...oauth2.AuthCodeOption) string {
	e.t.Helper()
	page := e.loginAtHA(b, c.authURL(verifier, "st", opts...), user, pass, c.cfg.RedirectURL)
	back := e.consent(b, page, "allow", c.cfg.RedirectURL)
	if back.url == nil || back.url.Query().Get("code") == "" {
		e.t.Fatalf("no code: %+v", back)
	}
	return back.url.Query().Get("code")
}

func (e *env) exchange(c oauthClient, code, verifier string) (*oauth2.Token, error) {
	return c.cfg.Exchange(context.Background(), code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", c.resource))
}

// grant runs login, consent and token exchange, returning the tokens.
func (e *env) grant(c oauthClient) *oauth2.Token {
	e.t.Helper()
	v := oauth2.GenerateVerifier()
	tok, err := e.exchange(c, e.code(c, v), v)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

func (e *env) refresh(c oauthClient, refreshToken string) (*oauth2.Token, error) {
	return c.cfg.TokenSource(context.Background(), &oauth2.Token{RefreshToken: refreshToken, Expiry: time.Unix(1, 0)}).Token()
}

// mcpStatus is the HTTP status of a sessionless tools/list with this bearer token.
func (e *env) mcpStatus(token string) int {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.issuer+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects an MCP client with the access token and returns the tool names it sees.
func (e *env) mcpSession(token string) (*mcp.ClientSession, []string) {
	e.t.Helper()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: e.issuer + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close() })
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return cs, names
}

func oauthErrorCode(err error) string {
	if re, ok := err.(*oauth2.RetrieveError); ok {
		return re.ErrorCode
	}
	return ""
}
