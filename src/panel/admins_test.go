package panel

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim/hass"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/permission"
)

// asUser is the ingress headers Home Assistant sets for the user with this id.
func asUser(id string) map[string]string {
	h := map[string]string{"X-Remote-User-Name": "someone", "X-Remote-User-Display-Name": "Someone", "Sec-Fetch-Site": "same-origin"}
	if id != "" {
		h["X-Remote-User-Id"] = id
	}
	return h
}

// systemUserID is the Supervisor's system-generated user, from the simulated HA's own list.
func systemUserID(t *testing.T) string {
	t.Helper()
	_, c := testHA(t)
	users, err := c.Users(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if u.SystemGenerated {
			return u.ID
		}
	}
	t.Fatal("the simulated HA lists no system user")
	return ""
}

// panelRoutes are every route that shows or decides something.
func panelRoutes(f *fixture) []call {
	return []call{
		{method: http.MethodGet, path: "/"}, {method: http.MethodGet, path: "/connect/checks"},
		{method: http.MethodGet, path: "/approvals"}, {method: http.MethodGet, path: "/approvals/live"},
		{method: http.MethodGet, path: "/clients"}, {method: http.MethodGet, path: "/activity"}, {method: http.MethodGet, path: "/status"},
		{method: http.MethodPost, path: "/approvals/" + f.pending.ID + "/approve"},
		{method: http.MethodPost, path: "/approvals/" + f.pending.ID + "/deny"},
		{method: http.MethodPost, path: "/grants/revoke", form: url.Values{"session": {f.pending.Session}, "category": {"command"}}},
		{method: http.MethodPost, path: "/clients/revoke", form: url.Values{"grant": {"g"}}},
	}
}

// TestOnlyActiveAdministratorsAnswer is a household member (or anyone with a login) who is not an
// active Home Assistant administrator opening the panel through Home Assistant's sidebar, and then
// posting the approve form for the model's pending request with a CSRF token made for them. Every
// route refuses them with a page saying why, and the request stays pending.
func TestOnlyActiveAdministratorsAnswer(t *testing.T) {
	t.Parallel()
	home, _ := testHA(t)
	users := home.Model().Users()
	sam := users[1].ID
	if users[1].IsAdmin {
		t.Fatal("the simulated HA's second user should not be an administrator")
	}
	for _, tt := range []struct {
		name, id, why string
	}{
		{"non-admin household member", sam, "is not an administrator"},
		{"unknown user", "00000000000000000000000000000bad", "does not list the user"},
		{"deactivated administrator", hass.DeactivatedAdminID, "is deactivated"},
		{"system user", systemUserID(t), "is a system user"},
		{"no user at all", "", "did not say who opened the panel"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{})
			h := asUser(tt.id)
			for _, c := range panelRoutes(f) {
				c.remote, c.header = supervisorPeer, h
				if c.method == http.MethodPost {
					if c.form == nil {
						c.form = url.Values{}
					}
					c.form.Set("csrf", f.p.csrfToken(User{ID: tt.id}))
				}
				w := f.do(c)
				body := w.Body.String()
				if w.Code != http.StatusForbidden || !strings.Contains(body, tt.why) || !strings.Contains(body, "administrator") ||
					!strings.Contains(w.Header().Get("Content-Type"), "text/html") {
					t.Errorf("%s %s: %d %q, want a 403 page saying %q", c.method, c.path, w.Code, body, tt.why)
				}
				if strings.Contains(body, "ha_execute_command") || strings.Contains(body, "uptime") {
					t.Errorf("%s %s showed the pending request to a refused user", c.method, c.path)
				}
			}
			if _, err := f.m.Request(f.pending.ID); err != nil {
				t.Fatalf("the model's request was answered by a refused user: %v", err)
			}
			if got := f.m.Status("mcp:SECRET-SESSION-ID-0123456789"); got[2].State == permission.StateGranted {
				t.Fatalf("a refused user granted the category: %+v", got)
			}
		})
	}
}

