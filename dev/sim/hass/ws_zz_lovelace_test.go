package hass_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storageDoc reads one of the sim's .storage documents.
func storageDoc(t *testing.T, key string) (map[string]any, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home.Sandbox().Config, ".storage", key))
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	if doc["key"] != key || doc["version"] != 1.0 {
		t.Errorf("%s envelope: %v", key, doc)
	}
	return doc, true
}

func TestWSLovelaceDashboards(t *testing.T) {
	w := dialAuthed(t, home.Token())
	list := w.ok(map[string]any{"id": 1, "type": "lovelace/dashboards/list"}).([]any)
	if len(list) < 2 {
		t.Fatalf("dashboards: %v", list)
	}
	overview := list[0].(map[string]any)
	if overview["url_path"] != "lovelace" || overview["id"] != "lovelace" || overview["mode"] != "storage" || overview["title"] != "Overview" {
		t.Errorf("the migrated default dashboard: %v", overview)
	}
	cfg := w.ok(map[string]any{"id": 2, "type": "lovelace/config", "url_path": "lovelace"}).(map[string]any)
	if views := cfg["views"].([]any); len(views) != 3 || views[2].(map[string]any)["path"] != "security" {
		t.Errorf("overview views: %v", views)
	}
	// The legacy default (url_path null) was migrated away: nothing saved there.
	m, _ := w.cmd(map[string]any{"id": 3, "type": "lovelace/config", "url_path": nil})
	if errCode(m) != "config_not_found" || errMsg(m) != "No config found." {
		t.Errorf("legacy default: %v", m)
	}

	w.ok(map[string]any{"id": 4, "type": "subscribe_events", "event_type": "lovelace_updated"})
	created := w.ok(map[string]any{"id": 5, "type": "lovelace/dashboards/create", "url_path": "dashboard-kitchen", "title": "Kitchen", "icon": "mdi:stove"}).(map[string]any)
	if created["id"] != "dashboard_kitchen" || created["require_admin"] != false || created["show_in_sidebar"] != true || created["mode"] != "storage" {
		t.Errorf("created: %v", created)
	}
	m, _ = w.cmd(map[string]any{"id": 6, "type": "lovelace/config", "url_path": "dashboard-kitchen"})
	if errCode(m) != "config_not_found" || errMsg(m) != "No config found." {
		t.Errorf("a new dashboard's config: %v", m)
	}
	if _, exists := storageDoc(t, "lovelace.dashboard_kitchen"); exists {
		t.Error("a dashboard never saved has a storage file")
	}
	kitchen := map[string]any{"views": []any{map[string]any{"title": "Kitchen", "cards": []any{map[string]any{"type": "tile", "entity": "light.kitchen_island"}}}}}
	if res := w.ok(map[string]any{"id": 7, "type": "lovelace/config/save", "url_path": "dashboard-kitchen", "config": kitchen}); res != nil {
		t.Errorf("save result: %v", res)
	}
	ev := w.waitEvent(4, func(ev map[string]any) bool { return true })
	if ev["data"].(map[string]any)["url_path"] != "dashboard-kitchen" {
		t.Errorf("lovelace_updated: %v", ev)
	}
	doc, _ := storageDoc(t, "lovelace.dashboard_kitchen")
	if got := doc["data"].(map[string]any)["config"].(map[string]any)["views"].([]any); len(got) != 1 {
		t.Errorf("stored config: %v", doc)
	}
	back := w.ok(map[string]any{"id": 8, "type": "lovelace/config", "url_path": "dashboard-kitchen", "force": true}).(map[string]any)
	if len(back["views"].([]any)) != 1 {
		t.Errorf("read back: %v", back)
	}
	upd := w.ok(map[string]any{"id": 9, "type": "lovelace/dashboards/update", "dashboard_id": "dashboard_kitchen", "title": "Cooking", "icon": nil}).(map[string]any)
	if _, has := upd["icon"]; has || upd["title"] != "Cooking" || upd["url_path"] != "dashboard-kitchen" {
		t.Errorf("update: %v", upd)
	}
	doc, _ = storageDoc(t, "lovelace_dashboards")
	if !strings.Contains(jsonText(doc), `"title":"Cooking"`) {
		t.Errorf("lovelace_dashboards: %v", doc)
	}
	if res := w.ok(map[string]any{"id": 10, "type": "lovelace/dashboards/delete", "dashboard_id": "dashboard_kitchen"}); res != nil {
		t.Errorf("delete: %v", res)
	}
	if _, exists := storageDoc(t, "lovelace.dashboard_kitchen"); exists {
		t.Error("a deleted dashboard's config stayed")
	}
	for _, d := range w.ok(map[string]any{"id": 11, "type": "lovelace/dashboards/list"}).([]any) {
		if d.(map[string]any)["url_path"] == "dashboard-kitchen" {
			t.Error("deleted dashboard still listed")
		}
	}
	res := w.ok(map[string]any{"id": 12, "type": "lovelace/resources"}).([]any)
	if len(res) != 1 || res[0].(map[string]any)["type"] != "module" || !strings.HasPrefix(res[0].(map[string]any)["url"].(string), "/hacsfiles/") {
		t.Errorf("resources: %v", res)
	}
	if alias := w.ok(map[string]any{"id": 13, "type": "lovelace/resources/list"}).([]any); len(alias) != 1 {
		t.Errorf("resources/list: %v", alias)
	}

	for i, c := range []struct {
		msg        map[string]any
		code, text string
	}{
		{map[string]any{"type": "lovelace/config", "url_path": "nope-nope"}, "config_not_found", "Unknown config specified: nope-nope"},
		{map[string]any{"type": "lovelace/config", "url_path": []any{"x"}}, "invalid_format", "not a valid value for dictionary value @ data['url_path']"},
		{map[string]any{"type": "lovelace/config/save", "url_path": "lovelace"}, "invalid_format", "required key not provided @ data['config']"},
		{map[string]any{"type": "lovelace/config/save", "url_path": "lovelace", "config": []any{}}, "invalid_format", "expected str for dictionary value @ data['config']"},
		{map[string]any{"type": "lovelace/config/save", "url_path": "gone-away", "config": map[string]any{}}, "config_not_found", "Unknown config specified: gone-away"},
		{map[string]any{"type": "lovelace/dashboards/create", "url_path": "kitchen", "title": "K"}, "invalid_format", "Url path needs to contain a hyphen (-). Got {"},
		{map[string]any{"type": "lovelace/dashboards/create", "url_path": "dashboard-garden", "title": "G"}, "invalid_format", "Panel url path needs to be unique"},
		{map[string]any{"type": "lovelace/dashboards/create", "url_path": "developer-tools", "title": "D"}, "invalid_format", "Panel url path needs to be unique"},
		{map[string]any{"type": "lovelace/dashboards/create", "url_path": "a-b", "title": "A", "icon": "stove"}, "invalid_format", `Icons should be specified in the form "prefix:name"`},
		{map[string]any{"type": "lovelace/dashboards/create", "url_path": "a-b"}, "invalid_format", "required key not provided @ data['title']"},
		{map[string]any{"type": "lovelace/dashboards/update", "dashboard_id": "nope", "title": "x"}, "not_found", "Unable to find dashboard_id nope"},
		{map[string]any{"type": "lovelace/dashboards/update", "dashboard_id": "lovelace", "url_path": "x-y"}, "invalid_format", "extra keys not allowed @ data['url_path']"},
		{map[string]any{"type": "lovelace/dashboards/delete", "dashboard_id": "nope"}, "not_found", "Unable to find dashboard_id nope"},
	} {
		c.msg["id"] = 20 + i
		m, _ := w.cmd(c.msg)
		if errCode(m) != c.code || !strings.Contains(errMsg(m), c.text) {
			t.Errorf("%v: %v", c.msg, m)
		}
	}
}

func TestWSLovelaceNeedsAdminToWrite(t *testing.T) {
	w := dialAuthed(t, home.UserToken())
	if list := w.ok(map[string]any{"id": 1, "type": "lovelace/dashboards/list"}).([]any); len(list) == 0 {
		t.Fatal("a user sees no dashboards")
	}
	w.ok(map[string]any{"id": 2, "type": "lovelace/config", "url_path": "dashboard-garden"})
	for i, msg := range []map[string]any{
		{"type": "lovelace/config/save", "url_path": "dashboard-garden", "config": map[string]any{"views": []any{}}},
		{"type": "lovelace/config/delete", "url_path": "dashboard-garden"},
		{"type": "lovelace/dashboards/create", "url_path": "my-dash", "title": "Mine"},
		{"type": "lovelace/dashboards/delete", "dashboard_id": "dashboard_garden"},
	} {
		msg["id"] = 10 + i
		if m, _ := w.cmd(msg); errCode(m) != "unauthorized" {
			t.Errorf("%v: %v", msg["type"], m)
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
