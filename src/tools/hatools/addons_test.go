package hatools_test

import (
	"strings"
	"testing"
)

func TestManageAddons(t *testing.T) {
	for _, via := range []struct {
		name string
		opts admOpts
	}{{"supervisor client", admOpts{}}, {"websocket passthrough", admOpts{noSupervisor: true}}} {
		t.Run(via.name, func(t *testing.T) {
			e := admStart(t, via.opts)
			installed := admItems(t, e.ok(t, "ha_manage_addons", map[string]any{"action": "list"})["list"].(map[string]any), "items")
			if len(installed) != 4 || !strings.Contains(admJSON(installed), `"slug":"core_mosquitto"`) || strings.Contains(admJSON(installed), "core_samba") {
				t.Fatalf("installed: %v", installed)
			}
			store := e.ok(t, "ha_manage_addons", map[string]any{"action": "list", "scope": "store", "search": "samba"})["list"].(map[string]any)
			if got := admJSON(store); !strings.Contains(got, `"installed":false`) || !strings.Contains(got, `"total":1`) {
				t.Fatalf("store search: %v", store)
			}
			info := e.ok(t, "ha_manage_addons", map[string]any{"action": "info", "slug": "a0d7b954_ssh"})["addon"].(map[string]any)
			if info["update_available"] != true || info["options"] != nil || !strings.Contains(admJSON(info["option_names"]), "ssh") {
				t.Fatalf("info: %v", info)
			}

			steps := []struct {
				name string
				args map[string]any
				code string // "" = success
				want string
			}{
				{"install", map[string]any{"action": "install", "slug": "core_samba"}, "", `"state":"stopped"`},
				{"install again (Supervisor 400)", map[string]any{"action": "install", "slug": "core_samba"}, "backend_error", "already installed"},
				{"start", map[string]any{"action": "start", "slug": "core_samba"}, "", `"state":"started"`},
				{"stop needs confirm", map[string]any{"action": "stop", "slug": "core_samba"}, "confirmation_required", "core_samba"},
				{"stop", map[string]any{"action": "stop", "slug": "core_samba", "confirm": true}, "", `"state":"stopped"`},
				{"update", map[string]any{"action": "update", "slug": "a0d7b954_ssh", "confirm": true}, "", `"version":"20.0.1"`},
				{"update again (Supervisor 400)", map[string]any{"action": "update", "slug": "a0d7b954_ssh", "confirm": true}, "backend_error", "No update available"},
				{"uninstall", map[string]any{"action": "uninstall", "slug": "core_samba", "confirm": true}, "", `"done":"uninstall core_samba"`},
				{"start uninstalled (Supervisor 400)", map[string]any{"action": "start", "slug": "core_samba"}, "backend_error", "not installed"},
				{"unknown add-on (Supervisor 404)", map[string]any{"action": "info", "slug": "nope"}, "not_found", "does not exist"},
				{"slug required", map[string]any{"action": "start"}, "invalid_argument", "slug"},
				{"hostile slug", map[string]any{"action": "info", "slug": "../core/restart"}, "invalid_argument", "slug"},
				{"bad action", map[string]any{"action": "rebuild", "slug": "core_samba"}, "invalid_argument", "action"},
				{"bad scope", map[string]any{"action": "list", "scope": "all"}, "invalid_argument", "scope"},
			}
			for _, s := range steps {
				t.Run(s.name, func(t *testing.T) {
					if s.code != "" {
						e.fails(t, "ha_manage_addons", s.args, s.code, s.want)
						return
					}
					if r := e.ok(t, "ha_manage_addons", s.args); !strings.Contains(admJSON(r), s.want) {
						t.Fatalf("%v lacks %s", r, s.want)
					}
				})
			}
		})
	}
}

