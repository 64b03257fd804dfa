package demo_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// chromium finds Debian's Chromium; CI installs it, so there a missing browser is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("Chromium is required in CI")
	}
	t.Skip("no Chromium installed")
	return ""
}

// TestOAuthLoginInBrowser is a person connecting an OAuth client: a real Chromium follows
// /authorize to the (simulated) Home Assistant login page, signs in as the administrator, reads
// hamcp's consent page and clicks Allow; the client then exchanges the code and uses MCP.
func TestOAuthLoginInBrowser(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	e := startDemo(t, nil)

	// The client's redirect target: a loopback server that records the code.
	codes := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query()
		w.Write([]byte("<html><body><h1>Connected</h1></body></html>"))
	}))
	defer cb.Close()
	redirect := cb.URL + "/callback"

	// Dynamic client registration, as Claude does.
	reg, _ := json.Marshal(map[string]any{"client_name": "Browser Test Client", "redirect_uris": []string{redirect},
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}})
	resp, err := http.Post(e.url+"/register", "application/json", strings.NewReader(string(reg)))
	if err != nil {
		t.Fatal(err)
	}
	var client struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&client)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || client.ClientID == "" {
		t.Fatalf("registration: %d %+v", resp.StatusCode, client)
	}

	verifierBytes := make([]byte, 32)
	rand.Read(verifierBytes)
	verifier := base64.RawURLEncoding.EncodeToString(verifierBytes)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type": {"code"}, "client_id": {client.ClientID}, "redirect_uri": {redirect}, "state": {"xyz123"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {e.url + "/mcp"}, "scope": {"hamcp:full"},
	}
	authorize := e.url + "/authorize?" + q.Encode()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	// The first run starts the browser and must not carry a deadline (it would end the browser).
	if _, err := chromedp.Run(browserCtx, chromedp.Title()); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	ctx, cancelT := context.WithTimeout(browserCtx, 30*time.Second)
	defer cancelT()

	login := e.d.Info.Logins[0]
	err = chromedp.Do(ctx,
		chromedp.Navigate(authorize),
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, login.Username),
		chromedp.SendKeys(`#password`, login.Password),
		chromedp.Click(`button[type=submit]`),
	)
	if err == nil {
		// The login posts and redirects through hamcp to its consent page: wait for the new document.
		deadline := time.Now().Add(20 * time.Second)
		for {
			loc, lerr := chromedp.Run(ctx, chromedp.Location())
			if lerr == nil && strings.Contains(loc, "/oauth/") {
				break
			}
			if time.Now().After(deadline) {
				err = lerr
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err == nil {
			err = chromedp.Do(ctx, chromedp.WaitReady(`body`))
		}
	}
	if err != nil {
		where, _ := chromedp.Run(browserCtx, chromedp.Location())
		body, _ := chromedp.Run(browserCtx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("browser, login: %v (at %s: %.500s)", err, where, body)
	}
	consentText, err := chromedp.Run(ctx, chromedp.Text(`body`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	// Press Allow the way a person does: the form submits through the browser.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const b = document.querySelector('button[value="allow"]'); if (!b) return false; b.click(); return true })()`)); err != nil {
		t.Fatalf("browser, consent: %v", err)
	}
	if dir := os.Getenv("HAMCP_SCREENSHOTS"); dir != "" {
		os.WriteFile(filepath.Join(dir, "consent.png"), shot, 0o644)
	}
	for _, want := range []string{"Browser Test Client", "127.0.0.1"} {
		if !strings.Contains(consentText, want) {
			t.Errorf("consent page does not show %q:\n%s", want, consentText)
		}
	}
	var got url.Values
	select {
	case got = <-codes:
	case <-time.After(20 * time.Second):
		where, _ := chromedp.Run(browserCtx, chromedp.Location())
		body, _ := chromedp.Run(browserCtx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("the browser never came back to the client (at %s: %.300s)", where, body)
	}
	if got.Get("state") != "xyz123" || got.Get("code") == "" || got.Get("iss") != e.url {
		t.Fatalf("redirect to client: %v", got)
	}

	form := url.Values{"grant_type": {"authorization_code"}, "code": {got.Get("code")}, "redirect_uri": {redirect},
		"client_id": {client.ClientID}, "code_verifier": {verifier}, "resource": {e.url + "/mcp"}}
	resp, err = http.PostForm(e.url+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != 200 || tok.AccessToken == "" {
		t.Fatalf("token: %d", resp.StatusCode)
	}
	tr := &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok.AccessToken}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "oauth-client", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var lights struct{ Total int }
	if res := callJSON(t, cs, "ha_get_states", map[string]any{"domain": "light", "limit": 1}, &lights); res.IsError || lights.Total == 0 {
		t.Fatalf("MCP with the OAuth token: %s", text(res))
	}
	// The code is single-use.
	resp, _ = http.PostForm(e.url+"/token", form)
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Fatal("authorization code accepted twice")
	}
}
