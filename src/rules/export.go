package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Export, import and clone. An export carries the rule without its runtime fields and a manifest
// of every device it uses, so that importing it on another hub can map the old ids to new ones.
// Upstream's manifest and remap only looked at keys named deviceId; here every reference counts:
// deviceId, deviceIds, sceneDeviceId, at any depth of then/else/repeat, in trigger gates and in
// if_then_else conditions (DeviceRefs finds them all, and import rewrites the same set).

// ExportVersion is the version of the export format (upstream's).
const ExportVersion = "1.0"

// Export is export_rule's answer and import_rule's input.
type Export struct {
	ExportVersion  string          `json:"exportVersion"`
	ExportedAt     string          `json:"exportedAt"`
	ServerVersion  string          `json:"serverVersion"`
	Rule           Rule            `json:"rule"`
	DeviceManifest []ManifestEntry `json:"deviceManifest"`
}

// ManifestEntry is one device a rule uses, with where (paths inside the rule) and what it was on
// the exporting hub, so that a user can find its counterpart.
type ManifestEntry struct {
	DeviceID     string   `json:"deviceId"`
	UsedIn       []string `json:"usedIn"`
	Label        string   `json:"label,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
}

// DeviceRef is one device reference in a rule: its path ("actions[1].deviceIds[0]") and the id.
type DeviceRef struct {
	Path     string `json:"path"`
	DeviceID string `json:"deviceId"`
}

// DeviceRefs lists every device reference of r, in rule order (empty ids are left out).
func DeviceRefs(r *Rule) []DeviceRef {
	var out []DeviceRef
	eachDeviceID(r, func(path string, id *string) {
		if *id != "" {
			out = append(out, DeviceRef{Path: path, DeviceID: *id})
		}
	})
	return out
}

// eachDeviceID calls fn with a pointer to every device id field of r, so that callers can read
// or rewrite them; the one walk keeps export, import and validation agreeing on what a
// reference is.
func eachDeviceID(r *Rule, fn func(path string, id *string)) {
	cond := func(path string, c *Condition) {
		if c != nil {
			fn(join(path, "deviceId"), &c.DeviceID)
		}
	}
	list := func(path string, ids []string) {
		for i := range ids {
			fn(index(path, i), &ids[i])
		}
	}
	for i := range r.Triggers {
		t := &r.Triggers[i]
		p := index("triggers", i)
		fn(join(p, "deviceId"), &t.DeviceID)
		list(join(p, "deviceIds"), t.DeviceIDs)
		if t.Condition != nil {
			cond(join(p, "condition"), t.Condition)
		}
	}
	for i := range r.Conditions {
		cond(index("conditions", i), &r.Conditions[i])
	}
	WalkActions(r, func(p string, a *Action) {
		fn(join(p, "deviceId"), &a.DeviceID)
		list(join(p, "deviceIds"), a.DeviceIDs)
		fn(join(p, "sceneDeviceId"), &a.SceneDeviceID)
		if a.Condition != nil {
			cond(join(p, "condition"), a.Condition)
		}
	})
}

// WalkActions calls fn for every action of r at every depth (then, else and repeat lists), parent
// before children, with its path. fn may change the action but not the lists being walked.
func WalkActions(r *Rule, fn func(path string, a *Action)) {
	walkActions("actions", r.Actions, fn)
}

func walkActions(path string, list []Action, fn func(string, *Action)) {
	for i := range list {
		p := index(path, i)
		a := &list[i]
		fn(p, a)
		walkActions(join(p, "thenActions"), a.ThenActions, fn)
		walkActions(join(p, "elseActions"), a.ElseActions, fn)
		walkActions(join(p, "actions"), a.Actions, fn)
	}
}

// ExportRule is r as export_rule gives it: a copy without runtime fields, and a manifest of its
// devices (label and capabilities from devices when it knows them; devices may be nil).
func ExportRule(r Rule, devices DeviceLookup, serverVersion string, now time.Time) Export {
	out := Export{ExportVersion: ExportVersion, ExportedAt: now.UTC().Format(time.RFC3339),
		ServerVersion: serverVersion, Rule: r.Copy(), DeviceManifest: []ManifestEntry{}}
	clearRuntime(&out.Rule)
	at := map[string]int{}
	for _, ref := range DeviceRefs(&out.Rule) {
		i, ok := at[ref.DeviceID]
		if !ok {
			e := ManifestEntry{DeviceID: ref.DeviceID}
			if devices != nil {
				if d, found := devices(ref.DeviceID); found {
					e.Label, e.Capabilities = d.DisplayName(), slices.Clone(d.Capabilities)
				}
			}
			i = len(out.DeviceManifest)
			at[ref.DeviceID] = i
			out.DeviceManifest = append(out.DeviceManifest, e)
		}
		out.DeviceManifest[i].UsedIn = append(out.DeviceManifest[i].UsedIn, ref.Path)
	}
	return out
}

// ImportRule makes a new rule from an export: renamed when name is given, every device reference
// rewritten through mapping (old id → new id; ids not in it stay), runtime fields cleared. The
// problems are the export's and the mapping's (a mapped id the rule does not use is a typo worth
// saying); the rule itself is validated when it is created.
func ImportRule(e Export, name string, mapping map[string]string) (Rule, []Problem) {
	var probs []Problem
	if major, _, _ := strings.Cut(e.ExportVersion, "."); major != "1" {
		probs = append(probs, Problem{Path: "exportVersion", Message: fmt.Sprintf(
			"%q is not an export version hamcp reads; it reads %s (export_rule's answer)", e.ExportVersion, ExportVersion)})
	}
	r := e.Rule.Copy()
	clearRuntime(&r)
	if strings.TrimSpace(name) != "" {
		r.Name = name
	}
	used := map[string]bool{}
	eachDeviceID(&r, func(_ string, id *string) {
		if *id == "" {
			return
		}
		used[*id] = true
		if to, ok := mapping[*id]; ok {
			*id = strings.TrimSpace(to)
		}
	})
	for _, from := range slices.Sorted(maps.Keys(mapping)) {
		path := fmt.Sprintf("deviceMapping[%q]", from)
		switch {
		case strings.TrimSpace(mapping[from]) == "":
			probs = append(probs, Problem{Path: path, Message: "maps to an empty id; give the device's id on this hub"})
		case !used[from]:
			probs = append(probs, Problem{Path: path, Message: fmt.Sprintf(
				"the exported rule does not use device %q; it uses %s", from, strings.Join(slices.Sorted(maps.Keys(used)), ", "))})
		}
	}
	return r, probs
}

// Clone is a copy of r to edit: a new rule (runtime fields cleared), disabled so that it does
// not run twice alongside the original, named name or "Copy of <r's name>".
func Clone(r Rule, name string) Rule {
	c := r.Copy()
	clearRuntime(&c)
	c.Enabled = false
	c.Name = name
	if strings.TrimSpace(name) == "" {
		c.Name = "Copy of " + r.Name
	}
	return c
}

func clearRuntime(r *Rule) {
	r.ID, r.CreatedAt, r.UpdatedAt, r.LastTriggered = "", time.Time{}, time.Time{}, nil
	r.ExecutionCount, r.ErrorCount, r.LastError = 0, 0, ""
	r.DisabledReason, r.DisabledAt = "", nil
}

// Copy is a deep copy of r: changing it (or its lists, pointers or variables) leaves r alone.
func (r Rule) Copy() Rule {
	c := r
	if r.LastTriggered != nil {
		t := *r.LastTriggered
		c.LastTriggered = &t
	}
	if r.DisabledAt != nil {
		t := *r.DisabledAt
		c.DisabledAt = &t
	}
	c.Triggers = copyEach(r.Triggers, func(t Trigger) Trigger {
		t.DeviceIDs = slices.Clone(t.DeviceIDs)
		t.Value, t.ButtonNumber, t.Condition = clonePtr(t.Value), clonePtr(t.ButtonNumber), copyCondition(t.Condition)
		return t
	})
	c.Conditions = copyEach(r.Conditions, func(x Condition) Condition { return *copyCondition(&x) })
	c.Actions = copyActions(r.Actions)
	c.LocalVariables = maps.Clone(r.LocalVariables) // values are strings, numbers and booleans
	return c
}

func copyActions(list []Action) []Action {
	return copyEach(list, func(a Action) Action {
		a.DeviceIDs, a.Parameters = slices.Clone(a.DeviceIDs), slices.Clone(a.Parameters)
		a.Level, a.Value, a.Operand = clonePtr(a.Level), clonePtr(a.Value), clonePtr(a.Operand)
		a.Duration, a.Hue, a.Saturation = clonePtr(a.Duration), clonePtr(a.Hue), clonePtr(a.Saturation)
		a.Temperature, a.Position, a.Volume = clonePtr(a.Temperature), clonePtr(a.Position), clonePtr(a.Volume)
		a.HeatingSetpoint, a.CoolingSetpoint = clonePtr(a.HeatingSetpoint), clonePtr(a.CoolingSetpoint)
		a.Condition = copyCondition(a.Condition)
		a.ThenActions, a.ElseActions, a.Actions = copyActions(a.ThenActions), copyActions(a.ElseActions), copyActions(a.Actions)
		return a
	})
}

func copyCondition(c *Condition) *Condition {
	if c == nil {
		return nil
	}
	x := *c
	x.Value = clonePtr(c.Value)
	x.Modes, x.Days = slices.Clone(c.Modes), slices.Clone(c.Days)
	return &x
}

func copyEach[T any](list []T, f func(T) T) []T {
	if list == nil {
		return nil
	}
	out := make([]T, len(list))
	for i, x := range list {
		out[i] = f(x)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	x := *p
	return &x
}
