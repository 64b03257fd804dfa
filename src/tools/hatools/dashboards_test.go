package hatools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/tools/hatools"
)

func dash(args ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(args); i += 2 {
		m[args[i].(string)] = args[i+1]
	}
	return m
}

func tileView(title, entity string) map[string]any {
	return map[string]any{"title": title, "cards": []any{map[string]any{"type": "tile", "entity": entity}}}
}

func TestManageDashboardsDefinitionIsSmall(t *testing.T) {
	for _, tool := range hatools.Tools(hatools.Deps{}) {
		if tool.Name() != "ha_manage_dashboards" {
			continue
		}
		b, err := json.Marshal(tool.Definition())
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 1400 {
			t.Errorf("ha_manage_dashboards definition is %d bytes, over 1,400: %s", len(b), b)
		}
		return
	}
	t.Fatal("ha_manage_dashboards is not in the tool list")
}

func TestManageDashboardsReads(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	const tool = "ha_manage_dashboards"

	list := admItems(t, e.ok(t, tool, dash("action", "list")), "dashboards")
	if len(list) != 2 || list[0]["url_path"] != "lovelace" || list[0]["title"] != "Overview" || list[1]["url_path"] != "dashboard-garden" || list[1]["mode"] != "storage" {
		t.Fatalf("list: %v", list)
	}
	got := e.ok(t, tool, dash("action", "get"))
	views := admItems(t, got, "views")
	if got["url_path"] != "lovelace" || len(views) != 3 || views[2]["path"] != "security" || views[2]["cards"].(float64) < 5 || got["config"] == nil {
		t.Fatalf("get default: %v", got)
	}
	for _, sel := range []string{"2", "security", "Security"} {
		v := e.ok(t, tool, dash("action", "get", "view", sel))
		cfg, _ := json.Marshal(v["config"])
		if v["view"].(map[string]any)["index"] != 2.0 || !strings.Contains(string(cfg), "lock.front_door") {
			t.Errorf("view %s: %v", sel, v)
		}
	}
	res := admItems(t, e.ok(t, tool, dash("action", "resources")), "resources")
	if len(res) != 1 || res[0]["type"] != "module" {
		t.Errorf("resources: %v", res)
	}

	for _, c := range []struct {
		name       string
		args       map[string]any
		code, want string
	}{
		{"view index out of range", dash("action", "get", "view", "9"), "invalid_argument", "outside the dashboard's 3 views"},
		{"unknown view", dash("action", "get", "view", "attic"), "not_found", "no view"},
		{"unknown dashboard", dash("action", "get", "url_path", "dashboard-nope"), "not_found", "action list"},
		{"bad action", dash("action", "rename"), "invalid_argument", "must be one of"},
		{"save without config", dash("action", "save", "url_path", "dashboard-garden", "confirm", true), "invalid_argument", "config"},
		{"config without views", dash("action", "save", "config", dash("title", "x"), "confirm", true), "invalid_argument", "config.views"},
		{"views not a list", dash("action", "save", "config", dash("views", "x"), "confirm", true), "invalid_argument", "config.views"},
		{"view not an object", dash("action", "save", "config", dash("views", []any{"x"}), "confirm", true), "invalid_argument", "config.views[0]"},
		{"create without url_path", dash("action", "create", "title", "X"), "invalid_argument", "url_path"},
		{"create without title", dash("action", "create", "url_path", "x-y"), "invalid_argument", "title"},
		{"create without hyphen", dash("action", "create", "url_path", "kitchen", "title", "K"), "invalid_argument", "hyphen"},
		{"create over a built-in panel", dash("action", "create", "url_path", "developer-tools", "title", "K"), "invalid_argument", "unique"},
		{"delete unknown", dash("action", "delete", "url_path", "dashboard-nope", "confirm", true), "not_found", ""},
	} {
		t.Run(c.name, func(t *testing.T) { e.fails(t, tool, c.args, c.code, c.want) })
	}
}

