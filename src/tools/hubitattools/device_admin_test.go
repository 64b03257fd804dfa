package hubitattools_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// deviceRig is a hub of the test's own behind Hub Security, with a store holding a backup taken
// through hamcp just now (fresh) and one without (bare).
type deviceRig struct {
	hub   *simhub.Hub
	c     *hubitat.Client
	fresh *hubstore.Store
	bare  *hubstore.Store
}

func newDeviceRig(t *testing.T) deviceRig {
	t.Helper()
	h, c := newHub(t, simhub.Options{Username: "owner", Password: "own-hub-pw"}, hubitat.Options{})
	fresh := privateStore(t)
	if _, err := fresh.SaveHubBackup(context.Background(), time.Now(), []byte("backup")); err != nil {
		t.Fatal(err)
	}
	return deviceRig{hub: h, c: c, fresh: fresh, bare: privateStore(t)}
}

// serve is the toolset over the rig's hub with both admin options on and the given store.
func (r deviceRig) serve(st *hubstore.Store, mods ...func(*hubitattools.Deps)) *tooltest.Fixture {
	return served(append([]func(*hubitattools.Deps){withClient(r.c), withStore(st), withAdmin(true, true)}, mods...)...)
}

// user is a session whose user answers answer in the client, holding the hub_admin grant.
func (r deviceRig) user(t *testing.T, st *hubstore.Store, answer string) (*tooltest.Session, *asking) {
	a := &asking{answer: answer}
	return a.session(t, r.serve(st)), a
}

func roomOf(t *testing.T, h *simhub.Hub, id int) string {
	t.Helper()
	_, _, room, ok := h.DeviceAdmin(id)
	if !ok {
		t.Fatalf("device %d is gone", id)
	}
	return room
}

type roomList struct {
	List struct {
		Total int `json:"total"`
		Items []struct {
			ID      string `json:"id"`
			Name    string `json:"name"`
			Devices []struct {
				ID    string `json:"id"`
				Label string `json:"label"`
			} `json:"devices"`
		} `json:"items"`
	} `json:"list"`
}

