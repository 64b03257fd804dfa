package hatools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/dbtools"
	"github.com/hamcp/hamcp/src/tools/hatools"
	"github.com/hamcp/hamcp/src/tools/permtools"
	"github.com/hamcp/hamcp/src/tools/systools"
)

// admEnv is a simulated home with the Home Assistant tools served to an MCP client: the
// simulator on loopback sockets, hamcp's real clients, file guard and permission manager.
type admEnv struct {
	home *sim.Home
	ha   *homeassistant.Client
	cs   *mcp.ClientSession
	pm   *permission.Manager
}

func allClasses() []string { return classNames(sensitive.Classes) }

func classNames(cs []sensitive.Class) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

type admOpts struct {
	noSupervisor bool // hamcp outside the add-on: no Supervisor client
	userToken    bool // a non-admin user's token instead of the owner's
	noGrants     bool // every category on ask and nobody to ask: the model alone (privileged_test.go)
	// defaultTrust: confirm_trusted at its default (change only), so unlocking, disarming, opening a
	// garage, restarting and deleting need the user (confirm_test.go). Otherwise every class is
	// trusted and confirm=true stands for the user, which the tools' own tests rely on.
	defaultTrust bool
	trust        []string // when set, exactly these classes are trusted
	// elicit answers the client's elicitation requests (nil: the client cannot ask its user).
	elicit     func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	supervised bool     // an HA OS / Supervised install: no log file, /api/error_log 404
	sensitive  []string // the sensitive_entities option
	// supervisorAPITimeout shortens core's default supervisor/api timeout (HA: 10 s).
	supervisorAPITimeout time.Duration
	viaProxy             bool            // Home Assistant through the Supervisor's /core proxy, as inside the add-on
	exposeScope          string          // the expose_scope option ("" = all)
	beforeTools          func(*sim.Home) // changes the home before the tools first read it
	logs                 chan<- string   // receives the client's log notifications (live events), JSON
}