func TestManageDashboardsWrites(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	const tool = "ha_manage_dashboards"

	created := e.ok(t, tool, dash("action", "create", "url_path", "dashboard-kitchen", "title", "Kitchen", "icon", "mdi:stove", "hidden", true))
	if created["created"] != true || created["version"] == nil {
		t.Fatalf("create: %v", created)
	}
	if got := e.ok(t, tool, dash("action", "get", "url_path", "dashboard-kitchen")); got["mode"] != "empty" || got["views"] != nil {
		t.Errorf("a new dashboard: %v", got)
	}
	for _, d := range admItems(t, e.ok(t, tool, dash("action", "list")), "dashboards") {
		if d["url_path"] == "dashboard-kitchen" && (d["hidden"] != true || d["icon"] != "mdi:stove") {
			t.Errorf("listed: %v", d)
		}
	}
	// One view at a time: appended to an empty dashboard, then replaced by path.
	e.ok(t, tool, dash("action", "save", "url_path", "dashboard-kitchen", "view", "new", "config", tileView("Lights", "light.kitchen_island")))
	e.ok(t, tool, dash("action", "save", "url_path", "dashboard-kitchen", "view", "new", "config", tileView("Climate", "sensor.kitchen_temperature"), "confirm", true))
	saved := e.ok(t, tool, dash("action", "save", "url_path", "dashboard-kitchen", "view", "lights", "confirm", true,
		"config", tileView("Lights", "light.kitchen_ceiling")))
	if views := admItems(t, saved, "views"); len(views) != 2 || views[0]["title"] != "Lights" || views[1]["title"] != "Climate" || saved["version"] == nil {
		t.Fatalf("save view: %v", saved)
	}
	v := e.ok(t, tool, dash("action", "get", "url_path", "dashboard-kitchen", "view", "0"))
	if b, _ := json.Marshal(v["config"]); !strings.Contains(string(b), "light.kitchen_ceiling") {
		t.Errorf("replaced view: %s", b)
	}
	// The whole config.
	whole := dash("views", []any{tileView("Only", "light.kitchen_island")})
	if got := e.ok(t, tool, dash("action", "save", "url_path", "dashboard-kitchen", "config", whole, "confirm", true)); len(admItems(t, got, "views")) != 1 {
		t.Errorf("save whole: %v", got)
	}
	// What each save replaced is kept.
	versions, _ := e.ok(t, "ha_config_history", dash("action", "list", "item", "dashboard:dashboard-kitchen"))["versions"].(map[string]any)
	hist := admItems(t, versions, "items")
	if len(hist) != 5 || hist[len(hist)-1]["change"] != "create" {
		t.Fatalf("history: %v", hist)
	}
	deleted := e.ok(t, tool, dash("action", "delete", "url_path", "dashboard-kitchen", "confirm", true))
	if deleted["deleted"] != true || deleted["version"] == nil {
		t.Errorf("delete: %v", deleted)
	}
	for _, d := range admItems(t, e.ok(t, tool, dash("action", "list")), "dashboards") {
		if d["url_path"] == "dashboard-kitchen" {
			t.Error("deleted dashboard still listed")
		}
	}
	// A new dashboard with its config in one call.
	withCfg := e.ok(t, tool, dash("action", "create", "url_path", "dashboard-office", "title", "Office", "config", whole))
	if withCfg["saved"] != true {
		t.Errorf("create with config: %v", withCfg)
	}
}

func TestManageDashboardsConfirmations(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{defaultTrust: true})
	const tool = "ha_manage_dashboards"
	button := func(act map[string]any) map[string]any {
		return map[string]any{"title": "Buttons", "cards": []any{map[string]any{"type": "button", "name": "Lights", "entity": "cover.garage_door", "tap_action": act}}}
	}

	// A harmless view appended to an existing dashboard overwrites it: change, which the model's
	// confirm covers by default.
	e.fails(t, tool, dash("action", "save", "url_path", "dashboard-garden", "view", "new", "config", tileView("Path", "light.garden_path")), "confirmation_required", "confirm")
	e.ok(t, tool, dash("action", "save", "url_path", "dashboard-garden", "view", "new", "config", tileView("Path", "light.garden_path"), "confirm", true))

	// Cards whose actions unlock, open the garage or disarm need the user, whatever their label.
	for _, act := range []map[string]any{
		{"action": "perform-action", "perform_action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}},
		{"action": "call-service", "service": "alarm_control_panel.alarm_disarm", "service_data": map[string]any{"entity_id": "alarm_control_panel.home_alarm"}},
		{"action": "toggle"}, // the card's entity: the garage door
		{"action": "perform-action", "perform_action": "script.turn_on", "target": map[string]any{"entity_id": "script.leave_home"}},
	} {
		e.asked(t, tool, dash("action", "save", "url_path", "dashboard-garden", "view", "new", "config", button(act), "confirm", true))
		e.asked(t, tool, dash("action", "create", "url_path", "dashboard-x", "title", "X", "config", dash("views", []any{button(act)}), "confirm", true))
	}
	// Navigating or locking is not sensitive.
	e.ok(t, tool, dash("action", "save", "url_path", "dashboard-garden", "view", "new", "confirm", true,
		"config", button(map[string]any{"action": "perform-action", "perform_action": "lock.lock", "target": map[string]any{"entity_id": "lock.front_door"}})))
	e.ok(t, tool, dash("action", "create", "url_path", "dashboard-y", "title", "Y", "config", dash("views", []any{button(map[string]any{"action": "navigate", "navigation_path": "/lovelace/0"})})))
	// Deleting a dashboard is the user's to allow.
	e.asked(t, tool, dash("action", "delete", "url_path", "dashboard-garden", "confirm", true))
	e.assertUntouched(t)
}
