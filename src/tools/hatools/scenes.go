package hatools

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// ha_manage_scenes edits scenes.yaml through Home Assistant's config editor API
// (/api/config/scene/config/<id>), the way the UI's scene editor does.

type manageScenesArgs struct {
	Action  string `json:"action" validate:"required,oneof=list get create update delete"`
	SceneID string `json:"scene_id,omitempty" jsonschema:"id or entity id"`
	editorConfigArgs
	Merge  bool   `json:"merge,omitempty" jsonschema:"only the keys given; null removes"`
	Search string `json:"search,omitempty"`
	toolkit.Page
}

const sceneExample = `{"action": "create", "config": {"name": "Reading", "entities": {"light.desk": {"state": "on", "brightness": 200}, "light.ceiling": "off"}}}`

// sceneTools is ha_manage_scenes.
func sceneTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{manageScenes(d)} }

func manageScenes(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageScenesArgs, editorResult]{
		Name: "ha_manage_scenes", Toolset: SetAutomations, Title: "Manage scenes",
		Confirm: sceneConfirm(d),
		Description: "Scenes in scenes.yaml: list (paged), get, create (name, entities: entity id → state or {state, attributes…}; " +
			"id from name unless scene_id), update (all, or merge=true), delete. One that unlocks, disarms or opens a garage " +
			"is confirmed by the user; update needs confirm, delete the user. Activate: ha_call_service scene.turn_on. Returns version for ha_config_history.",
		Destructive: true,
		Summary:     func(a manageScenesArgs) string { return a.Action + " " + a.SceneID },
		Handler: func(ctx context.Context, c *toolkit.Call, a manageScenesArgs) (editorResult, error) {
			switch a.Action {
			case "list":
				return listScenes(ctx, d.HA, a)
			case "get":
				return getScene(ctx, d.HA, a.SceneID)
			case "create":
				return createScene(ctx, d, c, a)
			case "update":
				return updateScene(ctx, d, c, a)
			}
			return deleteScene(ctx, d, c, a.SceneID)
		},
	})
}

// sceneConfirm: anyone can activate a scene later (an automation, a dashboard button, the model),
// so what it sets counts when it is written (design.md §5b rule 2).
func sceneConfirm(d Deps) *toolkit.Confirm[manageScenesArgs] {
	return &toolkit.Confirm[manageScenesArgs]{
		When: "action delete (`delete`); update always (`change`); create and update when the scene sets a lock, alarm panel or garage door " +
			"to anything but secured, or starts an automation of yours that does (with merge, the stored entities count too)",
		Check: func(ctx context.Context, c *toolkit.Call, a manageScenesArgs) (toolkit.Ask, error) {
			switch a.Action {
			case "delete":
				return plain(sensitive.Delete, "Delete the scene "+a.SceneID+"?"), nil
			case "create", "update":
			default:
				return toolkit.Ask{}, nil
			}
			cfg, _, err := a.editorConfigArgs.parse("entities")
			if err != nil {
				return toolkit.Ask{}, nil // the handler refuses it with the parse error
			}
			w := newWalk(d)
			if a.Action == "update" && a.Merge {
				if id, _, err := resolveScene(ctx, d.HA, a.SceneID); err == nil {
					cfg = w.mergedItem(ctx, homeassistant.KindScene, id, a.SceneID, cfg)
				} else {
					w.hits = append(w.hits, sensitive.Unknown("keep the stored entities of "+a.SceneID+", which hamcp cannot read")...)
				}
			}
			normaliseScene(cfg)
			w.sceneConfig(ctx, cfg)
			if a.Action == "create" {
				return w.ask("Create the scene " + cmp.Or(stringOf(cfg["name"]), a.SceneID))
			}
			return w.ask("Overwrite the scene "+a.SceneID, sensitive.Change)
		},
	}
}

// sceneConfig counts what activating a scene config does: the states it sets, and the user's
// automations those changes start.
func (w *walk) sceneConfig(ctx context.Context, cfg map[string]any) {
	name := "the scene " + stringOf(cfg["name"])
	w.sceneEntities(ctx, name, cfg["entities"])
	ents, _ := cfg["entities"].(map[string]any)
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range ents {
			if !yield(strings.ToLower(id)) {
				return
			}
		}
	})
	if len(ids) > 0 {
		w.follow(ctx, name, "scene", "turn_on", sensitive.Target{EntityIDs: ids})
	}
}

