package panel

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim/hass"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
)

const supervisorPeer = "172.30.32.2:48000"

// fixture is a panel over a real permission manager and a real store, with one request waiting.
type fixture struct {
	p       *Panel
	m       *permission.Manager
	st      *store.Store
	pending permission.Pending
	secret  string // the request's approval link secret
}

func newFixture(t *testing.T, o Options) *fixture {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "hamcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st}
	m, err := permission.New(permission.Options{Store: st, Link: func(secret string) string {
		f.secret = secret
		return "https://mcp.example.com/approve?r=" + secret
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); st.Close() })
	f.m = m
	err = m.Authorize(context.Background(), permission.Request{SessionKey: "mcp:SECRET-SESSION-ID-0123456789", Client: "claude-ai/1",
		Tool: "ha_execute_command", Category: permission.Command, ArgsSummary: "uptime"})
	var req *permission.RequiredError
	if !errors.As(err, &req) {
		t.Fatalf("Authorize: %v, want a pending request", err)
	}
	if f.pending, err = m.Request(req.RequestID); err != nil {
		t.Fatal(err)
	}
	o.Permissions, o.Audit = m, st
	if o.Users == nil {
		o.Users = haUsers(t)
	}
	if f.p, err = New(o); err != nil {
		t.Fatal(err)
	}
	return f
}

type call struct {
	method, path, remote string
	header               map[string]string
	form                 url.Values
}

func (f *fixture) do(c call) *httptest.ResponseRecorder {
	var r *http.Request
	if c.form != nil {
		r = httptest.NewRequest(c.method, c.path, strings.NewReader(c.form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(c.method, c.path, nil)
	}
	r.RemoteAddr = c.remote
	for k, v := range c.header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	f.p.ServeHTTP(w, r)
	return w
}

// alice is an active administrator in the simulated Home Assistant's user list.
var alice = map[string]string{"X-Remote-User-Id": hass.DemoAdminID, "X-Remote-User-Name": "alice", "X-Remote-User-Display-Name": "Alice Admin"}

// TestOnlyTheSupervisorAndLoopbackAreServed decides on the TCP peer address alone: forwarding
// headers and user headers from anyone else change nothing.
func TestOnlyTheSupervisorAndLoopbackAreServed(t *testing.T) {
	t.Parallel()
	forged := map[string]string{"X-Forwarded-For": "172.30.32.2", "X-Real-IP": "127.0.0.1", "X-Remote-User-Id": hass.DemoAdminID}
	for _, tt := range []struct {
		name     string
		remote   string
		loopback bool
		header   map[string]string
		want     int
	}{
		{"supervisor", supervisorPeer, false, alice, http.StatusOK},
		{"supervisor as IPv4-mapped IPv6", "[::ffff:172.30.32.2]:48000", false, alice, http.StatusOK},
		{"neighbour of the supervisor", "172.30.32.3:48000", false, alice, http.StatusForbidden},
		{"LAN with forged forwarding and user headers", "192.168.1.20:5555", false, forged, http.StatusForbidden},
		{"LAN even when loopback is allowed", "192.168.1.20:5555", true, forged, http.StatusForbidden},
		{"loopback in the add-on", "127.0.0.1:5555", false, alice, http.StatusForbidden},
		{"loopback in the demo", "127.0.0.1:5555", true, alice, http.StatusOK},
		{"IPv6 loopback in the demo", "[::1]:5555", true, alice, http.StatusOK},
		{"no port", "172.30.32.2", false, nil, http.StatusForbidden},
		{"garbage", "not-an-address", true, nil, http.StatusForbidden},
		{"empty", "", true, nil, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{AllowLoopback: tt.loopback})
			for _, path := range []string{"/", "/approvals", "/approvals/live", "/clients", "/activity", "/status", "/static/panel.js"} {
				w := f.do(call{method: http.MethodGet, path: path, remote: tt.remote, header: tt.header})
				if w.Code != tt.want {
					t.Errorf("GET %s from %q: %d, want %d", path, tt.remote, w.Code, tt.want)
				}
				if tt.want == http.StatusForbidden && strings.Contains(w.Body.String(), "ha_execute_command") {
					t.Errorf("GET %s from %q showed the request", path, tt.remote)
				}
			}
		})
	}
}

