package hatools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
)

func TestReadConfig(t *testing.T) {
	e := admStart(t, admOpts{})
	cases := []struct {
		name string
		args map[string]any
		code string // "" = success
		want string
	}{
		{"relative path", map[string]any{"path": "configuration.yaml"}, "", "homeassistant:"},
		{"alias path", map[string]any{"path": "/homeassistant/configuration.yaml", "lines": 2}, "", `"from_line":1`},
		{"blueprint in a subfolder", map[string]any{"path": "/config/blueprints/automation/homeassistant/motion_light.yaml"}, "", "Motion-activated Light"},
		{"missing path", nil, "invalid_argument", "path"},
		{"outside /config", map[string]any{"path": "/etc/passwd"}, "invalid_argument", "configuration directory"},
		{"escape", map[string]any{"path": "/config/../../etc/passwd"}, "path_not_allowed", ""},
		{"missing file", map[string]any{"path": "nope.yaml"}, "not_found", "ha_list_files"},
		{"zero lines means the default", map[string]any{"path": "configuration.yaml", "lines": 0}, "", "homeassistant:"},
		{"too many lines", map[string]any{"path": "configuration.yaml", "lines": 9000}, "invalid_argument", "lines"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code != "" {
				e.fails(t, "ha_read_config", c.args, c.code, c.want)
				return
			}
			if r := e.ok(t, "ha_read_config", c.args); !strings.Contains(r["content"].(string)+admJSON(r), c.want) {
				t.Fatalf("%v lacks %q", r, c.want)
			}
		})
	}
	t.Run("paging", func(t *testing.T) {
		first := e.ok(t, "ha_read_config", map[string]any{"path": "configuration.yaml", "lines": 3})
		if first["truncated"] != true || !strings.Contains(first["next"].(string), `"offset": 4`) {
			t.Fatalf("first page: %v", first)
		}
		second := e.ok(t, "ha_read_config", map[string]any{"path": "configuration.yaml", "offset": 4, "lines": 3})
		if second["from_line"].(float64) != 4 || second["content"] == first["content"] {
			t.Fatalf("second page: %v", second)
		}
	})
	t.Run("works while Home Assistant is down", func(t *testing.T) {
		e.down(t)
		e.ok(t, "ha_read_config", map[string]any{"path": "configuration.yaml"})
	})
}

const admGoodAutomations = `- id: "test_1"
  alias: Test one
  triggers:
    - trigger: state
      entity_id: binary_sensor.hallway_motion
      to: "on"
  actions:
    - action: light.turn_on
      target:
        entity_id: light.hallway
`

