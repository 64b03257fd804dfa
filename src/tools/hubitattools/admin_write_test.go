package hubitattools_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

// privateStore is a store of the test's own: the last backup's time, the debug log and the
// captures are global state that parallel tests must not share.
func privateStore(t testing.TB) *hubstore.Store {
	t.Helper()
	st, hs := openHubStore(t, filepath.Join(t.TempDir(), "hamcp.db"))
	t.Cleanup(func() { st.Close() })
	return hs
}

// openHubStore opens the store file at path with the Hubitat tables, as the integration has it;
// the caller closes st.
func openHubStore(t testing.TB, path string) (st *store.Store, hs *hubstore.Store) {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if hs, err = hubstore.Open(context.Background(), st); err != nil {
		st.Close()
		t.Fatal(err)
	}
	return st, hs
}

func withStore(st *hubstore.Store) func(*hubitattools.Deps) {
	return func(d *hubitattools.Deps) { d.Store = st }
}

func withAdmin(read, write bool) func(*hubitattools.Deps) {
	return func(d *hubitattools.Deps) { d.AdminRead, d.AdminWrite = read, write }
}

func withClock(c *fakeclock.Clock) func(*hubitattools.Deps) {
	return func(d *hubitattools.Deps) { d.Now = c.Now }
}

// hubAdmin is the permission category the admin write tools need.
var hubAdmin = hubitattools.HubAdminCategory.Category

// asking is a client whose user is asked in the client (MCP elicitation) and gives answer,
// counting the questions.
type asking struct {
	mu     sync.Mutex
	answer string
	asked  []string
}

func (a *asking) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req.Params.Message)
	if a.answer != "accept" {
		return &mcp.ElicitResult{Action: a.answer}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
}

func (a *asking) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// session opens a session on f whose user answers in the client, holding the hub_admin grant.
func (a *asking) session(t testing.TB, f *tooltest.Fixture) *tooltest.Session {
	t.Helper()
	s := f.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: a.handler})
	s.Grant(t, hubAdmin)
	return s
}

var writeTools = []struct {
	name  string
	args  map[string]any
	route string // the hub route the tool would call
}{
	{"hubitat_create_hub_backup", map[string]any{}, "GET /hub/backupDB"},
	{"hubitat_reboot_hub", map[string]any{}, "POST /hub/reboot"},
	{"hubitat_shutdown_hub", map[string]any{}, "POST /hub/shutdown"},
	{"hubitat_zwave_repair", map[string]any{}, "GET /hub/zwaveRepair2"},
	{"hubitat_install_app", map[string]any{"source": goodApp("Gate App")}, "POST /app/saveOrUpdateJson"},
	{"hubitat_install_driver", map[string]any{"source": goodDriver("Gate Driver")}, "POST /driver/saveOrUpdateJson"},
	{"hubitat_update_app_code", map[string]any{"appId": "101", "source": goodApp("Gate App")}, "POST /app/saveOrUpdateJson"},
	{"hubitat_update_driver_code", map[string]any{"driverId": "201", "source": goodDriver("Gate Driver")}, "POST /driver/saveOrUpdateJson"},
	{"hubitat_delete_app", map[string]any{"appId": "102"}, "GET /app/edit/deleteJsonSafe/102"},
	{"hubitat_delete_driver", map[string]any{"driverId": "201"}, "GET /driver/editor/deleteJson/201"},
}

func goodApp(name string) string {
	return "definition(name: \"" + name + "\", namespace: \"test\", author: \"hamcp\")\n\ndef installed() {\n    log.info \"hi\"\n}\n"
}

func goodDriver(name string) string {
	return "metadata {\n    definition(name: \"" + name + "\", namespace: \"test\", author: \"hamcp\") {\n        capability \"Switch\"\n    }\n}\n"
}

