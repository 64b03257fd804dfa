package hatools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/privileged"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Every configuration change an assistant makes keeps what it replaced (design: nothing it edits is
// lost). A write tool calls keep before it writes and undo when the write failed; ha_config_history
// lists the versions and restores one through the item's versionKind.

// Item kinds kept in the history, each the prefix of an item name ("script:morning").
const (
	KindAutomation = "automation"
	KindScript     = "script"
	KindScene      = "scene"
	KindDashboard  = "dashboard" // id: the url_path, "lovelace" for the default dashboard
	KindHelper     = "helper"    // id: the helper's entity id, e.g. input_boolean.guest_mode
	KindArea       = "area"
	KindFloor      = "floor"
	KindZone       = "zone"
	KindLabel      = "label"
	KindCategory   = "category" // id: scope/category_id
	KindEntity     = "entity"   // id: the entity id; the config is its registry settings
	KindDevice     = "device"
	KindFile       = "file" // id: the path as the model gave it, e.g. /config/scripts.yaml
)

// kept is a version keep recorded, and how to take it back.
type kept struct {
	d Deps
	v confighistory.Version
}

// keep records before a change what item kind:id was (before: any JSON value, or nil/json null when
// the item does not exist yet). A failure stops the change: an edit hamcp cannot undo is not made.
// Call undo when the change then failed, so the history holds only what happened.
func (d Deps) keep(ctx context.Context, c *toolkit.Call, kind, id, title, change string, before any) (*kept, error) {
	if d.History == nil {
		return &kept{}, nil
	}
	var raw json.RawMessage
	switch b := before.(type) {
	case nil:
	case json.RawMessage:
		raw = b
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return nil, fmt.Errorf("keep the earlier version of %s %s: %w", kind, id, err)
		}
	}
	v := confighistory.Version{Item: confighistory.Item(kind, id), Title: title, Change: change, Config: raw}
	if c != nil {
		v.Tool, v.Client = c.Tool, c.Client
	}
	v, err := d.History.Keep(ctx, v)
	if err != nil {
		return nil, &toolkit.Error{Code: "not_kept", Message: "hamcp could not keep the earlier version of " + kind + " " + id + ", so it changed nothing: " + err.Error(),
			Hint: "check the add-on's storage (/data) and its log; nothing an assistant edits is changed without a copy", Changed: new(bool)}
	}
	if c != nil {
		// Every tool that keeps a version is undoable from the panel's Activity page, with no code of its own.
		c.Undoable(toolkit.UndoOf(UndoConfig, ConfigUndo{Item: v.Item, Version: v.N}, undoNote(v)))
	}
	return &kept{d: d, v: v}, nil
}

// UndoConfig is the type of the undo keep registers: restore a kept version (ConfigUndo).
const UndoConfig = "config"

// ConfigUndo is the reference of a UndoConfig undo: the item and the version that holds what it was
// before the change.
type ConfigUndo struct {
	Item    string `json:"item"`
	Version int    `json:"version"`
}

func undoNote(v confighistory.Version) string {
	if isNull(v.Config) {
		return "Undo deletes " + v.Item + ": it did not exist before."
	}
	if kind, id, _ := strings.Cut(v.Item, ":"); kind == KindEntity {
		var kept struct {
			EntityID string `json:"entity_id"`
		}
		if json.Unmarshal(v.Config, &kept) == nil && kept.EntityID != "" && kept.EntityID != id {
			return fmt.Sprintf("Undo renames %s back to %s and puts its settings back as they were (kept version %d).", id, kept.EntityID, v.N)
		}
	}
	return fmt.Sprintf("Undo puts %s back as it was before (kept version %d).", v.Item, v.N)
}

// undo forgets the version when the change it was kept for did not happen.
func (k *kept) undo(ctx context.Context) {
	if k == nil || k.d.History == nil || k.v.N == 0 {
		return
	}
	_ = k.d.History.Forget(context.WithoutCancel(ctx), k.v.Item, k.v.N)
}

// version is the number the change was kept under (0 when nothing is kept), for results that tell
// the model how to undo: ha_config_history restore with item and version.
func (k *kept) version() int {
	if k == nil {
		return 0
	}
	return k.v.N
}

// versionKind is how ha_config_history reads, checks and writes back one kind of item.
type versionKind struct {
	kind string
	// read returns the item's configuration now, in the form write takes; nil (and no error) when it
	// does not exist. title names it for the list.
	read func(ctx context.Context, d Deps, id string) (cfg json.RawMessage, title string, err error)
	// check adds to w what writing cfg back does (cfg nil: deleting the item, which did not exist
	// before the change being undone). Restoring behaviour is a write like any other (§5b rule 2).
	check func(ctx context.Context, d Deps, w *walk, id string, cfg json.RawMessage)
	// write puts cfg back; nil cfg deletes the item.
	write func(ctx context.Context, d Deps, id string, cfg json.RawMessage) error
	// locate, when set, is where the item that cfg was kept from is now: an entity whose entity id
	// was renamed since is found by its registry entry. read, check and write then work there while
	// the history stays under id. Without it the item is at id.
	locate func(ctx context.Context, d Deps, id string, cfg json.RawMessage) (string, error)
}

