package hatools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/privileged"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// ha_manage_scripts edits scripts.yaml through Home Assistant's config editor API
// (/api/config/script/config/<object id>), the way the UI's script editor does.

type manageScriptsArgs struct {
	Action   string `json:"action" validate:"required,oneof=list get create update delete"`
	ScriptID string `json:"script_id,omitempty" jsonschema:"object or entity id"`
	editorConfigArgs
	Merge  bool   `json:"merge,omitempty" jsonschema:"only the keys given; null removes"`
	Search string `json:"search,omitempty"`
	toolkit.Page
}

// editorConfigArgs is a script or scene as the model gives it: an object, or YAML text copied from
// scripts.yaml / scenes.yaml or written by hand.
type editorConfigArgs struct {
	Config map[string]any `json:"config,omitempty"`
	YAML   string         `json:"yaml,omitempty" jsonschema:"instead of config"`
}

// editorItem is one script or scene in a list.
type editorItem struct {
	EntityID      string `json:"entity_id"`
	ID            string `json:"id,omitempty"`
	Alias         string `json:"alias"`
	State         string `json:"state"`
	LastTriggered string `json:"last_triggered,omitempty"`
	// Editable: stored in scripts.yaml / scenes.yaml, so the editor API (this tool) can change it.
	Editable bool `json:"editable"`
}

// editorResult is every action's answer: a page for list, one item otherwise.
type editorResult struct {
	*toolkit.List[editorItem]
	ID       string          `json:"id,omitempty"`
	EntityID string          `json:"entity_id,omitempty"`
	Alias    string          `json:"alias,omitempty"`
	Config   json.RawMessage `json:"config,omitempty"`
	Created  bool            `json:"created,omitempty"`
	Deleted  bool            `json:"deleted,omitempty"`
	// Version is the ha_config_history version that holds what this change replaced.
	Version int    `json:"version,omitempty"`
	Note    string `json:"note,omitempty"`
}

const scriptExample = `{"action": "create", "config": {"alias": "Porch on", "sequence": [{"action": "light.turn_on", "target": {"entity_id": "light.porch"}}]}}`

// scriptTools is ha_manage_scripts.
func scriptTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{manageScripts(d)} }

func manageScripts(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageScriptsArgs, editorResult]{
		Name: "ha_manage_scripts", Toolset: SetAutomations, Title: "Manage scripts", Conditional: scriptGrant,
		Confirm: scriptConfirm(d),
		Description: "Scripts in scripts.yaml: list (paged), get, create (alias, sequence…; id from alias unless script_id), " +
			"update (all, or merge=true), delete. One that can unlock, disarm, open a garage or restart (also via what it runs) " +
			"is confirmed by the user; update needs confirm, delete the user. Run: ha_call_service script.<id>. Returns version for ha_config_history.",
		Destructive: true,
		Summary:     func(a manageScriptsArgs) string { return a.Action + " " + a.ScriptID },
		Handler: func(ctx context.Context, c *toolkit.Call, a manageScriptsArgs) (editorResult, error) {
			switch a.Action {
			case "list":
				return listScripts(ctx, d.HA, a)
			case "get":
				return getScript(ctx, d.HA, a.ScriptID)
			case "create":
				return createScript(ctx, d, c, a)
			case "update":
				return updateScript(ctx, d, c, a)
			}
			return deleteScript(ctx, d, c, a.ScriptID)
		},
	})
}

// scriptGrant: a script calling a privileged service would run it later without the grant.
var scriptGrant = &toolkit.Condition[manageScriptsArgs]{
	Category: toolkit.Command, When: "action create or update whose sequence calls a service of the ha_call_service list (or a templated service name)",
	Applies: func(a manageScriptsArgs) bool {
		if a.Action != "create" && a.Action != "update" {
			return false
		}
		cfg, _, err := a.editorConfigArgs.parse("sequence")
		return err == nil && len(privileged.InConfig(cfg)) > 0
	},
}

