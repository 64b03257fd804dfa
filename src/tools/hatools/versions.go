package hatools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hamcp/hamcp/src/confighistory"
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
	return &kept{d: d, v: v}, nil
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
}

// versionKinds are the kinds ha_config_history can restore. Each tool group that keeps versions
// adds its kind here.
func versionKinds() []versionKind {
	return []versionKind{}
}

// versionTools is ha_config_history: written with the history (issue 21).
func versionTools(d Deps) []*toolkit.Tool { return nil }