func admStart(t testing.TB, o admOpts) *admEnv {
	t.Helper()
	ctx := context.Background()
	h, err := sim.Start(ctx, sim.Options{HistoryDays: -1, Seed: 11, Supervised: o.supervised, SupervisorAPITimeout: o.supervisorAPITimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	token := h.Token()
	if o.userToken {
		token = h.UserToken()
	}
	base := h.URL()
	if o.viaProxy {
		base, token = h.SupervisorURL()+"/core", h.SupervisorToken()
	}
	ha, err := homeassistant.New(homeassistant.Config{BaseURL: base, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	ha.Start(ctx)
	t.Cleanup(func() { ha.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for !ha.Mirror().Live() {
		if time.Now().After(deadline) {
			t.Fatal("the state mirror did not go live")
		}
		time.Sleep(10 * time.Millisecond)
	}
	deps := hatools.Deps{HA: ha, SensitiveEntities: o.sensitive, Scope: hatools.NewScope(ha, o.exposeScope)}
	if o.beforeTools != nil {
		o.beforeTools(h)
	}
	own, err := store.Open(filepath.Join(t.TempDir(), "hamcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close() })
	if deps.History, err = confighistory.Open(ctx, own); err != nil {
		t.Fatal(err)
	}
	if !o.noSupervisor {
		if deps.Supervisor, err = supervisor.New(supervisor.Config{BaseURL: h.SupervisorURL(), Token: h.SupervisorToken()}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := h.Sandbox().Config
	deps.Files, err = fsguard.New(fsguard.Options{Roots: []fsguard.Root{{Alias: "/config", Path: cfg}, {Alias: "/homeassistant", Path: cfg}}, TrashDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deps.Files.Close() })
	policies := map[permission.Category]permission.Policy{permission.Filesystem: permission.PolicyAllow, permission.Command: permission.PolicyAllow}
	if o.noGrants {
		policies = nil
	}
	pm, err := permission.New(permission.Options{Policies: policies})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pm.Close() })
	srv := mcp.NewServer(&mcp.Implementation{Name: "hamcp-test", Version: "1"}, nil)
	// The in-memory transport has no session id; a fixed key stands for this one client.
	env := &toolkit.Env{Gate: permtools.Gate{M: pm}, SessionKey: func(*mcp.CallToolRequest) string { return "adm-test" }, ConfirmTrusted: allClasses()}
	if o.defaultTrust {
		env.ConfirmTrusted = classNames(sensitive.DefaultTrusted)
	}
	if o.trust != nil {
		env.ConfirmTrusted = o.trust
	}
	for _, tool := range hatools.Tools(deps) {
		tool.Install(srv, env)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	var so *mcp.ClientSessionOptions
	if o.elicit != nil {
		// Server-initiated elicitation inside a call, as clients speaking 2025-11-25 (Claude) get it;
		// 2026-07-28 replaces it with multi round-trip requests.
		so = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	copts := &mcp.ClientOptions{ElicitationHandler: o.elicit}
	if o.logs != nil {
		//lint:ignore SA1019 live events ride on MCP logging, which clients before 2026-07-28 use.
		copts.LoggingMessageHandler = func(_ context.Context, r *mcp.LoggingMessageRequest) {
			b, _ := json.Marshal(r.Params.Data)
			select {
			case o.logs <- string(b):
			default:
			}
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "adm-test", Version: "1"}, copts).Connect(ctx, ct, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &admEnv{home: h, ha: ha, cs: cs, pm: pm}
}

// down takes Home Assistant off the network (the Supervisor stays up) and waits until the
// client has noticed, so no answer comes from a stale connection.
func (e *admEnv) down(t testing.TB) {
	t.Helper()
	if err := e.home.SetDown(true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.ha.Mirror().Live() {
		if time.Now().After(deadline) {
			t.Fatal("the client still thinks Home Assistant is up")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// admResult is one tool call's outcome: the decoded JSON text, or the tool error.
type admResult struct {
	raw  string
	err  *toolkit.Error
	data map[string]any
}

func (e *admEnv) call(t testing.TB, tool string, args map[string]any) admResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	out := admResult{raw: text}
	if res.IsError {
		out.err = &toolkit.Error{}
		if err := json.Unmarshal([]byte(text), out.err); err != nil {
			t.Fatalf("%s: error result is not a tool error: %s", tool, text)
		}
		return out
	}
	if err := json.Unmarshal([]byte(text), &out.data); err != nil {
		t.Fatalf("%s: result is not a JSON object: %s", tool, text)
	}
	return out
}

// ok calls a tool that must succeed.
func (e *admEnv) ok(t testing.TB, tool string, args map[string]any) map[string]any {
	t.Helper()
	r := e.call(t, tool, args)
	if r.err != nil {
		t.Fatalf("%s %v: %s", tool, args, r.raw)
	}
	return r.data
}

// fails calls a tool that must fail with the given code (and, when set, a message containing want).
func (e *admEnv) fails(t testing.TB, tool string, args map[string]any, code, want string) *toolkit.Error {
	t.Helper()
	r := e.call(t, tool, args)
	if r.err == nil {
		t.Fatalf("%s %v succeeded, want %s: %s", tool, args, code, r.raw)
	}
	if r.err.Code != code {
		t.Fatalf("%s %v: code %s, want %s: %s", tool, args, r.err.Code, code, r.raw)
	}
	if want != "" && !strings.Contains(r.raw, want) {
		t.Fatalf("%s %v: %s lacks %q", tool, args, r.raw, want)
	}
	return r.err
}

// admItems returns a paged result's items.
func admItems(t testing.TB, m map[string]any, key string) []map[string]any {
	t.Helper()
	list, ok := m[key].([]any)
	if !ok {
		t.Fatalf("no %s list in %v", key, m)
	}
	out := make([]map[string]any, len(list))
	for i, v := range list {
		out[i], _ = v.(map[string]any)
	}
	return out
}

func TestValidateReloadRestart(t *testing.T) {
	e := admStart(t, admOpts{})
	cases := []struct {
		name, tool string
		args       map[string]any
		code, want string // code "" = success; want is then a text the result must contain
	}{
		{"validate", "ha_validate_config", nil, "", `"result":"valid"`},
		{"validate extra arg", "ha_validate_config", map[string]any{"path": "x"}, "invalid_argument", "not an argument"},
		{"reload automation", "ha_reload_config", map[string]any{"domain": "automation"}, "", `"service":"automation.reload"`},
		{"reload all", "ha_reload_config", map[string]any{"domain": "all"}, "", `"service":"homeassistant.reload_all"`},
		{"reload unknown domain", "ha_reload_config", map[string]any{"domain": "wibble"}, "invalid_argument", "must be one of"},
		{"reload missing domain", "ha_reload_config", nil, "invalid_argument", "domain"},
		{"reload groups", "ha_reload_config", map[string]any{"domain": "group"}, "", `"service":"group.reload"`},
		{"reload themes", "ha_reload_config", map[string]any{"domain": "themes"}, "", `"service":"frontend.reload_themes"`},
		{"restart needs confirm", "ha_restart", nil, "confirmation_required", "confirm"},
		{"restart bad type", "ha_restart", map[string]any{"confirm": "yes"}, "invalid_argument", "boolean"},
		{"restart", "ha_restart", map[string]any{"confirm": true}, "", `"via":"supervisor"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code != "" {
				e.fails(t, c.tool, c.args, c.code, c.want)
				return
			}
			if r := e.call(t, c.tool, c.args); r.err != nil || !strings.Contains(r.raw, c.want) {
				t.Fatalf("%s: %s, want %s", c.tool, r.raw, c.want)
			}
		})
	}

	t.Run("invalid configuration refuses restart and reload reports it", func(t *testing.T) {
		// Written without the check, as a user editing by hand might.
		e.ok(t, "ha_write_config", map[string]any{"path": "automations.yaml", "content": "not_a_list: true\n", "confirm": true, "validate": false})
		if r := e.ok(t, "ha_validate_config", nil); r["result"] != "invalid" || !strings.Contains(r["errors"].(string), "expected a list") {
			t.Fatalf("validate: %v", r)
		}
		e.fails(t, "ha_restart", map[string]any{"confirm": true}, "invalid_configuration", "expected a list")
		// HA answers 500 when the reload cannot read the file.
		e.fails(t, "ha_reload_config", map[string]any{"domain": "automation"}, "backend_error", "ha_validate_config")
	})

	t.Run("down: the Supervisor checks instead", func(t *testing.T) {
		e.down(t)
		if r := e.ok(t, "ha_validate_config", nil); r["checked_by"] != "supervisor" || r["result"] != "invalid" {
			t.Fatalf("validate via supervisor: %v", r)
		}
		e.fails(t, "ha_reload_config", map[string]any{"domain": "automation"}, "backend_unavailable", "not reachable")
	})
}

func TestSystemInfo(t *testing.T) {
	e := admStart(t, admOpts{})
	r := e.ok(t, "ha_system_info", nil)
	if r["version"] != "2026.8.1" || r["state"] != "RUNNING" || r["time_zone"] == "" || r["integrations"].(float64) < 10 || r["entities"].(float64) < 50 {
		t.Fatalf("system info: %v", r)
	}
	in, _ := r["install"].(map[string]any)
	if in["type"] != "os" || in["hostname"] != "homeassistant" || in["os_version"] == nil {
		t.Fatalf("install: %v", in)
	}
	if units, _ := r["units"].(map[string]any); units["temperature"] != "°C" {
		t.Fatalf("units: %v", r["units"])
	}
	e.fails(t, "ha_system_info", map[string]any{"verbose": true}, "invalid_argument", "verbose")
	e.down(t)
	e.fails(t, "ha_system_info", nil, "backend_unavailable", "ha_get_supervisor_info")
}

func TestGetLogs(t *testing.T) {
	e := admStart(t, admOpts{})
	all := e.ok(t, "ha_get_logs", map[string]any{"lines": 5})
	entries := admItems(t, all, "entries")
	if all["source"] != "home_assistant" || len(entries) != 5 || all["next_offset"] == nil || all["total"].(float64) < 20 ||
		!strings.Contains(admJSON(entries), `"repeats":`) {
		t.Fatalf("logs: %v", all)
	}
	if raw := e.ok(t, "ha_get_logs", map[string]any{"merge": false, "lines": 1}); raw["total"].(float64) < 300 || strings.Contains(admJSON(raw), `"repeats"`) {
		t.Fatalf("unmerged: %v", raw)
	}
	// newest first
	if entries[0]["time"].(string) < entries[4]["time"].(string) {
		t.Fatalf("not newest first: %v then %v", entries[0]["time"], entries[4]["time"])
	}
	errs := admItems(t, e.ok(t, "ha_get_logs", map[string]any{"level": "error", "lines": 50}), "entries")
	for _, en := range errs {
		if en["level"] != "ERROR" && en["level"] != "CRITICAL" {
			t.Fatalf("level filter let %v through", en)
		}
	}
	met := admItems(t, e.ok(t, "ha_get_logs", map[string]any{"search": "met.no", "lines": 1}), "entries")
	if len(met) != 1 || !strings.Contains(met[0]["detail"].(string), "more lines (traceback=true") {
		t.Fatalf("traceback preview: %v", met)
	}
	full := admItems(t, e.ok(t, "ha_get_logs", map[string]any{"filter": "met.no", "lines": 1, "traceback": true}), "entries")
	if !strings.Contains(full[0]["detail"].(string), "UpdateFailed") {
		t.Fatalf("full traceback: %v", full)
	}
	e.fails(t, "ha_get_logs", map[string]any{"level": "loud"}, "invalid_argument", "level")
	e.fails(t, "ha_get_logs", map[string]any{"lines": 0.5}, "invalid_argument", "lines")

	e.down(t)
	viaSup := e.ok(t, "ha_get_logs", map[string]any{"lines": 3})
	if viaSup["source"] != "supervisor" || len(admItems(t, viaSup, "entries")) != 3 {
		t.Fatalf("supervisor fallback: %v", viaSup)
	}
}

// TestNonAdminToken runs the tools on a non-admin user's token: Home Assistant answers REST 401
// and WebSocket "unauthorized" to what needs an administrator.
func TestNonAdminToken(t *testing.T) {
	e := admStart(t, admOpts{userToken: true, noSupervisor: true})
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"ha_get_logs", nil},
		{"ha_list_automations", map[string]any{"include_config": true}},
		{"ha_manage_integrations", map[string]any{"action": "list"}},
		{"ha_get_diagnostics", nil}, // states are readable by any user; config entries are not
		{"ha_manage_hacs", map[string]any{"action": "list"}},
		{"ha_get_supervisor_info", nil},
		{"ha_manage_addons", map[string]any{"action": "list"}},
		{"ha_validate_config", nil},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) { e.fails(t, c.tool, c.args, "backend_unauthorized", "token") })
	}
}

// TestWithoutSupervisor runs hamcp as outside the add-on: restarts go through the service,
// and while Home Assistant is down nothing can stand in for it.
func TestWithoutSupervisor(t *testing.T) {
	e := admStart(t, admOpts{noSupervisor: true})
	if r := e.ok(t, "ha_manage_backups", map[string]any{"action": "list", "source": "homeassistant"}); r["list"].(map[string]any)["total"].(float64) != 0 {
		t.Fatalf("backups without Supervisor (core's integration has none yet): %v", r)
	}
	if r := e.ok(t, "ha_system_info", nil); r["install"] != nil {
		t.Fatalf("install info without Supervisor: %v", r)
	}
	if r := e.ok(t, "ha_restart", map[string]any{"confirm": true, "safe_mode": true}); r["via"] != "service" || r["restarting"] != true {
		t.Fatalf("restart via service: %v", r)
	}
	before := e.ok(t, "ha_read_config", map[string]any{"path": "customize.yaml", "lines": 5000})["content"]
	e.down(t)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"ha_validate_config", nil, "not reachable"},
		{"ha_restart", map[string]any{"confirm": true}, "not reachable"},
		{"ha_get_supervisor_info", nil, "not reachable"},
		{"ha_manage_addons", map[string]any{"action": "list"}, "not reachable"},
		{"ha_write_config", map[string]any{"path": "customize.yaml", "content": "x: 1\n", "confirm": true}, "restored"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			err := e.fails(t, c.tool, c.args, "backend_unavailable", c.want)
			if err.Changed == nil || *err.Changed {
				t.Fatalf("changed should be false: %+v", err)
			}
		})
	}
	if after := e.ok(t, "ha_read_config", map[string]any{"path": "customize.yaml", "lines": 5000})["content"]; after != before {
		t.Fatal("ha_write_config did not restore the file while Home Assistant was down")
	}
	r := e.ok(t, "ha_write_config", map[string]any{"path": "customize.yaml", "content": "x: 1\n", "confirm": true, "validate": false})
	if !strings.Contains(r["next"].(string), "not checked") {
		t.Fatalf("unchecked write: %v", r)
	}
}

// TestGetLogsOnEveryInstall: ha_get_logs, the one log tool (ha_read_logs was folded into it), reads
// Home Assistant's log wherever it lives, under the one filesystem grant: HA's own file through
// /api/error_log on a container install, the Supervisor's journal on HA OS (directly inside the
// add-on, through Home Assistant outside it), and, when Home Assistant is down, the journal or
// else the file itself (what ha_read_logs could read and ha_get_logs could not).
func TestGetLogsOnEveryInstall(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		o          admOpts
		down       bool
		wantSource string
		wantCode   string
	}{
		{"container install, add-on", admOpts{}, false, "home_assistant", ""},
		{"container install, standalone", admOpts{noSupervisor: true}, false, "home_assistant", ""},
		{"HA OS, add-on", admOpts{supervised: true}, false, "supervisor", ""},
		{"HA OS, standalone", admOpts{supervised: true, noSupervisor: true}, false, "supervisor", ""},
		{"container install, standalone, HA down", admOpts{noSupervisor: true}, true, "file", ""},
		{"HA OS, add-on, HA down", admOpts{supervised: true}, true, "supervisor", ""},
		{"HA OS, standalone, HA down: nothing to read", admOpts{supervised: true, noSupervisor: true}, true, "", "backend_unavailable"},
		{"no grant", admOpts{noGrants: true}, false, "", "permission_required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := admStart(t, c.o)
			if c.down {
				e.down(t)
			}
			if c.wantCode != "" {
				if err := e.fails(t, "ha_get_logs", map[string]any{"lines": 5}, c.wantCode, ""); c.wantCode == "permission_required" && err.Details["category"] != "filesystem" {
					t.Fatalf("category: %+v", err)
				}
				return
			}
			r := e.ok(t, "ha_get_logs", map[string]any{"search": "met.no", "lines": 1000})
			if r["source"] != c.wantSource || len(admItems(t, r, "entries")) == 0 {
				t.Fatalf("source %v (want %s): %v", r["source"], c.wantSource, r)
			}
			if c.wantSource == "file" && !strings.Contains(r["note"].(string), "home-assistant.log") {
				t.Fatalf("note: %v", r["note"])
			}
		})
	}
}

// TestOneToolPerCapability: each capability the merged tools cover is reached by one tool under one
// rule, whichever way the model asks: the old duplicates are gone from every toolset, and the
// survivors declare the grant of the strictest of the pair (the log is filesystem; a restart is the
// user's confirmation, not a root-equivalent grant; long-term statistics are Home Assistant's answer
// to any token, so no grant).
func TestOneToolPerCapability(t *testing.T) {
	t.Parallel()
	all := map[string]*toolkit.Tool{}
	for _, tools := range [][]*toolkit.Tool{hatools.Tools(hatools.Deps{}), systools.Tools(systools.Deps{}), dbtools.Tools(dbtools.Deps{})} {
		for _, tool := range tools {
			all[tool.Name()] = tool
		}
	}
	for _, gone := range []string{"ha_restart_homeassistant", "ha_read_logs", "ha_query_statistics_db", "ha_execute_sql"} {
		if all[gone] != nil {
			t.Errorf("%s is still offered", gone)
		}
	}
	for _, c := range []struct {
		tool     string
		grants   []toolkit.Grant
		readOnly bool
		confirm  string
	}{
		{"ha_restart", nil, false, "always (`restart`)"},
		{"ha_get_logs", []toolkit.Grant{{Category: toolkit.Filesystem}}, true, ""},
		{"ha_get_statistics", nil, true, ""},
		{"ha_query_sql", []toolkit.Grant{{Category: toolkit.Database}}, true, ""},
		{"ha_write_sql", []toolkit.Grant{{Category: toolkit.Database}, {Category: toolkit.DatabaseWrite, When: "it runs (every call)"}}, false, ""},
	} {
		tool := all[c.tool]
		if tool == nil {
			t.Errorf("%s is missing", c.tool)
			continue
		}
		if !slices.Equal(tool.Grants(), c.grants) || tool.ReadOnly() != c.readOnly || tool.ConfirmWhen() != c.confirm {
			t.Errorf("%s: grants %v read-only %v confirm %q", c.tool, tool.Grants(), tool.ReadOnly(), tool.ConfirmWhen())
		}
	}
}

// TestDefaultCallsStaySmall keeps every default call of these tools under 20 KB on the demo
// home, the budget a model's context can afford per call.
func TestDefaultCallsStaySmall(t *testing.T) {
	e := admStart(t, admOpts{})
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"ha_get_logs", nil},
		{"ha_list_files", nil},
		{"ha_list_files", map[string]any{"recursive": true}},
		{"ha_read_config", map[string]any{"path": "configuration.yaml"}},
		{"ha_manage_backups", map[string]any{"action": "list"}},
		{"ha_manage_updates", map[string]any{"action": "list", "all": true}},
		{"ha_list_automations", nil},
		{"ha_list_automations", map[string]any{"include_config": true}},
		{"ha_list_blueprints", nil},
		{"ha_system_info", nil},
		{"ha_get_supervisor_info", nil},
		{"ha_get_supervisor_info", map[string]any{"component": "supervisor"}},
		{"ha_manage_integrations", map[string]any{"action": "list"}},
		{"ha_get_diagnostics", nil},
		{"ha_manage_addons", map[string]any{"action": "list", "scope": "store"}},
		{"ha_manage_addons", map[string]any{"action": "info", "slug": "core_mosquitto"}},
		{"ha_manage_hacs", map[string]any{"action": "list"}},
		{"ha_manage_hacs", map[string]any{"action": "info", "repository": "hacs/integration"}},
	}
	for _, c := range cases {
		r := e.call(t, c.tool, c.args)
		if r.err != nil {
			t.Fatalf("%s %v: %s", c.tool, c.args, r.raw)
		}
		t.Logf("%-24s %-40s %6d bytes", c.tool, admJSON(c.args), len(r.raw))
		if len(r.raw) > 20<<10 {
			t.Errorf("%s %v returned %d bytes, over 20 KB", c.tool, c.args, len(r.raw))
		}
	}
}
