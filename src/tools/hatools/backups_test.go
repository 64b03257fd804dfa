package hatools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// TestManageBackupsList: hamcp's copies of overwritten files beside Home Assistant's backups,
// newest first, filtered by source and file, and still listed while Home Assistant is down
// (inside the add-on the Supervisor answers).
func TestManageBackupsList(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	e.ok(t, "ha_write_config", map[string]any{"path": "scenes.yaml", "content": "[]\n", "confirm": true})
	e.ok(t, "ha_write_config", map[string]any{"path": "scenes.yaml", "content": "[]\n# again\n", "confirm": true})
	e.ok(t, "ha_manage_backups", map[string]any{"action": "create", "name": "Before the list"})
	list := func(args map[string]any) []map[string]any {
		t.Helper()
		args["action"] = "list"
		return admItems(t, e.ok(t, "ha_manage_backups", args)["list"].(map[string]any), "items")
	}
	all := list(map[string]any{})
	sources := map[string]int{}
	for _, b := range all {
		sources[b["source"].(string)]++
	}
	if sources["hamcp"] != 2 || sources["homeassistant"] < 1 {
		t.Fatalf("backups: %v", all)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1]["date"].(string) < all[i]["date"].(string) {
			t.Fatalf("not newest first: %v", all)
		}
	}
	own := list(map[string]any{"filename": "scenes.yaml"})
	if len(own) != 2 || own[0]["of"] != "/config/scenes.yaml" || own[0]["date"].(string) < own[1]["date"].(string) {
		t.Fatalf("filename filter: %v", own)
	}
	ha := list(map[string]any{"source": "homeassistant"})
	if len(ha) < 1 || ha[0]["slug"] == nil || ha[0]["path"] != nil {
		t.Fatalf("Home Assistant's only: %v", ha)
	}
	for _, c := range []struct {
		args       map[string]any
		code, want string
	}{
		{map[string]any{"action": "list", "source": "cloud"}, "invalid_argument", "source"},
		{map[string]any{"action": "list", "filename": "/etc/passwd"}, "invalid_argument", "configuration directory"},
		{map[string]any{"action": "copy"}, "invalid_argument", "action"},
		{map[string]any{"action": "delete", "filename": "scenes.yaml", "slug": "abc"}, "invalid_argument", "filename"},
	} {
		e.fails(t, "ha_manage_backups", c.args, c.code, c.want)
	}
	e.down(t)
	if got := list(map[string]any{}); len(got) != len(all) {
		t.Fatalf("while Home Assistant is down: %d of %d", len(got), len(all))
	}
}