// TestManageRooms: list, create, rename, move (a device outside Maker API's selection stays
// where it is), delete only with the user's yes and a recent backup.
func TestManageRooms(t *testing.T) {
	t.Parallel()
	r := newDeviceRig(t)
	s, _ := r.user(t, r.fresh, "accept")

	var l roomList
	s.OK(t, "hubitat_manage_rooms", obj("action", "list"), &l)
	names := map[string]int{}
	for _, it := range l.List.Items {
		names[it.Name] = len(it.Devices)
	}
	if names["Living Room"] == 0 || names["Guest Room"] != 0 || l.List.Total != len(r.hub.RoomNames()) {
		t.Fatalf("rooms %v (total %d), hub has %v", names, l.List.Total, r.hub.RoomNames())
	}

	s.OK(t, "hubitat_manage_rooms", obj("action", "create", "name", "Workshop", "deviceIds", []string{"4"}), nil)
	if roomOf(t, r.hub, 4) != "Workshop" {
		t.Fatalf("device 4 in %q", roomOf(t, r.hub, 4))
	}
	if e := s.Fail(t, "hubitat_manage_rooms", obj("action", "create", "name", "workshop")); e.Code != "backend_error" || !strings.Contains(e.Message, "already exists") {
		t.Errorf("duplicate room: %+v", e)
	}
	var renamed struct {
		Room struct{ Name string } `json:"room"`
		Undo string                `json:"undo"`
	}
	s.OK(t, "hubitat_manage_rooms", obj("action", "rename", "room", "Workshop", "name", "Studio"), &renamed)
	if renamed.Room.Name != "Studio" || roomOf(t, r.hub, 4) != "Studio" || !strings.Contains(renamed.Undo, `"Workshop"`) {
		t.Fatalf("rename: %+v, device 4 in %q", renamed, roomOf(t, r.hub, 4))
	}

	// "move the lamp to the bedroom": a name in any case; the lamp leaves the living room.
	s.OK(t, "hubitat_manage_rooms", obj("action", "move", "room", "bedroom", "deviceIds", []string{"1"}), nil)
	if roomOf(t, r.hub, 1) != "Bedroom" {
		t.Fatalf("lamp in %q", roomOf(t, r.hub, 1))
	}
	// The garage's relay is not selected in Maker API: saving the garage must keep it.
	s.OK(t, "hubitat_manage_rooms", obj("action", "move", "room", "Garage", "deviceIds", []string{"3"}), nil)
	if roomOf(t, r.hub, 29) != "Garage" || roomOf(t, r.hub, 3) != "Garage" {
		t.Fatalf("relay in %q, porch light in %q", roomOf(t, r.hub, 29), roomOf(t, r.hub, 3))
	}
	s.OK(t, "hubitat_manage_rooms", obj("action", "move", "room", "", "deviceIds", []string{"3"}), nil)
	if roomOf(t, r.hub, 3) != "" {
		t.Fatalf("porch light still in %q", roomOf(t, r.hub, 3))
	}
	if e := s.Fail(t, "hubitat_manage_rooms", obj("action", "move", "room", "Attic", "deviceIds", []string{"1"})); e.Code != "not_found" || !strings.Contains(e.Message, "Bedroom") {
		t.Errorf("unknown room: %+v", e)
	}
	if e := s.Fail(t, "hubitat_manage_rooms", obj("action", "move", "room", "Bedroom", "deviceIds", []string{"4", "x1"})); e.Code != "invalid_argument" {
		t.Errorf("bad device id: %+v", e)
	}

	// Delete: the user declines, then the store has no backup: the room stays both times.
	no, asked := r.user(t, r.fresh, "decline")
	no.Fail(t, "hubitat_manage_rooms", obj("action", "delete", "room", "Studio", "confirm", true))
	if q := asked.questions(); len(q) != 1 || !strings.Contains(q[0], `"Studio"`) || !strings.Contains(q[0], "1 device") {
		t.Errorf("questions %q", q)
	}
	nb, nbAsked := r.user(t, r.bare, "accept")
	if e := nb.Fail(t, "hubitat_manage_rooms", obj("action", "delete", "room", "Studio")); e.Code != "backup_required" || len(nbAsked.questions()) != 0 {
		t.Errorf("no backup: %+v, asked %q", e, nbAsked.questions())
	}
	if !slices.Contains(r.hub.RoomNames(), "Studio") || r.hub.Requests("POST /room/delete/"+studioID(t, s)) != 0 {
		t.Fatal("the room was deleted without the user's yes or a backup")
	}
	s.OK(t, "hubitat_manage_rooms", obj("action", "delete", "room", "Studio"), nil)
	if slices.Contains(r.hub.RoomNames(), "Studio") || roomOf(t, r.hub, 4) != "" {
		t.Fatalf("rooms %v, device 4 in %q", r.hub.RoomNames(), roomOf(t, r.hub, 4))
	}
}

func studioID(t *testing.T, s *tooltest.Session) string {
	var l roomList
	s.OK(t, "hubitat_manage_rooms", obj("action", "list"), &l)
	for _, it := range l.List.Items {
		if it.Name == "Studio" {
			return it.ID
		}
	}
	t.Fatal("no Studio")
	return ""
}

// TestDeviceAdminGates: without the write option nothing is asked and nothing reaches the hub;
// without the hub_admin grant nothing runs; reads work without either.
func TestDeviceAdminGates(t *testing.T) {
	t.Parallel()
	r := newDeviceRig(t)
	off := served(withClient(r.c), withStore(r.fresh), withAdmin(false, false))
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"hubitat_manage_rooms", obj("action", "create", "name", "Attic")},
		{"hubitat_manage_rooms", obj("action", "delete", "room", "Guest Room")},
		{"hubitat_update_device", obj("deviceId", "1", "label", "X")},
		{"hubitat_update_device", obj("deviceId", "1", "enabled", false)},
		{"hubitat_manage_virtual_devices", obj("action", "create", "driver", "Virtual Switch", "label", "X")},
	}
	for _, c := range calls {
		a := &asking{answer: "accept"}
		s := a.session(t, off)
		if e := s.Fail(t, c.tool, with(c.args, "confirm", true)); e.Code != "tool_not_enabled" || len(a.questions()) != 0 {
			t.Errorf("%s %v with the option off: %+v, asked %q", c.tool, c.args, e, a.questions())
		}
		// The option on, but no grant: the user's grant is asked for first, nothing else happens.
		if e := r.serve(r.fresh).Session(t).Fail(t, c.tool, with(c.args, "confirm", true)); e.Code != "permission_required" {
			t.Errorf("%s without the grant: %+v", c.tool, e)
		}
	}
	if e := off.Session(t).Fail(t, "hubitat_get_device_health", nil); e.Code != "tool_not_enabled" {
		t.Errorf("health with admin read off: %+v", e)
	}
	// Listing rooms is Maker API: no option, no grant.
	off.Session(t).OK(t, "hubitat_manage_rooms", obj("action", "list"), nil)
	for _, route := range []string{"POST /room/save", "POST /room/delete/8", "POST /device/update", "POST /device/disable", "GET /device/createVirtual"} {
		if n := r.hub.Requests(route); n != 0 {
			t.Errorf("%s reached the hub %d times through a closed gate", route, n)
		}
	}
	if slices.Contains(r.hub.RoomNames(), "Attic") || r.hub.Label(1) != "Living Room Lamp" {
		t.Error("a refused call changed the hub")
	}
}