// TestAdministratorsAnswer: the owner and another active administrator see the panel and approve;
// the demo's visitor on loopback is checked like anyone else.
func TestAdministratorsAnswer(t *testing.T) {
	t.Parallel()
	home, _ := testHA(t)
	owner, sam := home.Model().Users()[0].ID, home.Model().Users()[1].ID
	for _, tt := range []struct {
		name, id, remote string
		demo             *User
		want             int
	}{
		{"owner through ingress", owner, supervisorPeer, nil, http.StatusSeeOther},
		{"administrator through ingress", hass.DemoAdminID, supervisorPeer, nil, http.StatusSeeOther},
		{"demo administrator on loopback", "", "127.0.0.1:5555", &User{ID: hass.DemoAdminID}, http.StatusSeeOther},
		{"demo user who is not an administrator", "", "127.0.0.1:5555", &User{ID: sam}, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{AllowLoopback: true, DemoUser: tt.demo})
			u := User{ID: tt.id}
			if tt.demo != nil {
				u = *tt.demo
			}
			h := asUser(tt.id)
			page := f.do(call{method: http.MethodGet, path: "/approvals", remote: tt.remote, header: h})
			if wantPage := map[bool]int{true: http.StatusOK, false: http.StatusForbidden}[tt.want == http.StatusSeeOther]; page.Code != wantPage {
				t.Fatalf("GET /approvals: %d, want %d", page.Code, wantPage)
			}
			w := f.do(call{method: http.MethodPost, path: "/approvals/" + f.pending.ID + "/approve", remote: tt.remote, header: h,
				form: url.Values{"csrf": {f.p.csrfToken(u)}}})
			if w.Code != tt.want {
				t.Fatalf("approve: %d %s, want %d", w.Code, w.Body.String(), tt.want)
			}
			_, err := f.m.Request(f.pending.ID)
			if answered := err != nil; answered != (tt.want == http.StatusSeeOther) {
				t.Fatalf("request answered %v (err %v), want %v", answered, err, tt.want == http.StatusSeeOther)
			}
		})
	}
}

// TestFailsClosedWhenHomeAssistantCannotSay: when the user list cannot be read (here Home
// Assistant refuses it, as it does a token that is not an administrator's), nobody is served, the
// owner included, and the page says Home Assistant could not be asked.
func TestFailsClosedWhenHomeAssistantCannotSay(t *testing.T) {
	t.Parallel()
	home, _ := testHA(t)
	c, err := homeassistant.New(homeassistant.Config{BaseURL: home.URL(), Token: home.UserToken()})
	if err != nil {
		t.Fatal(err)
	}
	c.Start(context.Background())
	t.Cleanup(func() { c.Close() })
	f := newFixture(t, Options{Users: c.Users})
	owner := home.Model().Users()[0].ID
	for _, rc := range panelRoutes(f) {
		rc.remote, rc.header = supervisorPeer, asUser(owner)
		if rc.method == http.MethodPost {
			if rc.form == nil {
				rc.form = url.Values{}
			}
			rc.form.Set("csrf", f.p.csrfToken(User{ID: owner}))
		}
		w := f.do(rc)
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "could not ask Home Assistant") {
			t.Errorf("%s %s: %d %q, want 503 saying Home Assistant could not be asked", rc.method, rc.path, w.Code, w.Body.String())
		}
	}
	if _, err := f.m.Request(f.pending.ID); err != nil {
		t.Fatalf("the request was answered while HA could not be asked: %v", err)
	}
}

// TestPromotionAndDemotion: an administrator promotes a household member on HA's Users page; the
// member gets in on a click a moment later (a refused user makes the panel ask again). Demoted, they
// keep the panel no longer than the cache lives. Not parallel: it changes the shared home's users.
func TestPromotionAndDemotion(t *testing.T) {
	home, c := testHA(t)
	sam := home.Model().Users()[1].ID
	setGroup := func(group string) {
		t.Helper()
		if err := c.Call(context.Background(), "config/auth/update", map[string]any{"user_id": sam, "group_ids": []string{group}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { setGroup("system-users") })
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	f := newFixture(t, Options{Now: clock.Now})
	get := func() int {
		return f.do(call{method: http.MethodGet, path: "/approvals", remote: supervisorPeer, header: asUser(sam)}).Code
	}
	if got := get(); got != http.StatusForbidden {
		t.Fatalf("before promotion: %d", got)
	}
	setGroup("system-admin")
	if got := get(); got != http.StatusForbidden {
		t.Fatalf("the list was read again at once for a refused user: %d", got)
	}
	clock.Advance(usersRetry)
	if got := get(); got != http.StatusOK {
		t.Fatalf("promoted administrator a moment later: %d, want 200", got)
	}
	setGroup("system-users")
	clock.Advance(usersTTL - time.Second)
	if got := get(); got != http.StatusOK {
		t.Fatalf("within the cache's life: %d", got)
	}
	clock.Advance(time.Second)
	if got := get(); got != http.StatusForbidden {
		t.Fatalf("demoted administrator after the cache's life: %d, want 403", got)
	}
}
