package hass_test

import (
	"encoding/json"
	"strings"
	"testing"

	hahome "github.com/hamcp/hamcp/dev/sim/home"
)

func TestWSAdminConfigEntriesRepairsRecorder(t *testing.T) {
	w := dialAuthed(t, home.Token())
	all := w.ok(map[string]any{"id": 1, "type": "config_entries/get"}).([]any)
	keys := []string{"created_at", "disabled_by", "domain", "entry_id", "error_reason_translation_key", "error_reason_translation_placeholders",
		"modified_at", "num_subentries", "pref_disable_new_entities", "pref_disable_polling", "reason", "source", "state",
		"supported_subentry_types", "supports_options", "supports_reconfigure", "supports_remove_device", "supports_unload", "title"}
	first := all[0].(map[string]any)
	if len(first) != len(keys) {
		t.Fatalf("entry shape: %v", first)
	}
	for _, k := range keys {
		if _, ok := first[k]; !ok {
			t.Fatalf("entry lacks %s: %v", k, first)
		}
	}
	byType := map[string]int{}
	for _, e := range all {
		byType[hahome.IntegrationType(e.(map[string]any)["domain"].(string))]++
	}
	if byType["service"] < 3 || byType["device"] < 3 {
		t.Fatalf("integration types: %v", byType)
	}
	cases := []struct {
		name  string
		msg   map[string]any
		count int
		code  string
	}{
		{"by domain", map[string]any{"type": "config_entries/get", "domain": "tuya"}, 1, ""},
		{"by types", map[string]any{"type": "config_entries/get", "type_filter": []any{"service", "device"}}, byType["service"] + byType["device"], ""},
		{"type as string", map[string]any{"type": "config_entries/get", "type_filter": "service"}, byType["service"], ""},
		{"bad type", map[string]any{"type": "config_entries/get", "type_filter": []any{"gadget"}}, 0, "invalid_format"},
		{"extra key", map[string]any{"type": "config_entries/get", "entry": "x"}, 0, "invalid_format"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.msg["id"] = 10 + i
			m, _ := w.cmd(c.msg)
			if c.code != "" {
				if errCode(m) != c.code {
					t.Fatalf("%v: %v", c.msg, m)
				}
				return
			}
			if got := len(m["result"].([]any)); got != c.count {
				t.Fatalf("%v: %d entries: %v", c.msg, got, m["result"])
			}
		})
	}
	issues := w.ok(map[string]any{"id": 30, "type": "repairs/list_issues"}).(map[string]any)["issues"].([]any)
	if is := issues[0].(map[string]any); is["issue_id"] != "deprecated_yaml" || is["severity"] != "warning" || is["ignored"] != false {
		t.Fatalf("issues: %v", issues)
	}
	if info := w.ok(map[string]any{"id": 31, "type": "recorder/info"}).(map[string]any); info["recording"] != true || info["max_backlog"] != float64(65000) {
		t.Fatalf("recorder/info: %v", info)
	}
	user := dialAuthed(t, home.UserToken())
	if m, _ := user.cmd(map[string]any{"id": 1, "type": "config_entries/get"}); errCode(m) != "unauthorized" {
		t.Fatalf("non-admin config_entries/get: %v", m)
	}
}

func TestRESTAdminConfigEntries(t *testing.T) {
	r := api(t, "GET", "/api/config/config_entries/entry?domain=hacs", "")
	var list []map[string]any
	if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 || len(list) != 1 || list[0]["title"] != "HACS" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r := api(t, "GET", "/api/config/config_entries/entry?type=gadget", ""); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("unknown type: %d %s", r.status, r.body)
	}
	if r := do(t, home.URL(), "GET", "/api/config/config_entries/entry", home.UserToken(), ""); r.status != 401 {
		t.Fatalf("non-admin: %d", r.status)
	}
}

