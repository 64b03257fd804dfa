package panel

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/permission"
)

// TestAnswersSayWhatHappened: approving or denying a confirmation says one action ran (or did not),
// once; approving a category says the session holds it and where to revoke it. The card says which
// kind of yes it asks for, shows the arguments with entity names, and nothing when there are none.
func TestAnswersSayWhatHappened(t *testing.T) {
	t.Parallel()
	names := map[string]string{"lock.front_door": "Front Door"}
	for _, tt := range []struct {
		name, answer     string
		confirm          bool
		summary          string
		card, flash, not []string
	}{
		{"approve one action", "approve", true, "entity_id: lock.front_door",
			[]string{"this action, once", "Front Door (lock.front_door)", "Approve once"},
			[]string{"Approved once", "one time", "grants nothing else"}, []string{"permission"}},
		{"refuse one action without arguments", "deny", true, "",
			[]string{"this action, once"},
			[]string{"Refused", "did not run", "Nothing else was granted"}, []string{"use the"}},
		{"grant a category", "approve", false, "uptime",
			[]string{"command permission", "uptime", "Approve lets that session use the command permission"},
			[]string{"Granted", "command permission", "at most 8 hours", "Revoke"}, []string{"once"}},
		{"deny a category", "deny", false, "uptime",
			[]string{"command permission"},
			[]string{"Denied", "cannot use the command permission"}, []string{"once"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{EntityName: func(id string) string { return names[id] }})
			id := f.pending.ID
			if tt.confirm {
				// The fixture's command request is answered away; a confirmation waits instead.
				if err := f.m.Deny(context.Background(), id, permission.Approver{Via: permission.ViaPanel, UserID: "u", Name: "u"}); err != nil {
					t.Fatal(err)
				}
				var re *permission.ConfirmRequiredError
				err := f.m.ConfirmAction(context.Background(), permission.Action{SessionKey: "mcp:other", Client: "claude-ai/1",
					Tool: "ha_call_service", ArgsSummary: tt.summary, Question: "Unlock Front Door?", Key: "k"})
				if !errors.As(err, &re) {
					t.Fatalf("want a confirmation request, got %v", err)
				}
				id = re.RequestID
			}
			page := f.do(call{method: http.MethodGet, path: "/approvals", remote: supervisorPeer, header: alice}).Body.String()
			card := page[strings.Index(page, `id="req-`+id):]
			card = card[:strings.Index(card, "</article>")]
			for _, want := range tt.card {
				if !strings.Contains(card, want) {
					t.Errorf("the card does not say %q:\n%s", want, card)
				}
			}
			if tt.summary == "" && strings.Contains(card, `class="args"`) {
				t.Errorf("a call without arguments shows an argument line:\n%s", card)
			}
			h := map[string]string{"Sec-Fetch-Site": "same-origin"}
			for k, v := range alice {
				h[k] = v
			}
			w := f.do(call{method: http.MethodPost, path: "/approvals/" + id + "/" + tt.answer, remote: supervisorPeer, header: h,
				form: url.Values{"csrf": {f.p.csrfToken(User{ID: alice["X-Remote-User-Id"]})}}})
			if w.Code != http.StatusSeeOther {
				t.Fatalf("answer: %d %s", w.Code, w.Body)
			}
			after := f.do(call{method: http.MethodGet, path: w.Header().Get("Location"), remote: supervisorPeer, header: alice}).Body.String()
			i := strings.Index(after, `id="flash"`)
			if i < 0 {
				t.Fatalf("no flash after the answer:\n%s", after)
			}
			flash := after[i : i+strings.Index(after[i:], "</p>")]
			for _, want := range tt.flash {
				if !strings.Contains(flash, want) {
					t.Errorf("the flash does not say %q: %s", want, flash)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(flash, not) {
					t.Errorf("the flash says %q: %s", not, flash)
				}
			}
		})
	}
}

// TestFlashKindIsChecked: the kind in the redirect names a category hamcp knows, or no message shows;
// nothing from the URL reaches the page.
func TestFlashKindIsChecked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, q := range []string{"done=approved&kind=%3Cscript%3E", "done=approved&kind=", "done=nonsense"} {
		page := f.do(call{method: http.MethodGet, path: "/approvals?" + q, remote: supervisorPeer, header: alice}).Body.String()
		if strings.Contains(page, `id="flash"`) || strings.Contains(page, "<script>") {
			t.Errorf("%s: a message or the URL's text reached the page", q)
		}
	}
}