// TestUpdateDevice: a label alone needs no question and keeps everything else; disabling and
// preferences need the user's yes (preferences also a backup), and say what changes.
func TestUpdateDevice(t *testing.T) {
	t.Parallel()
	r := newDeviceRig(t)
	s, asked := r.user(t, r.fresh, "accept")

	var out struct {
		Success bool `json:"success"`
		Changes []struct{ Property, From, To string }
		Undo    string `json:"undo"`
	}
	s.OK(t, "hubitat_update_device", obj("deviceId", "1", "label", "Reading Lamp", "room", "Office"), &out)
	if !out.Success || r.hub.Label(1) != "Reading Lamp" || roomOf(t, r.hub, 1) != "Office" || len(asked.questions()) != 0 {
		t.Fatalf("%+v label %q room %q asked %q", out, r.hub.Label(1), roomOf(t, r.hub, 1), asked.questions())
	}
	if !strings.Contains(out.Undo, `"label": "Living Room Lamp"`) {
		t.Errorf("undo %q", out.Undo)
	}
	// The wholesale form was rebuilt from the device: its preferences were not blanked.
	if _, prefs, _, _ := r.hub.DeviceAdmin(1); prefs["logEnable"] != true {
		t.Errorf("prefs %v after a label change", prefs)
	}

	no, noAsked := r.user(t, r.fresh, "decline")
	no.Fail(t, "hubitat_update_device", obj("deviceId", "8", "enabled", false, "confirm", true))
	if disabled, _, _, _ := r.hub.DeviceAdmin(8); disabled || len(noAsked.questions()) != 1 || !strings.Contains(noAsked.questions()[0], "disable") {
		t.Fatalf("declined disable: disabled=%v asked %q", disabled, noAsked.questions())
	}
	nb, _ := r.user(t, r.bare, "accept")
	if e := nb.Fail(t, "hubitat_update_device", obj("deviceId", "8", "preferences", map[string]string{"logEnable": "false"})); e.Code != "backup_required" {
		t.Errorf("preferences without a backup: %+v", e)
	}
	if _, prefs, _, _ := r.hub.DeviceAdmin(8); prefs["logEnable"] != true {
		t.Fatal("preferences changed without a backup")
	}

	s.OK(t, "hubitat_update_device", obj("deviceId", "8", "enabled", false, "preferences", map[string]string{"logEnable": "false"}), &out)
	disabled, prefs, _, _ := r.hub.DeviceAdmin(8)
	if !out.Success || !disabled || prefs["logEnable"] != "false" {
		t.Fatalf("%+v disabled=%v prefs %v", out, disabled, prefs)
	}
	if q := asked.questions(); len(q) != 1 || !strings.Contains(q[0], `logEnable: "true" → "false"`) || !strings.Contains(q[0], "Front Door Lock") {
		t.Errorf("questions %q", q)
	}
	if e := s.Fail(t, "hubitat_update_device", obj("deviceId", "8", "preferences", map[string]string{"nope": "1"})); e.Code != "invalid_argument" || !strings.Contains(e.Message, "logEnable") {
		t.Errorf("unknown preference: %+v", e)
	}
	s.OK(t, "hubitat_update_device", obj("deviceId", "8", "enabled", true), nil)
	if disabled, _, _, _ := r.hub.DeviceAdmin(8); disabled {
		t.Error("enable did not land")
	}
	if e := s.Fail(t, "hubitat_update_device", obj("deviceId", "999", "label", "x")); e.Code != "not_found" {
		t.Errorf("unknown device: %+v", e)
	}
}