// TestForgedApprovalFromElsewhereIsRefused is an attacker on the network (or a model's command
// posting from another address) sending the ingress headers and a valid-looking form.
func TestForgedApprovalFromElsewhereIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	// Even the right CSRF token (as if leaked) does not help from the wrong address.
	form := url.Values{"csrf": {f.p.csrfToken(User{ID: hass.DemoAdminID})}}
	for _, remote := range []string{"10.0.0.7:40000", "172.30.33.2:40000", "127.0.0.1:40000"} {
		h := map[string]string{"X-Forwarded-For": "172.30.32.2"}
		for k, v := range alice {
			h[k] = v
		}
		w := f.do(call{method: http.MethodPost, path: "/approvals/" + f.pending.ID + "/approve", remote: remote, header: h, form: form})
		if w.Code != http.StatusForbidden {
			t.Errorf("approve from %s: %d, want 403", remote, w.Code)
		}
	}
	if _, err := f.m.Request(f.pending.ID); err != nil {
		t.Fatalf("the request is gone after forged answers: %v", err)
	}
}

// TestDecisionsNeedTheUserAndTheForm: every state-changing request needs a Home Assistant user, a
// same-origin browser and the CSRF token made for that user; the decision is recorded with the user.
func TestDecisionsNeedTheUserAndTheForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	path := "/approvals/" + f.pending.ID + "/approve"
	good := f.p.csrfToken(User{ID: hass.DemoAdminID})
	withSite := func(site string) map[string]string {
		h := map[string]string{"Sec-Fetch-Site": site}
		for k, v := range alice {
			h[k] = v
		}
		return h
	}
	for _, tt := range []struct {
		name   string
		header map[string]string
		form   url.Values
		want   string
	}{
		{"no user", nil, url.Values{"csrf": {good}}, "did not say who opened the panel"},
		{"no token", alice, url.Values{}, "CSRF"},
		{"another user's token", alice, url.Values{"csrf": {f.p.csrfToken(User{ID: "someone-else"})}}, "CSRF"},
		{"cross-site", withSite("cross-site"), url.Values{"csrf": {good}}, "did not come from the hamcp panel"},
		{"same-site is not same-origin", withSite("same-site"), url.Values{"csrf": {good}}, "did not come from the hamcp panel"},
	} {
		w := f.do(call{method: http.MethodPost, path: path, remote: supervisorPeer, header: tt.header, form: tt.form})
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), tt.want) {
			t.Errorf("%s: %d %q, want 403 saying %q", tt.name, w.Code, w.Body.String(), tt.want)
		}
	}
	if _, err := f.m.Request(f.pending.ID); err != nil {
		t.Fatalf("refused answers consumed the request: %v", err)
	}

	h := withSite("same-origin")
	h["X-Ingress-Path"] = "/api/hassio_ingress/tok3n_AB-c"
	w := f.do(call{method: http.MethodPost, path: path, remote: supervisorPeer, header: h, form: url.Values{"csrf": {good}}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/api/hassio_ingress/tok3n_AB-c/approvals?done=approved&kind=command" {
		t.Fatalf("genuine approval: %d %q", w.Code, w.Header().Get("Location"))
	}
	if got := f.m.Status("mcp:SECRET-SESSION-ID-0123456789"); got[2].Category != permission.Command || got[2].State != permission.StateGranted {
		t.Fatalf("after approval: %+v", got)
	}
	f.m.Close() // flushes the audit queue
	entries, _, err := f.st.ListAudit(context.Background(), store.AuditQuery{Outcome: store.OutcomeGranted})
	if err != nil || len(entries) != 1 || !strings.Contains(entries[0].Detail, "Alice Admin (Home Assistant user "+hass.DemoAdminID+") in the hamcp panel") {
		t.Fatalf("audit: %v %+v", err, entries)
	}
}

