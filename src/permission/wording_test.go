package permission

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// adminEquivalent is what the user must read before handing over a grant that reads Home Assistant's
// login tokens or hamcp's own.
const adminEquivalent = "Equivalent to giving the assistant your administrator account"

// The question the user answers for a root-equivalent category says plainly that it hands over an
// administrator account, wherever it is asked: the client's prompt, the notification (and so the
// approval page and panel, which show the same warning) and the refusal the model relays.
func TestRootEquivalentGrantsSayAdministrator(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		category Category
		mentions []string
	}{
		{Filesystem, []string{"/config/.storage/auth", "password hashes"}},
		{Command, []string{"/data/options.json", "SSH host key", "/config/.storage/auth"}},
		{SupervisorToken, nil},
	} {
		t.Run(string(c.category), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{})
			var asked string
			err := f.m.Authorize(context.Background(), Request{SessionKey: "s1", Tool: "ha_read_file", Category: c.category,
				Elicit: func(_ context.Context, msg string) (bool, error) { asked = msg; return false, nil }})
			if !errors.As(err, new(*DeniedError)) {
				t.Fatalf("declined: %v", err)
			}
			err = f.m.Authorize(context.Background(), Request{SessionKey: "s2", Tool: "ha_read_file", Category: c.category})
			var req *RequiredError
			if !errors.As(err, &req) {
				t.Fatalf("no elicitation: %v", err)
			}
			p, perr := f.m.Request(req.RequestID)
			if perr != nil {
				t.Fatal(perr)
			}
			for where, text := range map[string]string{"client prompt": asked, "refusal": req.Error(), "notification": p.Message(), "approval page": p.Warning} {
				if !strings.Contains(text, adminEquivalent) {
					t.Errorf("the %s does not say it is an administrator account: %s", where, text)
				}
				for _, m := range c.mentions {
					if !strings.Contains(text, m) {
						t.Errorf("the %s does not name %s: %s", where, m, text)
					}
				}
			}
		})
	}
}
