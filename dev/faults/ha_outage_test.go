package faults

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit"
)

// fast bounds what must not wait for Home Assistant: far below the 10 s the test's call allows and
// HA's 2-minute call timeout, so only waiting on HA crosses it, not a busy machine's scheduling.
const fast = 5 * time.Second

// TestHAOutageLocalToolsKeepWorking: Home Assistant is down. A client whose token HA verified
// before the outage (within the token cache's minute) keeps using the file and shell tools it was
// granted, which need nothing from HA, while HA's own tools fail fast saying HA is unreachable. A
// token hamcp has not seen cannot be checked, so it gets 503 with Retry-After — "try again
// soon" — never 401, which would tell the client its token is wrong and make it drop it.
func TestHAOutageLocalToolsKeepWorking(t *testing.T) {
	t.Parallel()
	e := haStart(t, haOptions{})
	cs := e.client(t) // its token is checked with HA here, and cached
	read := map[string]any{"path": "/config/configuration.yaml"}
	shell := map[string]any{"command": "test -f configuration.yaml && echo still-here", "cwd": "/config"}
	e.grant(t, cs, "ha_read_file", read)
	e.grant(t, cs, "ha_execute_command", shell)
	// A token of the administrator's hamcp has never seen (a second client being set up).
	fresh, err := e.home.NewAdminToken()
	if err != nil {
		t.Fatal(err)
	}

	if err := e.home.SetDown(true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.home.SetDown(false) })

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"ha_read_file", read, "homeassistant:"},
		{"ha_list_directory", map[string]any{"path": "/config"}, "configuration.yaml"},
		{"ha_execute_command", shell, "still-here"},
	} {
		if got := haMustOK(t, cs, c.tool, c.args); !strings.Contains(got, c.want) {
			t.Errorf("%s during the outage: %s", c.tool, got)
		}
	}
	// Home Assistant's own tools say what is wrong, at once.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := haCall(ctx, cs, haWSCall.tool, haWSCall.args)
	haUnreachable(t, "an HA tool during the outage", r)
	if r.took > fast {
		t.Errorf("an HA tool during the outage took %v", r.took)
	}

	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"unknown token", fresh, http.StatusServiceUnavailable},
		// The cached token is not turned away either: new sessions open.
		{"verified token", e.home.Token(), http.StatusOK},
	} {
		start := time.Now()
		resp, body := e.initialize(t, tc.token)
		if resp.StatusCode != tc.want {
			t.Fatalf("%s during the outage: %d %s, want %d", tc.name, resp.StatusCode, body, tc.want)
		}
		if tc.want == http.StatusServiceUnavailable {
			if resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "Home Assistant is not reachable") {
				t.Fatalf("%s: 503 without Retry-After or reason: %v %s", tc.name, resp.Header, body)
			}
			if d := time.Since(start); d > fast {
				t.Errorf("%s: the 503 took %v", tc.name, d)
			}
		}
	}

	// HA back: the new token is checked and accepted.
	if err := e.home.SetDown(false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "hamcp reconnected", e.haConnected)
	if resp, body := e.initialize(t, fresh); resp.StatusCode != http.StatusOK {
		t.Fatalf("the new token after HA is back: %d %s", resp.StatusCode, body)
	}
}

// initialize opens an MCP session by hand, to see the HTTP status a client gets.
func (e *haEnv) initialize(t *testing.T, token string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Cleanup(func() { // ended as a client leaving does
			req, _ := http.NewRequest(http.MethodDelete, e.url+"/mcp", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Mcp-Session-Id", id)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	return resp, string(body)
}
