package sensitive

import (
	"strings"
)

// Target is what a service call aims at, before it is resolved to entities.
type Target struct {
	EntityIDs []string
	AreaIDs   []string
	DeviceIDs []string
	LabelIDs  []string
	FloorIDs  []string
	// Templated: some part is a template (or a shape Home Assistant accepts that hamcp cannot read),
	// so what it reaches is unknown until it runs.
	Templated bool
}

// TargetKeys are the keys Home Assistant reads a target from, in `target` or at the top of the data.
var TargetKeys = []string{"entity_id", "area_id", "device_id", "label_id", "floor_id"}

// Empty reports whether the target names nothing (a call with no target at all).
func (t Target) Empty() bool {
	return !t.Templated && len(t.EntityIDs)+len(t.AreaIDs)+len(t.DeviceIDs)+len(t.LabelIDs)+len(t.FloorIDs) == 0
}

// Add reads target keys from m (a service call's `target`, its `data`, or an action itself) into t.
// Values are a string (comma-separated ids, as Home Assistant accepts), a list of strings, or a
// template; anything else is counted as unknown.
func (t *Target) Add(m map[string]any) {
	for _, k := range TargetKeys {
		v, ok := m[k]
		if !ok || v == nil {
			continue
		}
		ids, known := idList(v)
		if !known {
			t.Templated = true
			continue
		}
		switch k {
		case "entity_id":
			t.EntityIDs = append(t.EntityIDs, ids...)
		case "area_id":
			t.AreaIDs = append(t.AreaIDs, ids...)
		case "device_id":
			t.DeviceIDs = append(t.DeviceIDs, ids...)
		case "label_id":
			t.LabelIDs = append(t.LabelIDs, ids...)
		case "floor_id":
			t.FloorIDs = append(t.FloorIDs, ids...)
		}
	}
}

// idList reads one target value; known is false for a template or a shape that is not ids.
func idList(v any) (ids []string, known bool) {
	switch x := v.(type) {
	case string:
		if IsTemplate(x) {
			return nil, false
		}
		for _, p := range strings.Split(x, ",") {
			if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
				ids = append(ids, p)
			}
		}
		return ids, true
	case []string:
		return idList(strings.Join(x, ","))
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok || IsTemplate(s) {
				return nil, false
			}
			ids = append(ids, strings.ToLower(strings.TrimSpace(s)))
		}
		return ids, true
	}
	return nil, false
}

// Call is one action found in an automation or script configuration.
type Call struct {
	Service string // "domain.service", possibly a template; empty for an event action
	Event   string // the event type an `event:` action fires (possibly a template)
	// Blueprint is the path of the blueprint a `use_blueprint` configuration runs, with its inputs:
	// what it does is in the blueprint, which the caller reads.
	Blueprint      string
	BlueprintInput map[string]any
	Target         Target
	Data           map[string]any // the action's data, for services that take entities in it (scene.apply)
}

// deviceActions maps a device action (domain + type, Home Assistant's device automation actions) to
// the service it performs, for the rows of the policy table; other device actions change nothing the
// table covers.
var deviceActions = map[string]string{
	"lock/unlock": "lock.unlock", "lock/open": "lock.open",
	"alarm_control_panel/disarm": "alarm_control_panel.alarm_disarm", "alarm_control_panel/trigger": "alarm_control_panel.alarm_trigger",
	"cover/open": "cover.open_cover", "cover/set_position": "cover.set_cover_position",
}

// Calls walks an automation or script configuration (decoded JSON or YAML) and returns every action
// that calls a service, at any depth (choose, if/then, sequence, parallel, repeat): service calls under
// "action", "service" or "service_template", device actions (domain + type), and `scene:` actions.
// Triggers and conditions are skipped by their keys, so a trigger on a lock being unlocked is not an
// unlock.
func Calls(v any) []Call {
	var out []Call
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if c, ok := callOf(x); ok {
				out = append(out, c)
			}
			for k, val := range x {
				if k == "data" || k == "data_template" || k == "target" {
					continue // data is not an action (notify's data.actions carry "action" keys too)
				}
				walk(val)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

func callOf(m map[string]any) (Call, bool) {
	var c Call
	if ub, ok := m["use_blueprint"].(map[string]any); ok {
		c.Blueprint, _ = ub["path"].(string)
		c.BlueprintInput, _ = ub["input"].(map[string]any)
		if c.Blueprint == "" {
			c.Blueprint = "?" // a use_blueprint without a path: unknown
		}
		return c, true
	}
	_, isTrigger := m["trigger"]
	_, isPlatform := m["platform"]
	if ev, ok := m["event"].(string); ok && !isTrigger && !isPlatform {
		if _, call := m["action"]; !call {
			c.Event = ev
			return c, true
		}
	}
	for _, k := range []string{"action", "service", "service_template"} {
		if s, ok := m[k].(string); ok && (strings.Contains(s, ".") || IsTemplate(s)) {
			c.Service = s
		}
	}
	if c.Service == "" {
		if scene, ok := m["scene"].(string); ok {
			c.Service = "scene.turn_on"
			c.Target.Add(map[string]any{"entity_id": scene})
			return c, true
		}
		_, trig := m["trigger"]
		_, plat := m["platform"]
		_, cond := m["condition"]
		domain, _ := m["domain"].(string)
		typ, _ := m["type"].(string)
		if _, dev := m["device_id"]; !dev || trig || plat || cond || domain == "" {
			return Call{}, false
		}
		svc, ok := deviceActions[domain+"/"+typ]
		if !ok {
			return Call{}, false
		}
		c.Service = svc
	}
	c.Target.Add(m)
	if t, ok := m["target"]; ok {
		if tm, ok := t.(map[string]any); ok {
			c.Target.Add(tm)
		} else {
			c.Target.Templated = true
		}
	}
	for _, k := range []string{"data", "data_template"} {
		switch d := m[k].(type) {
		case map[string]any:
			c.Target.Add(d)
			if c.Data == nil {
				c.Data = d
			}
		case string: // data as one template
			c.Target.Templated = true
		}
	}
	return c, true
}