// scriptConfirm: a script runs its sequence whenever anyone starts it, so writing one that does
// something sensitive is confirmed like doing it (design.md §5b rule 2).
func scriptConfirm(d Deps) *toolkit.Confirm[manageScriptsArgs] {
	return &toolkit.Confirm[manageScriptsArgs]{
		When: "action delete (`delete`); update always (`change`); create and update when the sequence can unlock, disarm, open a garage door or restart, " +
			"directly or through the scripts, scenes and automations it runs or starts (with merge, the stored sequence counts too)",
		Check: func(ctx context.Context, c *toolkit.Call, a manageScriptsArgs) (toolkit.Ask, error) {
			switch a.Action {
			case "delete":
				return plain(sensitive.Delete, "Delete the script "+a.ScriptID+"?"), nil
			case "create", "update":
			default:
				return toolkit.Ask{}, nil
			}
			w := newWalk(d)
			cfg, yamlKey, err := a.editorConfigArgs.parse("sequence")
			if err != nil {
				return toolkit.Ask{}, nil // the handler refuses it with the parse error
			}
			if a.Action == "create" {
				normaliseScript(cfg)
				w.config(ctx, cfg)
				if err := w.writable("config"); err != nil {
					return toolkit.Ask{}, err
				}
				key, _ := newScriptKey(a.ScriptID, yamlKey, cfg)
				return w.ask("Create the script " + key)
			}
			if a.Merge {
				cfg = w.mergedItem(ctx, homeassistant.KindScript, scriptKeyOf(a.ScriptID), a.ScriptID, cfg)
			}
			normaliseScript(cfg)
			w.config(ctx, cfg)
			if err := w.writable("config"); err != nil {
				return toolkit.Ask{}, err
			}
			return w.ask("Overwrite the script "+a.ScriptID, sensitive.Change)
		},
	}
}

// mergedItem is what a merge update writes: the stored item with patch applied. When the stored one
// cannot be read, what it does counts as unknown (the handler fails on it anyway).
func (w *walk) mergedItem(ctx context.Context, kind homeassistant.ConfigKind, key, ref string, patch map[string]any) map[string]any {
	stored, err := w.item(ctx, kind, key)
	if outOfReach(err) {
		w.fail = err
		return patch
	}
	m, ok := stored.(map[string]any)
	if err != nil || !ok {
		w.hits = append(w.hits, sensitive.Unknown("keep the stored parts of "+ref+", which hamcp cannot read")...)
		return patch
	}
	return patchConfig(m, patch)
}

func listScripts(ctx context.Context, ha *homeassistant.Client, a manageScriptsArgs) (editorResult, error) {
	all, err := liveStates(ctx, ha)
	if err != nil {
		return editorResult{}, haError(err, false, "")
	}
	var items []editorItem
	for _, s := range all {
		if s.Domain() != "script" {
			continue
		}
		it := editorItem{EntityID: s.EntityID, ID: strings.TrimPrefix(s.EntityID, "script."), Alias: s.FriendlyName(), State: s.State,
			LastTriggered: rfc3339UTC(stringOf(s.Attributes["last_triggered"]))}
		items = append(items, it)
	}
	page := pageOfItems(items, a.Search, a.Page)
	// A script's key is its entity's unique id: the user may have renamed the entity.
	ids := make([]string, len(page.Items))
	for i, it := range page.Items {
		ids[i] = it.EntityID
	}
	if entries, err := ha.EntityEntries(ctx, ids); err == nil {
		for i := range page.Items {
			if e, ok := entries[page.Items[i].EntityID]; ok && e.Platform == "script" && e.UniqueID != "" {
				page.Items[i].ID = e.UniqueID
			}
		}
	}
	// Only scripts.yaml is reachable through the editor API; scripts in configuration.yaml or a
	// package answer 404 there. One read per script on the page tells them apart.
	if err := markInEditor(ctx, ha, homeassistant.KindScript, page.Items); err != nil {
		return editorResult{}, haError(err, false, "")
	}
	return editorResult{List: &page}, nil
}

// pageOfItems keeps the items whose alias, entity id or id contain search, sorted by entity id.
func pageOfItems(items []editorItem, search string, p toolkit.Page) toolkit.List[editorItem] {
	search = strings.ToLower(strings.TrimSpace(search))
	if search != "" {
		items = slices.DeleteFunc(items, func(it editorItem) bool {
			return !strings.Contains(strings.ToLower(it.Alias+" "+it.EntityID+" "+it.ID), search)
		})
	}
	slices.SortFunc(items, func(x, y editorItem) int { return strings.Compare(x.EntityID, y.EntityID) })
	return toolkit.Paginate(items, p)
}

