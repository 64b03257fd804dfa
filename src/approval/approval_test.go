package approval

import (
	"context"
	"errors"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
)

// home is the simulated Home Assistant every test logs in to, started once for the package.
var home *sim.Home

func TestMain(m *testing.M) {
	h, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	home = h
	code := m.Run()
	h.Close()
	os.Exit(code)
}

// env is one hamcp side: a permission manager on a real store, the page, served on loopback.
type env struct {
	t     *testing.T
	m     *permission.Manager
	page  *Page
	st    *store.Store
	base  string
	clock *fakeclock.Clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st, err := store.Open(t.TempDir() + "/hamcp.db")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, clock: fakeclock.New(time.Now())}
	var page *Page
	e.m, err = permission.New(permission.Options{Store: st, Clock: e.clock.Now, Link: func(s string) string { return page.Link(s) }})
	if err != nil {
		t.Fatal(err)
	}
	page, err = New(Options{Manager: e.m, HAInternalURL: home.URL(), Logger: slog.New(slog.DiscardHandler), Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.page = page
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.base = "http://" + ln.Addr().String()
	if page.Link("x") != "" {
		t.Fatal("a link before Start")
	}
	if err := page.Start(e.base, ""); err != nil {
		t.Fatal(err)
	}
	ec := echo.New()
	page.Mount(ec)
	srv := &http.Server{Handler: ec, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		e.m.Close()
		st.Close()
	})
	return e
}

// ask makes a privileged call in session key and returns the refusal the model would see.
func (e *env) ask(session string, c permission.Category) *permission.RequiredError {
	e.t.Helper()
	err := e.m.Authorize(context.Background(), permission.Request{SessionKey: session, Client: "claude-code/2.1", Tool: "ha_read_file",
		Category: c, ArgsSummary: "path=/config/secrets.yaml"})
	var re *permission.RequiredError
	if !errors.As(err, &re) || re.Link == "" {
		e.t.Fatalf("want a refusal with a link, got %v", err)
	}
	return re
}

// browser keeps cookies and follows redirects itself, like a person's browser.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	body   string
	at     string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	for range 10 {
		resp, err := b.c.Do(req)
		if err != nil {
			b.t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 300 || resp.StatusCode >= 400 {
			return page{status: resp.StatusCode, body: string(body), at: req.URL.String()}
		}
		loc, err := resp.Location()
		if err != nil {
			b.t.Fatal(err)
		}
		req, _ = http.NewRequest(http.MethodGet, loc.String(), nil)
	}
	b.t.Fatal("too many redirects")
	return page{}
}

func (b *browser) get(u string) page {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return b.do(req)
}

func (b *browser) post(u string, form url.Values) page {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var (
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)">`)
	actionRe = regexp.MustCompile(`<form method="post" action="([^"]+)">`)
)

func form(body string) (action string, fields url.Values) {
	fields = url.Values{}
	if m := actionRe.FindStringSubmatch(body); m != nil {
		action = html.UnescapeString(m[1])
	}
	for _, m := range hiddenRe.FindAllStringSubmatch(body, -1) {
		fields.Set(m[1], html.UnescapeString(m[2]))
	}
	return action, fields
}

// open follows an approval link and logs in at the simulated HA as the demo user i (0: admin,
// 1: not an admin), returning where hamcp leaves the browser.
func (e *env) open(b *browser, link string, i int) page {
	e.t.Helper()
	login := b.get(link)
	if login.status != 200 || !strings.Contains(login.body, `name="password"`) {
		e.t.Fatalf("the link did not lead to Home Assistant's login: %d %s", login.status, login.body)
	}
	action, fields := form(login.body)
	u := home.Logins()[i]
	fields.Set("username", u.Username)
	fields.Set("password", u.Password)
	return b.post(home.URL()+action, fields)
}

func (e *env) answer(b *browser, shown page, action string) page {
	e.t.Helper()
	path, fields := form(shown.body)
	if path != PathRequest || fields.Get("csrf") == "" {
		e.t.Fatalf("no answer form on the page: %s", shown.body)
	}
	fields.Set("action", action)
	return b.post(e.base+path, fields)
}

