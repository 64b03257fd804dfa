package hatools_test

import (
	"strings"
	"testing"
	"time"
)

func updateByID(t *testing.T, r map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, u := range admItems(t, r["list"].(map[string]any), "items") {
		out[u["entity_id"].(string)] = u
	}
	return out
}

// TestManageUpdates lists the demo's updates, reads release notes, skips, and installs through
// update.install, checking first what Home Assistant would refuse.
func TestManageUpdates(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	call := func(args map[string]any) map[string]any { t.Helper(); return e.ok(t, "ha_manage_updates", args) }

	pending := updateByID(t, call(map[string]any{"action": "list"}))
	for _, id := range []string{"update.home_assistant_core_update", "update.mosquitto_broker_update", "update.mushroom_update", "update.office_presence_firmware"} {
		if pending[id] == nil || pending[id]["pending"] != true {
			t.Errorf("%s is not listed as pending: %v", id, pending[id])
		}
	}
	if pending["update.home_assistant_supervisor_update"] != nil {
		t.Errorf("an up-to-date Supervisor is listed as pending")
	}
	if m := pending["update.mosquitto_broker_update"]; m["installed_version"] != "6.4.1" || m["latest_version"] != "6.5.0" ||
		!strings.Contains(m["release_summary"].(string), "6.5.0") || !strings.Contains(admJSON(m["supports"]), "backup") {
		t.Errorf("mosquitto: %v", m)
	}
	if all := updateByID(t, call(map[string]any{"action": "list", "all": true})); len(all) != 6 {
		t.Errorf("all: %d updates, want 6", len(all))
	}

	notes := call(map[string]any{"action": "release_notes", "entity_id": "update.mosquitto_broker_update"})
	if !strings.Contains(notes["release_notes"].(string), "Mosquitto to 2.0.22") {
		t.Errorf("release notes: %v", notes)
	}
	if r := call(map[string]any{"action": "release_notes", "entity_id": "update.home_assistant_core_update"}); r["release_notes"] != nil || !strings.Contains(r["note"].(string), "latest-release-notes") {
		t.Errorf("core publishes its notes on the web: %v", r)
	}

	for _, c := range []struct {
		args       map[string]any
		code, want string
	}{
		{map[string]any{"action": "install"}, "invalid_argument", "entity_id"},
		{map[string]any{"action": "install", "entity_id": "light.kitchen_ceiling", "confirm": true}, "invalid_argument", "update entity"},
		{map[string]any{"action": "install", "entity_id": "update.nothing_here", "confirm": true}, "not_found", ""},
		{map[string]any{"action": "install", "entity_id": "update.mushroom_update", "backup": true, "confirm": true}, "invalid_argument", "ha_manage_backups"},
		{map[string]any{"action": "install", "entity_id": "update.office_presence_firmware", "version": "2026.7.1", "confirm": true}, "invalid_argument", "only installs its latest"},
		{map[string]any{"action": "install", "entity_id": "update.home_assistant_supervisor_update", "confirm": true}, "no_update", "up to date"},
		{map[string]any{"action": "skip", "entity_id": "update.home_assistant_supervisor_update", "confirm": true}, "no_update", ""},
		{map[string]any{"action": "skip", "entity_id": "update.mushroom_update", "version": "v4.5.0", "confirm": true}, "invalid_argument", "only apply to install"},
	} {
		e.fails(t, "ha_manage_updates", c.args, c.code, c.want)
	}

	skipped := call(map[string]any{"action": "skip", "entity_id": "update.mosquitto_broker_update", "confirm": true})
	if u := skipped["update"].(map[string]any); u["pending"] != false || u["skipped_version"] != "6.5.0" {
		t.Fatalf("skip: %v", skipped)
	}
	if updateByID(t, call(map[string]any{"action": "list"}))["update.mosquitto_broker_update"] != nil {
		t.Error("a skipped update is still listed as pending")
	}
	if u := call(map[string]any{"action": "clear_skipped", "entity_id": "update.mosquitto_broker_update", "confirm": true})["update"].(map[string]any); u["pending"] != true {
		t.Fatalf("clear_skipped: %v", u)
	}

	// A HACS card: installed through HACS, which now reports the new version too.
	done := call(map[string]any{"action": "install", "entity_id": "update.mushroom_update", "confirm": true})
	if u := done["update"].(map[string]any); u["installed_version"] != "v4.5.0" || u["pending"] != false || u["in_progress"] != nil {
		t.Fatalf("install: %v", done)
	}
	if r := e.ok(t, "ha_manage_hacs", map[string]any{"action": "info", "repository": "piitaya/lovelace-mushroom"}); !strings.Contains(admJSON(r), `"installed_version":"v4.5.0"`) {
		t.Errorf("HACS after the install: %v", r)
	}
	// The add-on update backs up first, where the Supervisor can.
	if r := call(map[string]any{"action": "install", "entity_id": "update.mosquitto_broker_update", "backup": true, "confirm": true}); r["update"].(map[string]any)["installed_version"] != "6.5.0" {
		t.Fatalf("add-on install: %v", r)
	}
}

// TestManageUpdatesCore: installing Core restarts Home Assistant; the answer says so, and the
// client is back afterwards with the new version.
func TestManageUpdatesCore(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	r := e.ok(t, "ha_manage_updates", map[string]any{"action": "install", "entity_id": "update.home_assistant_core_update", "backup": true, "confirm": true})
	if !strings.Contains(r["note"].(string), "restart") {
		t.Fatalf("core install: %v", r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := e.call(t, "ha_manage_updates", map[string]any{"action": "list", "all": true})
		if got.err == nil {
			if u := updateByID(t, got.data)["update.home_assistant_core_update"]; u["installed_version"] == "2026.8.2" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("core never came back on the new version: %s", got.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestManageUpdatesConfirm: an install of Core waits for the user (restart), one of a card goes
// ahead on the model's word when change is trusted; the registry, not the entity id, decides.
func TestManageUpdatesConfirm(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	r := e.call(t, "ha_manage_updates", map[string]any{"action": "install", "entity_id": "update.home_assistant_core_update", "confirm": true})
	if r.err == nil || r.err.Code != "confirmation_required" || !strings.Contains(r.raw, "restarts Home Assistant") {
		t.Fatalf("core install was not stopped for the user: %s", r.raw)
	}
	if u := e.ok(t, "ha_manage_updates", map[string]any{"action": "list", "all": true}); updateByID(t, u)["update.home_assistant_core_update"]["installed_version"] != "2026.8.1" {
		t.Fatal("core was updated without the user")
	}
	e.ok(t, "ha_manage_updates", map[string]any{"action": "install", "entity_id": "update.office_presence_firmware", "confirm": true})
	r = e.call(t, "ha_manage_updates", map[string]any{"action": "install", "entity_id": "update.mushroom_update"})
	if r.err == nil || r.err.Code != "confirmation_required" {
		t.Fatalf("an install without confirm: %s", r.raw)
	}
	e.ok(t, "ha_manage_updates", map[string]any{"action": "skip", "entity_id": "update.mushroom_update"})
}