// at is where k's item id, kept as cfg, is now.
func (k versionKind) at(ctx context.Context, d Deps, id string, cfg json.RawMessage) (string, error) {
	if k.locate == nil || isNull(cfg) {
		return id, nil
	}
	return k.locate(ctx, d, id, cfg)
}

// versionKinds are the kinds ha_config_history can restore. Each tool group that keeps versions
// adds its kind here.
func versionKinds() []versionKind {
	return append([]versionKind{automationVersions(), scriptVersions(), sceneVersions(), helperVersions(), dashboardVersions(), fileVersions()}, registryVersions()...)
}

func versionTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{configHistory(d)} }

type configHistoryArgs struct {
	Action  string `json:"action" validate:"required,oneof=list get restore" example:"list"`
	Item    string `json:"item,omitempty" jsonschema:"kind:id, e.g. script:morning, dashboard:lovelace, file:/config/scripts.yaml" validate:"omitempty,max=600"`
	Kind    string `json:"kind,omitempty" jsonschema:"list: only this kind"`
	Version int    `json:"version,omitempty" jsonschema:"get, restore; get: 0 = newest" validate:"omitempty,min=1"`
	toolkit.Page
}

type configHistoryResult struct {
	Action   string                               `json:"action"`
	Versions *toolkit.List[confighistory.Version] `json:"versions,omitempty"`
	Version  *confighistory.Version               `json:"version,omitempty"`
	Restored string                               `json:"restored,omitempty"`
	Undo     map[string]any                       `json:"undo,omitempty"` // the arguments that take the restore back
	Note     string                               `json:"note,omitempty"`
}

// configHistory is ha_config_history.
func configHistory(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[configHistoryArgs, configHistoryResult]{
		Name: "ha_config_history", Toolset: SetConfig, Title: "Earlier versions of what assistants changed",
		Description: "Every automation, script, scene, dashboard, helper, registry entry or config file an assistant changed or deleted keeps its earlier version here. " +
			"list (newest first; item or kind to narrow), get one version's config, restore one (the current one is kept too, so a restore can be undone). " +
			"Restoring behaviour is confirmed like writing it. Not for Home Assistant's own backups: ha_manage_backups.",
		Destructive: true, Conditional: fileGrant, Confirm: restoreConfirm(d),
		Summary: func(a configHistoryArgs) string { return fmt.Sprintf("%s %s %d", a.Action, a.Item, a.Version) },
		Handler: func(ctx context.Context, c *toolkit.Call, a configHistoryArgs) (configHistoryResult, error) {
			if d.History == nil {
				return configHistoryResult{}, &toolkit.Error{Code: "unavailable", Message: "this hamcp keeps no configuration history (no store)"}
			}
			switch a.Action {
			case "list":
				return listVersions(ctx, d, a)
			case "get":
				if err := needItem(a, false); err != nil {
					return configHistoryResult{}, err
				}
				v, err := d.History.Get(ctx, a.Item, a.Version)
				if err != nil {
					return configHistoryResult{}, versionError(err, a)
				}
				return configHistoryResult{Action: a.Action, Version: &v}, nil
			}
			if err := needItem(a, true); err != nil {
				return configHistoryResult{}, err
			}
			return restoreVersion(ctx, d, c, a)
		},
	})
}

// fileGrant: a configuration file's kept version is the file itself, so reading one back (get) or
// writing it (restore) needs the filesystem category, as ha_read_config and ha_write_config do; list
// shows only names and sizes.
var fileGrant = &toolkit.Condition[configHistoryArgs]{
	Category: toolkit.Filesystem, When: "action get or restore of a file: item",
	Applies: func(a configHistoryArgs) bool { return a.Action != "list" && strings.HasPrefix(a.Item, KindFile+":") },
}

func needItem(a configHistoryArgs, version bool) error {
	if _, ok := kindOf(a.Item); !ok {
		return toolkit.InvalidArg("item", "names a kept item as kind:id (kinds: "+strings.Join(kindNames(), ", ")+"); list shows them", `"script:morning_lights"`)
	}
	if version && a.Version == 0 {
		return toolkit.InvalidArg("version", "is required for restore: the version number from list", "3")
	}
	return nil
}

func kindOf(item string) (versionKind, bool) {
	kind, id, ok := strings.Cut(item, ":")
	if !ok || id == "" {
		return versionKind{}, false
	}
	for _, k := range versionKinds() {
		if k.kind == kind {
			return k, true
		}
	}
	return versionKind{}, false
}

