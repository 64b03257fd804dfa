package home

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// configEntity ties an automation/script/scene entity to its config item.
type configEntity struct {
	kind string
	node *yaml.Node
	key  string // script key or item id ("" when the item has no id)
}

// syncConfigEntities rebuilds the entities of one config kind from the
// stored items: new ones appear, removed ones go away (state and registry),
// existing ones keep on/off and last_triggered like a real reload.
func (h *Home) syncConfigEntities(kind string, ctx Context) {
	// Every path here is a reload in Home Assistant (the config editor's save and delete call
	// <domain>.reload), and automation/__init__.py and homeassistant/scene.py announce theirs.
	switch kind {
	case "automation":
		defer h.fireLocked("automation_reloaded", map[string]any{}, "LOCAL", ctx)
	case "scene":
		defer h.fireLocked("scene_reloaded", map[string]any{}, "LOCAL", ctx)
	}
	want := map[string]configEntity{}
	var order []string
	used := map[string]bool{}
	pick := func(domain, uid, name string) string {
		if uid != "" {
			for _, e := range h.entities {
				if e.Platform == domain && e.UniqueID == uid {
					used[e.EntityID] = true
					return e.EntityID
				}
			}
		}
		base := domain + "." + slugify(name)
		id := base
		for n := 2; used[id] || (h.states[id] != nil && h.configEnt[id].kind != kind); n++ {
			id = fmt.Sprintf("%s_%d", base, n)
		}
		used[id] = true
		return id
	}
	switch kind {
	case "automation":
		for i, n := range h.configs.automations {
			uid := mapString(n, "id")
			name := mapString(n, "alias")
			if name == "" {
				name = fmt.Sprintf("automation %d", i)
			}
			id := pick("automation", uid, name)
			want[id] = configEntity{kind: kind, node: n, key: uid}
			order = append(order, id)
		}
	case "script":
		c := h.configs.scripts.Content
		for i := 0; i+1 < len(c); i += 2 {
			id := "script." + c[i].Value
			used[id] = true
			want[id] = configEntity{kind: kind, node: c[i+1], key: c[i].Value}
			order = append(order, id)
		}
	case "scene":
		for _, n := range h.configs.scenes {
			uid := mapString(n, "id")
			id := pick("scene", uid, mapString(n, "name"))
			want[id] = configEntity{kind: kind, node: n, key: uid}
			order = append(order, id)
		}
	}
	for id, ce := range h.configEnt {
		if ce.kind != kind {
			continue
		}
		if _, ok := want[id]; !ok {
			delete(h.configEnt, id)
			delete(h.entities, id)
			delete(h.owned, id)
			if kind == "script" {
				h.removeService("script", strings.TrimPrefix(id, "script."))
			}
			h.removeStateLocked(id, ctx)
		}
	}
	for _, id := range order {
		ce := want[id]
		h.configEnt[id] = ce
		h.owned[id] = true
		if _, ok := h.entities[id]; !ok && (ce.key != "" || kind == "script") {
			ts := Epoch(h.now())
			h.entities[id] = &EntityEntry{ID: h.hexID(), EntityID: id, UniqueID: ce.key, Platform: kind, Labels: []string{}, Aliases: []string{}, CreatedAt: ts, ModifiedAt: ts}
		}
		h.writeConfigEntityState(id, ce, ctx)
		if kind == "script" {
			h.addScriptService(ce.key, ce.node)
		}
	}
}

func (h *Home) writeConfigEntityState(id string, ce configEntity, ctx Context) {
	old := h.states[id]
	cfg, err := h.effectiveConfig(ce)
	if err != nil {
		// like HA, an automation whose blueprint fails to load still appears
		cfg, _ = nodeValue(ce.node).(map[string]any)
		h.Log("error", "homeassistant.components."+ce.kind, "%s: %v", id, err)
	}
	attrs := map[string]any{}
	var state string
	prev := func(k string) any {
		if old != nil {
			return old.Attributes[k]
		}
		return nil
	}
	switch ce.kind {
	case "automation", "script":
		mode, _ := cfg["mode"].(string)
		if mode == "" {
			mode = "single"
		}
		attrs["last_triggered"], attrs["mode"], attrs["current"] = prev("last_triggered"), mode, 0
		if mode == "queued" || mode == "parallel" {
			mx, ok := toFloat(cfg["max"])
			if !ok {
				mx = 10
			}
			attrs["max"] = int(mx)
		}
		if ce.kind == "automation" {
			if ce.key != "" {
				attrs["id"] = ce.key
			}
			name, _ := cfg["alias"].(string)
			if name == "" {
				name = strings.ReplaceAll(strings.TrimPrefix(id, "automation."), "_", " ")
			}
			attrs["friendly_name"] = name
			state = "on"
			if old != nil {
				state = old.State
			} else if v, ok := cfg["initial_state"].(bool); ok && !v {
				state = "off"
			}
		} else {
			name, _ := cfg["alias"].(string)
			if name == "" {
				name = ce.key
			}
			attrs["friendly_name"] = name
			state = "off"
			if old != nil && h.running[id] > 0 {
				state, attrs["current"] = old.State, old.Attributes["current"]
			}
		}
		if icon, ok := cfg["icon"].(string); ok {
			attrs["icon"] = icon
		}
	case "scene":
		var ids []any
		if ents, ok := cfg["entities"].(map[string]any); ok {
			keys := make([]string, 0, len(ents))
			for k := range ents {
				keys = append(keys, k)
			}
			// keep the file's order, which the node has
			if en := mapGet(ce.node, "entities"); en != nil && en.Kind == yaml.MappingNode {
				keys = keys[:0]
				for i := 0; i+1 < len(en.Content); i += 2 {
					keys = append(keys, en.Content[i].Value)
				}
			} else {
				sort.Strings(keys)
			}
			for _, k := range keys {
				ids = append(ids, k)
			}
		}
		attrs["entity_id"] = ids
		if ce.key != "" {
			attrs["id"] = ce.key
		}
		if icon, ok := cfg["icon"].(string); ok {
			attrs["icon"] = icon
		}
		attrs["friendly_name"], _ = cfg["name"].(string)
		state = "unknown"
		if old != nil {
			state = old.State
		}
	}
	if attrs["friendly_name"] == "" {
		attrs["friendly_name"] = id
	}
	h.writeState(id, state, attrs, false, ctx)
}