// TestManageBackupsSupervisor runs every action through the Supervisor, as inside the add-on.
func TestManageBackupsSupervisor(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	call := func(args map[string]any) map[string]any { t.Helper(); return e.ok(t, "ha_manage_backups", args) }

	full := call(map[string]any{"action": "create", "name": "Before the heat pump", "exclude_database": true})
	b, _ := full["backup"].(map[string]any)
	if full["job"].(map[string]any)["done"] != true || b == nil || b["name"] != "Before the heat pump" || b["type"] != "full" {
		t.Fatalf("create: %v", full)
	}
	slug := b["slug"].(string)
	part := call(map[string]any{"action": "create", "partial": map[string]any{"folders": []any{"share"}, "addons": []any{"core_mosquitto"}}})
	pb := part["backup"].(map[string]any)
	if pb["type"] != "partial" || !strings.Contains(admJSON(pb["content"]), "core_mosquitto") || strings.Contains(admJSON(pb["content"]), `"homeassistant"`) {
		t.Fatalf("partial: %v", part)
	}
	e.fails(t, "ha_manage_backups", map[string]any{"action": "create", "partial": map[string]any{}}, "invalid_argument", "nothing to back up")
	e.fails(t, "ha_manage_backups", map[string]any{"action": "create", "partial": map[string]any{"folders": []any{"etc"}}}, "invalid_argument", "folders")
	e.fails(t, "ha_manage_backups", map[string]any{"action": "create", "partial": map[string]any{"addons": []any{"no_such_addon"}}}, "backend_error", "does not exist")

	// A restore puts the configuration back and restarts core, in the background.
	cfg := filepath.Join(e.home.Sandbox().Config, "customize.yaml")
	before, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, []byte("# changed after the backup\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	restored := call(map[string]any{"action": "restore", "slug": slug, "partial": map[string]any{"homeassistant": true}, "confirm": true})
	job := restored["job"].(map[string]any)["id"].(string)
	if !strings.Contains(restored["note"].(string), "restarts Home Assistant") {
		t.Fatalf("restore: %v", restored)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := call(map[string]any{"action": "status", "slug": job})
		if st["job"].(map[string]any)["done"] == true {
			if st["job"].(map[string]any)["error"] != nil {
				t.Fatalf("restore job failed: %v", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restore never finished: %v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if now, _ := os.ReadFile(cfg); string(now) != string(before) {
		t.Fatalf("customize.yaml after the restore: %q, want %q", now, before)
	}

	for _, c := range []struct {
		args       map[string]any
		code, want string
	}{
		{map[string]any{"action": "restore", "confirm": true}, "invalid_argument", "slug"},
		{map[string]any{"action": "restore", "slug": "../core/restart", "confirm": true}, "invalid_argument", "slug"},
		{map[string]any{"action": "restore", "slug": "deadbeef", "confirm": true}, "not_found", "Backup does not exist"},
		{map[string]any{"action": "status"}, "invalid_argument", "slug"},
		{map[string]any{"action": "status", "slug": "0123456789abcdef"}, "not_found", "Job does not exist"},
		{map[string]any{"action": "list", "partial": map[string]any{"homeassistant": true}}, "invalid_argument", "partial"},
	} {
		e.fails(t, "ha_manage_backups", c.args, c.code, c.want)
	}
	if r := call(map[string]any{"action": "delete", "slug": slug, "confirm": true}); r["done"] != "deleted "+slug {
		t.Fatalf("delete: %v", r)
	}
	e.fails(t, "ha_manage_backups", map[string]any{"action": "delete", "slug": slug, "confirm": true}, "not_found", "")
}

// TestManageBackupsLongJob: a backup that outlasts the wait answers with its job, and status
// follows it to the backup it made.
func TestManageBackupsLongJob(t *testing.T) {
	defer hatools.SetBackupWaits(300*time.Millisecond, time.Second)()
	e := admStart(t, admOpts{})
	started, release := e.home.HoldSupervisorActions()
	defer release()
	r := e.ok(t, "ha_manage_backups", map[string]any{"action": "create", "name": "Slow"})
	<-started
	job := r["job"].(map[string]any)
	if job["done"] != false || r["backup"] != nil || !strings.Contains(r["note"].(string), `"action": "status"`) {
		t.Fatalf("a held backup: %v", r)
	}
	release()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := e.ok(t, "ha_manage_backups", map[string]any{"action": "status", "slug": job["id"]})
		if b, ok := st["backup"].(map[string]any); ok {
			if b["name"] != "Slow" {
				t.Fatalf("status: %v", st)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the backup: %v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestManageBackupsCore: without the Supervisor, core's backup integration makes, lists,
// restores and deletes backups (agent backup.local).
func TestManageBackupsCore(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{noSupervisor: true})
	r := e.ok(t, "ha_manage_backups", map[string]any{"action": "create", "name": "Core backup", "password": "hunter2"})
	b, _ := r["backup"].(map[string]any)
	if b == nil || b["name"] != "Core backup" || b["location"] != "backup.local" || b["protected"] != true {
		t.Fatalf("create: %v", r)
	}
	id := b["slug"].(string)
	if r["job"].(map[string]any)["id"] != id {
		t.Fatalf("the job id is the backup id on a core install: %v", r)
	}
	list := admItems(t, e.ok(t, "ha_manage_backups", map[string]any{"action": "list", "source": "homeassistant"})["list"].(map[string]any), "items")
	if len(list) != 1 || list[0]["slug"] != id || !slices.Contains(toStrings(list[0]["content"]), "homeassistant") {
		t.Fatalf("list: %v", list)
	}
	for _, c := range []struct {
		args       map[string]any
		code, want string
	}{
		{map[string]any{"action": "create", "partial": map[string]any{"folders": []any{"share"}}}, "invalid_argument", "without the Supervisor"},
		{map[string]any{"action": "restore", "slug": id, "confirm": true}, "invalid_argument", "password"},
		{map[string]any{"action": "restore", "slug": id, "password": "wrong", "confirm": true}, "invalid_argument", "not the backup's password"},
		{map[string]any{"action": "restore", "slug": "0badc0de", "confirm": true}, "not_found", "no backup"},
		{map[string]any{"action": "delete", "slug": "0badc0de", "confirm": true}, "not_found", "no backup"},
	} {
		e.fails(t, "ha_manage_backups", c.args, c.code, c.want)
	}
	cfg := filepath.Join(e.home.Sandbox().Config, "customize.yaml")
	before, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, []byte("# changed after the backup\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.ok(t, "ha_manage_backups", map[string]any{"action": "restore", "slug": id, "password": "hunter2", "confirm": true}); !strings.Contains(r["done"].(string), "restore of "+id) {
		t.Fatalf("restore: %v", r)
	}
	if now, _ := os.ReadFile(cfg); string(now) != string(before) {
		t.Fatalf("customize.yaml after the restore: %q", now)
	}
	if r := e.ok(t, "ha_manage_backups", map[string]any{"action": "delete", "slug": id, "confirm": true}); r["done"] != "deleted "+id {
		t.Fatalf("delete: %v", r)
	}
	if r := e.ok(t, "ha_manage_backups", map[string]any{"action": "list", "source": "homeassistant"}); r["list"].(map[string]any)["total"].(float64) != 0 {
		t.Fatalf("after delete: %v", r)
	}
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestManageBackupsConfirm: restore and delete wait for the user (restart and delete are not
// trusted by default); create and list never ask.
func TestManageBackupsConfirm(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	slug := e.ok(t, "ha_manage_backups", map[string]any{"action": "create"})["backup"].(map[string]any)["slug"].(string)
	for _, c := range []struct {
		args    map[string]any
		classes []string
	}{
		{map[string]any{"action": "restore", "slug": slug, "confirm": true}, []string{"restart", "delete"}},
		{map[string]any{"action": "delete", "slug": slug, "confirm": true}, []string{"delete"}},
	} {
		r := e.call(t, "ha_manage_backups", c.args)
		if r.err == nil || r.err.Code != "confirmation_required" {
			t.Fatalf("%v was not stopped for the user: %s", c.args, r.raw)
		}
		if !strings.Contains(r.raw, slug) {
			t.Errorf("the question does not name the backup: %s", r.raw)
		}
		for _, class := range c.classes {
			if !strings.Contains(r.raw, class) {
				t.Errorf("%v: class %s missing: %s", c.args, class, r.raw)
			}
		}
	}
	list := admItems(t, e.ok(t, "ha_manage_backups", map[string]any{"action": "list", "source": "homeassistant"})["list"].(map[string]any), "items")
	if len(list) < 2 { // the demo's own backup may or may not exist; ours must still be there
		found := false
		for _, b := range list {
			found = found || b["slug"] == slug
		}
		if !found {
			t.Fatalf("the backup went away without the user: %v", list)
		}
	}
}

// TestBackupAndUpdateDefinitions keeps both tools' definitions small and their grants honest.
func TestBackupAndUpdateDefinitions(t *testing.T) {
	t.Parallel()
	tools := map[string]*toolkit.Tool{}
	for _, tool := range hatools.Tools(hatools.Deps{}) {
		tools[tool.Name()] = tool
	}
	if tools["ha_list_backups"] != nil {
		t.Error("ha_list_backups is still offered: ha_manage_backups replaces it")
	}
	for name, grant := range map[string]toolkit.Category{"ha_manage_backups": toolkit.Filesystem, "ha_manage_updates": toolkit.Command} {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("%s is missing", name)
		}
		raw, _ := json.Marshal(tool.Definition())
		t.Logf("%s: %d bytes", name, len(raw))
		if len(raw) > 1400 {
			t.Errorf("%s's definition is %d bytes, over 1,400", name, len(raw))
		}
		if g := tool.Grants(); len(g) != 1 || g[0].Category != grant || g[0].When == "" {
			t.Errorf("%s grants %v, want only %s for some calls", name, g, grant)
		}
		if tool.ReadOnly() || tool.ConfirmWhen() == "" {
			t.Errorf("%s: read-only %v, confirm %q", name, tool.ReadOnly(), tool.ConfirmWhen())
		}
	}
}
