package demo_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/oauth2"

	"github.com/hamcp/hamcp/dev/demo"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/permission"
)

// The hamcp panel in a real Chromium, as the user sees it in Home Assistant's sidebar (here the demo
// serves it on loopback as demo.DemoUser). One Chromium serves every panel test, each in its own tab.

// sharedChromium is started by the first panel test and stopped when the last one running ends.
var sharedChromium struct {
	mu      sync.Mutex
	users   int
	browser context.Context
	stop    func()
}

// panelTab opens a tab in the shared Chromium for the rest of the test.
func panelTab(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	s := &sharedChromium
	s.mu.Lock()
	if s.users == 0 {
		dir, err := os.MkdirTemp("", "hamcp-panel-chromium-")
		if err != nil {
			s.mu.Unlock()
			t.Fatal(err)
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-quic", true), chromedp.Flag("hide-scrollbars", true), chromedp.UserDataDir(dir))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		browser, cancelBrowser := chromedp.NewContext(alloc)
		// The first run starts the browser and must not carry a deadline (it would end the browser).
		if _, err := chromedp.Run(browser, chromedp.Title()); err != nil {
			cancelBrowser()
			cancelAlloc()
			os.RemoveAll(dir)
			s.mu.Unlock()
			t.Fatalf("starting Chromium: %v", err)
		}
		s.browser, s.stop = browser, func() { cancelBrowser(); cancelAlloc(); os.RemoveAll(dir) }
	}
	s.users++
	browser := s.browser
	s.mu.Unlock()
	tab, closeTab := chromedp.NewContext(browser)
	if _, err := chromedp.Run(tab, chromedp.Title()); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	t.Cleanup(func() {
		closeTab()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.users--; s.users == 0 {
			s.stop()
		}
	})
	return tab
}

// within runs the steps with a deadline, failing the test with where the page is on error.
func within(t *testing.T, tab context.Context, d time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, d)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v (%s)", err, pageState(tab))
	}
}

func pageState(tab context.Context) string {
	where, _ := chromedp.Run(tab, chromedp.Location())
	body, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return fmt.Sprintf("at %s: %.600s", where, body)
}