func kindNames() []string {
	var out []string
	for _, k := range versionKinds() {
		out = append(out, k.kind)
	}
	return out
}

func versionError(err error, a configHistoryArgs) error {
	if errors.Is(err, confighistory.ErrNotFound) {
		return toolkit.NotFound(fmt.Sprintf("hamcp kept no version %d of %s", a.Version, a.Item), "ha_config_history action list with item "+a.Item)
	}
	return &toolkit.Error{Code: "store_error", Message: "reading the configuration history failed: " + err.Error()}
}

func listVersions(ctx context.Context, d Deps, a configHistoryArgs) (configHistoryResult, error) {
	limit, offset := a.Page.Effective()
	vs, total, err := d.History.List(ctx, confighistory.Query{Item: a.Item, Kind: a.Kind, Limit: limit, Offset: offset})
	if err != nil {
		return configHistoryResult{}, versionError(err, a)
	}
	list := toolkit.Window(vs, total, a.Page)
	out := configHistoryResult{Action: a.Action, Versions: &list}
	if total == 0 {
		out.Note = "nothing kept yet: versions appear when an assistant changes or deletes a configuration through hamcp"
	}
	return out, nil
}

// restoreConfirm: writing a version back is a write like the one that made it: what its config
// reaches counts (§5b rule 2), and it always overwrites what is there now.
func restoreConfirm(d Deps) *toolkit.Confirm[configHistoryArgs] {
	return &toolkit.Confirm[configHistoryArgs]{
		When: "action restore (`change`: it overwrites the item); what the restored config can do counts as when writing it, and restoring an item's absence is a delete",
		Check: func(ctx context.Context, c *toolkit.Call, a configHistoryArgs) (toolkit.Ask, error) {
			if a.Action != "restore" || d.History == nil {
				return toolkit.Ask{}, nil
			}
			k, ok := kindOf(a.Item)
			if !ok || a.Version == 0 {
				return toolkit.Ask{}, nil // the handler refuses it with the reason
			}
			v, err := d.History.Get(ctx, a.Item, a.Version)
			if err != nil {
				return toolkit.Ask{}, versionError(err, a)
			}
			if !isNull(v.Config) && callsPrivilegedJSON(v.Config) {
				return toolkit.Ask{}, toolkit.InvalidArg("version", "calls a service that needs the command permission; restore it through the tool that edits "+k.kind+
					"s (it asks for that permission) with this version's config from action get", `{"action": "get", "item": "`+a.Item+`"}`)
			}
			w, cfg, err := checkRestore(ctx, d, k, v)
			if err != nil {
				return toolkit.Ask{}, err
			}
			always := []sensitive.Class{sensitive.Change}
			what := fmt.Sprintf("Restore %s to version %d", a.Item, a.Version)
			if cfg == nil {
				always = append(always, sensitive.Delete)
				what = fmt.Sprintf("Delete %s (version %d is from before it existed)", a.Item, a.Version)
			}
			return w.ask(what, always...)
		},
	}
}

// checkRestore walks what writing v back reaches (§5b rule 2), as writing it would; cfg is v's
// config, nil when restoring means deleting.
func checkRestore(ctx context.Context, d Deps, k versionKind, v confighistory.Version) (*walk, json.RawMessage, error) {
	w := newWalk(d)
	sum := sha256.Sum256(v.Config)
	w.fact("version", v.Item, hex.EncodeToString(sum[:]))
	cfg := v.Config
	if isNull(cfg) {
		cfg = nil
	}
	at, err := k.at(ctx, d, v.ID(), cfg)
	if err != nil {
		return nil, nil, haError(err, false, "")
	}
	w.fact("at", v.Item, at) // a yes covers the item where it is now, not after another rename
	k.check(ctx, d, w, at, cfg)
	if err := w.writable("version"); err != nil {
		return nil, nil, err
	}
	return w, cfg, nil
}

