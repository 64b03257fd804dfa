package demo_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
)

// notificationInbox reads Home Assistant's persistent notifications the way the user sees them:
// over the simulated HA's WebSocket API, with the admin's token.
type notificationInbox struct {
	mu    sync.Mutex
	byID  map[string]string // notification_id → message
	ready chan struct{}
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

var codeRe = regexp.MustCompile(`\b(\d{3}) ?(\d{3})\b`)

// code waits for the hamcp permission notification for requestID and returns its one-time code.
func (in *notificationInbox) code(t *testing.T, requestID string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		in.mu.Lock()
		for id, msg := range in.byID {
			if strings.Contains(id, requestID) {
				in.mu.Unlock()
				m := codeRe.FindStringSubmatch(msg)
				if m == nil {
					t.Fatalf("notification has no code: %s", msg)
				}
				return m[1] + m[2]
			}
		}
		in.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no notification for request %s", requestID)
	return ""
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

func TestPermissionAskByCodeAndIsolation(t *testing.T) {
	e := startDemo(t, nil)
	inbox := openInbox(t, e)
	a := e.client(t, nil) // the Go SDK client without elicitation support
	b := e.client(t, nil)
	read := map[string]any{"path": "/config/configuration.yaml"}

	te := asToolError(t, callJSON(t, a, "ha_read_file", read, nil))
	if te.Error != "permission_required" || te.Details["request_id"] == nil {
		t.Fatalf("first call: %+v", te)
	}
	reqID := te.Details["request_id"].(string)
	code := inbox.code(t, reqID)
	if strings.Contains(text(callJSON(t, a, "ha_read_file", read, nil)), code) {
		t.Fatal("the refusal shows the code to the model")
	}
	// A wrong code does not grant.
	te = asToolError(t, callJSON(t, a, "ha_read_file", map[string]any{"path": "/config/configuration.yaml", "permission_code": "000000"}, nil))
	if te.Error != "permission_required" {
		t.Fatalf("wrong code: %+v", te)
	}
	res := callJSON(t, a, "ha_read_file", map[string]any{"path": "/config/configuration.yaml", "permission_code": code}, nil)
	if res.IsError || !strings.Contains(text(res), "homeassistant") {
		t.Fatalf("with the code: %s", text(res))
	}
	// Granted for a's session only.
	if res := callJSON(t, a, "ha_list_directory", map[string]any{"path": "/config"}, nil); res.IsError {
		t.Fatalf("granted session, second tool: %s", text(res))
	}
	if te := asToolError(t, callJSON(t, b, "ha_read_file", read, nil)); te.Error != "permission_required" {
		t.Fatalf("grant leaked to another session: %+v", te)
	}
	// The code was single-use and bound to a's session.
	if te := asToolError(t, callJSON(t, b, "ha_read_file", map[string]any{"path": "/config/configuration.yaml", "permission_code": code}, nil)); te.Error != "permission_required" {
		t.Fatalf("code reused in another session: %+v", te)
	}
	// Writes to system directories stay blocked after a grant.
	for _, p := range []string{"/etc/passwd", "/usr/bin/x", "/config/../etc/passwd", "../../etc/passwd"} {
		res := callJSON(t, a, "ha_write_file", map[string]any{"path": p, "content": "x"}, nil)
		if !res.IsError {
			t.Fatalf("write to %s succeeded", p)
		}
	}
	var perms struct {
		Categories []struct {
			Category, State string
		} `json:"categories"`
	}
	callJSON(t, a, "ha_get_permissions", nil, &perms)
	granted := false
	for _, c := range perms.Categories {
		if c.Category == "filesystem" && c.State == "granted" {
			granted = true
		}
	}
	if !granted {
		t.Fatalf("ha_get_permissions: %+v", perms)
	}
	var audit struct {
		Total int `json:"total"`
	}
	callJSON(t, a, "ha_get_audit_log", nil, &audit)
	if audit.Total < 3 {
		t.Fatalf("audit log has %d entries for the session", audit.Total)
	}
}

func TestPermissionByElicitationAndDeny(t *testing.T) {
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

func TestPermissionApproveAPI(t *testing.T) {
	e := startDemo(t, nil)
	a := e.client(t, nil)
	te := asToolError(t, callJSON(t, a, "ha_execute_command", map[string]any{"command": "echo approved"}, nil))
	reqID, _ := te.Details["request_id"].(string)
	if reqID == "" {
		t.Fatalf("no request id: %+v", te)
	}
	approve := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/api/permissions/requests/"+reqID+"/approve", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// The session's own token cannot approve its own request.
	if code := approve(e.d.Info.Token); code != http.StatusForbidden {
		t.Fatalf("self-approval: %d", code)
	}
	// A non-administrator may not use hamcp at all, so cannot approve either.
	if code := approve(e.d.Info.UserToken); code != http.StatusForbidden {
		t.Fatalf("approval by a non-admin: %d", code)
	}
	// The same administrator approving from another of their tokens (or the panel) may.
	second, err := e.d.Home.NewAdminToken()
	if err != nil {
		t.Fatal(err)
	}
	if code := approve(second); code != http.StatusOK {
		t.Fatalf("approval by another identity: %d", code)
	}
	res := callJSON(t, a, "ha_execute_command", map[string]any{"command": "echo approved"}, nil)
	if res.IsError || !strings.Contains(text(res), "approved") {
		t.Fatalf("after approval: %s", text(res))
	}
}

func TestPermissionPolicies(t *testing.T) {
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
