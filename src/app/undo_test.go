package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/panel"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
)

// undoEnv is an App over the simulated home with an assistant connected in memory.
type undoEnv struct {
	a    *App
	cs   *mcp.ClientSession
	home *sim.Home
}

func newUndoEnv(t *testing.T) *undoEnv {
	t.Helper()
	home, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { home.Close() })
	cfg, err := config.Load(config.Sources{NoOptionsFile: true, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	cfg.HAURL, cfg.HAToken, cfg.DataDir, cfg.FSBase = home.URL(), home.Token(), t.TempDir(), home.Sandbox().Root
	cfg.ToolMode, cfg.PermissionFilesystem = "all", "allow"
	// The model's confirm=true stands for the user here: what is under test is the undo.
	cfg.ConfirmTrusted = []string{"change", "garage", "delete"}
	a, err := New(context.Background(), cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ct, st := mcp.NewInMemoryTransports()
	ss, err := a.Builder.Server(false).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "undo-test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &undoEnv{a: a, cs: cs, home: home}
}

func (e *undoEnv) call(t *testing.T, tool string, args map[string]any) {
	t.Helper()
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s: %s", tool, res.Content[0].(*mcp.TextContent).Text)
	}
}

// entry waits for the newest successful audit entry of tool (the audit writer is asynchronous).
func (e *undoEnv) entry(t *testing.T, tool string) store.AuditEntry {
	t.Helper()
	return e.nth(t, tool, 1)
}

// nth waits until tool has n successful entries and returns the newest: after two calls of a tool,
// the first one's entry may be the newest for a moment.
func (e *undoEnv) nth(t *testing.T, tool string, n int) store.AuditEntry {
	t.Helper()
	var got store.AuditEntry
	testkit.Eventually(t, "the audit entries of "+tool, func() bool {
		list, total, err := e.a.Store.ListAudit(context.Background(), store.AuditQuery{Tool: tool, Outcome: store.OutcomeOK, Limit: 1})
		if err != nil || len(list) == 0 || total < n {
			return false
		}
		got = list[0]
		return true
	})
	return got
}

// entryWhere waits until the newest successful entry of tool is the one ok recognises: an earlier
// call's entry may be the newest for a moment.
func (e *undoEnv) entryWhere(t *testing.T, tool string, ok func(store.AuditEntry) bool) store.AuditEntry {
	t.Helper()
	var got store.AuditEntry
	testkit.Eventually(t, "the audit entry of "+tool, func() bool {
		list, _, err := e.a.Store.ListAudit(context.Background(), store.AuditQuery{Tool: tool, Outcome: store.OutcomeOK, Limit: 1})
		if err != nil || len(list) == 0 || !ok(list[0]) {
			return false
		}
		got = list[0]
		return true
	})
	return got
}

func (e *undoEnv) state(t *testing.T, id string) homeassistant.State {
	t.Helper()
	s, err := e.a.HA.State(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var anna = panel.User{ID: "u-anna", Name: "anna", DisplayName: "Anna"}

func TestUndoPutsBackALightAConfigAndAFile(t *testing.T) {
	e := newUndoEnv(t)
	ctx := context.Background()
	lamp := "light.hallway"
	e.call(t, "ha_call_service", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []string{lamp}, "data": map[string]any{"brightness": 200}})
	// hamcp reads what a call changes from its live copy of the states: wait for it to see the first.
	testkit.Eventually(t, "the mirror at brightness 200", func() bool {
		st, ok := e.a.HA.Mirror().Get(lamp)
		return ok && st.Attributes["brightness"] == float64(200)
	})
	e.call(t, "ha_call_service", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []string{lamp}, "data": map[string]any{"brightness": 30}})
	e.call(t, "ha_create_automation", map[string]any{"id": "undo_me", "config": map[string]any{"alias": "Original",
		"triggers": []any{map[string]any{"trigger": "time", "at": "07:00:00"}}, "actions": []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": lamp}}}}, "confirm": true})
	e.call(t, "ha_update_automation", map[string]any{"automation_id": "undo_me", "merge": true, "config": map[string]any{"alias": "Changed"}, "confirm": true})
	path := filepath.Join(e.home.Sandbox().Root, "config", "undo.txt")
	e.call(t, "ha_write_file", map[string]any{"path": "/config/undo.txt", "content": "first"})
	e.call(t, "ha_write_file", map[string]any{"path": "/config/undo.txt", "content": "second"})

	alias := func() string {
		raw, err := e.a.HA.GetConfigItem(ctx, homeassistant.KindAutomation, "undo_me")
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct{ Alias string }
		json.Unmarshal(raw, &cfg)
		return cfg.Alias
	}
	for _, tc := range []struct {
		name   string
		tool   string
		calls  int // of tool so far
		kind   string
		before func() bool // the change is there
		after  func() bool // the undo put it back
	}{
		{"light brightness", "ha_call_service", 2, "device",
			func() bool { return e.state(t, lamp).Attributes["brightness"] == float64(30) },
			func() bool { return e.state(t, lamp).Attributes["brightness"] == float64(200) }},
		{"automation", "ha_update_automation", 1, "config",
			func() bool { return alias() == "Changed" },
			func() bool { return alias() == "Original" }},
		{"file", "ha_write_file", 2, "file",
			func() bool { b, _ := os.ReadFile(path); return string(b) == "second" },
			func() bool { b, _ := os.ReadFile(path); return string(b) == "first" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			en := e.nth(t, tc.tool, tc.calls)
			if en.Kind != tc.kind || en.Undo == "" || en.Undone() {
				t.Fatalf("entry %+v: want kind %s with an undo", en, tc.kind)
			}
			if !tc.before() {
				t.Fatal("the change is not there before the undo")
			}
			res, err := e.a.panelUndo(ctx, en.ID, anna, "")
			if err != nil || res.Confirm != nil || res.Done == "" {
				t.Fatalf("undo: %+v, %v", res, err)
			}
			if !tc.after() {
				t.Fatalf("the undo did not put it back: %s; undo %s", res.Done, en.Undo)
			}
			got, _ := e.a.Store.GetAudit(ctx, en.ID)
			if !got.Undone() || got.UndoneBy != "Anna" {
				t.Errorf("entry after undo: undone %v by %q", got.UndoneAt, got.UndoneBy)
			}
			if _, err := e.a.panelUndo(ctx, en.ID, anna, ""); err == nil || !strings.Contains(err.Error(), "already") {
				t.Errorf("a second undo: %v, want already undone", err)
			}
			// The undo is in the log itself, by the panel user, and can be undone in turn.
			undo := e.entry(t, "undo")
			if undo.Principal != "Anna" || undo.Kind != tc.kind || undo.Outcome != store.OutcomeOK || undo.Undo == "" {
				t.Fatalf("the undo's own entry: %+v", undo)
			}
			if _, err := e.a.panelUndo(ctx, undo.ID, anna, ""); err != nil {
				t.Fatalf("undoing the undo: %v", err)
			}
			if !tc.before() {
				t.Error("undoing the undo did not bring the change back")
			}
		})
	}
}

// Undoing something that moves a garage door is confirmed first, and the yes covers that effect only.
func TestUndoOfSensitiveIsConfirmed(t *testing.T) {
	e := newUndoEnv(t)
	ctx := context.Background()
	door := "cover.garage_door"
	e.call(t, "ha_call_service", map[string]any{"domain": "cover", "service": "open_cover", "entity_id": []string{door}, "confirm": true})
	testkit.Eventually(t, "the door open", func() bool { s := e.state(t, door).State; return s == "open" || s == "opening" })
	en := e.entry(t, "ha_call_service")
	res, err := e.a.panelUndo(ctx, en.ID, anna, "")
	if err != nil || res.Confirm == nil || !strings.Contains(res.Confirm.Question, "close "+door) || res.Confirm.Digest == "" {
		t.Fatalf("first press: %+v, %v; want a question naming the door", res, err)
	}
	if s := e.state(t, door).State; s == "closed" || s == "closing" {
		t.Fatal("the door moved before the user said yes")
	}
	if res, err := e.a.panelUndo(ctx, en.ID, anna, "not-the-digest"); err != nil || res.Confirm == nil {
		t.Fatalf("a yes to another effect: %+v, %v; want the question again", res, err)
	}
	if res, err := e.a.panelUndo(ctx, en.ID, anna, res.Confirm.Digest); err != nil || res.Done == "" {
		t.Fatalf("confirmed: %+v, %v", res, err)
	}
	testkit.Eventually(t, "the door closed", func() bool { s := e.state(t, door).State; return s == "closed" || s == "closing" })
	if undo := e.entry(t, "undo"); !strings.Contains(undo.Detail, "confirmed") {
		t.Errorf("the undo's entry does not say it was confirmed: %+v", undo)
	}
}

// What cannot be undone says why, and changes nothing.
func TestUndoRefusesWhatItCannotTakeBack(t *testing.T) {
	e := newUndoEnv(t)
	ctx := context.Background()
	e.call(t, "ha_call_service", map[string]any{"domain": "notify", "service": "persistent_notification", "data": map[string]any{"message": "hi"}})
	en := e.entry(t, "ha_call_service")
	if en.Kind != "device" {
		t.Fatalf("kind %q", en.Kind)
	}
	_, err := e.a.panelUndo(ctx, en.ID, anna, "")
	if err == nil || !strings.Contains(err.Error(), "cannot be undone") {
		t.Fatalf("undo of a notification: %v, want it refused with the reason", err)
	}
	if _, err := e.a.panelUndo(ctx, 987654, anna, ""); err == nil {
		t.Error("undo of an unknown entry succeeded")
	}
	if got, _ := e.a.Store.GetAudit(ctx, en.ID); got.Undone() {
		t.Error("a refused undo marked the entry undone")
	}
}

// An undo that looks harmless but starts one of the user's automations that unlocks a door is asked
// about first, as ha_call_service's own call would be: the user's yes in the panel covers what the
// undo reaches, not only the entity it names.
func TestUndoThatStartsAnUnlockIsConfirmed(t *testing.T) {
	e := newUndoEnv(t)
	ctx := context.Background()
	// The user's automation: when guest mode turns off, unlock the front door.
	body := `{"alias": "Guests leave", "triggers": [{"trigger": "state", "entity_id": "input_boolean.guest_mode", "to": "off"}],
		"actions": [{"action": "lock.unlock", "target": {"entity_id": "lock.front_door"}}]}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.home.URL()+"/api/config/automation/config/guests_leave", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.home.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("saving the user's automation: HTTP %d", resp.StatusCode)
	}
	if e.state(t, "input_boolean.guest_mode").State != "off" {
		e.call(t, "ha_call_service", map[string]any{"domain": "input_boolean", "service": "turn_off", "entity_id": "input_boolean.guest_mode"})
	}
	// Turning it on may start the automation too, so the user approves that call once in the panel.
	on := map[string]any{"domain": "input_boolean", "service": "turn_on", "entity_id": "input_boolean.guest_mode"}
	res0, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ha_call_service", Arguments: on})
	if err != nil || !res0.IsError {
		t.Fatalf("turning guest mode on was not asked about: %v", err)
	}
	pending := e.a.Permissions.Pending()
	if len(pending) != 1 {
		t.Fatalf("want one confirmation waiting, got %+v", pending)
	}
	if err := e.a.Permissions.Approve(ctx, pending[0].ID, permission.Approver{Via: permission.ViaPanel, UserID: "anna", Name: "Anna"}); err != nil {
		t.Fatal(err)
	}
	e.call(t, "ha_call_service", on)
	en := e.entryWhere(t, "ha_call_service", func(a store.AuditEntry) bool { return strings.Contains(a.ArgsSummary, "turn_on") })
	res, err := e.a.panelUndo(ctx, en.ID, anna, "")
	if err != nil || res.Confirm == nil || !strings.Contains(res.Confirm.Question, "lock.front_door") {
		t.Fatalf("undo of guest mode: %+v, %v; want a question naming the door the user's automation unlocks", res, err)
	}
	if e.state(t, "input_boolean.guest_mode").State != "on" {
		t.Fatal("guest mode changed before the user said yes")
	}
}

// An undo that stops part way (Home Assistant refuses the second light) says what changed, leaves
// the entry it undid unmarked, and records what ran as an entry of its own whose Undo takes that
// back; the first undo can be tried again once the light answers.
func TestUndoStoppedPartWayCanBeTakenBack(t *testing.T) {
	e := newUndoEnv(t)
	ctx := context.Background()
	const on, off = "light.hallway", "light.garage"
	e.call(t, "ha_call_service", map[string]any{"domain": "light", "service": "turn_on", "entity_id": []string{on}})
	e.call(t, "ha_call_service", map[string]any{"domain": "light", "service": "turn_off", "entity_id": []string{off}})
	testkit.Eventually(t, "the mirror with one light on and one off", func() bool {
		a, ok1 := e.a.HA.Mirror().Get(on)
		b, ok2 := e.a.HA.Mirror().Get(off)
		return ok1 && ok2 && a.State == "on" && b.State == "off"
	})
	e.call(t, "ha_call_service", map[string]any{"domain": "light", "service": "toggle", "entity_id": []string{on, off}})
	en := e.entryWhere(t, "ha_call_service", func(x store.AuditEntry) bool { return strings.Contains(x.ArgsSummary, "toggle") })
	if e.state(t, on).State != "off" || e.state(t, off).State != "on" {
		t.Fatal("the toggle did not happen")
	}

	// Putting back is light.turn_off for the garage (entities go in id order), then light.turn_on
	// for the hallway, which fails.
	e.home.Faults().SetFailingService("light.turn_on")
	res, err := e.a.panelUndo(ctx, en.ID, anna, "")
	if err != nil || !strings.Contains(res.Partial, "after 1 of 2 calls") || !strings.Contains(res.Partial, off+" changed") || res.Done != "" {
		t.Fatalf("partial undo: %+v, %v", res, err)
	}
	if e.state(t, on).State != "off" || e.state(t, off).State != "off" {
		t.Fatalf("after the partial undo: %s %s, %s %s", on, e.state(t, on).State, off, e.state(t, off).State)
	}
	if got, _ := e.a.Store.GetAudit(ctx, en.ID); got.Undone() {
		t.Error("an entry undone only in part is marked undone")
	}
	list, _, err := e.a.Store.ListAudit(ctx, store.AuditQuery{Tool: "undo", Outcome: store.OutcomePartial, Limit: 1})
	if err != nil || len(list) != 1 || list[0].Undo == "" || !strings.Contains(list[0].Undo, off) || strings.Contains(list[0].Undo, on) {
		t.Fatalf("the partial undo's entry: %+v, %v", list, err)
	}
	// Taking back what ran needs light.turn_on too: healed, the garage goes back on, the hallway
	// is untouched.
	e.home.Faults().SetFailingService("")
	if res, err := e.a.panelUndo(ctx, list[0].ID, anna, ""); err != nil || res.Done == "" {
		t.Fatalf("undoing the partial undo: %+v, %v", res, err)
	}
	if e.state(t, on).State != "off" || e.state(t, off).State != "on" {
		t.Fatalf("after taking it back: %s %s, %s %s", on, e.state(t, on).State, off, e.state(t, off).State)
	}
	// The original undo runs whole now.
	if res, err := e.a.panelUndo(ctx, en.ID, anna, ""); err != nil || res.Done == "" {
		t.Fatalf("the undo again: %+v, %v", res, err)
	}
	if e.state(t, on).State != "on" || e.state(t, off).State != "off" {
		t.Fatalf("after the whole undo: %s %s, %s %s", on, e.state(t, on).State, off, e.state(t, off).State)
	}
}