type batchOut struct {
	Sent     int `json:"sent"`
	NotSent  int `json:"notSent"`
	Outcomes []struct {
		DeviceID string `json:"deviceId"`
		Command  string `json:"command"`
		Outcome  string `json:"outcome"`
	} `json:"outcomes"`
}

func (b batchOut) outcome(id, cmd string) string {
	for _, o := range b.Outcomes {
		if o.DeviceID == id && o.Command == cmd {
			return o.Outcome
		}
	}
	return ""
}

// TestSendCommands: per-device outcomes; a sensitive effect in the batch is asked of the user,
// every one listed, and without their yes nothing of the batch is sent.
func TestSendCommands(t *testing.T) {
	t.Parallel()
	r := newDeviceRig(t)
	s := served(withClient(r.c)).Session(t)
	var b batchOut
	s.OK(t, "hubitat_send_commands", obj("commands", []any{
		obj("deviceIds", []string{"1", "2", "999"}, "command", "off"),
		obj("deviceIds", []string{"8"}, "command", "setLevel", "parameters", []string{"20"}),
	}), &b)
	if b.Sent != 2 || b.outcome("999", "off") != "unknown_device" || b.outcome("8", "setLevel") != "unsupported_command" {
		t.Fatalf("%+v", b)
	}
	if v, _ := r.hub.Attribute(1, "switch"); v != "off" {
		t.Fatalf("lamp %q", v)
	}

	batch := obj("commands", []any{
		obj("deviceIds", []string{"1"}, "command", "on"),
		obj("deviceIds", []string{"8", "9"}, "command", "unlock"),
	})
	for _, answer := range []string{"decline", ""} {
		a := &asking{answer: answer}
		var ss *tooltest.Session
		if answer == "" {
			ss = served(withClient(r.c)).Session(t) // a client that cannot ask: the model's word is not enough
		} else {
			ss = a.sessionNoGrant(t, served(withClient(r.c)))
		}
		e := ss.Fail(t, "hubitat_send_commands", with(batch, "confirm", true))
		if e.Code != "confirmation_declined" && e.Code != "confirmation_required" {
			t.Errorf("%q: %+v", answer, e)
		}
		if answer == "decline" {
			if q := a.questions(); len(q) != 1 || !strings.Contains(q[0], "Front Door Lock") || !strings.Contains(q[0], "Back Door Lock") {
				t.Errorf("questions %q", q)
			}
		}
	}
	if v, _ := r.hub.Attribute(8, "lock"); v != "locked" {
		t.Fatalf("front door %q without the user's yes", v)
	}
	if v, _ := r.hub.Attribute(1, "switch"); v != "off" {
		t.Fatal("part of a refused batch ran")
	}
	a := &asking{answer: "accept"}
	a.sessionNoGrant(t, served(withClient(r.c))).OK(t, "hubitat_send_commands", batch, &b)
	if b.Sent != 3 {
		t.Fatalf("%+v", b)
	}
	if v, _ := r.hub.Attribute(8, "lock"); v != "unlocked" {
		t.Fatalf("lock 8 %q after the user's yes", v)
	}
	if e := s.Fail(t, "hubitat_send_commands", obj("commands", []any{obj("deviceIds", []string{"1"}, "command", "setLevel", "parameters", []string{"1,2"})})); e.Code != "invalid_argument" {
		t.Errorf("comma: %+v", e)
	}
}

// sessionNoGrant opens a session whose user answers in the client, without any grant.
func (a *asking) sessionNoGrant(t testing.TB, f *tooltest.Fixture) *tooltest.Session {
	t.Helper()
	return f.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: a.handler})
}

type healthOut struct {
	Summary struct {
		Devices, Healthy, Stale, Unknown, Offline, LowBattery int
	} `json:"summary"`
	List struct {
		Total int `json:"total"`
		Items []struct {
			ID       string   `json:"id"`
			Status   string   `json:"status"`
			HoursAgo *float64 `json:"hoursAgo"`
			Battery  *float64 `json:"battery"`
			Offline  bool     `json:"offline"`
			Radio    string   `json:"radio"`
		} `json:"items"`
	} `json:"list"`
}

