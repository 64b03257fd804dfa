package panel

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim/hass"
)

// The Status page shows the effective list of what the user confirms and the rules hamcp stopped.
func TestStatusShowsWhatIsConfirmedAndStoppedRules(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	f := newFixture(t, Options{Status: func(context.Context) Status {
		return Status{
			Sensitive: []SensitiveEntity{{"lock.front_door", "a lock: unlocking and opening"},
				{"switch.garage_opener", "any service: listed in the sensitive_entities option"}},
			StoppedRules: []StoppedRule{{"Toggle forever", "stopped by hamcp: 61 runs in a minute", at}},
		}
	}})
	w := f.do(call{method: http.MethodGet, path: "/status", remote: supervisorPeer, header: map[string]string{"X-Remote-User-Id": hass.DemoAdminID}})
	body := w.Body.String()
	for _, want := range []string{"What you confirm yourself", "lock.front_door", "switch.garage_opener", "sensitive_entities",
		"Hubitat rules hamcp stopped", "Toggle forever", "61 runs in a minute", "2026-11-28 12:00 UTC"} {
		if !strings.Contains(body, want) {
			t.Errorf("the Status page lacks %q (%d)", want, w.Code)
		}
	}
}