func listScenes(ctx context.Context, ha *homeassistant.Client, a manageScenesArgs) (editorResult, error) {
	all, err := liveStates(ctx, ha)
	if err != nil {
		return editorResult{}, haError(err, false, "")
	}
	var items []editorItem
	for _, s := range all {
		if s.Domain() != "scene" {
			continue
		}
		id := stringOf(s.Attributes["id"])
		// A scene without an id (made by scene.create, or in YAML without one) has no editor entry.
		items = append(items, editorItem{EntityID: s.EntityID, ID: id, Alias: s.FriendlyName(), State: rfc3339UTC(s.State), Editable: id != ""})
	}
	page := pageOfItems(items, a.Search, a.Page)
	return editorResult{List: &page}, nil
}

func getScene(ctx context.Context, ha *homeassistant.Client, ref string) (editorResult, error) {
	id, entityID, err := resolveScene(ctx, ha, ref)
	if err != nil {
		return editorResult{}, err
	}
	raw, err := editorStored(ctx, ha, homeassistant.KindScene, id, entityID)
	if err != nil {
		return editorResult{}, err
	}
	return editorResult{ID: id, EntityID: entityID, Alias: aliasOf(raw), Config: raw}, nil
}

func createScene(ctx context.Context, d Deps, c *toolkit.Call, a manageScenesArgs) (editorResult, error) {
	cfg, _, err := a.editorConfigArgs.parse("entities")
	if err != nil {
		return editorResult{}, err
	}
	normaliseScene(cfg)
	if err := requireConfigKeys(cfg, "name", "entities"); err != nil {
		return editorResult{}, err
	}
	id := cmp.Or(strings.TrimSpace(a.SceneID), idString(cfg["id"]), haSlugify(stringOf(cfg["name"])))
	if strings.HasPrefix(id, "scene.") {
		return editorResult{}, toolkit.InvalidArg("scene_id", "create takes the new scene's id, not an entity id (the entity id comes from the name)", `{"scene_id": "reading"}`)
	}
	if id == "" {
		return editorResult{}, toolkit.InvalidArg("scene_id", "is needed: the name has no letters a-z to make an id from", `{"scene_id": "reading"}`)
	}
	if err := checkAutomationID("scene_id", id); err != nil {
		return editorResult{}, err
	}
	delete(cfg, "id") // Home Assistant stores the key as the id
	if _, err := d.HA.GetConfigItem(ctx, homeassistant.KindScene, id); err == nil {
		return editorResult{}, toolkit.InvalidArg("scene_id", "scene "+id+" already exists; pick another scene_id or use action update", `{"scene_id": "`+id+`_2"}`)
	} else if !isNotFound(err) {
		return editorResult{}, haError(err, false, "")
	}
	name := stringOf(cfg["name"])
	k, err := d.keep(ctx, c, KindScene, id, cmp.Or(name, id), confighistory.Created, nil)
	if err != nil {
		return editorResult{}, err
	}
	if err := editorSave(ctx, d.HA, homeassistant.KindScene, id, cfg); err != nil {
		k.undo(ctx)
		return editorResult{}, err
	}
	out := editorResult{ID: id, Alias: name, Created: true, Version: k.version(), EntityID: waitConfigEntity(ctx, d.HA, sceneWithID(id))}
	if out.EntityID == "" {
		out.Note = "saved; Home Assistant has not shown its entity yet"
	}
	return out, nil
}

func updateScene(ctx context.Context, d Deps, c *toolkit.Call, a manageScenesArgs) (editorResult, error) {
	cfg, _, err := a.editorConfigArgs.parse("entities")
	if err != nil {
		return editorResult{}, err
	}
	id, entityID, err := resolveScene(ctx, d.HA, a.SceneID)
	if err != nil {
		return editorResult{}, err
	}
	stored, err := editorStored(ctx, d.HA, homeassistant.KindScene, id, entityID)
	if err != nil {
		return editorResult{}, err
	}
	if a.Merge {
		if cfg, err = mergeStored(stored, cfg); err != nil {
			return editorResult{}, err
		}
	}
	normaliseScene(cfg)
	delete(cfg, "id")
	if err := requireConfigKeys(cfg, "name", "entities"); err != nil {
		return editorResult{}, err
	}
	name := stringOf(cfg["name"])
	k, err := d.keep(ctx, c, KindScene, id, cmp.Or(name, id), confighistory.Updated, stored)
	if err != nil {
		return editorResult{}, err
	}
	if err := editorSave(ctx, d.HA, homeassistant.KindScene, id, cfg); err != nil {
		k.undo(ctx)
		return editorResult{}, err
	}
	if entityID == "" {
		entityID = waitConfigEntity(ctx, d.HA, sceneWithID(id))
	}
	return editorResult{ID: id, EntityID: entityID, Alias: name, Version: k.version()}, nil
}