func TestDeviceHealth(t *testing.T) {
	t.Parallel()
	r := newDeviceRig(t)
	s := served(withClient(r.c), withAdmin(true, false)).Session(t)
	var all healthOut
	s.OK(t, "hubitat_get_device_health", nil, &all)
	sum := all.Summary
	if sum.Devices != all.List.Total || sum.Healthy+sum.Stale+sum.Unknown+countStatus(all, "offline") != sum.Devices || sum.Stale < 3 {
		t.Fatalf("summary %+v, %d rows", sum, all.List.Total)
	}
	// The longest silent first: the blind, nine days, which is also offline.
	if first := all.List.Items[0]; first.ID != "20" || first.Status != "stale" || !first.Offline || *first.HoursAgo < 200 {
		t.Fatalf("first %+v", first)
	}
	var low healthOut
	s.OK(t, "hubitat_get_device_health", obj("batteryBelow", 60), &low)
	for _, it := range low.List.Items {
		if it.Battery == nil || *it.Battery >= 60 {
			t.Fatalf("battery filter kept %+v", it)
		}
	}
	if low.List.Total == 0 {
		t.Fatal("no battery below 60")
	}
	var zw healthOut
	s.OK(t, "hubitat_get_device_health", obj("radio", "zwave", "status", "healthy"), &zw)
	for _, it := range zw.List.Items {
		if it.Radio != "zwave" || it.Status != "healthy" {
			t.Fatalf("filter kept %+v", it)
		}
	}
	var off healthOut
	s.OK(t, "hubitat_get_device_health", obj("status", "offline"), &off)
	if off.List.Total != 1 || off.List.Items[0].ID != "20" {
		t.Fatalf("offline %+v", off.List)
	}
	// A command is activity: the blind is no longer stale once it moved, but still offline.
	cmd := "open"
	if v, _ := r.hub.Attribute(20, "windowShade"); v == "open" {
		cmd = "close"
	}
	s.OK(t, "hubitat_send_command", obj("deviceId", "20", "command", cmd), nil)
	var after healthOut
	s.OK(t, "hubitat_get_device_health", obj("status", "stale"), &after)
	if after.Summary.Stale != sum.Stale-1 || slices.ContainsFunc(after.List.Items, func(x struct {
		ID       string   `json:"id"`
		Status   string   `json:"status"`
		HoursAgo *float64 `json:"hoursAgo"`
		Battery  *float64 `json:"battery"`
		Offline  bool     `json:"offline"`
		Radio    string   `json:"radio"`
	}) bool {
		return x.ID == "20"
	}) {
		t.Fatalf("after a command: %+v", after)
	}
}

func countStatus(h healthOut, status string) int {
	n := 0
	for _, it := range h.List.Items {
		if it.Status == status {
			n++
		}
	}
	return n
}

// BenchmarkDeviceHealth300 is hubitat_get_device_health over the socket on a hub of 300 devices:
// go test ./src/tools/hubitattools -run '^$' -bench BenchmarkDeviceHealth300 -benchtime 200x
func BenchmarkDeviceHealth300(b *testing.B) {
	h, c := newHub(b, simhub.Options{}, hubitat.Options{})
	h.AddDevices(300 - len(h.DeviceIDs(false)))
	s := served(withClient(c), withAdmin(true, false)).Session(b)
	var out healthOut
	b.ResetTimer()
	for b.Loop() {
		s.OK(b, "hubitat_get_device_health", obj("batteryBelow", 20, "limit", 50), &out)
	}
	b.StopTimer()
	if out.Summary.Devices != 300 {
		b.Fatalf("%d devices", out.Summary.Devices)
	}
}