func with(args map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TestAdminWriteGatesRefuse: every admin write tool refuses, and never reaches the hub, unless
// every gate is open: the option, the hub_admin grant, a backup through hamcp within the hour, and
// the user's own yes to the call. The model's confirm=true opens none of them.
func TestAdminWriteGatesRefuse(t *testing.T) {
	t.Parallel()
	// A store holding a backup taken two hours ago by the fake clock's reckoning, and one with a
	// backup taken now.
	aged := privateStore(t)
	clk := fakeclock.New(time.Now())
	if _, err := aged.SaveHubBackup(context.Background(), clk.Now(), []byte("old backup")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(BackupWindowPlus(time.Minute))
	fresh := privateStore(t)
	if _, err := fresh.SaveHubBackup(context.Background(), time.Now(), []byte("new backup")); err != nil {
		t.Fatal(err)
	}
	h, c := newHub(t, simhub.Options{}, hubitat.Options{}) // its own hub, so that its request counts are this test's
	off := served(withClient(c), withStore(privateStore(t)), withAdmin(true, false))
	none := served(withClient(c), withStore(privateStore(t)), withAdmin(true, true))
	old := served(withClient(c), withStore(aged), withAdmin(true, true), withClock(clk))
	ready := served(withClient(c), withStore(fresh), withAdmin(true, true))
	for _, w := range writeTools {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			yes := with(w.args, "confirm", true)
			// With the option on, the user's grant comes first: without it nothing else is looked at.
			e := ready.Session(t).Fail(t, w.name, yes)
			if e.Code != "permission_required" || e.Details["category"] != "hub_admin" {
				t.Errorf("no grant: %+v", e)
			}
			// With the option off the user is never asked for a grant that could not be used.
			if e := off.Session(t).Fail(t, w.name, yes); e.Code != "tool_not_enabled" || !strings.Contains(e.Message, "hubitat_admin_write") {
				t.Errorf("option off, no grant: %+v, want tool_not_enabled naming the option before any grant request", e)
			}
			type gateCase struct {
				name   string
				f      *tooltest.Fixture
				answer string // what the user says when asked in the client; "" = a client that cannot ask
				args   map[string]any
				want   tooltest.ErrCase
				asked  bool // whether the user was asked before the refusal
			}
			cases := []gateCase{
				{"option off", off, "accept", yes, tooltest.ErrCase{Code: "tool_not_enabled", Contains: "add-on's Configuration"}, false},
				{"the user declines", ready, "decline", w.args, tooltest.ErrCase{Code: "confirmation_declined", Contains: "the user declined"}, true},
				{"the user declines whatever the model says", ready, "decline", yes, tooltest.ErrCase{Code: "confirmation_declined"}, true},
				{"the user dismisses the question", ready, "cancel", yes, tooltest.ErrCase{Code: "confirmation_declined"}, true},
				// A client that cannot ask: the call waits for the user's approval in the panel or on the page.
				{"confirm=true without the user", ready, "", yes, tooltest.ErrCase{Code: "confirmation_required", Contains: "Hubitat"}, false},
			}
			if w.name != "hubitat_create_hub_backup" {
				next := "hubitat_create_hub_backup"
				cases = append(cases,
					gateCase{"no backup", none, "accept", yes, tooltest.ErrCase{Code: "backup_required", Contains: next}, false},
					gateCase{"backup older than an hour", old, "accept", yes, tooltest.ErrCase{Code: "backup_required", Contains: "more than an hour ago"}, false},
				)
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					c.want.Tool, c.want.Args = w.name, c.args
					user := &asking{answer: c.answer}
					var s *tooltest.Session
					if c.answer == "" {
						s = c.f.Granted(t, hubAdmin)
					} else {
						s = user.session(t, c.f)
					}
					c.want.Check(t, s)
					if q := user.questions(); (len(q) > 0) != c.asked {
						t.Errorf("the user was asked %q; want asked: %v", q, c.asked)
					}
				})
			}
		})
	}
	t.Cleanup(func() {
		for _, w := range writeTools {
			if h.Requests(w.route) != 0 {
				t.Errorf("%s reached the hub (%s) through a closed gate", w.name, w.route)
			}
		}
	})
}

// BackupWindowPlus is a backup age just past the admin write window.
func BackupWindowPlus(d time.Duration) time.Duration { return hubitattools.BackupWindow + d }