func deleteScene(ctx context.Context, d Deps, c *toolkit.Call, ref string) (editorResult, error) {
	id, entityID, err := resolveScene(ctx, d.HA, ref)
	if err != nil {
		return editorResult{}, err
	}
	stored, err := editorStored(ctx, d.HA, homeassistant.KindScene, id, entityID)
	if err != nil {
		return editorResult{}, err
	}
	k, err := d.keep(ctx, c, KindScene, id, cmp.Or(aliasOf(stored), id), confighistory.Deleted, stored)
	if err != nil {
		return editorResult{}, err
	}
	if err := editorDelete(ctx, d.HA, homeassistant.KindScene, id); err != nil {
		k.undo(ctx)
		return editorResult{}, err
	}
	return editorResult{ID: id, EntityID: entityID, Deleted: true, Version: k.version()}, nil
}

// sceneVersions is how ha_config_history reads, checks and restores a scene.
func sceneVersions() versionKind {
	return editorVersions(KindScene, homeassistant.KindScene, func(ctx context.Context, w *walk, id string, cfg any) {
		m, ok := cfg.(map[string]any)
		if !ok {
			w.hits = append(w.hits, sensitive.Unknown("restore the scene "+id+", whose kept config hamcp cannot read")...)
			return
		}
		w.sceneConfig(ctx, m)
	})
}

// resolveScene accepts a scene's id or entity id and returns both (entityID "" when Home Assistant
// shows no entity with that id).
func resolveScene(ctx context.Context, ha *homeassistant.Client, ref string) (id, entityID string, err error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", "", toolkit.InvalidArg("scene_id", "is required for this action", `{"scene_id": "1714000000101"}`)
	}
	if err := checkAutomationID("scene_id", ref); err != nil {
		return "", "", toolkit.InvalidArg("scene_id", "must be a scene's id (from action list) or its entity id", `{"scene_id": "1714000000101"}`)
	}
	all, err := liveStates(ctx, ha)
	if err != nil {
		return "", "", haError(err, false, "")
	}
	if strings.HasPrefix(ref, "scene.") {
		i := slices.IndexFunc(all, func(s homeassistant.State) bool { return s.EntityID == ref })
		switch {
		case i < 0:
			return "", "", toolkit.NotFound("no scene "+ref, "action list shows them")
		case stringOf(all[i].Attributes["id"]) == "":
			return "", "", &toolkit.Error{Code: "not_editable", Field: "scene_id",
				Message: ref + " has no id (made by scene.create, or in YAML without one), so Home Assistant's editor API cannot change it",
				Hint:    "a scene.create scene is gone at the next restart; for one in YAML use ha_read_config / ha_write_config"}
		}
		return stringOf(all[i].Attributes["id"]), ref, nil
	}
	if i := slices.IndexFunc(all, sceneWithID(ref)); i >= 0 {
		entityID = all[i].EntityID
	}
	return ref, entityID, nil
}

func sceneWithID(id string) func(homeassistant.State) bool {
	return func(s homeassistant.State) bool { return s.Domain() == "scene" && stringOf(s.Attributes["id"]) == id }
}

// idString is an id given as a string or a number (YAML reads 1714000000101 as a number).
func idString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	}
	return ""
}

// normaliseScene makes entities the mapping Home Assistant reads: entity ids lower case (as
// cv.entity_id makes them), a list of {entity_id, state, …} turned into the map, and true/false
// states "on"/"off" (as the scene platform converts them).
func normaliseScene(cfg map[string]any) {
	switch ents := cfg["entities"].(type) {
	case map[string]any:
		out := make(map[string]any, len(ents))
		for id, v := range ents {
			out[strings.ToLower(strings.TrimSpace(id))] = sceneStateValue(v)
		}
		cfg["entities"] = out
	case []any:
		out := make(map[string]any, len(ents))
		for _, e := range ents {
			m, ok := e.(map[string]any)
			id, _ := m["entity_id"].(string)
			if !ok || id == "" {
				return // not a form Home Assistant or hamcp reads: Home Assistant refuses it
			}
			rest := make(map[string]any, len(m))
			for k, v := range m {
				if k != "entity_id" {
					rest[k] = v
				}
			}
			var v any = rest
			if s, only := rest["state"]; only && len(rest) == 1 {
				v = s
			}
			out[strings.ToLower(strings.TrimSpace(id))] = sceneStateValue(v)
		}
		cfg["entities"] = out
	}
}

func sceneStateValue(v any) any {
	switch x := v.(type) {
	case bool:
		return sceneOnOff(x)
	case map[string]any:
		if b, ok := x["state"].(bool); ok {
			c := make(map[string]any, len(x))
			for k, e := range x {
				c[k] = e
			}
			c["state"] = sceneOnOff(b)
			return c
		}
	}
	return v
}

func sceneOnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
