package hatools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func unlockAutomation(alias string) map[string]any {
	return map[string]any{"alias": alias, "triggers": []any{map[string]any{"trigger": "state", "entity_id": "binary_sensor.front_door"}},
		"actions": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}}}
}

func lampAutomation(alias string) map[string]any {
	return map[string]any{"alias": alias, "triggers": []any{map[string]any{"trigger": "sun", "event": "sunset"}},
		"actions": []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.living_room"}}}}
}

// An automation created, changed and deleted by an assistant can be brought back at each step, and a
// restore is kept too, so it can be taken back in turn.
func TestConfigHistoryBringsBackWhatAnAssistantChanged(t *testing.T) {
	e := admStart(t, admOpts{})
	created := e.ok(t, "ha_create_automation", map[string]any{"id": "porch_1", "config": lampAutomation("Porch v1")})
	if created["version"] != float64(1) {
		t.Fatalf("create kept no version: %v", created)
	}
	e.ok(t, "ha_update_automation", map[string]any{"automation_id": "porch_1", "config": lampAutomation("Porch v2"), "confirm": true})
	e.ok(t, "ha_delete_automation", map[string]any{"automation_id": "porch_1", "confirm": true})

	list := e.ok(t, "ha_config_history", map[string]any{"action": "list", "item": "automation:porch_1"})
	var changes []string
	for _, it := range admItems(t, list["versions"].(map[string]any), "items") {
		changes = append(changes, it["change"].(string)+"@"+it["title"].(string))
	}
	if got := strings.Join(changes, ","); got != "delete@Porch v2,update@Porch v1,create@Porch v1" {
		t.Fatalf("versions newest first: %s", got)
	}
	if v := e.ok(t, "ha_config_history", map[string]any{"action": "get", "item": "automation:porch_1", "version": 2}); !strings.Contains(admJSON(v), "Porch v1") {
		t.Fatalf("version 2 is what the update replaced: %v", v)
	}

	for _, tt := range []struct {
		version   int
		wantAlias string // "" = the automation must be gone
	}{
		{3, "Porch v2"}, // the deleted automation comes back
		{2, "Porch v1"}, // and back to before the update
		{1, ""},         // before it was created: it is deleted again
	} {
		r := e.ok(t, "ha_config_history", map[string]any{"action": "restore", "item": "automation:porch_1", "version": tt.version, "confirm": true})
		if r["undo"] == nil {
			t.Fatalf("restore %d says nothing about how to undo it: %v", tt.version, r)
		}
		raw, err := e.ha.GetConfigItem(t.Context(), "automation", "porch_1")
		switch {
		case tt.wantAlias == "" && err == nil:
			t.Fatalf("restore %d: the automation still exists: %s", tt.version, raw)
		case tt.wantAlias != "" && (err != nil || !strings.Contains(string(raw), tt.wantAlias)):
			t.Fatalf("restore %d: %s, %v; want alias %s", tt.version, raw, err, tt.wantAlias)
		}
	}
	// The last restore removed it; the one before is kept and brings it back.
	list = e.ok(t, "ha_config_history", map[string]any{"action": "list", "item": "automation:porch_1", "limit": 1})
	newest := admItems(t, list["versions"].(map[string]any), "items")[0]
	if newest["change"] != "restore" {
		t.Fatalf("a restore keeps what it replaced: %v", newest)
	}
	e.ok(t, "ha_config_history", map[string]any{"action": "restore", "item": "automation:porch_1", "version": newest["version"], "confirm": true})
	if raw, err := e.ha.GetConfigItem(t.Context(), "automation", "porch_1"); err != nil || !strings.Contains(string(raw), "Porch v1") {
		t.Fatalf("undoing the restore: %s, %v", raw, err)
	}
}

// A configuration file written by an assistant keeps its earlier content.
func TestConfigHistoryKeepsConfigFiles(t *testing.T) {
	e := admStart(t, admOpts{})
	before := e.ok(t, "ha_read_config", map[string]any{"path": "/config/scripts.yaml"})
	w := e.ok(t, "ha_write_config", map[string]any{"path": "/config/scripts.yaml", "content": "hello:\n  sequence: []\n", "confirm": true})
	if w["version"] == nil {
		t.Fatalf("the write kept no version: %v", w)
	}
	e.ok(t, "ha_config_history", map[string]any{"action": "restore", "item": "file:/config/scripts.yaml", "version": w["version"], "confirm": true})
	after := e.ok(t, "ha_read_config", map[string]any{"path": "/config/scripts.yaml"})
	if admJSON(after) != admJSON(before) {
		t.Fatalf("restored file differs:\nbefore %v\nafter  %v", before, after)
	}
}

// Restoring behaviour is a write (§5b rule 2): a kept version that unlocks the front door is not
// written back on the model's word, however harmless the change that kept it was.
func TestRestoringBehaviourIsConfirmedLikeWritingIt(t *testing.T) {
	var asked []string
	e := admStart(t, admOpts{defaultTrust: true, elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	// The user's automation, kept when the model replaced it with a harmless one (a change, trusted).
	saved, err := json.Marshal(unlockAutomation("Door"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ha.SaveConfigItem(t.Context(), "automation", "door_1", json.RawMessage(saved)); err != nil {
		t.Fatal(err)
	}
	up := e.ok(t, "ha_update_automation", map[string]any{"automation_id": "door_1", "config": lampAutomation("Lamp now"), "confirm": true})
	if len(asked) != 0 {
		t.Fatalf("a harmless overwrite asked the user: %v", asked)
	}
	r := e.call(t, "ha_config_history", map[string]any{"action": "restore", "item": "automation:door_1", "version": up["version"], "confirm": true})
	if r.err == nil || r.err.Code != "confirmation_declined" {
		t.Fatalf("restoring an unlocking automation on the model's word: %s", r.raw)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "lock.front_door") {
		t.Fatalf("the user was asked %q; want one question naming lock.front_door", asked)
	}
	if raw, _ := e.ha.GetConfigItem(t.Context(), "automation", "door_1"); strings.Contains(string(raw), "lock.unlock") {
		t.Fatalf("declined, yet the unlocking version is back: %s", raw)
	}
}

func TestConfigHistoryRefusesBadArguments(t *testing.T) {
	e := admStart(t, admOpts{})
	for _, tt := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"unknown action", map[string]any{"action": "purge"}, "invalid_argument", "action"},
		{"item without kind", map[string]any{"action": "get", "item": "porch_1"}, "invalid_argument", "kind:id"},
		{"unknown kind", map[string]any{"action": "get", "item": "widget:1"}, "invalid_argument", "kinds:"},
		{"restore without version", map[string]any{"action": "restore", "item": "automation:1"}, "invalid_argument", "version"},
		{"no such version", map[string]any{"action": "get", "item": "automation:none", "version": 4}, "not_found", "no version 4"},
	} {
		t.Run(tt.name, func(t *testing.T) { e.fails(t, "ha_config_history", tt.args, tt.code, tt.want) })
	}
}

// Scripts and scenes changed through their tools come back through the history too.
func TestConfigHistoryRestoresScriptsAndScenes(t *testing.T) {
	e := admStart(t, admOpts{})
	for _, tt := range []struct {
		tool, idArg, item string
		v1, v2            map[string]any
		want              string
	}{
		{"ha_manage_scripts", "script_id", "script:evening_walk",
			map[string]any{"alias": "Evening walk", "sequence": []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.garden_path"}}}},
			map[string]any{"alias": "Evening walk v2", "sequence": []any{map[string]any{"action": "light.turn_off", "target": map[string]any{"entity_id": "light.garden_path"}}}},
			"Evening walk\""},
		{"ha_manage_scenes", "scene_id", "scene:reading",
			map[string]any{"name": "Reading", "entities": map[string]any{"light.living_room_lamp": "on"}},
			map[string]any{"name": "Reading v2", "entities": map[string]any{"light.living_room_lamp": "off"}},
			"\"on\""},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			id := strings.SplitN(tt.item, ":", 2)[1]
			e.ok(t, tt.tool, map[string]any{"action": "create", tt.idArg: id, "config": tt.v1})
			up := e.ok(t, tt.tool, map[string]any{"action": "update", tt.idArg: id, "config": tt.v2, "confirm": true})
			e.ok(t, "ha_config_history", map[string]any{"action": "restore", "item": tt.item, "version": up["version"], "confirm": true})
			got := e.ok(t, tt.tool, map[string]any{"action": "get", tt.idArg: id})
			if !strings.Contains(admJSON(got), tt.want) {
				t.Fatalf("after restoring version %v: %v", up["version"], got)
			}
		})
	}
}

// A helper an assistant changed comes back with its settings.
func TestConfigHistoryRestoresHelpers(t *testing.T) {
	e := admStart(t, admOpts{})
	made := e.ok(t, "ha_manage_helpers", map[string]any{"action": "create", "domain": "input_number", "config": map[string]any{"name": "Bath target", "min": 30, "max": 45, "step": 0.5}})
	id, _ := made["helper"].(map[string]any)["entity_id"].(string)
	if id == "" {
		t.Fatalf("create: %v", made)
	}
	up := e.ok(t, "ha_manage_helpers", map[string]any{"action": "update", "helper_id": id, "config": map[string]any{"max": 60}, "confirm": true})
	e.ok(t, "ha_config_history", map[string]any{"action": "restore", "item": "helper:" + id, "version": up["version"], "confirm": true})
	list := e.ok(t, "ha_manage_helpers", map[string]any{"action": "list", "search": "Bath target"})
	if got := admJSON(list); !strings.Contains(got, `"max":45`) {
		t.Fatalf("after restoring version %v: %s", up["version"], got)
	}
	d := e.ok(t, "ha_manage_helpers", map[string]any{"action": "delete", "helper_id": id, "confirm": true})
	e.ok(t, "ha_config_history", map[string]any{"action": "restore", "item": "helper:" + id, "version": d["version"], "confirm": true})
	if got := admJSON(e.ok(t, "ha_manage_helpers", map[string]any{"action": "list", "search": "Bath target"})); !strings.Contains(got, id) {
		t.Fatalf("a deleted helper is not back: %s", got)
	}
}
