package hubitattools_test

import (
	"context"
	"strings"
	"testing"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

// A model goes looking for the front door's codes: the simulated lock (device 8) holds
// {"1":{"name":"Family","code":"1234"}}, and the model adds one of its own (5678) with the user's
// approval. No answer it reads, no event, no debug log entry and no audit entry the panel shows
// may hold either code; the slots and the names of their owners stay readable.
func TestLockCodesNeverReachTheModel(t *testing.T) {
	t.Parallel()
	_, c := newHub(t, simhub.Options{}, hubitat.Options{})
	var deps hubitattools.Deps
	f := served(withClient(c), func(d *hubitattools.Deps) { deps = *d })
	s := f.Session(t)
	var read []string // every text the model was given
	seen := func(tool string, args map[string]any) string {
		t.Helper()
		text := tooltest.Text(s.Call(t, tool, args))
		read = append(read, tool+": "+text)
		return text
	}
	// approved runs a call the user must confirm: asked, approved in the panel, run again.
	approved := func(tool string, args map[string]any) string {
		t.Helper()
		e := s.Fail(t, tool, args)
		id, _ := e.Details["request_id"].(string)
		if e.Code != "confirmation_required" || id == "" {
			t.Fatalf("%s %v: %+v", tool, args, e)
		}
		f.Approve(t, id)
		return seen(tool, args)
	}

	if got := seen("hubitat_get_attribute", map[string]any{"deviceId": "8", "attribute": "lockCodes"}); !strings.Contains(got, "Family") {
		t.Errorf("the slot's owner is gone: %s", got)
	}
	seen("hubitat_get_device", map[string]any{"deviceId": "8"})
	seen("hubitat_list_devices", map[string]any{"detailed": true})

	// A new code through the model, then back from the hub over the eventsocket into the cache.
	if got := approved("hubitat_send_command", map[string]any{"deviceId": "8", "command": "setCode", "parameters": []any{"2", "5678", "Guest"}}); !strings.Contains(got, `"success":true`) {
		t.Fatalf("setCode: %s", got)
	}
	testkit.Eventually(t, "the cache to see the new slot", func() bool {
		d, _ := c.Cache().Get("8")
		a, _ := d.Attribute("lockCodes")
		return strings.Contains(a.Value.String(), "Guest")
	})
	if got := seen("hubitat_get_attribute", map[string]any{"deviceId": "8", "attribute": "lockCodes"}); !strings.Contains(got, "Guest") || !strings.Contains(got, "[hidden]") {
		t.Errorf("lockCodes after setCode: %s", got)
	}
	seen("hubitat_get_device", map[string]any{"deviceId": "8"})
	seen("hubitat_get_device_events", map[string]any{"deviceId": "8", "limit": 50})
	// A code the hub refuses: its error names the route the code was in.
	approved("hubitat_send_command", map[string]any{"deviceId": "8", "command": "setCode", "parameters": []any{"99", "5678", "Guest"}})

	// A rule that logs what it saw writes the debug log the model reads back.
	deps.LogRule(context.Background(), "error", hubitattools.CompRule, "r1", `lockCodes changed: {"2":{"name":"Guest","code":"5678"}} after code=5678`)
	seen("hubitat_get_debug_logs", map[string]any{"level": "all", "limit": 200})
	seen("hubitat_generate_bug_report", map[string]any{"title": "t", "expected": "e", "actual": "a", "ruleId": "r1"})

	audit := s.Audit(t, store.AuditQuery{Tool: "hubitat_send_command"})
	if len(audit) == 0 {
		t.Fatal("the confirmed commands left no audit entry")
	}
	for _, e := range audit {
		read = append(read, "audit: "+e.ArgsSummary+" "+e.Detail)
	}
	for _, text := range read {
		for _, code := range []string{"1234", "5678"} {
			if strings.Contains(text, code) {
				t.Errorf("the model can read code %s in %s", code, text)
			}
		}
	}
}
