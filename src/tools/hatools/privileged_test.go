package hatools_test

import (
	"strings"
	"testing"
)

// A model with no grant at all (every category on ask, a client that cannot ask its user) tries
// everything that runs code or changes the system, with confirm=true as a model would send it. Each
// call must stop at the permission gate and change nothing; the same tools' harmless actions still work.
func TestModelAloneCannotRunCodeOrChangeTheSystem(t *testing.T) {
	e := admStart(t, admOpts{noGrants: true})
	refused := []struct {
		name string
		tool string
		args map[string]any
		want string // the category the refusal names
	}{
		{"install an add-on", "ha_manage_addons", map[string]any{"action": "install", "slug": "core_samba", "confirm": true}, "command"},
		{"start an add-on", "ha_manage_addons", map[string]any{"action": "start", "slug": "core_mosquitto", "confirm": true}, "command"},
		{"update an add-on", "ha_manage_addons", map[string]any{"action": "update", "slug": "a0d7b954_ssh", "confirm": true}, "command"},
		{"HACS download", "ha_manage_hacs", map[string]any{"action": "download", "repository": "basnijholt/adaptive-lighting", "confirm": true}, "command"},
		{"hassio.addon_start", "ha_call_service", map[string]any{"domain": "hassio", "service": "addon_start", "data": map[string]any{"addon": "core_samba"}, "confirm": true}, "command"},
		{"shell_command", "ha_call_service", map[string]any{"domain": "shell_command", "service": "x", "confirm": true}, "command"},
		{"recorder.disable", "ha_call_service", map[string]any{"domain": "recorder", "service": "disable", "confirm": true}, "command"},
		{"update.install", "ha_call_service", map[string]any{"domain": "update", "service": "install", "entity_id": []string{"update.home_assistant_core_update"}, "confirm": true}, "command"},
		{"automation calling shell_command", "ha_create_automation", map[string]any{"config": map[string]any{"alias": "x",
			"triggers": []any{map[string]any{"trigger": "time", "at": "03:00:00"}},
			"actions":  []any{map[string]any{"choose": []any{map[string]any{"conditions": []any{}, "sequence": []any{map[string]any{"action": "shell_command.x"}}}}}}}}, "command"},
		{"automation with a templated service", "ha_create_automation", map[string]any{"automation_yaml": "alias: y\ntriggers:\n  - trigger: time\n    at: '03:00:00'\nactions:\n  - service: \"{{ 'hassio' }}.addon_start\"\n"}, "command"},
		{"import a third-party blueprint", "ha_import_blueprint", map[string]any{"url": "https://example.com/bp/light.yaml"}, "command"},
		{"read the log", "ha_get_logs", map[string]any{}, "filesystem"},
		// A file's kept version is the file: reading it back is a file read (secrets.yaml included).
		{"read a kept config file", "ha_config_history", map[string]any{"action": "get", "item": "file:/config/secrets.yaml", "version": 1}, "filesystem"},
		{"restore a kept config file", "ha_config_history", map[string]any{"action": "restore", "item": "file:/config/secrets.yaml", "version": 1, "confirm": true}, "filesystem"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(t, c.tool, c.args)
			if r.err == nil || r.err.Code != "permission_required" || !strings.Contains(r.raw, c.want) {
				t.Fatalf("%s %v was not stopped for the %s permission: %s", c.tool, c.args, c.want, r.raw)
			}
		})
	}
	// Nothing happened behind the refusals.
	if installed := admJSON(e.ok(t, "ha_manage_addons", map[string]any{"action": "list"})); strings.Contains(installed, "core_samba") {
		t.Errorf("core_samba was installed: %s", installed)
	}
	// The harmless actions of the same tools need no grant.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"ha_manage_addons", map[string]any{"action": "list"}},
		{"ha_manage_hacs", map[string]any{"action": "list"}},
		{"ha_call_service", map[string]any{"domain": "homeassistant", "service": "check_config"}},
		{"ha_create_automation", map[string]any{"config": map[string]any{"alias": "porch",
			"triggers": []any{map[string]any{"trigger": "sun", "event": "sunset"}},
			"actions":  []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.garden_path"}}}}}},
	} {
		e.ok(t, c.tool, c.args)
	}
}