func TestWSAdminBlueprints(t *testing.T) {
	w := dialAuthed(t, home.Token())
	list := w.ok(map[string]any{"id": 1, "type": "blueprint/list", "domain": "automation"}).(map[string]any)
	motion, _ := list["homeassistant/motion_light.yaml"].(map[string]any)
	if meta, _ := motion["metadata"].(map[string]any); meta["name"] != "Motion-activated Light" || meta["domain"] != "automation" {
		t.Fatalf("blueprint/list: %v", list)
	}
	if l := w.ok(map[string]any{"id": 2, "type": "blueprint/list", "domain": "light"}).(map[string]any); len(l) != 0 {
		t.Fatalf("unknown domain: %v", l)
	}
	url := "https://github.com/hamcp/demo-blueprints/blob/main/automation/low_battery_notify.yaml"
	imp := w.ok(map[string]any{"id": 3, "type": "blueprint/import", "url": url}).(map[string]any)
	if imp["suggested_filename"] != "hamcp/low_battery_notify" || imp["exists"] != false || imp["validation_errors"] != nil ||
		imp["blueprint"].(map[string]any)["metadata"].(map[string]any)["source_url"] != url || !strings.Contains(imp["raw_data"].(string), "!input battery_sensor") {
		t.Fatalf("blueprint/import: %v", imp)
	}
	save := map[string]any{"type": "blueprint/save", "domain": "automation", "path": "hamcp/low_battery_notify", "yaml": imp["raw_data"], "source_url": url}
	save["id"] = 4
	if r := w.ok(save).(map[string]any); r["overrides_existing"] != false {
		t.Fatalf("save: %v", r)
	}
	list = w.ok(map[string]any{"id": 5, "type": "blueprint/list", "domain": "automation"}).(map[string]any)
	saved, _ := list["hamcp/low_battery_notify.yaml"].(map[string]any)
	if meta, _ := saved["metadata"].(map[string]any); meta["source_url"] != url {
		t.Fatalf("saved blueprint: %v", saved)
	}
	cases := []struct {
		name string
		msg  map[string]any
		code string
		text string
	}{
		{"save again", map[string]any{"type": "blueprint/save", "domain": "automation", "path": "hamcp/low_battery_notify", "yaml": imp["raw_data"]}, "already_exists", "File already exists"},
		{"save wrong domain", map[string]any{"type": "blueprint/save", "domain": "script", "path": "x", "yaml": imp["raw_data"]}, "invalid_format", "incorrect blueprint type"},
		{"save unsupported domain", map[string]any{"type": "blueprint/save", "domain": "light", "path": "x", "yaml": "blueprint: {}"}, "invalid_format", "Unsupported domain"},
		{"save escaping path", map[string]any{"type": "blueprint/save", "domain": "automation", "path": "../../escape", "yaml": imp["raw_data"]}, "invalid_format", "path"},
		{"save missing yaml", map[string]any{"type": "blueprint/save", "domain": "automation", "path": "x"}, "invalid_format", "yaml"},
		{"import 404", map[string]any{"type": "blueprint/import", "url": "https://github.com/a/b/blob/main/c.yaml"}, "unknown_error", "Unknown error"},
		{"import invalid", map[string]any{"type": "blueprint/import", "url": "https://github.com/hamcp/demo-blueprints/blob/main/automation/broken.yaml"}, "home_assistant_error", "Invalid blueprint"},
		{"import unsupported URL", map[string]any{"type": "blueprint/import", "url": "https://example.com/page"}, "home_assistant_error", "Unsupported URL"},
		{"import not a URL", map[string]any{"type": "blueprint/import", "url": "nope"}, "invalid_format", "invalid url"},
		{"import other domain", map[string]any{"type": "blueprint/import", "url": "https://github.com/hamcp/demo-blueprints/blob/main/light/not_an_automation.yaml"}, "invalid_format", "Unsupported domain"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.msg["id"] = 10 + i
			m, _ := w.cmd(c.msg)
			if errCode(m) != c.code || !strings.Contains(errMsg(m), c.text) {
				t.Fatalf("%v: %v", c.msg, m)
			}
		})
	}
}

func TestWSAdminHACS(t *testing.T) {
	w := dialAuthed(t, home.Token())
	if info := w.ok(map[string]any{"id": 1, "type": "hacs/info"}).(map[string]any); info["stage"] != "running" || info["version"] == nil {
		t.Fatalf("hacs/info: %v", info)
	}
	repos := w.ok(map[string]any{"id": 2, "type": "hacs/repositories/list", "categories": []any{"theme"}}).([]any)
	theme := repos[0].(map[string]any)
	if len(repos) != 1 || theme["full_name"] != "catppuccin/home-assistant" || theme["installed"] != false || theme["status"] != "default" || theme["installed_version"] != nil {
		t.Fatalf("themes: %v", repos)
	}
	id := theme["id"].(string)
	if r := w.ok(map[string]any{"id": 3, "type": "hacs/repository/download", "repository": id}).(map[string]any); len(r) != 0 {
		t.Fatalf("download: %v", r)
	}
	info := w.ok(map[string]any{"id": 4, "type": "hacs/repository/info", "repository_id": id}).(map[string]any)
	if info["installed"] != true || info["installed_version"] != "v2.1.2" || info["status"] != "installed" || info["releases"] == nil {
		t.Fatalf("info after download: %v", info)
	}
	if r := w.ok(map[string]any{"id": 5, "type": "hacs/repository/remove", "repository": id}).(map[string]any); len(r) != 0 {
		t.Fatalf("remove: %v", r)
	}
	cases := []struct {
		name string
		msg  map[string]any
		code string
		text string
	}{
		{"info unknown", map[string]any{"type": "hacs/repository/info", "repository_id": "999"}, "repository_not_found", "Repository with ID (999) not found"},
		{"download unknown", map[string]any{"type": "hacs/repository/download", "repository": "999"}, "unknown_error", "Unknown error"},
		{"remove unknown", map[string]any{"type": "hacs/repository/remove", "repository": "999"}, "unknown_error", "Unknown error"},
		{"download bad version", map[string]any{"type": "hacs/repository/download", "repository": id, "version": "v0"}, "error", "v0"},
		{"info missing id", map[string]any{"type": "hacs/repository/info"}, "invalid_format", "repository_id"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.msg["id"] = 10 + i
			m, _ := w.cmd(c.msg)
			if errCode(m) != c.code || !strings.Contains(errMsg(m), c.text) {
				t.Fatalf("%v: %v", c.msg, m)
			}
		})
	}
	user := dialAuthed(t, home.UserToken())
	if m, _ := user.cmd(map[string]any{"id": 1, "type": "hacs/repositories/list"}); errCode(m) != "unauthorized" {
		t.Fatalf("non-admin: %v", m)
	}
}

func TestReloadServicesExist(t *testing.T) {
	r := api(t, "GET", "/api/services", "")
	body := string(r.body)
	for _, want := range []string{`"domain":"group","services":{"reload"`, `"domain":"frontend","services":{"reload_themes"`, `"domain":"template"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/api/services lacks %s", want)
		}
	}
	if r := api(t, "POST", "/api/services/template/reload", ""); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("template.reload: %d %s", r.status, r.body)
	}
}