var linkAttr = regexp.MustCompile(`\s(?:href|src|action)="([^"]*)"`)

// TestLinksFollowTheIngressPath: every link carries Home Assistant's ingress prefix, and a malformed
// prefix is ignored rather than written into the page.
func TestLinksFollowTheIngressPath(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, tt := range []struct{ header, prefix string }{
		{"/api/hassio_ingress/tok3n_AB-c", "/api/hassio_ingress/tok3n_AB-c/"},
		{`/api/hassio_ingress/x"><script>alert(1)</script>`, "/"},
		{"https://evil.example/api/hassio_ingress/x", "/"},
		{"", "/"},
	} {
		for _, path := range []string{"/", "/approvals", "/clients", "/activity", "/status"} {
			h := map[string]string{"X-Ingress-Path": tt.header}
			for k, v := range alice {
				h[k] = v
			}
			w := f.do(call{method: http.MethodGet, path: path, remote: supervisorPeer, header: h})
			body := w.Body.String()
			if w.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, w.Code, body)
			}
			links := linkAttr.FindAllStringSubmatch(body, -1)
			if len(links) < 7 {
				t.Errorf("GET %s: only %d links", path, len(links))
			}
			for _, l := range links {
				if !strings.HasPrefix(l[1], tt.prefix) || strings.HasPrefix(l[1], "//") {
					t.Errorf("GET %s with X-Ingress-Path %q: link %q does not start with %q", path, tt.header, l[1], tt.prefix)
				}
			}
			if strings.Contains(body, "<script>alert") || strings.Contains(body, "evil.example") {
				t.Errorf("GET %s: the ingress header was written into the page", path)
			}
		}
	}
}

