package demo_test

import (
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/config"
)

// The whole add-on as a model reaches it over HTTP, with the command category allowed by the user's
// options and nothing else: it tries to get the Supervisor token into a command, to read hamcp's
// environment, and to run code or change the system through the Home Assistant tools. Not parallel:
// it sets the demo process's own environment.
func TestModelCannotReachPastItsGrants(t *testing.T) {
	t.Setenv("SECRET_X", "hamcp-secret-value")
	t.Setenv("DEMO_TEST_ALLOWED", "visible")
	e := startDemo(t, func(c *config.Config) {
		c.PermissionCommand = "allow"
		c.CommandEnv = []string{"DEMO_TEST_ALLOWED"}
	})
	a := e.client(t, nil)

	res := callJSON(t, a, "ha_execute_command", map[string]any{"command": "env"}, nil)
	if out := text(res); res.IsError || strings.Contains(out, "hamcp-secret-value") || !strings.Contains(out, "DEMO_TEST_ALLOWED=visible") {
		t.Fatalf("command environment: %s", out)
	}
	if te := asToolError(t, callJSON(t, a, "ha_execute_command", map[string]any{"command": "echo $SUPERVISOR_TOKEN", "supervisor_token": true}, nil)); te.Error != "permission_required" || te.Details["category"] != "supervisor_token" {
		t.Fatalf("supervisor_token without the user's grant: %+v", te)
	}
	// command is allowed, so these run; what needs a category the user has not granted does not.
	for _, c := range []struct {
		tool, category string
		args           map[string]any
	}{
		{"ha_get_logs", "filesystem", map[string]any{}},
		{"ha_query_sql", "database", map[string]any{"sql": "SELECT 1"}},
		{"ha_write_sql", "database", map[string]any{"sql": "DELETE FROM states"}},
	} {
		if te := asToolError(t, callJSON(t, a, c.tool, c.args, nil)); te.Error != "permission_required" || te.Details["category"] != c.category {
			t.Errorf("%s: %+v", c.tool, te)
		}
	}
}

// A fresh home where the user allowed nothing: the model alone, with confirm=true everywhere,
// cannot reach what needs the command category. Parallel: it sets no environment.
func TestModelAloneCannotGrantItself(t *testing.T) {
	t.Parallel()
	none := startDemo(t, nil).client(t, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"ha_manage_addons", map[string]any{"action": "install", "slug": "core_samba", "confirm": true}},
		{"ha_manage_hacs", map[string]any{"action": "download", "repository": "basnijholt/adaptive-lighting", "confirm": true}},
		{"ha_call_service", map[string]any{"domain": "hassio", "service": "addon_start", "data": map[string]any{"addon": "core_samba"}, "confirm": true}},
		{"ha_call_service", map[string]any{"domain": "shell_command", "service": "x", "confirm": true}},
		{"ha_execute_command", map[string]any{"command": "true"}},
	} {
		if te := asToolError(t, callJSON(t, none, c.tool, c.args, nil)); te.Error != "permission_required" || te.Details["category"] != "command" {
			t.Errorf("%s %v: %+v", c.tool, c.args, te)
		}
	}
}