func TestWriteConfig(t *testing.T) {
	e := admStart(t, admOpts{})
	original := e.ok(t, "ha_read_config", map[string]any{"path": "automations.yaml", "lines": 5000})["content"].(string)

	t.Run("refusals leave the file alone", func(t *testing.T) {
		for _, c := range []struct {
			name string
			args map[string]any
			code string
			want string
		}{
			{"no confirm", map[string]any{"path": "automations.yaml", "content": admGoodAutomations}, "confirmation_required", "confirm"},
			{"no content", map[string]any{"path": "automations.yaml", "confirm": true}, "invalid_argument", "content"},
			{"bad YAML", map[string]any{"path": "automations.yaml", "content": "- id: [unclosed\n", "confirm": true}, "invalid_argument", "not valid YAML"},
			{".storage", map[string]any{"path": ".storage/core.config_entries", "content": "{}", "confirm": true}, "invalid_argument", ".storage"},
			{"database", map[string]any{"path": "home-assistant_v2.db", "content": "x", "confirm": true}, "invalid_argument", "database"},
			{"backup folder", map[string]any{"path": ".hamcp_backups/x.bak", "content": "x", "confirm": true}, "invalid_argument", "backups"},
			{"outside", map[string]any{"path": "/ssl/x.pem", "content": "x", "confirm": true}, "invalid_argument", "configuration directory"},
		} {
			t.Run(c.name, func(t *testing.T) { e.fails(t, "ha_write_config", c.args, c.code, c.want) })
		}
		if now := e.ok(t, "ha_read_config", map[string]any{"path": "automations.yaml", "lines": 5000})["content"]; now != original {
			t.Fatal("a refused write changed automations.yaml")
		}
	})

	t.Run("valid write is checked and backed up", func(t *testing.T) {
		r := e.ok(t, "ha_write_config", map[string]any{"path": "automations.yaml", "content": admGoodAutomations, "confirm": true})
		check, _ := r["check"].(map[string]any)
		if check["result"] != "valid" || check["checked_by"] != "home_assistant" || r["created"] != false || !strings.Contains(r["next"].(string), "automation") {
			t.Fatalf("write: %v", r)
		}
		backup := r["backup"].(string)
		if !strings.HasPrefix(backup, "/config/.hamcp_backups/automations.yaml.") {
			t.Fatalf("backup path %s", backup)
		}
		if got := e.ok(t, "ha_read_config", map[string]any{"path": backup, "lines": 5000})["content"]; got != original {
			t.Fatal("the backup does not hold the previous content")
		}
		e.ok(t, "ha_reload_config", map[string]any{"domain": "automation"})
		testkit.Eventually(t, "the reloaded automation to appear", func() bool {
			list := admItems(t, e.ok(t, "ha_list_automations", nil), "items")
			return len(list) == 1 && list[0]["id"] == "test_1"
		})
	})

	t.Run("new file is created", func(t *testing.T) {
		r := e.ok(t, "ha_write_config", map[string]any{"path": "packages/extra.yaml", "content": "input_boolean:\n  guest_mode:\n", "confirm": true})
		if r["created"] != true || r["backup"] != nil {
			t.Fatalf("create: %v", r)
		}
	})

	t.Run("failing check rolls back", func(t *testing.T) {
		before := e.ok(t, "ha_read_config", map[string]any{"path": "automations.yaml", "lines": 5000})["content"]
		bad := "- id: broken\n  alias: No triggers\n  actions: []\n"
		err := e.fails(t, "ha_write_config", map[string]any{"path": "automations.yaml", "content": bad, "confirm": true}, "invalid_configuration", "triggers")
		if err.Changed == nil || *err.Changed {
			t.Fatalf("changed should be false: %+v", err)
		}
		if after := e.ok(t, "ha_read_config", map[string]any{"path": "automations.yaml", "lines": 5000})["content"]; after != before {
			t.Fatalf("not rolled back: %q", after)
		}
		// A new file that fails is removed again.
		e.fails(t, "ha_write_config", map[string]any{"path": "scenes.yaml", "content": "not: [a list]\n", "confirm": true}, "invalid_configuration", "scene")
	})

	t.Run("down: checked by the Supervisor", func(t *testing.T) {
		e.down(t)
		r := e.ok(t, "ha_write_config", map[string]any{"path": "customize.yaml", "content": "light.kitchen:\n  icon: mdi:lamp\n", "confirm": true})
		if r["check"].(map[string]any)["checked_by"] != "supervisor" {
			t.Fatalf("check: %v", r)
		}
	})
}

func TestListFiles(t *testing.T) {
	e := admStart(t, admOpts{})
	paths := func(r map[string]any) string {
		var out []string
		for _, it := range admItems(t, r, "items") {
			out = append(out, it["path"].(string))
		}
		return strings.Join(out, " ")
	}
	top := e.ok(t, "ha_list_files", nil)
	if p := paths(top); !strings.Contains(p, "/config/configuration.yaml") || !strings.Contains(p, "/config/blueprints") || strings.Contains(p, "home-assistant.log") {
		t.Fatalf("top level: %s", p)
	}
	if p := paths(e.ok(t, "ha_list_files", map[string]any{"all": true})); !strings.Contains(p, "home-assistant.log") {
		t.Fatalf("all: %s", p)
	}
	if p := paths(e.ok(t, "ha_list_files", map[string]any{"recursive": true, "pattern": "*.yaml"})); !strings.Contains(p, "/config/blueprints/automation/homeassistant/motion_light.yaml") || strings.Contains(p, "/config/blueprints ") {
		t.Fatalf("recursive: %s", p)
	}
	if p := paths(e.ok(t, "ha_list_files", map[string]any{"hidden": true})); !strings.Contains(p, "/config/.storage") {
		t.Fatalf("hidden: %s", p)
	}
	paged := e.ok(t, "ha_list_files", map[string]any{"limit": 2})
	if len(admItems(t, paged, "items")) != 2 || paged["next_offset"].(float64) != 2 {
		t.Fatalf("paging: %v", paged)
	}
	e.fails(t, "ha_list_files", map[string]any{"pattern": "[x"}, "invalid_argument", "glob")
	e.fails(t, "ha_list_files", map[string]any{"path": "/media"}, "invalid_argument", "configuration directory")
	e.fails(t, "ha_list_files", map[string]any{"path": "configuration.yaml"}, "filesystem_error", "not a directory")
	e.fails(t, "ha_list_files", map[string]any{"limit": 5000}, "invalid_argument", "limit")
}

func admJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