// TestVirtualDevices: create from a built-in driver, update, delete only with the user's yes and
// a backup; a real device is refused.
func TestVirtualDevices(t *testing.T) {
	t.Parallel()
	r := newDeviceRig(t)
	s, _ := r.user(t, r.fresh, "accept")
	var drv struct {
		Drivers struct {
			Items []struct{ ID, Name string } `json:"items"`
		} `json:"drivers"`
	}
	s.OK(t, "hubitat_manage_virtual_devices", obj("action", "drivers"), &drv)
	if len(drv.Drivers.Items) < 10 || !slices.ContainsFunc(drv.Drivers.Items, func(d struct{ ID, Name string }) bool { return d.Name == "Virtual Switch" }) {
		t.Fatalf("drivers %+v", drv)
	}
	for _, it := range drv.Drivers.Items {
		if !strings.HasPrefix(it.Name, "Virtual") {
			t.Fatalf("not a virtual driver: %+v", it)
		}
	}
	var made struct {
		Device struct{ ID, Label, Room string } `json:"device"`
	}
	s.OK(t, "hubitat_manage_virtual_devices", obj("action", "create", "driver", "Virtual Switch", "label", "Guest Mode", "room", "Office"), &made)
	id := made.Device.ID
	if id == "" || made.Device.Label != "Guest Mode" || made.Device.Room != "Office" {
		t.Fatalf("%+v", made)
	}
	s.OK(t, "hubitat_manage_virtual_devices", obj("action", "update", "deviceId", id, "label", "Guest Switch"), nil)
	n := mustAtoi(t, id)
	if r.hub.Label(n) != "Guest Switch" {
		t.Fatalf("label %q", r.hub.Label(n))
	}
	var list struct {
		Devices struct {
			Items []struct{ ID string } `json:"items"`
		} `json:"devices"`
	}
	s.OK(t, "hubitat_manage_virtual_devices", obj("action", "list"), &list)
	// Sam's Phone (a Virtual Presence of the demo house) and the new one.
	if len(list.Devices.Items) != 2 || !slices.ContainsFunc(list.Devices.Items, func(x struct{ ID string }) bool { return x.ID == id }) {
		t.Fatalf("list %+v", list)
	}
	if e := s.Fail(t, "hubitat_manage_virtual_devices", obj("action", "delete", "deviceId", "1")); e.Code != "invalid_argument" {
		t.Errorf("deleting a real device: %+v", e)
	}
	no, _ := r.user(t, r.fresh, "decline")
	no.Fail(t, "hubitat_manage_virtual_devices", obj("action", "delete", "deviceId", id, "confirm", true))
	nb, _ := r.user(t, r.bare, "accept")
	if e := nb.Fail(t, "hubitat_manage_virtual_devices", obj("action", "delete", "deviceId", id)); e.Code != "backup_required" {
		t.Errorf("no backup: %+v", e)
	}
	if r.hub.Label(n) == "" || r.hub.Requests("GET /device/forceDelete/"+id+"/yes") != 0 {
		t.Fatal("deleted without the user's yes or a backup")
	}
	s.OK(t, "hubitat_manage_virtual_devices", obj("action", "delete", "deviceId", id), nil)
	if r.hub.Label(n) != "" || r.hub.Label(1) == "" {
		t.Fatal("the delete did not land, or hit another device")
	}
}

// TestDeviceDependents: the hub's apps (rules, dashboards) and hamcp's rules that use a device.
func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeviceDependents(t *testing.T) {
	t.Parallel()
	_, c := newHub(t, simhub.Options{}, hubitat.Options{})
	e := rules.New(rules.Options{Hub: c, Store: privateStore(t), ServerVersion: testVersion})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	withRules := func(d *hubitattools.Deps) { d.Rules = e }
	if _, probs, err := e.Create(context.Background(), rules.Rule{Name: "Lock at night", Enabled: false,
		Triggers: []rules.Trigger{{Type: "time", Time: "23:00"}},
		Actions:  []rules.Action{{Type: "device_command", DeviceID: "8", Command: "lock"}}}); err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	var out struct {
		HubApps []struct {
			Label string `json:"label"`
		} `json:"hubApps"`
		HubAppsNote string `json:"hubAppsNote"`
		HamcpRules  []struct {
			Name  string   `json:"name"`
			Paths []string `json:"paths"`
		} `json:"hamcpRules"`
	}
	served(withClient(c), withRules).Session(t).OK(t, "hubitat_list_device_dependents", obj("deviceId", "8"), &out)
	if len(out.HubApps) != 0 || !strings.Contains(out.HubAppsNote, "hubitat_admin_read") || len(out.HamcpRules) != 1 || out.HamcpRules[0].Paths[0] != "actions[0].deviceId" {
		t.Fatalf("admin read off: %+v", out)
	}
	served(withClient(c), withAdmin(true, false), withRules).Session(t).OK(t, "hubitat_list_device_dependents", obj("deviceId", "8"), &out)
	var labels []string
	for _, a := range out.HubApps {
		labels = append(labels, a.Label)
	}
	if !slices.Contains(labels, "Lock Doors at Bedtime") || !slices.Contains(labels, "Main") || len(out.HamcpRules) != 1 {
		t.Fatalf("%+v", out)
	}
}
