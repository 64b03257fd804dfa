package home

import (
	"fmt"
	"sort"
	"strings"
)

// Scenes reproduce stored states by calling each domain's services, as HA's
// reproduce_state helpers do.

func (c *call) activateScene(st *State) error {
	var ents map[string]any
	if d, ok := c.h.dynScenes[st.EntityID]; ok {
		ents = d
	} else if ce, ok := c.h.configEnt[st.EntityID]; ok {
		cfg, _ := nodeValue(ce.node).(map[string]any)
		ents, _ = cfg["entities"].(map[string]any)
	}
	if err := c.applyEntities(ents); err != nil {
		return err
	}
	c.set(st.EntityID, ISOTime(c.h.now()), cloneAttrs(st.Attributes))
	return nil
}

func (c *call) applyEntities(ents map[string]any) error {
	ids := make([]string, 0, len(ents))
	for id := range ents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		spec := map[string]any{}
		switch x := ents[id].(type) {
		case map[string]any:
			for k, v := range x {
				spec[k] = v
			}
		case bool:
			spec["state"] = onOff(x)
		default:
			spec["state"] = fmt.Sprint(x)
		}
		if c.h.states[id] == nil {
			c.h.Log("warning", "homeassistant.helpers.state", "Unable to find entity %s", id)
			continue
		}
		if err := c.reproduce(id, spec); err != nil {
			return err
		}
	}
	return nil
}

func (c *call) reproduce(id string, spec map[string]any) error {
	domain, _, _ := strings.Cut(id, ".")
	state, _ := spec["state"].(string)
	if b, ok := spec["state"].(bool); ok {
		state = onOff(b)
	}
	call := func(svc string, data map[string]any) error {
		if data == nil {
			data = map[string]any{}
		}
		data["entity_id"] = id
		_, err := c.callNested(domain, svc, data)
		return err
	}
	pickAttrs := func(keys ...string) map[string]any {
		d := map[string]any{}
		for _, k := range keys {
			if v, ok := spec[k]; ok && v != nil {
				d[k] = v
			}
		}
		return d
	}
	switch domain {
	case "light":
		if state == "off" {
			return call("turn_off", nil)
		}
		d := pickAttrs("brightness", "effect")
		for _, k := range []string{"color_temp_kelvin", "rgb_color", "hs_color", "xy_color"} {
			if v, ok := spec[k]; ok && v != nil {
				d[k] = v
				break
			}
		}
		return call("turn_on", d)
	case "switch", "input_boolean", "automation", "fan", "camera":
		if state == "on" || state == "off" {
			return call("turn_"+state, nil)
		}
	case "cover":
		if p, ok := spec["current_position"]; ok && featuresOf(c.h.states[id])&coverSetPos != 0 {
			return call("set_cover_position", map[string]any{"position": p})
		}
		switch state {
		case "open":
			return call("open_cover", nil)
		case "closed":
			return call("close_cover", nil)
		}
	case "lock":
		switch state {
		case "locked":
			return call("lock", nil)
		case "unlocked":
			return call("unlock", nil)
		}
	case "alarm_control_panel":
		svc := map[string]string{"disarmed": "alarm_disarm", "armed_home": "alarm_arm_home", "armed_away": "alarm_arm_away",
			"armed_night": "alarm_arm_night", "triggered": "alarm_trigger"}[state]
		if svc != "" {
			return call(svc, nil)
		}
	case "climate":
		if state != "" {
			if err := call("set_hvac_mode", map[string]any{"hvac_mode": state}); err != nil {
				return err
			}
		}
		if t, ok := spec["temperature"]; ok {
			return call("set_temperature", map[string]any{"temperature": t})
		}
	case "media_player":
		switch state {
		case "off":
			if featuresOf(c.h.states[id])&mpTurnOff != 0 {
				return call("turn_off", nil)
			}
		case "on", "playing", "paused", "idle":
			if c.h.states[id].State == "off" && featuresOf(c.h.states[id])&mpTurnOn != 0 {
				if err := call("turn_on", nil); err != nil {
					return err
				}
			}
			if v, ok := spec["volume_level"]; ok {
				if err := call("volume_set", map[string]any{"volume_level": v}); err != nil {
					return err
				}
			}
			if s, ok := spec["source"]; ok {
				if err := call("select_source", map[string]any{"source": s}); err != nil {
					return err
				}
			}
			switch state {
			case "playing":
				return call("media_play", nil)
			case "paused":
				return call("media_pause", nil)
			}
		}
	case "input_number":
		return call("set_value", map[string]any{"value": state})
	case "input_select":
		return call("select_option", map[string]any{"option": state})
	case "input_text":
		return call("set_value", map[string]any{"value": state})
	default:
		c.h.Log("warning", "homeassistant.helpers.state", "Reproduce state not supported for %s", domain)
	}
	return nil
}

// createScene is scene.create: a dynamic scene from given states and/or a
// snapshot of current ones.
func (c *call) createScene() error {
	sid := c.str("scene_id")
	if slugify(sid) != sid {
		return invalidf("invalid slug %s (try %s) for dictionary value @ data['scene_id']", sid, slugify(sid))
	}
	eid := "scene." + sid
	if ce, ok := c.h.configEnt[eid]; ok && ce.kind == "scene" {
		return &ServiceValidationError{Msg: fmt.Sprintf("The scene %s already exists", eid), Key: "scene_exists", Domain: "scene"}
	}
	ents := map[string]any{}
	if m, ok := c.data["entities"].(map[string]any); ok {
		for k, v := range m {
			ents[k] = v
		}
	}
	for _, s := range asList(c.data["snapshot_entities"]) {
		id := fmt.Sprint(s)
		st := c.h.states[id]
		if st == nil {
			return &ServiceValidationError{Msg: fmt.Sprintf("Entity %s does not exist", id), Key: "entity_not_found", Domain: "scene"}
		}
		spec := cloneAttrs(st.Attributes)
		spec["state"] = st.State
		ents[id] = spec
	}
	if len(ents) == 0 {
		return invalidf("Either entities or snapshot_entities must be specified")
	}
	c.h.dynScenes[eid] = ents
	c.h.owned[eid] = true
	ids := make([]any, 0, len(ents))
	for k := range ents {
		ids = append(ids, k)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].(string) < ids[j].(string) })
	state := "unknown"
	if old := c.h.states[eid]; old != nil {
		state = old.State
	}
	c.set(eid, state, map[string]any{"entity_id": ids, "friendly_name": sid})
	return nil
}
