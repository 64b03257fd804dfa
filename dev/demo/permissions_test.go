package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/permission"
)

// notificationInbox reads Home Assistant's persistent notifications the way the user sees them:
// over the simulated HA's WebSocket API, with the admin's token.
type notificationInbox struct {
	mu   sync.Mutex
	byID map[string]string // notification_id → message
}

func openInbox(t *testing.T, e *env) *notificationInbox {
	t.Helper()
	c, err := homeassistant.New(homeassistant.Config{BaseURL: e.d.Info.HAURL, Token: e.d.Info.HAToken, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.Start(ctx)
	t.Cleanup(func() { cancel(); c.Close() })
	in := &notificationInbox{byID: map[string]string{}}
	_, err = c.Subscribe(ctx, map[string]any{"type": "persistent_notification/subscribe"}, func(raw json.RawMessage) {
		var ev struct {
			Type          string `json:"type"`
			Notifications map[string]struct {
				Message string `json:"message"`
			} `json:"notifications"`
		}
		if json.Unmarshal(raw, &ev) != nil {
			return
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		for id, n := range ev.Notifications {
			if ev.Type == "removed" {
				delete(in.byID, id)
			} else {
				in.byID[id] = n.Message
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// message waits for the hamcp permission notification for requestID and returns its text.
func (in *notificationInbox) message(t *testing.T, requestID string) string {
	t.Helper()
	var msg string
	testkit.Eventually(t, "the notification for request "+requestID, func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		for id, m := range in.byID {
			if strings.Contains(id, requestID) {
				msg = m
				return true
			}
		}
		return false
	})
	return msg
}

type toolError struct {
	Error   string         `json:"error"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

func asToolError(t *testing.T, res *mcp.CallToolResult) toolError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error, got %s", text(res))
	}
	var te toolError
	if err := json.Unmarshal([]byte(text(res)), &te); err != nil {
		t.Fatalf("tool error is not JSON: %s", text(res))
	}
	return te
}

// approveInPanel answers a request the way the add-on panel does (Home Assistant's ingress vouches
// for the user); the browser tests cover the approval page itself.
func approveInPanel(t *testing.T, e *env, requestID string) {
	t.Helper()
	if err := e.d.App.Permissions.Approve(context.Background(), requestID, permission.Approver{Via: permission.ViaPanel, UserID: "panel-user"}); err != nil {
		t.Fatal(err)
	}
}

func TestPermissionAskAndIsolation(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	inbox := openInbox(t, e)
	a := e.client(t, nil) // the Go SDK client without elicitation support
	b := e.client(t, nil)
	read := map[string]any{"path": "/config/configuration.yaml"}

	te := asToolError(t, callJSON(t, a, "ha_read_file", read, nil))
	link, _ := te.Details["approval_url"].(string)
	reqID, _ := te.Details["request_id"].(string)
	if te.Error != "permission_required" || reqID == "" || !strings.HasPrefix(link, e.url+"/approve?r=") || !strings.Contains(te.Message, link) {
		t.Fatalf("first call: %+v", te)
	}
	// The notification points at the same page and says where to answer; it carries nothing else.
	if msg := inbox.message(t, reqID); !strings.Contains(msg, link) || !strings.Contains(msg, "administrator") || strings.Contains(msg, a.ID()) {
		t.Fatalf("notification: %s", msg)
	}
	approveInPanel(t, e, reqID)
	res := callJSON(t, a, "ha_read_file", read, nil)
	if res.IsError || !strings.Contains(text(res), "homeassistant") {
		t.Fatalf("after approval: %s", text(res))
	}
	// Granted for a's session only.
	if res := callJSON(t, a, "ha_list_directory", map[string]any{"path": "/config"}, nil); res.IsError {
		t.Fatalf("granted session, second tool: %s", text(res))
	}
	if te := asToolError(t, callJSON(t, b, "ha_read_file", read, nil)); te.Error != "permission_required" {
		t.Fatalf("grant leaked to another session: %+v", te)
	}
	// Writes to system directories stay blocked after a grant.
	for _, p := range []string{"/etc/passwd", "/usr/bin/x", "/config/../etc/passwd", "../../etc/passwd"} {
		res := callJSON(t, a, "ha_write_file", map[string]any{"path": p, "content": "x"}, nil)
		if !res.IsError {
			t.Fatalf("write to %s succeeded", p)
		}
	}
	var perms struct {
		Session    string `json:"session"`
		Categories []struct {
			Category, State string
		} `json:"categories"`
	}
	res = callJSON(t, a, "ha_get_permissions", nil, &perms)
	granted := false
	for _, c := range perms.Categories {
		if c.Category == "filesystem" && c.State == "granted" {
			granted = true
		}
	}
	if !granted || strings.Contains(text(res), a.ID()) || perms.Session != e.d.App.Permissions.SessionLabel("mcp:"+a.ID()) && !strings.HasPrefix(perms.Session, "session ") {
		t.Fatalf("ha_get_permissions: %s", text(res))
	}
	var audit struct {
		Total int `json:"total"`
	}
	callJSON(t, a, "ha_get_audit_log", nil, &audit)
	if audit.Total < 3 {
		t.Fatalf("audit log has %d entries for the session", audit.Total)
	}
}

// TestAttackerReadsApprovalFromEventBus is a model with ordinary tools trying to approve its own
// request: it follows call_service (which carries the notification hamcp posts through Home
// Assistant), triggers a request, and uses whatever arrives. With the old one-time code this granted
// the category; now the notification carries only the link, which leads to a Home Assistant login.
func TestAttackerReadsApprovalFromEventBus(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	m := e.client(t, nil)
	if res := callJSON(t, m, "ha_subscribe_events", map[string]any{"event_type": "call_service"}, nil); res.IsError {
		t.Fatal(text(res))
	}
	read := map[string]any{"path": "/config/configuration.yaml"}
	te := asToolError(t, callJSON(t, m, "ha_read_file", read, nil))
	if te.Error != "permission_required" {
		t.Fatal(te)
	}
	// Everything the notification put on the event bus, as the model reads it.
	var seen string
	testkit.EventuallyNoError(t, "the notification's call_service event reaches the model (else this test proves nothing)", func() error {
		var st struct {
			Subscriptions []struct{ Recent []json.RawMessage }
		}
		callJSON(t, m, "ha_get_subscription_stats", map[string]any{"include_events": true}, &st)
		b, _ := json.Marshal(st)
		if seen = string(b); !strings.Contains(seen, "persistent_notification") {
			return fmt.Errorf("events so far: %s", seen)
		}
		return nil
	})
	// The notification's text, as the model read it from the event: nothing in it looks like a code
	// (its link and session label aside, which are no secret).
	msgs := regexp.MustCompile(`"message":"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(seen, -1)
	if len(msgs) == 0 {
		t.Fatalf("no notification message in the events: %s", seen)
	}
	for _, m := range msgs {
		rest := regexp.MustCompile(`https?://\S+|session [0-9a-f]{8}`).ReplaceAllString(m[1], "")
		if regexp.MustCompile(`\b\d{6}\b|\b\d{3}[ -]\d{3}\b|(?i)code`).MatchString(rest) {
			t.Errorf("the notification carries something shaped like a code: %s", m[1])
		}
	}
	// 1. No argument carries a grant any more.
	for _, code := range []string{"000000", "123456"} {
		res := callJSON(t, m, "ha_read_file", map[string]any{"path": "/config/configuration.yaml", "permission_code": code}, nil)
		if !res.IsError {
			t.Fatalf("a call with permission_code ran: %s", text(res))
		}
	}
	// 2. Following the link it read, without a Home Assistant administrator's login, ends at HA's login page.
	link := regexp.MustCompile(`https?://[^\s)"\\]+/approve\?r=[A-Za-z0-9_-]+`).FindString(seen)
	if link == "" {
		t.Fatalf("no approval link in the event: %s", seen)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(resp.Request.URL.String(), e.d.Info.HAURL+"/auth/authorize") || strings.Contains(string(body), "configuration.yaml") {
		t.Fatalf("the link led to %s: %.300s", resp.Request.URL, body)
	}
	// 3. Nothing was granted.
	if te := asToolError(t, callJSON(t, m, "ha_read_file", read, nil)); te.Error != "permission_required" {
		t.Fatalf("after the attack: %+v", te)
	}
}

// TestOtherTokensCannotAnswer: another token (even the same administrator's) can neither see nor
// answer a session's request; the session's own token can deny it but never approve it.
func TestOtherTokensCannotAnswer(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	a := e.client(t, nil)
	te := asToolError(t, callJSON(t, a, "ha_execute_command", map[string]any{"command": "echo x"}, nil))
	reqID, _ := te.Details["request_id"].(string)
	other, err := e.d.Home.NewAdminToken()
	if err != nil {
		t.Fatal(err)
	}
	call := func(token, method, path string) (int, string) {
		req, _ := http.NewRequest(method, e.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		name, token, method, path string
		want                      int
	}{
		{"another token denies", other, http.MethodPost, "/api/permissions/requests/" + reqID + "/deny", http.StatusForbidden},
		{"another token approves", other, http.MethodPost, "/api/permissions/requests/" + reqID + "/approve", http.StatusForbidden},
		{"a non-admin token", e.d.Info.UserToken, http.MethodPost, "/api/permissions/requests/" + reqID + "/deny", http.StatusForbidden},
		{"the session's own token approves", e.d.Info.Token, http.MethodPost, "/api/permissions/requests/" + reqID + "/approve", http.StatusForbidden},
	}
	for _, tc := range tests {
		if code, body := call(tc.token, tc.method, tc.path); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
	// Listing: another token sees nothing of it; the owner sees it, by label, without session ids.
	if code, body := call(other, http.MethodGet, "/api/permissions/requests"); code != 200 || strings.Contains(body, reqID) {
		t.Fatalf("another token's list: %d %s", code, body)
	}
	code, body := call(e.d.Info.Token, http.MethodGet, "/api/permissions/requests")
	if code != 200 || !strings.Contains(body, reqID) || strings.Contains(body, a.ID()) || strings.Contains(body, "session_key") {
		t.Fatalf("the owner's list: %d %s", code, body)
	}
	if te := asToolError(t, callJSON(t, a, "ha_execute_command", map[string]any{"command": "echo x"}, nil)); te.Error != "permission_required" {
		t.Fatalf("after the refused answers: %+v", te)
	}
	// The owner may withdraw its own request: the category is then denied for the session.
	if code, body := call(e.d.Info.Token, http.MethodPost, "/api/permissions/requests/"+reqID+"/deny"); code != 200 {
		t.Fatalf("the owner denies: %d %s", code, body)
	}
	if te := asToolError(t, callJSON(t, a, "ha_execute_command", map[string]any{"command": "echo x"}, nil)); te.Error != "permission_denied" {
		t.Fatalf("after the owner's denial: %+v", te)
	}
}

// TestAuditShowsOnlyTheSession: ha_get_audit_log used to take all_sessions, which handed a model
// every other session's id and calls.
func TestAuditShowsOnlyTheSession(t *testing.T) {
	t.Parallel()
	e := startDemo(t, func(c *config.Config) { c.PermissionFilesystem = "allow" })
	a := e.client(t, nil)
	b := e.client(t, nil)
	if res := callJSON(t, a, "ha_list_directory", map[string]any{"path": "/config"}, nil); res.IsError {
		t.Fatal(text(res))
	}
	if res := callJSON(t, b, "ha_read_file", map[string]any{"path": "/config/configuration.yaml"}, nil); res.IsError {
		t.Fatal(text(res))
	}
	// The audit writer is asynchronous; wait for a's row to land.
	var audit struct {
		Total int `json:"total"`
		Items []struct {
			Tool string `json:"tool"`
		} `json:"items"`
	}
	testkit.Eventually(t, "a's audit row", func() bool {
		callJSON(t, a, "ha_get_audit_log", nil, &audit)
		return audit.Total > 0
	})
	res := callJSON(t, a, "ha_get_audit_log", nil, &audit)
	if audit.Total != 1 || audit.Items[0].Tool != "ha_list_directory" || strings.Contains(text(res), a.ID()) || strings.Contains(text(res), b.ID()) {
		t.Fatalf("a's audit log: %s", text(res))
	}
	if res := callJSON(t, a, "ha_get_audit_log", map[string]any{"all_sessions": true}, nil); !res.IsError {
		t.Fatalf("all_sessions is still accepted: %s", text(res))
	}
}

func TestPermissionByElicitationAndDeny(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	answer := "accept"
	var asked int
	var mu sync.Mutex
	elicit := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		if !strings.Contains(req.Params.Message, "filesystem") && !strings.Contains(req.Params.Message, "command") {
			t.Errorf("elicitation message does not name the category: %s", req.Params.Message)
		}
		if answer == "accept" {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
		}
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	a := e.client(t, elicit)
	res := callJSON(t, a, "ha_list_directory", map[string]any{"path": "/config"}, nil)
	if res.IsError || asked != 1 {
		t.Fatalf("elicitation accept: asked=%d %s", asked, text(res))
	}
	mu.Lock()
	answer = "decline"
	mu.Unlock()
	te := asToolError(t, callJSON(t, a, "ha_execute_command", map[string]any{"command": "echo hi"}, nil))
	if te.Error != "permission_denied" {
		t.Fatalf("declined: %+v", te)
	}
	mu.Lock()
	answer = "accept"
	mu.Unlock()
	if te := asToolError(t, callJSON(t, a, "ha_execute_command", map[string]any{"command": "echo hi"}, nil)); te.Error != "permission_denied" {
		t.Fatalf("deny did not stick: %+v", te)
	}
}

func TestPermissionPolicies(t *testing.T) {
	t.Parallel()
	e := startDemo(t, func(c *config.Config) {
		c.PermissionFilesystem = "allow"
		c.PermissionCommand = "deny"
	})
	a := e.client(t, nil)
	res := callJSON(t, a, "ha_write_file", map[string]any{"path": "/config/notes.txt", "content": "hello"}, nil)
	if res.IsError {
		t.Fatalf("allow policy: %s", text(res))
	}
	if b, err := os.ReadFile(filepath.Join(e.d.Info.SandboxDir, "config", "notes.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("file not written: %v %q", err, b)
	}
	if te := asToolError(t, callJSON(t, a, "ha_execute_command", map[string]any{"command": "true"}, nil)); te.Error != "permission_denied" {
		t.Fatalf("deny policy: %+v", te)
	}
	// Deleting keeps the file recoverable.
	res = callJSON(t, a, "ha_delete_file", map[string]any{"path": "/config/notes.txt"}, nil)
	var item struct{ ID string }
	json.Unmarshal([]byte(text(res)), &item)
	if res.IsError || item.ID == "" {
		t.Fatalf("delete: %s", text(res))
	}
	if res := callJSON(t, a, "ha_restore_file", map[string]any{"id": item.ID}, nil); res.IsError {
		t.Fatalf("restore: %s", text(res))
	}
	if b, err := os.ReadFile(filepath.Join(e.d.Info.SandboxDir, "config", "notes.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("restored file: %v %q", err, b)
	}
}

// pageBrowser is a real Chromium for the approval page tests.
type pageBrowser struct {
	t   *testing.T
	ctx context.Context
}

func newPageBrowser(t *testing.T) *pageBrowser {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	// The first run starts the browser and must not carry a deadline (it would end the browser).
	if _, err := chromedp.Run(ctx, chromedp.Title()); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return &pageBrowser{t: t, ctx: ctx}
}

// login opens an approval link, signs in at the simulated Home Assistant, and returns the text of the
// page hamcp shows afterwards (the request, or a refusal).
func (b *pageBrowser) login(link, user, pass string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(link),
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, user),
		chromedp.SendKeys(`#password`, pass),
		chromedp.Click(`button[type=submit]`),
	)
	for err == nil {
		loc, lerr := chromedp.Run(ctx, chromedp.Location())
		if lerr == nil && strings.Contains(loc, "/approve/") {
			break
		}
		if err = ctx.Err(); err == nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if err == nil {
		err = chromedp.Do(ctx, chromedp.WaitReady(`body`))
	}
	body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		where, _ := chromedp.Run(b.ctx, chromedp.Location())
		b.t.Fatalf("browser login: %v (at %s: %.500s)", err, where, body)
	}
	return body
}

// click presses a button on the request page the way a person does and returns the result page's text.
func (b *pageBrowser) click(value string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const b = document.querySelector('button[value="`+value+`"]'); if (!b) return false; b.click(); return true })()`)); err != nil {
		b.t.Fatal(err)
	}
	for {
		body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("result") ? document.body.innerText : ""`))
		if err == nil && body != "" {
			return body
		}
		if ctx.Err() != nil {
			b.t.Fatalf("no result page after %s: %v", value, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitText waits until the page shows want and returns its text.
func (b *pageBrowser) waitText(want string) string {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		body, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		if err == nil && strings.Contains(body, want) {
			return body
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("the page never showed %q: %v %.500s", want, err, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestApprovalPageInBrowser is the user answering requests on the approval page in Chromium: a call
// waits while the client shows the page (URL-mode elicitation) and goes ahead once the administrator
// approves; a non-administrator is turned away; a forged answer without the page's CSRF token is
// refused; the retried call of a client without elicitation succeeds after approval.
func TestApprovalPageInBrowser(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	// Started after the demo so it closes first: the demo's shutdown would otherwise wait out its grace
	// period on the browser's connections.
	b := newPageBrowser(t)
	admin, guest := e.d.Info.Logins[0], e.d.Info.Logins[1]
	if !admin.Admin || guest.Admin {
		t.Fatalf("demo logins: %+v", e.d.Info.Logins)
	}

	// 1. A client that can open pages: the call waits for the answer.
	urls := make(chan *mcp.ElicitParams, 1)
	completed := make(chan string, 1)
	viaURL := e.client(t, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			urls <- req.Params
			return &mcp.ElicitResult{Action: "accept"}, nil // the user agreed to open the page
		},
		ElicitationCompleteHandler: func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	})
	result := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := viaURL.CallTool(context.Background(), &mcp.CallToolParams{Name: "ha_execute_command", Arguments: map[string]any{"command": "echo via-the-page"}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		result <- res
	}()
	var asked *mcp.ElicitParams
	select {
	case asked = <-urls:
	case res := <-result:
		t.Fatalf("the call did not wait for the page: %s", text(res))
	case <-time.After(10 * time.Second):
		t.Fatal("the client was never asked to open the page")
	}
	if asked.Mode != "url" || !strings.HasPrefix(asked.URL, e.url+"/approve?r=") || !strings.Contains(asked.Message, "command") {
		t.Fatalf("URL elicitation: %+v", asked)
	}
	shown := b.login(asked.URL, admin.Username, admin.Password)
	for _, want := range []string{"command", "ha_execute_command", "echo via-the-page", "demo-test", "Approve", "Deny"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the request page does not show %q:\n%s", want, shown)
		}
	}
	if strings.Contains(shown, viaURL.ID()) {
		t.Errorf("the request page shows the session id:\n%s", shown)
	}
	if done := b.click("approve"); !strings.Contains(done, "Approved") {
		t.Fatalf("after Approve: %s", done)
	}
	select {
	case res := <-result:
		if res.IsError || !strings.Contains(text(res), "via-the-page") {
			t.Fatalf("the waiting call: %s", text(res))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting call never went ahead")
	}
	select {
	case id := <-completed:
		if id != asked.ElicitationID {
			t.Fatalf("completion for %q, want %q", id, asked.ElicitationID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/elicitation/complete")
	}

	// 2. A client without elicitation: the refusal carries the link.
	plain := e.client(t, nil)
	read := map[string]any{"path": "/config/configuration.yaml"}
	te := asToolError(t, callJSON(t, plain, "ha_read_file", read, nil))
	link, _ := te.Details["approval_url"].(string)
	if link == "" {
		t.Fatalf("no approval_url: %+v", te)
	}
	// A non-administrator logging in is turned away and nothing changes.
	if refused := b.login(link, guest.Username, guest.Password); !strings.Contains(refused, "administrator") || strings.Contains(refused, "configuration.yaml") {
		t.Fatalf("non-admin: %s", refused)
	}
	if te := asToolError(t, callJSON(t, plain, "ha_read_file", read, nil)); te.Error != "permission_required" {
		t.Fatalf("after the non-admin: %+v", te)
	}
	// The administrator logs in; a forged answer from the same browser without the CSRF token fails.
	if shown := b.login(link, admin.Username, admin.Password); !strings.Contains(shown, "ha_read_file") {
		t.Fatalf("request page: %s", shown)
	}
	// The forged form has the login id and the browser's cookie, only not the page's CSRF token.
	requestPage, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(() => {
		const f = document.createElement("form"); f.method = "post"; f.action = "/approve/request";
		for (const [k, v] of [["v", document.querySelector('input[name="v"]').value], ["action", "approve"]]) {
			const i = document.createElement("input"); i.type = "hidden"; i.name = k; i.value = v; f.appendChild(i) }
		document.body.appendChild(f); f.submit(); return true })()`)); err != nil {
		t.Fatal(err)
	}
	if forged := b.waitText("Answer refused"); !strings.Contains(forged, "did not come from the approval page") {
		t.Fatalf("forged POST without CSRF: %s", forged)
	}
	// Back on the genuine page (the login is still good), the genuine answer works.
	nctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(nctx, chromedp.Navigate(requestPage)); err != nil {
		t.Fatal(err)
	}
	b.waitText("ha_read_file")
	if te := asToolError(t, callJSON(t, plain, "ha_read_file", read, nil)); te.Error != "permission_required" {
		t.Fatalf("after the forged POST: %+v", te)
	}
	if done := b.click("approve"); !strings.Contains(done, "Approved") {
		t.Fatalf("after Approve: %s", done)
	}
	if res := callJSON(t, plain, "ha_read_file", read, nil); res.IsError || !strings.Contains(text(res), "homeassistant") {
		t.Fatalf("the retried call: %s", text(res))
	}
	// The page was seen and answered by the administrator, and the audit log says so.
	var audit struct {
		Items []struct{ Outcome, Detail string } `json:"items"`
	}
	testkit.Eventually(t, "the approval's audit row", func() bool {
		callJSON(t, plain, "ha_get_audit_log", map[string]any{"outcome": "granted"}, &audit)
		return len(audit.Items) > 0
	})
	if len(audit.Items) != 1 || !strings.Contains(audit.Items[0].Detail, "approval page") {
		t.Fatalf("audit of the approval: %+v", audit)
	}
}
