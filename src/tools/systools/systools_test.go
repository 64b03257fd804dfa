package systools_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/permtools"
	"github.com/hamcp/hamcp/src/tools/systools"
)

// serve installs the system tools behind a real permission manager with the given policies (every
// other category on ask, and a client that cannot ask its user: the model alone).
func serve(t *testing.T, policies map[permission.Category]permission.Policy, d systools.Deps) *mcp.ClientSession {
	t.Helper()
	files, err := fsguard.New(fsguard.Options{Roots: []fsguard.Root{{Alias: "/config", Path: t.TempDir()}}, TrashDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	d.Files = files
	pm, err := permission.New(permission.Options{Policies: policies})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pm.Close() })
	srv := mcp.NewServer(&mcp.Implementation{Name: "systools-test", Version: "1"}, nil)
	env := &toolkit.Env{Gate: permtools.Gate{M: pm}, SessionKey: func(*mcp.CallToolRequest) string { return "sys-test" }}
	for _, tool := range systools.Tools(d) {
		tool.Install(srv, env)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "model", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func run(t *testing.T, cs *mcp.ClientSession, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ha_execute_command", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

var commandOnly = map[permission.Category]permission.Policy{permission.Command: permission.PolicyAllow}

// The model, with command granted, tries to get the add-on's credentials into a command: through the
// supervisor_token argument (it needs its own grant the model cannot give), through hamcp's
// environment (only allow-listed names pass), and by asking for a variable nobody listed.
// Not parallel: it sets hamcp's own environment.
func TestCommandGetsNoSecretTheUserDidNotGrant(t *testing.T) {
	t.Setenv("SECRET_X", "1")
	t.Setenv("SUPERVISOR_TOKEN", "env-token")
	t.Setenv("MY_TOOL_HOME", "/opt/tool")
	d := systools.Deps{CommandEnv: []string{"MY_TOOL_HOME"}, SupervisorToken: "sup-token"}
	cs := serve(t, commandOnly, d)

	out, isErr := run(t, cs, map[string]any{"command": "env"})
	if isErr || strings.Contains(out, "SECRET_X") || strings.Contains(out, "env-token") || strings.Contains(out, "sup-token") || !strings.Contains(out, "MY_TOOL_HOME=/opt/tool") {
		t.Fatalf("environment: %s", out)
	}
	out, isErr = run(t, cs, map[string]any{"command": "echo token=$SUPERVISOR_TOKEN", "supervisor_token": true})
	if !isErr || !strings.Contains(out, "permission_required") || !strings.Contains(out, `"category":"supervisor_token"`) || strings.Contains(out, "sup-token") {
		t.Fatalf("supervisor_token without the user's grant: %s", out)
	}
	// With the user's grant (here the add-on option) the token is passed, and only then.
	granted := serve(t, map[permission.Category]permission.Policy{permission.Command: permission.PolicyAllow, permission.SupervisorToken: permission.PolicyAllow}, d)
	out, isErr = run(t, granted, map[string]any{"command": "echo token=$SUPERVISOR_TOKEN", "supervisor_token": true})
	if isErr || !strings.Contains(out, "token=sup-token") {
		t.Fatalf("granted supervisor_token: %s", out)
	}
	// The supervisor_token grant alone does not run commands.
	tokenOnly := serve(t, map[permission.Category]permission.Policy{permission.SupervisorToken: permission.PolicyAllow}, d)
	if out, isErr = run(t, tokenOnly, map[string]any{"command": "true", "supervisor_token": true}); !isErr || !strings.Contains(out, `"category":"command"`) {
		t.Fatalf("supervisor_token without command: %s", out)
	}
}

// hamcp's own credentials and options never reach a command through the real tool, even when the
// user's command_env lists one by mistake: the model runs env and finds no token. Not parallel: it
// sets hamcp's own environment.
func TestCommandEnvironmentHoldsNoHamcpToken(t *testing.T) {
	secrets := map[string]string{"SUPERVISOR_TOKEN": "sup-env-secret", "HASSIO_TOKEN": "hassio-env-secret", "HA_TOKEN": "ha-env-secret",
		"HAMCP_HA_TOKEN": "hamcp-ha-secret", "HAMCP_HUBITAT_TOKEN": "hubitat-secret", "HAMCP_HUBITAT_PASSWORD": "hub-password-secret"}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	for _, c := range []struct {
		name   string
		allow  []string
		refuse bool // the run is refused, naming command_env
	}{
		{"no command_env", nil, false},
		{"command_env lists a hamcp option", []string{"HAMCP_HUBITAT_TOKEN"}, true},
		{"command_env lists it in lower case", []string{"hamcp_hubitat_password"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := serve(t, commandOnly, systools.Deps{CommandEnv: c.allow, SupervisorToken: "sup-token"})
			out, isErr := run(t, cs, map[string]any{"command": "env"})
			for name, v := range secrets {
				if strings.Contains(out, v) || strings.Contains(out, name+"=") {
					t.Errorf("%s reached the command: %s", name, out)
				}
			}
			if c.refuse && (!isErr || !strings.Contains(out, "command_env")) {
				t.Errorf("a hamcp option in command_env was not refused by name: %s", out)
			}
			if !c.refuse && (isErr || !strings.Contains(out, "PATH=")) {
				t.Errorf("env did not run: %s", out)
			}
		})
	}
}

// hamcp shutting down (Deps.Stop done) ends a running command and everything it detached.
func TestShutdownEndsCommands(t *testing.T) {
	t.Parallel()
	stop, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	cs := serve(t, commandOnly, systools.Deps{Stop: stop})
	marker := fmt.Sprintf("%d.%06d", 60+rand.IntN(30), rand.IntN(1_000_000))
	time.AfterFunc(500*time.Millisecond, shutdown)
	start := time.Now()
	out, isErr := run(t, cs, map[string]any{"command": "setsid sleep " + marker + " & sleep " + marker, "timeout_seconds": 60})
	if took := time.Since(start); isErr || !strings.Contains(out, `"cancelled":true`) || took > 3*time.Second {
		t.Fatalf("after %v: %s", time.Since(start), out)
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), marker) {
			t.Errorf("process %s outlived shutdown: %q", e.Name(), b)
		}
	}
}

// The system toolset after the merges: commands and disk usage. Home Assistant's log and restarts
// are hatools' ha_get_logs and ha_restart, one tool and one rule each; what stays declares its grants.
func TestSystemToolsDeclare(t *testing.T) {
	t.Parallel()
	want := map[string][]toolkit.Grant{
		"ha_execute_command": {{Category: toolkit.Command}, {Category: toolkit.SupervisorToken, When: "the argument supervisor_token is true"}},
		"ha_get_disk_usage":  nil,
	}
	tools := systools.Tools(systools.Deps{})
	if len(tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(tools), len(want))
	}
	for _, tool := range tools {
		w, ok := want[tool.Name()]
		if !ok || !slices.Equal(tool.Grants(), w) || tool.Toolset() != systools.SetSystem {
			t.Errorf("%s: grants %v", tool.Name(), tool.Grants())
		}
	}
	cs := serve(t, nil, systools.Deps{})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ha_get_disk_usage", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"free`) {
		t.Fatalf("disk usage without any grant: %v %+v", err, res)
	}
	for _, gone := range []string{"ha_read_logs", "ha_restart_homeassistant"} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gone, Arguments: map[string]any{}}); err == nil {
			t.Errorf("%s is still served", gone)
		}
	}
}