// markInEditor asks the editor API for each item, a few at a time.
func markInEditor(ctx context.Context, ha *homeassistant.Client, kind homeassistant.ConfigKind, items []editorItem) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		slots = make(chan struct{}, 8)
	)
	for i := range items {
		if items[i].ID == "" || !editorKeyValid(kind, items[i].ID) {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func(it *editorItem) {
			defer func() { <-slots; wg.Done() }()
			_, err := ha.GetConfigItem(ctx, kind, it.ID)
			it.Editable = err == nil
			if err != nil && !isNotFound(err) {
				mu.Lock()
				first = cmp.Or(first, err)
				mu.Unlock()
			}
		}(&items[i])
	}
	wg.Wait()
	return first
}

// editorKeyValid reports whether key can be one segment of the editor API's path for kind.
func editorKeyValid(kind homeassistant.ConfigKind, key string) bool {
	if kind == homeassistant.KindScript {
		return isScriptKey(key)
	}
	return checkAutomationID("scene_id", key) == nil
}

func rfc3339UTC(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC().Format(time.RFC3339)
	}
	return s
}

func getScript(ctx context.Context, ha *homeassistant.Client, ref string) (editorResult, error) {
	key, entityID, err := resolveScript(ctx, ha, ref)
	if err != nil {
		return editorResult{}, err
	}
	raw, err := editorStored(ctx, ha, homeassistant.KindScript, key, entityID)
	if err != nil {
		return editorResult{}, err
	}
	return editorResult{ID: key, EntityID: entityID, Alias: aliasOf(raw), Config: raw}, nil
}

func createScript(ctx context.Context, d Deps, c *toolkit.Call, a manageScriptsArgs) (editorResult, error) {
	cfg, yamlKey, err := a.editorConfigArgs.parse("sequence")
	if err != nil {
		return editorResult{}, err
	}
	normaliseScript(cfg)
	if err := requireConfigKeys(cfg, "sequence"); err != nil {
		return editorResult{}, err
	}
	key, err := newScriptKey(a.ScriptID, yamlKey, cfg)
	if err != nil {
		return editorResult{}, err
	}
	if _, err := d.HA.GetConfigItem(ctx, homeassistant.KindScript, key); err == nil {
		return editorResult{}, toolkit.InvalidArg("script_id", "script "+key+" already exists; pick another script_id or use action update", `{"script_id": "`+key+`_2"}`)
	} else if !isNotFound(err) {
		return editorResult{}, haError(err, false, "")
	}
	// A script of the same key outside scripts.yaml would be a duplicate Home Assistant skips.
	if all, err := liveStates(ctx, d.HA); err == nil && slices.ContainsFunc(all, func(s homeassistant.State) bool { return s.EntityID == "script."+key }) {
		return editorResult{}, toolkit.InvalidArg("script_id", "script."+key+" already exists (defined outside scripts.yaml); pick another script_id", `{"script_id": "`+key+`_2"}`)
	}
	alias := stringOf(cfg["alias"])
	k, err := d.keep(ctx, c, KindScript, key, cmp.Or(alias, key), confighistory.Created, nil)
	if err != nil {
		return editorResult{}, err
	}
	if err := editorSave(ctx, d.HA, homeassistant.KindScript, key, cfg); err != nil {
		k.undo(ctx)
		return editorResult{}, err
	}
	out := editorResult{ID: key, Alias: alias, Created: true, Version: k.version(),
		EntityID: waitConfigEntity(ctx, d.HA, func(s homeassistant.State) bool { return s.EntityID == "script."+key })}
	if out.EntityID == "" {
		out.Note = "saved; Home Assistant has not shown its entity yet"
	}
	return out, nil
}