func (e *env) audit(session string) []store.AuditEntry {
	e.t.Helper()
	e.m.Close() // writes everything queued
	got, _, err := e.st.ListAudit(context.Background(), store.AuditQuery{SessionID: session})
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func TestApproveAfterAdminLogin(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"approve", "deny"} {
		t.Run(action, func(t *testing.T) {
			e := newEnv(t)
			re := e.ask("mcp:secret-session-id-123", permission.Filesystem)
			if !strings.HasPrefix(re.Link, e.base+PathStart+"?r=") {
				t.Fatalf("link %q is not on the page", re.Link)
			}
			b := newBrowser(t)
			shown := e.open(b, re.Link, 0)
			if shown.status != 200 {
				t.Fatalf("request page: %d %s", shown.status, shown.body)
			}
			admin := home.Logins()[0]
			for _, want := range []string{"claude-code/2.1", e.m.SessionLabel("mcp:secret-session-id-123"), "ha_read_file",
				"path=/config/secrets.yaml", "filesystem", html.EscapeString(e.m.Warning(permission.Filesystem)), re.RequestID} {
				if !strings.Contains(shown.body, want) {
					t.Errorf("the page does not show %q", want)
				}
			}
			if strings.Contains(shown.body, "secret-session-id") || !strings.Contains(strings.ToLower(shown.body), strings.ToLower(admin.Username)) {
				t.Errorf("the page shows the session id or not the user:\n%s", shown.body)
			}
			done := e.answer(b, shown, action)
			if done.status != 200 {
				t.Fatalf("answer: %d %s", done.status, done.body)
			}
			err := e.m.Authorize(context.Background(), permission.Request{SessionKey: "mcp:secret-session-id-123", Tool: "ha_read_file", Category: permission.Filesystem})
			var de *permission.DeniedError
			if action == "approve" && err != nil || action == "deny" && !errors.As(err, &de) {
				t.Fatalf("after %s: %v", action, err)
			}
			// One answer per login: the same form again is refused.
			if again := e.answer(b, shown, "approve"); again.status != http.StatusForbidden {
				t.Fatalf("second answer: %d", again.status)
			}
			log := e.audit("mcp:secret-session-id-123")
			var viewed, decided bool
			for _, a := range log {
				viewed = viewed || a.Outcome == "request_viewed" && strings.Contains(a.Detail, "approval page")
				decided = decided || (a.Outcome == store.OutcomeGranted || a.Outcome == store.OutcomeDenied) && strings.Contains(a.Detail, "Home Assistant user")
			}
			if !viewed || !decided {
				t.Fatalf("audit lacks the view or the decision with the user: %+v", log)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	t.Run("not an administrator", func(t *testing.T) {
		re := e.ask("s-guest", permission.Command)
		got := e.open(newBrowser(t), re.Link, 1)
		if got.status != http.StatusForbidden || !strings.Contains(got.body, "administrator") || strings.Contains(got.body, "secrets.yaml") {
			t.Fatalf("non-admin: %d %s", got.status, got.body)
		}
		if _, err := e.m.Request(re.RequestID); err != nil {
			t.Fatalf("the request is gone after a refused login: %v", err)
		}
	})
	t.Run("the link alone shows nothing", func(t *testing.T) {
		re := e.ask("s-link", permission.Command)
		b := newBrowser(t)
		b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := b.c.Get(re.Link)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		loc, _ := resp.Location()
		if resp.StatusCode != http.StatusFound || loc == nil || !strings.HasPrefix(loc.String(), home.URL()+"/auth/authorize?") ||
			strings.Contains(string(body), "secrets.yaml") {
			t.Fatalf("link: %d %v %s", resp.StatusCode, loc, body)
		}
		q := loc.Query()
		if q.Get("client_id") != e.base+"/" || q.Get("redirect_uri") != e.base+PathCallback {
			t.Fatalf("IndieAuth parameters: %v", q)
		}
	})
	t.Run("forged answers", func(t *testing.T) {
		re := e.ask("s-forge", permission.Database)
		b := newBrowser(t)
		shown := e.open(b, re.Link, 0)
		_, fields := form(shown.body)
		tests := []struct {
			name string
			b    *browser
			set  url.Values
		}{
			{"no CSRF token", b, url.Values{"csrf": {""}}},
			{"wrong CSRF token", b, url.Values{"csrf": {"x" + fields.Get("csrf")}}},
			{"another browser with the right fields", newBrowser(t), nil},
			{"unknown login", b, url.Values{"v": {"nope"}}},
		}
		for _, tc := range tests {
			f := url.Values{}
			for k, v := range fields {
				f[k] = v
			}
			for k, v := range tc.set {
				f[k] = v
			}
			f.Set("action", "approve")
			if got := tc.b.post(e.base+PathRequest, f); got.status != http.StatusForbidden {
				t.Errorf("%s: %d %s", tc.name, got.status, got.body)
			}
		}
		// Nothing was granted; the real form still works.
		if _, err := e.m.Request(re.RequestID); err != nil {
			t.Fatalf("request after forgeries: %v", err)
		}
		if got := e.answer(b, shown, "approve"); got.status != 200 {
			t.Fatalf("the genuine answer: %d", got.status)
		}
	})
	t.Run("unknown and answered links", func(t *testing.T) {
		re := e.ask("s-old", permission.Filesystem)
		if err := e.m.Approve(ctx, re.RequestID, permission.Approver{Via: permission.ViaPanel, UserID: "u"}); err != nil {
			t.Fatal(err)
		}
		for _, link := range []string{re.Link, e.base + PathStart + "?r=" + strings.Repeat("A", 43), e.base + PathStart} {
			if got := newBrowser(t).get(link); got.status != http.StatusNotFound {
				t.Errorf("%s: %d", link, got.status)
			}
		}
	})
	t.Run("a login from a link of another browser", func(t *testing.T) {
		re := e.ask("s-steal", permission.Filesystem)
		b := newBrowser(t)
		shown := e.open(b, re.Link, 0)
		// Someone who learns the page's address (it carries the login id) gets nothing in their browser.
		other := newBrowser(t)
		if got := other.get(e.base + PathRequest + "?v=" + url.QueryEscape(mustField(t, shown.body, "v"))); got.status != http.StatusBadRequest {
			t.Fatalf("another browser: %d", got.status)
		}
	})
}

func mustField(t *testing.T, body, name string) string {
	_, f := form(body)
	if f.Get(name) == "" {
		t.Fatalf("no %s on the page", name)
	}
	return f.Get(name)
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	re := e.ask("s1", permission.Filesystem)
	b := newBrowser(t)
	shown := e.open(b, re.Link, 0) // logged in before the request ran out
	e.clock.Advance(10*time.Minute + time.Second)
	if got := newBrowser(t).get(re.Link); got.status != http.StatusGone || !strings.Contains(got.body, "expired") {
		t.Fatalf("expired link: %d %s", got.status, got.body)
	}
	if got := e.answer(b, shown, "approve"); got.status == 200 {
		t.Fatalf("approving after expiry: %d %s", got.status, got.body)
	}
	if err := e.m.Authorize(context.Background(), permission.Request{SessionKey: "s1", Tool: "t", Category: permission.Filesystem}); err == nil {
		t.Fatal("granted after expiry")
	}
}

func TestVisitsAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	re := e.ask("s1", permission.Filesystem)
	b := newBrowser(t)
	b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for range maxVisits + 20 {
		resp, err := b.c.Get(re.Link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("link refused under load: %d", resp.StatusCode)
		}
	}
	e.page.mu.Lock()
	n := len(e.page.visits)
	e.page.mu.Unlock()
	if n != maxVisits {
		t.Fatalf("%d logins kept, want %d", n, maxVisits)
	}
	// The newest login still works.
	if got := e.open(newBrowser(t), re.Link, 0); got.status != 200 {
		t.Fatalf("login after the flood: %d", got.status)
	}
}