// addScriptService registers script.<key>, whose fields come from the config.
func (h *Home) addScriptService(key string, node *yaml.Node) {
	cfg, _ := nodeValue(node).(map[string]any)
	name, _ := cfg["alias"].(string)
	if name == "" {
		name = key
	}
	desc, _ := cfg["description"].(string)
	d := &serviceDef{domain: "script", name: key, title: name, desc: desc, extraOK: true, response: ResponseOptional,
		run: func(c *call) (any, error) { return c.runScript("script."+key, c.data) }}
	if fields, ok := cfg["fields"].(map[string]any); ok {
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fm, _ := fields[k].(map[string]any)
			fdesc, _ := fm["description"].(string)
			req, _ := fm["required"].(bool)
			d.fields = append(d.fields, field{name: k, kind: kAny, desc: fdesc, required: req, example: fm["example"]})
		}
	}
	h.addService(d)
}

func (h *Home) registerAutomation() {
	onoff := func(domain string, on bool) func(c *call, st *State) (any, error) {
		return func(c *call, st *State) (any, error) {
			c.set(st.EntityID, onOff(on), cloneAttrs(st.Attributes))
			return nil, nil
		}
	}
	h.addService(&serviceDef{domain: "automation", name: "turn_on", title: "Turn on", desc: "Enables an automation.", target: "automation", entity: onoff("automation", true)})
	h.addService(&serviceDef{domain: "automation", name: "turn_off", title: "Turn off", desc: "Disables an automation.", target: "automation",
		fields: []field{{name: "stop_actions", kind: kBool, desc: "Stops currently running actions."}}, entity: onoff("automation", false)})
	h.addService(&serviceDef{domain: "automation", name: "toggle", title: "Toggle", desc: "Toggles (enable / disable) an automation.", target: "automation",
		entity: func(c *call, st *State) (any, error) { return onoff("automation", st.State != "on")(c, st) }})
	h.addService(&serviceDef{domain: "automation", name: "trigger", title: "Trigger", desc: "Triggers the actions of an automation.", target: "automation",
		fields: []field{{name: "skip_condition", kind: kBool, desc: "Defines whether or not the conditions will be skipped."}, {name: "variables", kind: kObject, desc: "Variables for the run."}},
		entity: func(c *call, st *State) (any, error) { return nil, c.triggerAutomation(st) }})
	h.addService(&serviceDef{domain: "automation", name: "reload", title: "Reload", desc: "Reloads the automation configuration.",
		run: func(c *call) (any, error) { return nil, c.h.reloadLocked("automation", c) }})

	h.addService(&serviceDef{domain: "script", name: "turn_on", title: "Turn on", desc: "Runs the sequence of actions defined in a script.", target: "script",
		fields: []field{{name: "variables", kind: kObject, desc: "Variables for the script."}},
		entity: func(c *call, st *State) (any, error) {
			vars, _ := c.data["variables"].(map[string]any)
			_, err := c.runScript(st.EntityID, vars)
			return nil, err
		}})
	h.addService(&serviceDef{domain: "script", name: "turn_off", title: "Turn off", desc: "Stops a running script.", target: "script",
		entity: func(c *call, st *State) (any, error) { c.h.stopRuns(st.EntityID); return nil, nil }})
	h.addService(&serviceDef{domain: "script", name: "toggle", title: "Toggle", desc: "Toggle a script. Starts it, if isn't running, stops it otherwise.", target: "script",
		entity: func(c *call, st *State) (any, error) {
			if st.State == "on" {
				c.h.stopRuns(st.EntityID)
				return nil, nil
			}
			_, err := c.runScript(st.EntityID, nil)
			return nil, err
		}})
	h.addService(&serviceDef{domain: "script", name: "reload", title: "Reload", desc: "Reloads all the available scripts.",
		run: func(c *call) (any, error) { return nil, c.h.reloadLocked("script", c) }})

	h.addService(&serviceDef{domain: "scene", name: "turn_on", title: "Activate", desc: "Activates a scene.", target: "scene",
		fields: []field{{name: "transition", kind: kFloat, min: num(0), max: num(300), desc: "Time it takes the devices to transition into the states defined in the scene."}},
		entity: func(c *call, st *State) (any, error) { return nil, c.activateScene(st) }})
	h.addService(&serviceDef{domain: "scene", name: "apply", title: "Apply", desc: "Activates a scene with configuration.",
		fields: []field{{name: "entities", kind: kObject, required: true, desc: "List of entities and their target state."}, {name: "transition", kind: kFloat, min: num(0), max: num(300), desc: "Transition time."}},
		run:    func(c *call) (any, error) { return nil, c.applyEntities(c.data["entities"].(map[string]any)) }})
	h.addService(&serviceDef{domain: "scene", name: "create", title: "Create", desc: "Creates a new scene.",
		fields: []field{
			{name: "scene_id", kind: kString, required: true, desc: "The entity ID of the new scene."},
			{name: "entities", kind: kObject, desc: "List of entities and their target state."},
			{name: "snapshot_entities", kind: kStrList, desc: "List of entities to be included in the snapshot."},
		},
		run: func(c *call) (any, error) { return nil, c.createScene() }})
	h.addService(&serviceDef{domain: "scene", name: "delete", title: "Delete", desc: "Deletes a dynamically created scene.", target: "scene",
		entity: func(c *call, st *State) (any, error) {
			if _, ok := c.h.dynScenes[st.EntityID]; !ok {
				return nil, &ServiceValidationError{Msg: fmt.Sprintf("The scene %s is not created with action `scene.create`", st.EntityID), Key: "entity_not_dynamically_created", Domain: "scene"}
			}
			delete(c.h.dynScenes, st.EntityID)
			delete(c.h.owned, st.EntityID)
			c.h.removeStateLocked(st.EntityID, c.ctx)
			return nil, nil
		}})
	h.addService(&serviceDef{domain: "scene", name: "reload", title: "Reload", desc: "Reloads the scenes from the YAML-configuration.",
		run: func(c *call) (any, error) { return nil, c.h.reloadLocked("scene", c) }})
}