func TestManageAddonsProtectsItselfAndSurvivesHADown(t *testing.T) {
	e := admStart(t, admOpts{})
	for _, slug := range []string{"self", "local_hamcp"} {
		e.fails(t, "ha_manage_addons", map[string]any{"action": "stop", "slug": slug, "confirm": true}, "not_allowed", "its own add-on")
	}
	e.down(t)
	if r := e.ok(t, "ha_manage_addons", map[string]any{"action": "list"}); r["list"] == nil {
		t.Fatalf("list while Home Assistant is down: %v", r)
	}
}

func TestManageHACS(t *testing.T) {
	e := admStart(t, admOpts{})
	all := e.ok(t, "ha_manage_hacs", map[string]any{"action": "list"})["list"].(map[string]any)
	if all["total"].(float64) != 8 {
		t.Fatalf("list: %v", all)
	}
	plugins := admItems(t, e.ok(t, "ha_manage_hacs", map[string]any{"action": "list", "category": "plugin", "installed": true})["list"].(map[string]any), "items")
	if len(plugins) != 1 || plugins[0]["full_name"] != "piitaya/lovelace-mushroom" || plugins[0]["pending_upgrade"] != true {
		t.Fatalf("installed plugins: %v", plugins)
	}
	info := e.ok(t, "ha_manage_hacs", map[string]any{"action": "info", "repository": "https://github.com/basnijholt/adaptive-lighting"})["repository"].(map[string]any)
	if info["domain"] != "adaptive_lighting" || info["installed"] != false || len(info["releases"].([]any)) != 2 {
		t.Fatalf("info: %v", info)
	}

	steps := []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"download needs confirm", map[string]any{"action": "download", "repository": "basnijholt/adaptive-lighting"}, "confirmation_required", "third-party"},
		{"download", map[string]any{"action": "download", "repository": "basnijholt/adaptive-lighting", "confirm": true}, "", `"installed_version":"1.26.0"`},
		{"unknown release (HACS error)", map[string]any{"action": "download", "repository": "234599209", "version": "9.9.9", "confirm": true}, "backend_error", "9.9.9"},
		{"update a card", map[string]any{"action": "download", "repository": "piitaya/lovelace-mushroom", "confirm": true}, "", "reload the dashboard"},
		{"remove not installed", map[string]any{"action": "remove", "repository": "frenck/spook", "confirm": true}, "not_installed", "spook"},
		{"remove needs confirm", map[string]any{"action": "remove", "repository": "AlexxIT/WebRTC"}, "confirmation_required", "WebRTC"},
		{"remove", map[string]any{"action": "remove", "repository": "alexxit/webrtc", "confirm": true}, "", "ha_restart"},
		{"unknown repository", map[string]any{"action": "info", "repository": "someone/nothing"}, "not_found", "someone/nothing"},
		{"repository required", map[string]any{"action": "info"}, "invalid_argument", "repository"},
		{"bad category", map[string]any{"action": "list", "category": "dashboards"}, "invalid_argument", "category"},
		{"bad action", map[string]any{"action": "install"}, "invalid_argument", "action"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.code != "" {
				e.fails(t, "ha_manage_hacs", s.args, s.code, s.want)
				return
			}
			if r := e.ok(t, "ha_manage_hacs", s.args); !strings.Contains(admJSON(r), s.want) {
				t.Fatalf("%v lacks %s", r, s.want)
			}
		})
	}
	t.Run("the download left its files and a repair issue", func(t *testing.T) {
		files := e.ok(t, "ha_list_files", map[string]any{"path": "custom_components", "recursive": true, "all": true})
		if !strings.Contains(admJSON(files), "/config/custom_components/adaptive_lighting/manifest.json") {
			t.Fatalf("files: %v", files)
		}
		if d := e.ok(t, "ha_get_diagnostics", nil); !strings.Contains(admJSON(d["repairs"]), "restart_required_234599209") {
			t.Fatalf("repairs: %v", d["repairs"])
		}
	})
	t.Run("down", func(t *testing.T) {
		e.down(t)
		e.fails(t, "ha_manage_hacs", map[string]any{"action": "list"}, "backend_unavailable", "not reachable")
	})
}
