package hubitattools_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
)

type dashOut struct {
	List struct {
		Total int                 `json:"total"`
		Items []hubitat.Dashboard `json:"items"`
	} `json:"list"`
	Dashboard *hubitat.Dashboard `json:"dashboard"`
	Previous  *hubitat.Dashboard `json:"previous"`
	Done      string             `json:"done"`
}

// backedUp is a store of the test's own holding a hub backup taken at when.
func backedUp(t *testing.T, when time.Time) *hubstore.Store {
	t.Helper()
	st := privateStore(t)
	if _, err := st.SaveHubBackup(context.Background(), when, []byte("backup")); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDashboards: list and read without the PINs, create, update only what is given (the
// earlier config comes back and puts it back), delete; legacy dashboards are left alone.
func TestDashboards(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{})
	user := &asking{answer: "accept"}
	s := user.session(t, served(withClient(c), withStore(backedUp(t, time.Now())), withAdmin(true, true)))
	call := func(args map[string]any) dashOut {
		t.Helper()
		var out dashOut
		if text := s.OK(t, "hubitat_manage_dashboards", args, &out); strings.Contains(text, "2468") || strings.Contains(text, "1357") {
			t.Fatalf("a dashboard PIN reached the model: %s", text)
		}
		return out
	}
	out := call(map[string]any{"action": "list"})
	if out.List.Total != 2 || out.List.Items[0].ID != "71" || out.List.Items[0].Kind != "easy" || out.List.Items[1].Kind != "legacy" {
		t.Fatalf("list: %+v", out.List)
	}
	main := call(map[string]any{"action": "get", "dashboardId": "71"}).Dashboard
	if main.Name != "Main" || !slices.Equal(main.DeviceIDs, []string{"1", "2", "8"}) || !main.ShowHSMTile || !main.ShowModeTile || main.ShowClockTile ||
		main.Theme != "dark" || !main.DashboardPinSet || !main.HSMPinSet {
		t.Errorf("get 71: %+v", main)
	}

	out = call(map[string]any{"action": "create", "name": "Kitchen", "deviceIds": []string{"2", "4"}, "show": []string{"clock"}})
	if out.Dashboard == nil || out.Dashboard.Name != "Kitchen" || !out.Dashboard.ShowClockTile || out.Dashboard.ShowHSMTile {
		t.Fatalf("create: %+v", out)
	}
	newID := out.Dashboard.ID
	if q := user.questions(); len(q) != 1 || !strings.Contains(q[0], `Create the Hubitat dashboard "Kitchen" showing Kitchen Lights (2), Coffee Maker (4)?`) {
		t.Errorf("asked %q", q)
	}

	out = call(map[string]any{"action": "update", "dashboardId": "71", "name": "Main Floor"})
	name, devices, pins, _ := h.DashboardState(71)
	if name != "Main Floor" || !slices.Equal(devices, []int{1, 2, 8}) || pins != [2]string{"2468", "1357"} || out.Previous == nil || out.Previous.Name != "Main" {
		t.Errorf("update kept %q %v %v; previous %+v", name, devices, pins, out.Previous)
	}
	if q := user.questions(); !strings.Contains(q[len(q)-1], "Front Door Lock (8)") || !strings.Contains(q[len(q)-1], "alarm (HSM) tile") {
		t.Errorf("the user was not told the dashboard controls the lock and the alarm: %q", q[len(q)-1])
	}
	// The earlier config puts it back.
	p := out.Previous
	var show []string
	for flag, on := range map[string]bool{"mode": p.ShowModeTile, "hsm": p.ShowHSMTile, "clock": p.ShowClockTile} {
		if on {
			show = append(show, flag)
		}
	}
	call(map[string]any{"action": "update", "dashboardId": "71", "name": p.Name, "deviceIds": p.DeviceIDs, "show": show})
	if back := call(map[string]any{"action": "get", "dashboardId": "71"}).Dashboard; back.Name != "Main" || !back.ShowHSMTile || back.Theme != "dark" {
		t.Errorf("put back: %+v", back)
	}

	out = call(map[string]any{"action": "delete", "dashboardId": newID})
	if _, _, _, ok := h.DashboardState(atoi(t, newID)); ok || out.Previous == nil || out.Previous.Name != "Kitchen" {
		t.Errorf("delete: still there %v, %+v", ok, out)
	}
	before := h.Requests("GET /dashboard/create") + h.Requests("GET /dashboard/update") + h.Requests("GET /dashboard/delete")
	for _, c := range []tooltest.ErrCase{
		{Name: "legacy", Args: map[string]any{"action": "update", "dashboardId": "81", "name": "x"}, Code: "invalid_argument", Field: "dashboardId", Contains: "legacy"},
		{Name: "legacy delete", Args: map[string]any{"action": "delete", "dashboardId": "81"}, Code: "invalid_argument", Field: "dashboardId"},
		{Name: "no devices", Args: map[string]any{"action": "create", "name": "Empty"}, Code: "invalid_argument", Field: "deviceIds"},
		{Name: "no name", Args: map[string]any{"action": "create", "deviceIds": []string{"1"}}, Code: "invalid_argument", Field: "name"},
		{Name: "unknown", Args: map[string]any{"action": "delete", "dashboardId": "999"}, Code: "not_found"},
		{Name: "bad show", Args: map[string]any{"action": "update", "dashboardId": "71", "show": []string{"weather"}}, Code: "invalid_argument"},
	} {
		c.Tool = "hubitat_manage_dashboards"
		c.Check(t, s)
	}
	if after := h.Requests("GET /dashboard/create") + h.Requests("GET /dashboard/update") + h.Requests("GET /dashboard/delete"); after != before {
		t.Errorf("refused calls reached the hub %d times", after-before)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("%q is not a number", s)
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// TestDashboardsGatesRefuse: without the option, the grant, a backup within the hour or the
// user's own yes, no dashboard is created, changed or deleted.
func TestDashboardsGatesRefuse(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "pw"}, hubitat.Options{})
	clk := fakeclock.New(time.Now())
	aged := backedUp(t, clk.Now())
	clk.Advance(BackupWindowPlus(time.Minute))
	readOnly := served(withClient(c), withStore(backedUp(t, time.Now())), withAdmin(true, false))
	noBackup := served(withClient(c), withStore(privateStore(t)), withAdmin(true, true))
	old := served(withClient(c), withStore(aged), withAdmin(true, true), withClock(clk))
	ready := served(withClient(c), withStore(backedUp(t, time.Now())), withAdmin(true, true))
	for _, args := range []map[string]any{
		{"action": "create", "name": "Gate", "deviceIds": []string{"1"}},
		{"action": "update", "dashboardId": "71", "name": "Gate"},
		{"action": "delete", "dashboardId": "71"},
	} {
		yes := with(args, "confirm", true)
		t.Run(args["action"].(string), func(t *testing.T) {
			off := &asking{answer: "accept"}
			if e := readOnly.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: off.handler}).Fail(t, "hubitat_manage_dashboards", yes); e.Code != "tool_not_enabled" || len(off.questions()) != 0 {
				t.Errorf("option off: %+v, asked %q", e, off.questions())
			}
			if e := ready.Session(t).Fail(t, "hubitat_manage_dashboards", yes); e.Code != "permission_required" {
				t.Errorf("no grant: %+v", e)
			}
			for _, g := range []struct {
				f    *tooltest.Fixture
				want string
			}{{noBackup, "no hub backup"}, {old, "more than an hour ago"}} {
				u := &asking{answer: "accept"}
				tooltest.ErrCase{Tool: "hubitat_manage_dashboards", Args: yes, Code: "backup_required", Contains: g.want}.Check(t, u.session(t, g.f))
				if q := u.questions(); len(q) != 0 {
					t.Errorf("asked %q before a refusal", q)
				}
			}
			no := &asking{answer: "decline"}
			tooltest.ErrCase{Tool: "hubitat_manage_dashboards", Args: yes, Code: "confirmation_declined"}.Check(t, no.session(t, ready))
			tooltest.ErrCase{Tool: "hubitat_manage_dashboards", Args: yes, Code: "confirmation_required"}.Check(t, ready.Granted(t, hubAdmin))
		})
	}
	for _, route := range []string{"GET /dashboard/create", "GET /dashboard/update", "GET /dashboard/delete"} {
		if n := h.Requests(route); n != 0 {
			t.Errorf("%s reached %d times through a closed gate", route, n)
		}
	}
	if name, _, _, ok := h.DashboardState(71); !ok || name != "Main" {
		t.Errorf("dashboard 71 changed: %q %v", name, ok)
	}
}