func (c *call) triggerAutomation(st *State) error {
	ce, ok := c.h.configEnt[st.EntityID]
	if !ok {
		return nil
	}
	cfg, err := c.h.effectiveConfig(ce)
	if err != nil {
		return err
	}
	vars := map[string]any{"trigger": map[string]any{"platform": nil, "trigger": nil}}
	if v, ok := c.data["variables"].(map[string]any); ok {
		for k, x := range v {
			vars[k] = x
		}
	}
	skip := true
	if v, ok := c.data["skip_condition"].(bool); ok {
		skip = v
	}
	tr := c.beginTrace(st.EntityID, cfg)
	tr.triggerStep(vars)
	if !skip {
		conds, _ := firstKey(cfg, "conditions", "condition")
		okc, err := c.traceConditions(tr, conds, vars, "condition")
		if err != nil {
			tr.end(err)
			return err
		}
		if !okc {
			tr.endAs("failed_conditions")
			return nil
		}
	}
	c.h.fireLocked("automation_triggered", map[string]any{"name": st.Attributes["friendly_name"], "entity_id": st.EntityID, "source": "trigger action"}, "LOCAL", c.ctx)
	acts, _ := firstKey(cfg, "actions", "action")
	return c.startRun(st.EntityID, asList(acts), vars, tr)
}

// runScript runs a script entity's sequence with the given variables.
func (c *call) runScript(entityID string, vars map[string]any) (any, error) {
	ce, ok := c.h.configEnt[entityID]
	if !ok {
		return nil, nil
	}
	cfg, err := c.h.effectiveConfig(ce)
	if err != nil {
		return nil, err
	}
	tr := c.beginTrace(entityID, cfg)
	if mode, _ := cfg["mode"].(string); (mode == "" || mode == "single") && c.h.running[entityID] > 0 {
		tr.endAs("failed_single")
		c.h.Log("warning", "homeassistant.components.script."+strings.TrimPrefix(entityID, "script."), "%s: Already running", cfg["alias"])
		return nil, nil
	}
	all := map[string]any{}
	for k, v := range vars {
		all[k] = v
	}
	c.h.fireLocked("script_started", map[string]any{"name": c.h.states[entityID].Attributes["friendly_name"], "entity_id": entityID}, "LOCAL", c.ctx)
	return c.runResponse(entityID, asList(cfg["sequence"]), all, tr)
}
