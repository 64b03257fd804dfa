package toolkit

import (
	"encoding/json"
	"strings"
)

// Undo says how a call's change can be taken back. toolkit carries it from the handler to the audit
// log and never reads it: Type names who performs it (the app's undoer), Ref is that undoer's own
// reference (a kept version, a trash item, the targets' earlier states), Note says in plain words
// what undoing does. An Undo with no Type says, in Note, why the change cannot be undone.
type Undo struct {
	Type string          `json:"type,omitempty"`
	Ref  json.RawMessage `json:"ref,omitempty"`
	Note string          `json:"note,omitempty"`
	// Read marks a call that changed nothing (a read recorded because it needed a permission, or
	// because audit_reads is on): there is nothing to undo, and nothing to apologise for.
	Read bool `json:"read,omitempty"`
}

// Possible reports whether the change can be undone.
func (u Undo) Possible() bool { return u.Type != "" }

// UndoOf is an Undo of type typ with ref as its reference. A ref that cannot be marshalled gives an
// Undo that says so, never a half reference.
func UndoOf(typ string, ref any, note string) Undo {
	raw, err := json.Marshal(ref)
	if err != nil {
		return Undo{Note: "hamcp could not record how to undo this: " + err.Error()}
	}
	return Undo{Type: typ, Ref: raw, Note: note}
}

// Undoable registers how this call's change can be undone. The last registration wins; it is kept
// only when the call succeeds, so a failed call never offers to undo what did not happen.
func (c *Call) Undoable(u Undo) {
	if c != nil { // handlers are called without a Call in some tests
		c.undo.Store(&u)
	}
}

// NotUndoable says why this call's change cannot be undone (a sent notification, an unlock), so the
// Activity page can tell the user instead of only showing no Undo button.
func (c *Call) NotUndoable(why string) { c.Undoable(Undo{Note: why}) }

// UndoInfo is what the call registered, nil for nothing.
func (c *Call) UndoInfo() *Undo {
	if c == nil {
		return nil
	}
	return c.undo.Load()
}

// Kinds of change the audit log files a call under, for the user's filter.
const (
	KindDevice     = "device"     // service calls, hub device commands: something in the house moved
	KindConfig     = "config"     // automations, scripts, scenes, helpers, dashboards, registries, hub rules
	KindFile       = "file"       // files under the allowed roots
	KindDatabase   = "database"   // the recorder database
	KindCommand    = "command"    // shell commands, system services
	KindHub        = "hub"        // Hubitat hub administration
	KindPermission = "permission" // grants, denials, confirmations
)

// kindByCategory: a call that needed a category is filed by what the category is about, whatever
// toolset it belongs to (ha_call_service of hassio.* needs command; ha_config_history of a file
// needs filesystem).
var kindByCategory = map[Category]string{
	Filesystem:      KindFile,
	Database:        KindDatabase,
	DatabaseWrite:   KindDatabase,
	Command:         KindCommand,
	SupervisorToken: KindCommand,
	"hub_admin":     KindHub,
}

// kindByToolset files every other changing call by its toolset. A toolset missing here is config:
// most of what an assistant writes is behaviour or configuration.
var kindByToolset = map[string]string{
	"states":                  KindDevice,
	"media":                   KindDevice,
	"notifications":           KindDevice,
	"conversation":            KindDevice,
	"events":                  KindDevice,
	"calendars":               KindDevice,
	"hubitat_devices":         KindDevice,
	"hubitat_captured_states": KindDevice,
	"hubitat_rules":           KindConfig,
	"files":                   KindFile,
	"database":                KindDatabase,
	"system":                  KindCommand,
	"hubitat_admin":           KindHub,
	"hubitat_system":          KindHub,
	"hubitat_debug":           KindHub,
	"permissions":             KindPermission,
}

// kindOf is the one place a call's kind is decided: the tool's declared Kind, else the category
// the call needed, else its toolset's.
func kindOf(declared string, cat Category, toolset string) string {
	if declared != "" {
		return declared
	}
	if k, ok := kindByCategory[cat]; ok {
		return k
	}
	if k, ok := kindByToolset[toolset]; ok {
		return k
	}
	if strings.HasPrefix(toolset, "hubitat_") {
		return KindHub
	}
	return KindConfig
}

// Kind is what the tool's calls are filed under when they need no category.
func (t *Tool) Kind() string { return kindOf(t.kind, "", t.toolset) }