func updateScript(ctx context.Context, d Deps, c *toolkit.Call, a manageScriptsArgs) (editorResult, error) {
	cfg, _, err := a.editorConfigArgs.parse("sequence")
	if err != nil {
		return editorResult{}, err
	}
	key, entityID, err := resolveScript(ctx, d.HA, a.ScriptID)
	if err != nil {
		return editorResult{}, err
	}
	stored, err := editorStored(ctx, d.HA, homeassistant.KindScript, key, entityID)
	if err != nil {
		return editorResult{}, err
	}
	if a.Merge {
		if cfg, err = mergeStored(stored, cfg); err != nil {
			return editorResult{}, err
		}
	}
	normaliseScript(cfg)
	if err := requireConfigKeys(cfg, "sequence"); err != nil {
		return editorResult{}, err
	}
	alias := stringOf(cfg["alias"])
	k, err := d.keep(ctx, c, KindScript, key, cmp.Or(alias, key), confighistory.Updated, stored)
	if err != nil {
		return editorResult{}, err
	}
	if err := editorSave(ctx, d.HA, homeassistant.KindScript, key, cfg); err != nil {
		k.undo(ctx)
		return editorResult{}, err
	}
	if entityID == "" {
		entityID = waitConfigEntity(ctx, d.HA, func(s homeassistant.State) bool { return s.EntityID == "script."+key })
	}
	return editorResult{ID: key, EntityID: entityID, Alias: alias, Version: k.version()}, nil
}

func deleteScript(ctx context.Context, d Deps, c *toolkit.Call, ref string) (editorResult, error) {
	key, entityID, err := resolveScript(ctx, d.HA, ref)
	if err != nil {
		return editorResult{}, err
	}
	stored, err := editorStored(ctx, d.HA, homeassistant.KindScript, key, entityID)
	if err != nil {
		return editorResult{}, err
	}
	k, err := d.keep(ctx, c, KindScript, key, cmp.Or(aliasOf(stored), key), confighistory.Deleted, stored)
	if err != nil {
		return editorResult{}, err
	}
	if err := editorDelete(ctx, d.HA, homeassistant.KindScript, key); err != nil {
		k.undo(ctx)
		return editorResult{}, err
	}
	return editorResult{ID: key, EntityID: entityID, Deleted: true, Version: k.version()}, nil
}

// scriptVersions is how ha_config_history reads, checks and restores a script.
func scriptVersions() versionKind {
	return editorVersions(KindScript, homeassistant.KindScript, func(ctx context.Context, w *walk, id string, cfg any) {
		w.config(ctx, cfg)
	})
}

// editorVersions is the versionKind of an item of the config editor API.
func editorVersions(kind string, ck homeassistant.ConfigKind, check func(ctx context.Context, w *walk, id string, cfg any)) versionKind {
	return versionKind{
		kind: kind,
		read: func(ctx context.Context, d Deps, id string) (json.RawMessage, string, error) {
			raw, err := d.HA.GetConfigItem(ctx, ck, id)
			if isNotFound(err) {
				return nil, "", nil
			}
			if err != nil {
				return nil, "", err
			}
			return raw, cmp.Or(aliasOf(raw), id), nil
		},
		check: func(ctx context.Context, d Deps, w *walk, id string, cfg json.RawMessage) {
			var v any
			if cfg == nil || json.Unmarshal(cfg, &v) != nil || v == nil {
				return // a delete: ha_config_history asks for it itself
			}
			check(ctx, w, id, v)
		},
		write: func(ctx context.Context, d Deps, id string, cfg json.RawMessage) error {
			if cfg == nil || string(cfg) == "null" {
				var te *toolkit.Error
				if err := editorDelete(ctx, d.HA, ck, id); err != nil && !(errors.As(err, &te) && te.Code == "not_found") {
					return err
				}
				return nil
			}
			return editorSave(ctx, d.HA, ck, id, cfg)
		},
	}
}