// callsPrivilegedJSON reports whether a kept automation or script config calls a service that needs the
// command permission, which a restore here cannot ask for.
func callsPrivilegedJSON(cfg json.RawMessage) bool {
	var v any
	if json.Unmarshal(cfg, &v) != nil {
		return false
	}
	return len(privileged.InConfig(v)) > 0
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// restoreVersion keeps what the item is now, then writes the version back.
func restoreVersion(ctx context.Context, d Deps, c *toolkit.Call, a configHistoryArgs) (configHistoryResult, error) {
	v, err := d.History.Get(ctx, a.Item, a.Version)
	if err != nil {
		return configHistoryResult{}, versionError(err, a)
	}
	kept, err := restoreItem(ctx, d, c, v)
	if err != nil {
		return configHistoryResult{}, err
	}
	out := configHistoryResult{Action: a.Action, Restored: fmt.Sprintf("%s is back at version %d", a.Item, a.Version)}
	if kept > 0 {
		out.Undo = map[string]any{"action": "restore", "item": a.Item, "version": kept}
	}
	return out, nil
}

// restoreItem writes v back, keeping what the item is now first (so the restore is undoable too);
// it returns the version that keeps it, 0 when nothing is kept.
func restoreItem(ctx context.Context, d Deps, c *toolkit.Call, v confighistory.Version) (int, error) {
	k, ok := kindOf(v.Item)
	if !ok {
		return 0, toolkit.InvalidArg("item", "names no kind hamcp can restore", `"script:morning_lights"`)
	}
	id := v.ID()
	at, err := k.at(ctx, d, id, v.Config)
	if err != nil {
		return 0, haError(err, false, "")
	}
	now, title, err := k.read(ctx, d, at)
	if err != nil {
		return 0, haError(err, false, "")
	}
	if title == "" {
		title = v.Title
	}
	kp, err := d.keep(ctx, c, k.kind, id, title, confighistory.Restored, now)
	if err != nil {
		return 0, err
	}
	cfg := v.Config
	if isNull(cfg) {
		cfg = nil
	}
	if err := k.write(ctx, d, at, cfg); err != nil {
		kp.undo(ctx)
		return 0, haError(err, false, "nothing was restored; read the error, then try again")
	}
	return kp.version(), nil
}

// UndoPlan is what undoing a configuration change will do, for the user to read before it runs.
type UndoPlan struct {
	// What says it in plain words ("Undo puts automation:x back as it was before").
	What string
	// Sensitive lists what the restored configuration can reach that the user confirms (an unlock, a
	// garage door); empty when nothing is. Unknown effects count.
	Sensitive []string
	// Digest binds a confirmation to this exact effect: the configuration and everything read to decide.
	Digest string
}

// PlanConfigUndo reads what restoring ref would write and what that reaches, as writing it would be
// checked (ha_config_history's restore): the panel shows it and asks when it is sensitive.
func PlanConfigUndo(ctx context.Context, d Deps, ref ConfigUndo) (UndoPlan, error) {
	k, v, err := undoVersion(ctx, d, ref)
	if err != nil {
		return UndoPlan{}, err
	}
	w, _, err := checkRestore(ctx, d, k, v)
	if err != nil {
		return UndoPlan{}, err
	}
	if w.fail != nil {
		return UndoPlan{}, haError(w.fail, false, "")
	}
	p := UndoPlan{What: undoNote(v), Digest: w.digest()}
	for _, h := range w.hits {
		what := h.What
		if what == "" {
			what = string(h.Class)
		}
		if !slices.Contains(p.Sensitive, what) {
			p.Sensitive = append(p.Sensitive, what)
		}
	}
	if !isNull(v.Config) && callsPrivilegedJSON(v.Config) {
		p.Sensitive = append(p.Sensitive, "call a service that runs code or changes the system")
	}
	return p, nil
}

// ApplyConfigUndo restores ref for the user named by, keeping what it replaces; the result is the
// undo of this undo (zero when nothing was kept).
func ApplyConfigUndo(ctx context.Context, d Deps, ref ConfigUndo, by string) (ConfigUndo, error) {
	_, v, err := undoVersion(ctx, d, ref)
	if err != nil {
		return ConfigUndo{}, err
	}
	n, err := restoreItem(ctx, d, &toolkit.Call{Tool: "undo", Client: by}, v)
	if err != nil {
		return ConfigUndo{}, err
	}
	if n == 0 {
		return ConfigUndo{}, nil
	}
	return ConfigUndo{Item: v.Item, Version: n}, nil
}

func undoVersion(ctx context.Context, d Deps, ref ConfigUndo) (versionKind, confighistory.Version, error) {
	if d.History == nil {
		return versionKind{}, confighistory.Version{}, errors.New("this hamcp keeps no configuration history")
	}
	k, ok := kindOf(ref.Item)
	if !ok || ref.Version <= 0 {
		return versionKind{}, confighistory.Version{}, fmt.Errorf("%q version %d names nothing hamcp can restore", ref.Item, ref.Version)
	}
	v, err := d.History.Get(ctx, ref.Item, ref.Version)
	if errors.Is(err, confighistory.ErrNotFound) {
		return versionKind{}, confighistory.Version{}, fmt.Errorf("hamcp no longer keeps version %d of %s (at most %d versions of an item are kept)", ref.Version, ref.Item, confighistory.KeepPerItem)
	}
	if err != nil {
		return versionKind{}, confighistory.Version{}, fmt.Errorf("reading the kept version: %w", err)
	}
	return k, v, nil
}