// TestAdminWriteToolsOnTheirOwnHub runs every admin write tool against a hub of its own, behind
// Hub Security, after a backup through hamcp, with the fake clock inside and outside the hour.
func TestAdminWriteToolsOnTheirOwnHub(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "own-hub-pw"}, hubitat.Options{})
	st := privateStore(t)
	clk := fakeclock.New(time.Now())
	user := &asking{answer: "accept"}
	s := user.session(t, served(withClient(c), withStore(st), withAdmin(true, true), withClock(clk)))
	yes := map[string]any{} // the user says yes in the client; the model has nothing to add

	var b struct {
		Success   bool   `json:"success"`
		File      string `json:"file"`
		SizeBytes int64  `json:"sizeBytes"`
		SHA256    string `json:"sha256"`
		Valid     string `json:"validUntil"`
	}
	s.OK(t, "hubitat_create_hub_backup", yes, &b)
	data, err := os.ReadFile(b.File)
	if err != nil || !b.Success || int64(len(data)) != b.SizeBytes || !bytes.HasPrefix(data, []byte("ZV")) || h.Backups() != 1 {
		t.Fatalf("backup %+v: file %d bytes %v, hub backups %d", b, len(data), err, h.Backups())
	}
	if fi, _ := os.Stat(b.File); fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file mode %v", fi.Mode())
	}
	if h.Logins() == 0 {
		t.Fatal("the admin calls did not log in with Hub Security")
	}
	// The hub forgets the session (its timeout, a restart): the next call logs in again once.
	logins := h.Logins()
	h.ExpireSessions()
	s.OK(t, "hubitat_get_hub_health", nil, nil)
	s.OK(t, "hubitat_list_hub_apps", nil, nil)
	if h.Logins() != logins+1 {
		t.Fatalf("%d logins after the session expired, want 1", h.Logins()-logins)
	}

	// Code: install, read, update (a compile error keeps the old code), delete; app and driver.
	for _, k := range []struct{ kind, idArg, src, bad string }{
		{"app", "appId", goodApp("Porch Timer"), "def nothing() {}"},
		{"driver", "driverId", goodDriver("Porch Sensor"), "metadata { definition(name: \"x\") {"},
	} {
		var inst map[string]any
		s.OK(t, "hubitat_install_"+k.kind, with(yes, "source", k.src), &inst)
		id, _ := inst[k.idArg].(string)
		if id == "" || inst["lastBackup"] == "" {
			t.Fatalf("install %s: %v", k.kind, inst)
		}
		e := s.Fail(t, "hubitat_install_"+k.kind, with(yes, "source", k.bad))
		if e.Code != "backend_error" {
			t.Errorf("install of code that does not compile: %+v", e)
		}
		var upd struct {
			Version int64 `json:"version"`
		}
		newSrc := strings.Replace(k.src, "hamcp", "hamcp v2", 1)
		s.OK(t, "hubitat_update_"+k.kind+"_code", with(yes, k.idArg, id, "source", newSrc), &upd)
		if upd.Version != 2 {
			t.Errorf("update %s: version %d, want 2", k.kind, upd.Version)
		}
		e = s.Fail(t, "hubitat_update_"+k.kind+"_code", with(yes, k.idArg, id, "source", k.bad))
		if e.Code != "backend_error" || !strings.Contains(e.Message, "definition") && !strings.Contains(e.Message, "unexpected token") {
			t.Errorf("update with a compile error: %+v", e)
		}
		var got struct {
			Source  string `json:"source"`
			Version int64  `json:"version"`
		}
		s.OK(t, "hubitat_get_"+k.kind+"_source", map[string]any{k.idArg: id}, &got)
		if got.Source != newSrc || got.Version != 2 {
			t.Errorf("%s source after a failed update: %q v%d", k.kind, got.Source, got.Version)
		}
		s.OK(t, "hubitat_delete_"+k.kind, with(yes, k.idArg, id), nil)
		if e := s.Fail(t, "hubitat_delete_"+k.kind, with(yes, k.idArg, id)); e.Code != "backend_error" {
			t.Errorf("second delete: %+v", e)
		}
		if e := s.Fail(t, "hubitat_delete_"+k.kind, with(yes, k.idArg, "12ab")); e.Code != "invalid_argument" || e.Field != k.idArg {
			t.Errorf("non-numeric id: %+v", e)
		}
	}

	// Z-Wave repair shows in the Z-Wave details.
	s.OK(t, "hubitat_zwave_repair", yes, nil)
	var zw struct {
		Data map[string]any `json:"data"`
	}
	s.OK(t, "hubitat_get_zwave_details", nil, &zw)
	if zw.Data["repairRunning"] != true {
		t.Errorf("repair not running: %v", zw.Data)
	}

	// 59 minutes on the backup still counts; 61 does not, until a new backup.
	clk.Advance(59 * time.Minute)
	s.OK(t, "hubitat_zwave_repair", yes, nil)
	clk.Advance(2 * time.Minute)
	tooltest.ErrCase{Tool: "hubitat_reboot_hub", Args: yes, Code: "backup_required", Contains: "more than an hour ago"}.Check(t, s)
	s.OK(t, "hubitat_create_hub_backup", yes, nil)

	// Reboot: the hub goes away and comes back; calls meanwhile fail fast.
	var rb struct {
		Message    string `json:"message"`
		LastBackup string `json:"lastBackup"`
	}
	s.OK(t, "hubitat_reboot_hub", yes, &rb)
	if !strings.Contains(rb.Message, "1-3 minutes") || rb.LastBackup == "" {
		t.Errorf("reboot result %+v", rb)
	}
	if q := user.questions(); len(q) == 0 || !strings.Contains(q[len(q)-1], "Reboot the Hubitat hub?") {
		t.Errorf("the user was asked %q before the reboot", q)
	}
	testkit.Eventually(t, "the hub to go down", h.Down)
	testkit.Eventually(t, "the hub to come back", func() bool { return !h.Down() && c.Cache().Live() })

	// Shutdown: it stays down, and a backup then fails with "do not proceed".
	s.OK(t, "hubitat_shutdown_hub", yes, nil)
	testkit.Eventually(t, "the hub to power off", h.Down)
	e := s.Fail(t, "hubitat_create_hub_backup", yes)
	if e.Code != "backend_unavailable" || !strings.Contains(e.Hint, "do NOT proceed") {
		t.Errorf("backup of a hub that is off: %+v", e)
	}
	entries, _ := os.ReadDir(filepath.Dir(b.File))
	if len(entries) != 2 {
		t.Errorf("%d backup files, want the 2 that succeeded", len(entries))
	}
	// The audit log has the hub_admin calls, with the source's size instead of the source.
	audit := s.Audit(t, store.AuditQuery{Tool: "hubitat_install_app"})
	if len(audit) == 0 || strings.Contains(audit[0].ArgsSummary, "definition") || !strings.Contains(audit[0].ArgsSummary, "bytes") {
		t.Errorf("audit of install_app: %+v", audit)
	}
}