// resolveScript accepts a script's object id or entity id and returns both (entityID "" when Home
// Assistant shows no such entity).
func resolveScript(ctx context.Context, ha *homeassistant.Client, ref string) (key, entityID string, err error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", "", toolkit.InvalidArg("script_id", "is required for this action", `{"script_id": "good_night"}`)
	}
	key = scriptKeyOf(ref)
	if strings.HasPrefix(ref, "script.") {
		entityID = ref
		if entries, err := ha.EntityEntries(ctx, []string{ref}); err == nil {
			if e, ok := entries[ref]; ok && e.Platform == "script" && e.UniqueID != "" {
				key = e.UniqueID
			}
		}
	}
	if !isScriptKey(key) {
		return "", "", toolkit.InvalidArg("script_id", "must be a script's object id (lower-case letters, digits, _) or its entity id", `{"script_id": "good_night"}`)
	}
	if entityID == "" {
		if all, err := liveStates(ctx, ha); err == nil && slices.ContainsFunc(all, func(s homeassistant.State) bool { return s.EntityID == "script."+key }) {
			entityID = "script." + key
		}
	}
	return key, entityID, nil
}

// scriptKeyOf is the object id a script reference names, before the registry says otherwise.
func scriptKeyOf(ref string) string { return strings.TrimPrefix(strings.TrimSpace(ref), "script.") }

// isScriptKey is Home Assistant's cv.slug: what haSlugify leaves unchanged.
func isScriptKey(key string) bool { return key != "" && len(key) <= 255 && haSlugify(key) == key }

// newScriptKey is the object id of a new script: given, from the YAML's key, or from its alias.
func newScriptKey(given, yamlKey string, cfg map[string]any) (string, error) {
	key := cmp.Or(scriptKeyOf(given), yamlKey)
	if key == "" {
		key = haSlugify(stringOf(cfg["alias"]))
		if key == "" {
			return "", toolkit.InvalidArg("script_id", "is needed: the config has no alias to make one from", `{"script_id": "good_night"}`)
		}
	}
	if !isScriptKey(key) {
		return "", toolkit.InvalidArg("script_id", key+" is not an object id (lower-case letters, digits, single _)", `{"script_id": "`+cmp.Or(haSlugify(key), "good_night")+`"}`)
	}
	return key, nil
}

// normaliseScript puts a sequence given as one action into the list Home Assistant makes of it.
func normaliseScript(cfg map[string]any) {
	if m, ok := cfg["sequence"].(map[string]any); ok {
		cfg["sequence"] = []any{m}
	}
}

// haSlugify is Home Assistant's slugify (util/__init__.py) for the ids it derives from names: lower
// case, Latin accents folded, runs of anything else one underscore, none at either end. Home
// Assistant names an empty result "unknown"; callers that need an id decide what to do instead.
func haSlugify(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(s) {
		fold, ok := latinFolds[r]
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			fold = string(r)
		case !ok:
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('_')
		}
		sep = false
		b.WriteString(fold)
	}
	return b.String()
}

var latinFolds = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'æ': "ae", 'ç': "c", 'è': "e", 'é': "e", 'ê': "e", 'ë': "e",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ñ': "n", 'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'œ': "oe",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ý': "y", 'ÿ': "y", 'ß': "ss",
}

// The config editor API, shared by scripts and scenes.

// parse returns the config given as an object or YAML, and the key a one-entry scripts.yaml
// mapping named ("" otherwise). body is the key the item itself must have ("sequence", "entities"):
// a YAML mapping without it whose only value has it is an item under its key.
func (a editorConfigArgs) parse(body string) (map[string]any, string, error) {
	switch {
	case a.Config != nil && a.YAML != "":
		return nil, "", toolkit.InvalidArg("config", "give either config or yaml, not both", "")
	case a.Config != nil:
		return maps.Clone(a.Config), "", nil
	case strings.TrimSpace(a.YAML) == "":
		return nil, "", toolkit.InvalidArg("config", "is required for this action (or yaml)", scriptOrScene(body))
	}
	cfg, key, err := parseItemYAML(a.YAML, body)
	if err != nil {
		return nil, "", toolkit.InvalidArg("yaml", err.Error(), "")
	}
	return cfg, key, nil
}

func scriptOrScene(body string) string {
	if body == "entities" {
		return sceneExample
	}
	return scriptExample
}