// TestPagesShowNoSecrets: no page shows the approval link's secret, a session id, or a token that
// found its way into the audit log; every page names the user.
func TestPagesShowNoSecrets(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJ0ZXN0LXRva2VuIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	for _, e := range []store.AuditEntry{
		{SessionID: "mcp:SECRET-SESSION-ID-0123456789", Tool: "ha_execute_command", Outcome: store.OutcomeError,
			Detail: "curl -H 'Authorization: Bearer " + jwt + "' failed; see https://mcp.example.com/approve?r=" + f.secret},
		{SessionID: "token:abc", Tool: "ha_read_file", ArgsSummary: "hamcp_at_0123456789abcdefghij", Outcome: store.OutcomeOK},
	} {
		if err := f.st.AppendAudit(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{"/", "/approvals", "/approvals/live", "/clients", "/activity", "/activity?session=" + url.QueryEscape(f.pending.Session), "/status"} {
		w := f.do(call{method: http.MethodGet, path: path, remote: supervisorPeer, header: alice})
		body := w.Body.String()
		for what, secret := range map[string]string{"link secret": f.secret, "session id": "SECRET-SESSION-ID", "JWT": jwt, "OAuth token": "hamcp_at_0123"} {
			if strings.Contains(body, secret) {
				t.Errorf("GET %s shows the %s", path, what)
			}
		}
		if path != "/approvals/live" && !strings.Contains(body, "Alice Admin") {
			t.Errorf("GET %s does not name the user", path)
		}
	}
	// The session filter works by label: the label finds the session's entries (the request it made
	// and the failed call) and nothing of the other session.
	// The request's own entry is written in the background: wait for it.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		w := f.do(call{method: http.MethodGet, path: "/activity?session=" + url.QueryEscape(f.pending.Session), remote: supervisorPeer, header: alice})
		n := strings.Count(w.Body.String(), `<tr class="entry"`)
		if strings.Contains(w.Body.String(), "<code>ha_read_file</code>") || n > 2 {
			t.Fatalf("session filter shows another session's entries:\n%s", w.Body.String())
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session filter: %d entries, want the session's 2:\n%s", n, w.Body.String())
		}
	}
}

// TestLiveQueueRedrawsOnlyOnChange is the polling contract of the Approvals page.
func TestLiveQueueRedrawsOnlyOnChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{PollEvery: 750 * time.Millisecond})
	w := f.do(call{method: http.MethodGet, path: "/approvals/live", remote: supervisorPeer, header: alice})
	body := w.Body.String()
	if !strings.Contains(body, `"count":1`) || !strings.Contains(body, f.pending.ID) {
		t.Fatalf("live: %s", body)
	}
	version := regexp.MustCompile(`"version":"([0-9a-f]+)"`).FindStringSubmatch(body)[1]
	w = f.do(call{method: http.MethodGet, path: "/approvals/live?v=" + version, remote: supervisorPeer, header: alice})
	if strings.Contains(w.Body.String(), "pending") {
		t.Errorf("unchanged queue was redrawn: %s", w.Body.String())
	}
	page := f.do(call{method: http.MethodGet, path: "/approvals", remote: supervisorPeer, header: alice}).Body.String()
	if !strings.Contains(page, `data-poll="750"`) || !strings.Contains(page, `data-version="`+version+`"`) {
		t.Errorf("approvals page lacks the poll interval or version")
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"see https://h/approve?r=abcdefghijklmnopqrstuvwxyz012345 now", "see https://h/approve?r=[hidden] now"},
		{"Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "Authorization: Bearer [hidden]"},
		{"token eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJ0ZXN0In0.c2lnbmF0dXJlLXg", "token [hidden]"},
		{"hamcp_rt_0123456789abcdef and hamcp_cs_ABCDEFGHIJKL", "[hidden] and [hidden]"},
		{"request req_0123456789abcdef approved", "request req_0123456789abcdef approved"},
		{"/config/configuration.yaml", "/config/configuration.yaml"},
	} {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestActivityPages: the log is paged newest first, and paging keeps the filters.
func TestActivityPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 120 {
		e := store.AuditEntry{Time: start.Add(time.Duration(i) * time.Minute), SessionID: "mcp:other", Client: "n8n/1",
			Tool: "ha_read_file", Category: "filesystem", Outcome: store.OutcomeOK}
		if i%2 == 1 {
			e.Outcome = store.OutcomeError
		}
		if err := f.st.AppendAudit(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	get := func(q string) string {
		w := f.do(call{method: http.MethodGet, path: "/activity?" + q, remote: supervisorPeer, header: alice})
		if w.Code != http.StatusOK {
			t.Fatalf("GET /activity?%s: %d", q, w.Code)
		}
		return w.Body.String()
	}
	first := get("client=n8n%2F1&outcome=error")
	if n := strings.Count(first, `<tr class="entry"`); n != auditPage || !strings.Contains(first, "60 entries, 1–50 shown") {
		t.Fatalf("first page: %d rows", n)
	}
	if !strings.Contains(first, "01-01 01:59:00") || strings.Contains(first, `id="newer"`) {
		t.Error("the first page does not start with the newest entry, or offers newer ones")
	}
	if !strings.Contains(first, `href="/activity?client=n8n%2F1&amp;outcome=error&amp;page=1" id="older"`) {
		t.Fatalf("no link to older entries keeping the filters:\n%s", first)
	}
	second := get("client=n8n%2F1&outcome=error&page=1")
	if n := strings.Count(second, `<tr class="entry"`); n != 10 || !strings.Contains(second, "51–60 shown") ||
		strings.Contains(second, `id="older"`) || !strings.Contains(second, `id="newer"`) {
		t.Fatalf("second page: %d rows", n)
	}
	if strings.Contains(second, `data-outcome="ok"`) {
		t.Error("paging dropped the outcome filter")
	}
	if n := strings.Count(get("page=-3"), `<tr class="entry"`); n != auditPage {
		t.Errorf("a negative page: %d rows, want the first page", n)
	}
}