// waitJS waits until the expression is true in the page (the live parts redraw on their own).
func waitJS(t *testing.T, tab context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the panel never showed %s: %v (%s)", what, err, pageState(tab))
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// press clicks a button the way a person does (the form posts through the browser).
func press(t *testing.T, tab context.Context, selector string) {
	t.Helper()
	ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => { const b = document.querySelector(`+jsString(selector)+`); if (!b) return false; b.click(); return true })()`))
	if err != nil || !ok {
		t.Fatalf("no %s to press: %v (%s)", selector, err, pageState(tab))
	}
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func bodyText(t *testing.T, tab context.Context) string {
	t.Helper()
	s, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sessionClient is an MCP client with a session of its own (protocol 2025-11-25, as Claude's
// clients connect), so its grants are its own and the server can ask it things.
func sessionClient(t *testing.T, e *env, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{e.d.Info.Token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "1"}, opts).Connect(context.Background(), tr,
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if cs.ID() == "" {
		t.Fatal("the client got no MCP session")
	}
	return cs
}

// urlClient is an MCP client that can open pages (URL-mode elicitation): its privileged calls wait
// for the user's answer. It tells asked about each page it was asked to open.
func urlClient(t *testing.T, e *env, asked chan<- string) *mcp.ClientSession {
	return sessionClient(t, e, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- req.Params.URL
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
}

func callAsync(cs *mcp.ClientSession, tool string, args map[string]any) <-chan *mcp.CallToolResult {
	out := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		out <- res
	}()
	return out
}

func waitResult(t *testing.T, ch <-chan *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(15 * time.Second):
		t.Fatal("the waiting tool call never finished")
		return nil
	}
}

// TestPanelApprovalsInBrowser is the user answering in the panel while the assistant waits: a request
// appears on the open page without a reload, Approve lets the waiting call run, Deny refuses the next
// one, Revoke takes a grant back so the session's next call is refused, and the Activity page's
// filters find the decisions with the Home Assistant user who made them.
func TestPanelApprovalsInBrowser(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	panelURL := e.d.Info.PanelURL
	within(t, tab, 20*time.Second, chromedp.Navigate(panelURL+"approvals"), chromedp.WaitVisible(`#no-pending`))

	// 1. Approve: the call waits, the request shows up live, Approve lets it run.
	asked := make(chan string, 4)
	waiting := urlClient(t, e, asked)
	result := callAsync(waiting, "ha_execute_command", map[string]any{"command": "echo approved-in-the-panel"})
	waitJS(t, tab, "the waiting request", `document.querySelectorAll('#pending article').length === 1`)
	shown := bodyText(t, tab)
	for _, want := range []string{"ha_execute_command", "echo approved-in-the-panel", "command", "demo-test", "approve", "deny", "Demo Administrator"} {
		if !strings.Contains(strings.ToLower(shown), strings.ToLower(want)) {
			t.Errorf("the approvals page does not show %q:\n%s", want, shown)
		}
	}
	if strings.Contains(shown, waiting.ID()) {
		t.Errorf("the approvals page shows the session id %s", waiting.ID())
	}
	if n, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('pending-count').firstChild.nodeValue`)); n != "1" {
		t.Errorf("the Approvals tab badge says %q, want 1", n)
	}
	press(t, tab, `#pending button[data-action="approve"]`)
	if res := waitResult(t, result); res.IsError || !strings.Contains(text(res), "approved-in-the-panel") {
		t.Fatalf("the approved call: %s", text(res))
	}
	waitJS(t, tab, "the grant's confirmation", `!!document.getElementById('flash') && document.getElementById('flash').textContent.includes('Granted: that session may use the command permission')`)
	waitJS(t, tab, "the command grant", `!!document.querySelector('tr.grant[data-category="command"]')`)

	// 2. Deny: another session's call waits and is refused when the user says no.
	asked2 := make(chan string, 4)
	refused := urlClient(t, e, asked2)
	read := map[string]any{"path": "/config/configuration.yaml"}
	result = callAsync(refused, "ha_read_file", read)
	waitJS(t, tab, "the second request", `document.querySelectorAll('#pending article').length === 1 && document.body.innerText.includes('ha_read_file')`)
	press(t, tab, `#pending button[data-action="deny"]`)
	res := waitResult(t, result)
	if te := asToolError(t, res); te.Error != "permission_denied" || !strings.Contains(te.Message, "Demo Administrator") {
		t.Fatalf("the denied call: %+v", te)
	}
	waitJS(t, tab, "the denial", `!!document.querySelector('tr.denied[data-category="filesystem"]')`)

	// 3. Revoke: a session that was granted filesystem access loses it, and its next call is refused.
	plain := sessionClient(t, e, nil)
	te := asToolError(t, callJSON(t, plain, "ha_read_file", read, nil))
	if te.Error != "permission_required" {
		t.Fatalf("first read: %+v", te)
	}
	waitJS(t, tab, "the plain client's request", `document.querySelectorAll('#pending article').length === 1`)
	press(t, tab, `#pending button[data-action="approve"]`)
	waitJS(t, tab, "the filesystem grant", `!!document.querySelector('tr.grant[data-category="filesystem"]')`)
	if res := callJSON(t, plain, "ha_read_file", read, nil); res.IsError {
		t.Fatalf("read after approval: %s", text(res))
	}
	press(t, tab, `tr.grant[data-category="filesystem"] button`)
	waitJS(t, tab, "the revocation", `!!document.getElementById('flash') && document.getElementById('flash').textContent.includes('Revoked') && !document.querySelector('tr.grant[data-category="filesystem"]')`)
	if te := asToolError(t, callJSON(t, plain, "ha_read_file", read, nil)); te.Error != "permission_required" {
		t.Fatalf("read after revoke: %+v", te)
	}

	// 4. Activity: filter by outcome, then by tool; the HA user who decided is on each decision.
	within(t, tab, 20*time.Second, chromedp.Navigate(panelURL+"activity"), chromedp.WaitVisible(`#filters`))
	for _, f := range []struct{ name, value, rowCheck, detail string }{
		{"outcome", "denied", `r.dataset.outcome === 'denied'`, "denied by Demo Administrator (Home Assistant user demo-user-0001) in the hamcp panel"},
		{"outcome", "revoked", `r.dataset.outcome === 'revoked'`, "filesystem grant revoked by Demo Administrator"},
		{"tool", "ha_execute_command", `r.innerText.includes('ha_execute_command')`, "approved by Demo Administrator"},
	} {
		waitJS(t, tab, "the audit entries", `document.querySelectorAll('#audit tr.entry').length > 0`)
		ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => {
			for (const s of document.querySelectorAll('#filters select')) s.value = '';
			const s = document.querySelector('#filters select[name="`+f.name+`"]');
			if (![...s.options].some(o => o.value === `+jsString(f.value)+`)) return false;
			s.value = `+jsString(f.value)+`; document.querySelector('#filters button[type="submit"]').click(); return true })()`))
		if err != nil || !ok {
			t.Fatalf("filter %s=%s not offered: %v (%s)", f.name, f.value, err, pageState(tab))
		}
		waitJS(t, tab, "the filtered log", `location.search.includes('`+f.name+`=`+f.value+`') && document.querySelectorAll('#audit tr.entry').length > 0`)
		all, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`[...document.querySelectorAll('#audit tr.entry')].every(r => `+f.rowCheck+`)`))
		if !all {
			t.Errorf("filter %s=%s shows other entries: %s", f.name, f.value, pageState(tab))
		}
		if body := bodyText(t, tab); !strings.Contains(body, f.detail) {
			t.Errorf("filter %s=%s: the log does not say %q:\n%s", f.name, f.value, f.detail, body)
		}
	}
	if body := bodyText(t, tab); strings.Contains(body, waiting.ID()) || strings.Contains(body, plain.ID()) {
		t.Error("the activity page shows a session id")
	}
}

// TestPanelRevokesOAuthSignIn signs a Claude-like client in, then the user revokes the sign-in in the
// panel's Clients page: its access token is refused from then on.
func TestPanelRevokesOAuthSignIn(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	tab := panelTab(t)
	c := newClaudeClient(t, e)
	verifier := oauth2.GenerateVerifier()
	c.signIn(t, e, e.d.Info.Logins[0], verifier, "panel-state")
	q := c.arrived(t)
	tok, err := c.cfg.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", c.resource))
	if err != nil {
		t.Fatal(err)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if resp := post(t, e.url+"/mcp", tok.AccessToken, "", list); resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list with the new token: %d", resp.StatusCode)
	}

	within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL+"clients"), chromedp.WaitVisible(`tr.oauth-grant`))
	body := bodyText(t, tab)
	for _, want := range []string{"Claude", e.d.Info.Logins[0].Username, "full"} {
		if !strings.Contains(strings.ToLower(body), strings.ToLower(want)) {
			t.Errorf("the clients page does not show %q:\n%s", want, body)
		}
	}
	page, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	for _, secret := range []string{tok.AccessToken, tok.RefreshToken, e.d.Info.Token} {
		if strings.Contains(page, secret) {
			t.Fatal("the clients page carries a token")
		}
	}
	press(t, tab, `tr.oauth-grant[data-client="Claude"] button`)
	waitJS(t, tab, "the revocation", `!!document.getElementById('flash') && document.getElementById('flash').textContent.includes('Sign-in revoked') && !document.querySelector('tr.oauth-grant')`)
	if resp := post(t, e.url+"/mcp", tok.AccessToken, "", list); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("tools/list with the revoked token: %d, want 401", resp.StatusCode)
	}
	if a := c.refresh(t, tok.RefreshToken); a.status == http.StatusOK {
		t.Fatal("the revoked sign-in's refresh token still works")
	}
}

// TestPanelLooksRightEverywhere draws every page at desktop and phone sizes in light and dark, saves
// the screenshots ($HAMCP_SCREENSHOTS, else a temporary folder), and fails if a page is wider than the
// phone's screen.
func TestPanelLooksRightEverywhere(t *testing.T) {
	t.Parallel()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	e := startDemo(t, func(c *config.Config) {
		c.SSHAuthorizedKeys = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))) + " laptop@home"
	})
	tab := panelTab(t)

	// Something on every page: a waiting request, a grant, a sign-in, audit entries.
	plain := sessionClient(t, e, nil)
	asToolError(t, callJSON(t, plain, "ha_execute_command", map[string]any{"command": "ls -la /config/custom_components/some_very_long_integration_name_that_wraps"}, nil))
	other := sessionClient(t, e, nil)
	te := asToolError(t, callJSON(t, other, "ha_read_file", map[string]any{"path": "/config/configuration.yaml"}, nil))
	id, _ := te.Details["request_id"].(string)
	if err := e.d.App.Permissions.Approve(context.Background(), id, permission.Approver{Via: permission.ViaPanel, UserID: demo.DemoUser.ID, Name: demo.DemoUser.DisplayName}); err != nil {
		t.Fatal(err)
	}
	callJSON(t, other, "ha_read_file", map[string]any{"path": "/config/configuration.yaml"}, nil)
	// A change Activity can undo.
	if res := callJSON(t, other, "ha_call_service", map[string]any{"domain": "light", "service": "turn_on",
		"entity_id": "light.living_room_lamp", "data": map[string]any{"brightness_pct": 40}}, nil); res.IsError {
		t.Fatalf("light: %s", text(res))
	}
	link, _ := te.Details["approval_url"].(string)
	_, linkSecret, ok := strings.Cut(link, "?r=")
	if !ok || len(linkSecret) < 32 {
		t.Fatalf("no approval link in the refusal: %+v", te)
	}
	sshAddr, sshDone, err := e.d.App.ServeSSH(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_ = sshDone // ends with the test's context
	c := newClaudeClient(t, e)
	verifier := oauth2.GenerateVerifier()
	c.signIn(t, e, e.d.Info.Logins[0], verifier, "s")
	if _, err := c.cfg.Exchange(t.Context(), c.arrived(t).Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", c.resource)); err != nil {
		t.Fatal(err)
	}

	dir := os.Getenv("HAMCP_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pages := []struct{ name, path, ready string }{
		{"connect", "", `document.getElementById('checks').dataset.done === 'yes' && document.querySelectorAll('#checks li[data-state]').length === 3`},
		{"approvals", "approvals", `document.querySelectorAll('#pending article').length === 1`},
		{"clients", "clients", `!!document.querySelector('tr.oauth-grant')`},
		{"activity", "activity", `document.querySelectorAll('#audit tr.entry').length > 0`},
		{"status", "status", `!!document.getElementById('version')`},
	}
	sizes := []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 800, false}, {"phone", 390, 844, true}}
	for _, size := range sizes {
		for _, scheme := range []string{"light", "dark"} {
			within(t, tab, 10*time.Second, chromedp.EmulateViewport(size.width, size.height, func(p *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
				p.Mobile = size.mobile
			}), colorScheme(scheme))
			for _, pg := range pages {
				within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL+pg.path), chromedp.WaitReady(`body`))
				waitJS(t, tab, pg.name+"'s content", pg.ready)
				if size.mobile && scheme == "light" {
					html, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
					for what, secret := range map[string]string{"the MCP token": e.d.Info.Token, "an approval link's secret": linkSecret,
						"a session id": plain.ID(), "another session id": other.ID()} {
						if secret != "" && strings.Contains(html, secret) {
							t.Errorf("%s shows %s", pg.name, what)
						}
					}
				}
				if scheme == "dark" {
					bg, _ := chromedp.Run(tab, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
					if bg != "rgb(17, 17, 17)" {
						t.Errorf("%s in dark mode has background %s, want Home Assistant's dark rgb(17, 17, 17)", pg.name, bg)
					}
				}
				if size.mobile {
					wide, _ := chromedp.Run(tab, chromedp.Evaluate[string](`(() => {
						const w = document.documentElement.clientWidth;
						if (document.documentElement.scrollWidth <= w) return "";
						return [...document.querySelectorAll('body *')].filter(el => el.getBoundingClientRect().right > w + 1)
							.slice(0, 5).map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + el.className : '')).join(', ') || "the page" })()`))
					if wide != "" {
						t.Errorf("%s (%s) is wider than a %d px phone: %s", pg.name, scheme, size.width, wide)
					}
				}
				shot, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("panel-%s-%s-%s.png", pg.name, size.name, scheme)
				if err := os.WriteFile(filepath.Join(dir, name), shot, 0o644); err != nil {
					t.Fatal(err)
				}
				if docsImages[name] && os.Getenv("UPDATE_SCREENSHOTS") == "1" {
					if err := os.WriteFile(filepath.Join("..", "..", "docs", "images", name), shot, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	// The Connect page gives Claude Desktop what it needs: the SSH host, port and host key.
	within(t, tab, 20*time.Second, chromedp.Navigate(e.d.Info.PanelURL), chromedp.WaitVisible(`#desktop-snippet`))
	body := bodyText(t, tab)
	_, port, _ := strings.Cut(sshAddr, ":")
	for _, want := range []string{`"-p"`, `"` + port + `"`, "hamcp@127.0.0.1", "SHA256:", `"~/.ssh/hamcp"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the Connect page lacks %s:\n%s", want, body)
		}
	}
	t.Logf("screenshots in %s", dir)
}

// docsImages are the screenshots DOCS.md shows; UPDATE_SCREENSHOTS=1 writes them into docs/images.
var docsImages = map[string]bool{"panel-connect-desktop-light.png": true, "panel-approvals-phone-dark.png": true,
	"panel-activity-desktop-light.png": true, "panel-status-desktop-dark.png": true}

// colorScheme makes the page see prefers-color-scheme: scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		if err != nil {
			return errors.New("emulating prefers-color-scheme: " + err.Error())
		}
		return nil
	})
}