// parseItemYAML reads one item: a mapping, a one-item list (scenes.yaml), or a one-entry mapping
// of key to item (scripts.yaml).
func parseItemYAML(text, body string) (map[string]any, string, error) {
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return nil, "", fmt.Errorf("is not valid YAML: %v", err)
	}
	if list, ok := v.([]any); ok {
		if len(list) != 1 {
			return nil, "", fmt.Errorf("holds %d items; give one", len(list))
		}
		v = list[0]
	}
	m, ok := jsonReady(v, 0).(map[string]any)
	if !ok {
		return nil, "", errors.New("must be a mapping (" + body + " and the rest)")
	}
	if _, has := m[body]; !has && len(m) == 1 {
		for k, inner := range m {
			if im, ok := inner.(map[string]any); ok {
				if _, has := im[body]; has {
					return im, k, nil
				}
			}
		}
	}
	return m, "", nil
}

func requireConfigKeys(cfg map[string]any, keys ...string) error {
	for _, k := range keys {
		if cfg[k] == nil {
			return toolkit.InvalidArg("config."+k, "is required", "")
		}
	}
	return nil
}

// editorStored reads an item through the editor API. A 404 for an entity Home Assistant shows means
// it is defined outside the editor's file.
func editorStored(ctx context.Context, ha *homeassistant.Client, kind homeassistant.ConfigKind, key, entityID string) (json.RawMessage, error) {
	raw, err := ha.GetConfigItem(ctx, kind, key)
	switch {
	case err == nil:
		return raw, nil
	case isNotFound(err) && entityID != "":
		return nil, notInEditor(kind, entityID)
	case isNotFound(err):
		return nil, toolkit.NotFound("no "+string(kind)+" "+key+" in "+string(kind)+"s.yaml", "action list shows the ids")
	}
	return nil, haError(err, false, "")
}

func notInEditor(kind homeassistant.ConfigKind, entityID string) error {
	return &toolkit.Error{Code: "not_editable", Field: string(kind) + "_id",
		Message: entityID + " is not in " + string(kind) + "s.yaml (it is defined in configuration.yaml or a package), so Home Assistant's editor API cannot read or change it",
		Hint:    "read and edit its YAML with ha_read_config / ha_write_config"}
}

// mergeStored applies patch to the stored item.
func mergeStored(stored json.RawMessage, patch map[string]any) (map[string]any, error) {
	var current map[string]any
	if err := json.Unmarshal(stored, &current); err != nil || current == nil {
		return nil, toolkit.Backend("Home Assistant", fmt.Errorf("the stored item is not an object"), false, "")
	}
	return patchConfig(current, patch), nil
}

// patchConfig sets the patch's keys on a copy of base; a null value removes a key.
func patchConfig(base, patch map[string]any) map[string]any {
	out := maps.Clone(base)
	for k, v := range patch {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// editorSave writes an item; Home Assistant validates it and reloads the domain.
func editorSave(ctx context.Context, ha *homeassistant.Client, kind homeassistant.ConfigKind, key string, item any) error {
	err := ha.SaveConfigItem(ctx, kind, key, item)
	var api *homeassistant.APIError
	if errors.As(err, &api) && api.Status == 400 {
		return toolkit.InvalidArg("config", "Home Assistant rejected it: "+api.Message+"; nothing was saved", "")
	}
	if err != nil {
		return haError(err, false, "")
	}
	return nil
}

func editorDelete(ctx context.Context, ha *homeassistant.Client, kind homeassistant.ConfigKind, key string) error {
	err := ha.DeleteConfigItem(ctx, kind, key)
	var api *homeassistant.APIError
	if errors.As(err, &api) && api.Status == 400 && strings.Contains(api.Message, "not found") {
		return toolkit.NotFound("no "+string(kind)+" "+key+" in "+string(kind)+"s.yaml", "action list shows the ids")
	}
	if err != nil {
		return haError(err, false, "")
	}
	return nil
}

// waitConfigEntity waits briefly for Home Assistant to reload and show the item's entity ("" if it
// has not appeared).
func waitConfigEntity(ctx context.Context, ha *homeassistant.Client, match func(homeassistant.State) bool) string {
	deadline := time.Now().Add(3 * time.Second)
	for {
		if all, err := liveStates(ctx, ha); err == nil {
			for _, s := range all {
				if match(s) {
					return s.EntityID
				}
			}
		}
		if time.Now().After(deadline) {
			return ""
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(50 * time.Millisecond):
		}
	}
}
