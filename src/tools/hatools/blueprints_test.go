package hatools_test

import (
	"strings"
	"testing"
)

const (
	zoneBlueprintURL    = "https://github.com/home-assistant/core/blob/dev/homeassistant/components/automation/blueprints/notify_leaving_zone.yaml"
	confirmBlueprintURL = "https://raw.githubusercontent.com/home-assistant/core/dev/homeassistant/components/script/blueprints/confirmable_notification.yaml"
)

func TestListBlueprints(t *testing.T) {
	e := admStart(t, admOpts{})
	list := admItems(t, e.ok(t, "ha_list_blueprints", nil), "items")
	if len(list) != 1 || list[0]["path"] != "homeassistant/motion_light.yaml" || list[0]["name"] != "Motion-activated Light" ||
		admJSON(list[0]["inputs"]) != `["light_target","motion_entity","no_motion_wait"]` {
		t.Fatalf("automation blueprints: %v", list)
	}
	if r := e.ok(t, "ha_list_blueprints", map[string]any{"domain": "script"}); r["total"].(float64) != 0 {
		t.Fatalf("script blueprints: %v", r)
	}
	if r := e.ok(t, "ha_list_blueprints", map[string]any{"search": "nothing like it"}); r["total"].(float64) != 0 {
		t.Fatalf("search: %v", r)
	}
	e.fails(t, "ha_list_blueprints", map[string]any{"domain": "light"}, "invalid_argument", "domain")
	e.down(t)
	e.fails(t, "ha_list_blueprints", nil, "backend_unavailable", "not reachable")
}

func TestImportBlueprint(t *testing.T) {
	e := admStart(t, admOpts{})
	r := e.ok(t, "ha_import_blueprint", map[string]any{"url": zoneBlueprintURL})
	if r["domain"] != "automation" || r["path"] != "home-assistant/notify_leaving_zone.yaml" || r["name"] != "Zone Notification" ||
		admJSON(r["inputs"]) != `["notify_device","person_entity","zone_entity"]` || r["replaced"] != nil {
		t.Fatalf("import: %v", r)
	}
	listed := admJSON(e.ok(t, "ha_list_blueprints", map[string]any{"search": "zone"}))
	if !strings.Contains(listed, `"path":"home-assistant/notify_leaving_zone.yaml"`) || !strings.Contains(listed, zoneBlueprintURL) {
		t.Fatalf("not listed with its source: %s", listed)
	}
	script := e.ok(t, "ha_import_blueprint", map[string]any{"url": confirmBlueprintURL, "path": "mine/confirm"})
	if script["domain"] != "script" || script["path"] != "mine/confirm.yaml" {
		t.Fatalf("script import: %v", script)
	}

	cases := []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"exists", map[string]any{"url": zoneBlueprintURL}, "already_exists", "overwrite=true"},
		{"overwrite", map[string]any{"url": zoneBlueprintURL, "overwrite": true}, "", `"replaced":true`},
		{"unreachable (WS unknown_error)", map[string]any{"url": "https://github.com/nobody/nothing/blob/main/gone.yaml"}, "import_failed", "could not download"},
		{"not a blueprint (WS home_assistant_error)", map[string]any{"url": "https://github.com/hamcp/demo-blueprints/blob/main/automation/broken.yaml"}, "import_failed", "Invalid blueprint"},
		{"unsupported domain (WS invalid_format)", map[string]any{"url": "https://github.com/hamcp/demo-blueprints/blob/main/light/not_an_automation.yaml"}, "import_failed", "Unsupported domain"},
		{"unsupported URL", map[string]any{"url": "https://example.com/blueprints"}, "import_failed", "Unsupported URL"},
		{"not a URL", map[string]any{"url": "zone notification"}, "invalid_argument", "url"},
		{"not http", map[string]any{"url": "ftp://example.com/x.yaml"}, "invalid_argument", "http"},
		{"missing url", nil, "invalid_argument", "url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code != "" {
				e.fails(t, "ha_import_blueprint", c.args, c.code, c.want)
				return
			}
			if r := e.ok(t, "ha_import_blueprint", c.args); !strings.Contains(admJSON(r), c.want) {
				t.Fatalf("%v lacks %s", r, c.want)
			}
		})
	}

	t.Run("an automation uses the imported blueprint", func(t *testing.T) {
		created := e.ok(t, "ha_create_automation", map[string]any{"config": map[string]any{"alias": "Tell me when Alex leaves",
			"use_blueprint": map[string]any{"path": "home-assistant/notify_leaving_zone.yaml",
				"input": map[string]any{"person_entity": "person.alex", "zone_entity": "zone.home", "notify_device": "abc"}}}})
		if created["entity_id"] != "automation.tell_me_when_alex_leaves" {
			t.Fatalf("blueprint automation: %v", created)
		}
	})

	t.Run("down", func(t *testing.T) {
		e.down(t)
		e.fails(t, "ha_import_blueprint", map[string]any{"url": zoneBlueprintURL}, "backend_unavailable", "not reachable")
	})
}
