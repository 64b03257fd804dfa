package hatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
	"go.yaml.in/yaml/v3"
)

// The confirmations of the Home Assistant tools (toolkit.Confirm). Whether a service call needs the
// user is decided from what it reaches, not from how it names it: targets by area, floor, device and
// label are resolved to entities with the registries and the state mirror, and running a script or a
// scene, triggering an automation, or writing one counts what their actions do.

// maxIndirection bounds how deep scripts calling scripts are followed; deeper counts as unknown.
const maxIndirection = 6

// walk collects what a set of service calls needs confirmed. It reads the states and registries at
// most once per call.
type walk struct {
	d         Deps
	states    map[string]homeassistant.State
	reg       *registry
	regRead   bool
	read      bool
	statesErr error
	seen      map[string]bool
	hits      []sensitive.Hit
}

func newWalk(d Deps) *walk { return &walk{d: d, seen: map[string]bool{}} }

func (w *walk) load(ctx context.Context) {
	if w.read {
		return
	}
	w.read = true
	all, err := readStates(ctx, w.d.HA, false)
	w.statesErr = err
	if err == nil {
		w.states = make(map[string]homeassistant.State, len(all))
		for _, s := range all {
			w.states[s.EntityID] = s
		}
	}
}

// registry reads the registries once, only for targets that need them (areas, floors, devices, labels).
func (w *walk) registry(ctx context.Context) *registry {
	if !w.regRead {
		w.regRead = true
		w.reg, _ = registryOf(w.d.HA).get(ctx)
	}
	return w.reg
}

func (w *walk) entity(id string) sensitive.Entity {
	e := sensitive.Entity{ID: id}
	if s, ok := w.states[id]; ok {
		e.Name = s.FriendlyName()
		e.DeviceClass, _ = s.Attributes["device_class"].(string)
	}
	return e
}

// resolve turns a target into the entities Home Assistant would act on for a service of domain, as
// its service helper does: entity ids ("all" = every entity of the domain), areas and floors (the
// entities in them and on their devices), devices (their entities) and labels (entities, devices and
// areas carrying them). complete is false when part of it cannot be known here.
func (w *walk) resolve(ctx context.Context, domain string, t sensitive.Target) (ents []sensitive.Entity, complete bool) {
	w.load(ctx)
	complete = !t.Templated && w.states != nil
	ids := map[string]bool{}
	for _, id := range t.EntityIDs {
		switch {
		case id == "all":
			for eid := range w.states {
				if domain == "homeassistant" || strings.HasPrefix(eid, domain+".") {
					ids[eid] = true
				}
			}
		case id == "none":
		case !strings.Contains(id, "."):
			complete = false // an entity registry id: only the full registry maps it
		default:
			ids[id] = true
		}
	}
	if len(t.AreaIDs)+len(t.FloorIDs)+len(t.DeviceIDs)+len(t.LabelIDs) > 0 {
		if reg := w.registry(ctx); reg == nil {
			complete = false // unreadable: assume the worst
		} else {
			for _, id := range reg.reached(t) {
				ids[id] = true
			}
		}
	}
	w.members(ids)
	for id := range ids {
		ents = append(ents, w.entity(id))
	}
	slices.SortFunc(ents, func(a, b sensitive.Entity) int { return strings.Compare(a.ID, b.ID) })
	return ents, complete
}

// members adds the members of groups among ids (old-style groups, and light, cover, lock and other
// group helpers, which list them in their entity_id attribute): a cover group of garage doors opens
// them, whatever its own device_class says.
func (w *walk) members(ids map[string]bool) {
	queue := make([]string, 0, len(ids))
	for id := range ids {
		queue = append(queue, id)
	}
	for len(queue) > 0 && len(ids) < 10_000 {
		id := queue[0]
		queue = queue[1:]
		if strings.HasPrefix(id, "scene.") {
			continue // a scene's list is what it sets, which the scene walk reads with the states it sets
		}
		list, _ := w.states[id].Attributes["entity_id"].([]any)
		for _, v := range list {
			if m, ok := v.(string); ok && !ids[m] {
				ids[m] = true
				queue = append(queue, m)
			}
		}
	}
}

// reached lists the entities an area, floor, device or label target reaches.
func (r *registry) reached(t sensitive.Target) []string {
	areas, devices, direct := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, a := range t.AreaIDs {
		areas[a] = true
	}
	for _, f := range t.FloorIDs {
		for _, a := range r.areas {
			if a.FloorID != nil && *a.FloorID == f {
				areas[a.ID] = true
			}
		}
	}
	for _, d := range t.DeviceIDs {
		devices[d] = true
	}
	for _, l := range t.LabelIDs {
		for _, a := range r.areas {
			if slices.Contains(a.Labels, l) {
				areas[a.ID] = true
			}
		}
		for _, d := range r.devices {
			if slices.Contains(d.Labels, l) {
				devices[d.ID] = true
			}
		}
		for id, e := range r.entities {
			if slices.Contains(e.Labels, l) {
				direct[id] = true
			}
		}
	}
	for _, d := range r.devices {
		if d.AreaID != nil && areas[*d.AreaID] {
			devices[d.ID] = true
		}
	}
	var out []string
	for id, e := range r.entities {
		if direct[id] || devices[e.DeviceID] || areas[r.areaOf(id)] || e.AreaID != "" && areas[e.AreaID] {
			out = append(out, id)
		}
	}
	return out
}

// service adds what calling domain.service on target (with data) needs, following scripts, scenes
// and automations it runs.
func (w *walk) service(ctx context.Context, name string, t sensitive.Target, data map[string]any, depth int) {
	if sensitive.IsTemplate(name) {
		w.hits = append(w.hits, sensitive.Unknown(name+" is a template, so the service it calls is unknown until it runs")...)
		return
	}
	domain, service, ok := strings.Cut(strings.ToLower(strings.TrimSpace(name)), ".")
	if !ok || !sensitive.Relevant(domain, service) && !runsOthers(domain, service) {
		return // light.turn_on and the like: nothing to resolve
	}
	ents, complete := w.resolve(ctx, domain, t)
	w.hits = append(w.hits, sensitive.Service(domain, service, ents, complete)...)
	if depth >= maxIndirection {
		w.hits = append(w.hits, sensitive.Unknown(name+" runs scripts nested too deep to follow")...)
		return
	}
	runs := func(d string) []sensitive.Entity { // the target's entities of domain d
		var out []sensitive.Entity
		for _, e := range ents {
			if strings.HasPrefix(e.ID, d+".") {
				out = append(out, e)
			}
		}
		if !complete {
			w.hits = append(w.hits, sensitive.Unknown(name+" runs whatever its unresolved target reaches")...)
		}
		return out
	}
	generic := domain == "homeassistant" && (service == "turn_on" || service == "toggle")
	switch {
	case domain == "script" && (service == "turn_on" || service == "toggle"), generic:
		for _, e := range runs("script") {
			w.script(ctx, e, depth+1)
		}
		if generic {
			for _, e := range runs("scene") {
				w.scene(ctx, e)
			}
		}
	case domain == "script" && service != "turn_off" && service != "reload":
		w.script(ctx, w.entity("script."+service), depth+1)
	case domain == "scene" && service == "turn_on":
		for _, e := range runs("scene") {
			w.scene(ctx, e)
		}
	case domain == "scene" && service == "apply":
		w.sceneEntities("scene.apply", data["entities"])
	case domain == "automation" && service == "trigger":
		for _, e := range runs("automation") {
			w.automation(ctx, e, depth+1)
		}
	}
}

// runsOthers reports whether a service runs actions written elsewhere: scripts, scenes, automations.
func runsOthers(domain, service string) bool {
	switch domain {
	case "script":
		return service != "turn_off" && service != "reload"
	case "scene":
		return service == "turn_on" || service == "apply"
	case "automation":
		return service == "trigger"
	}
	return false
}

// config walks an automation or script configuration's actions.
func (w *walk) config(ctx context.Context, cfg any, depth int) {
	for _, c := range sensitive.Calls(cfg) {
		w.service(ctx, c.Service, c.Target, c.Data, depth)
	}
}

func (w *walk) once(id string) bool {
	if w.seen[id] {
		return false
	}
	w.seen[id] = true
	return true
}

func (w *walk) script(ctx context.Context, e sensitive.Entity, depth int) {
	if !w.once(e.ID) {
		return
	}
	key := strings.TrimPrefix(e.ID, "script.")
	cfg, err := w.item(ctx, homeassistant.KindScript, key)
	if err != nil {
		w.hits = append(w.hits, sensitive.Unknown("run "+e.ID+", whose actions hamcp cannot read ("+err.Error()+")")...)
		return
	}
	w.config(ctx, cfg, depth)
}

func (w *walk) automation(ctx context.Context, e sensitive.Entity, depth int) {
	if !w.once(e.ID) {
		return
	}
	id, _ := w.states[e.ID].Attributes["id"].(string)
	if id == "" {
		w.hits = append(w.hits, sensitive.Unknown("trigger "+e.ID+", whose actions hamcp cannot read (it has no id)")...)
		return
	}
	cfg, err := w.item(ctx, homeassistant.KindAutomation, id)
	if err != nil {
		w.hits = append(w.hits, sensitive.Unknown("trigger "+e.ID+", whose actions hamcp cannot read ("+err.Error()+")")...)
		return
	}
	w.config(ctx, cfg, depth)
}

// scene counts the states a scene sets: from its stored configuration, else (a scene made with
// scene.create, or one hamcp cannot read) every lock, alarm panel and garage door it lists, whatever
// state it sets them to.
func (w *walk) scene(ctx context.Context, e sensitive.Entity) {
	if !w.once(e.ID) {
		return
	}
	if id, _ := w.states[e.ID].Attributes["id"].(string); id != "" {
		if cfg, err := w.item(ctx, homeassistant.KindScene, id); err == nil {
			m, _ := cfg.(map[string]any)
			w.sceneEntities(e.ID, m["entities"])
			return
		}
	}
	listed, _ := w.states[e.ID].Attributes["entity_id"].([]any)
	for _, v := range listed {
		if id, ok := v.(string); ok {
			w.hits = append(w.hits, sensitive.SceneState(w.entity(id), "")...)
		}
	}
	if _, known := w.states[e.ID]; !known {
		w.hits = append(w.hits, sensitive.Unknown("activate "+e.ID+", which hamcp does not know")...)
	}
}

func (w *walk) sceneEntities(scene string, v any) {
	switch ents := v.(type) {
	case map[string]any:
		for id, state := range ents {
			w.hits = append(w.hits, sensitive.SceneState(w.entity(strings.ToLower(id)), state)...)
		}
	case nil:
	default:
		w.hits = append(w.hits, sensitive.Unknown(scene+" sets entities hamcp cannot read")...)
	}
}

func (w *walk) item(ctx context.Context, kind homeassistant.ConfigKind, key string) (any, error) {
	raw, err := w.d.HA.GetConfigItem(ctx, kind, key)
	if err != nil {
		return nil, err
	}
	var cfg any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// ask turns what was found into the question for the user. prefix says what the call is.
func (w *walk) ask(prefix string) toolkit.Ask {
	return askOf(prefix, w.hits)
}

// maxShown bounds the list of reasons in a question; the rest are counted.
const maxShown = 6

func askOf(prefix string, hits []sensitive.Hit, extra ...sensitive.Class) toolkit.Ask {
	classes := sensitive.ClassesOf(append(hits, classHits(extra)...))
	if len(classes) == 0 {
		return toolkit.Ask{}
	}
	var whats []string
	for _, h := range hits {
		if !slices.Contains(whats, h.What) {
			whats = append(whats, h.What)
		}
	}
	if len(whats) > maxShown {
		whats = append(whats[:maxShown], fmt.Sprintf("and %d more", len(whats)-maxShown))
	}
	q := prefix
	if len(whats) > 0 {
		q += " — it would " + strings.Join(whats, "; ")
	}
	a := toolkit.Ask{Question: q + ". Allow it?"}
	for _, c := range classes {
		a.Classes = append(a.Classes, string(c))
	}
	return a
}

func classHits(cs []sensitive.Class) []sensitive.Hit {
	out := make([]sensitive.Hit, len(cs))
	for i, c := range cs {
		out[i] = sensitive.Hit{Class: c}
	}
	return out
}

// plain is a confirmation of one class with a fixed question, for tools whose risk does not depend on
// what they reach.
func plain(class sensitive.Class, question string) toolkit.Ask {
	return toolkit.Ask{Classes: []string{string(class)}, Question: question}
}

// serviceTarget is the target of an ha_call_service call: its own arguments, and the target keys
// Home Assistant also reads from the data.
func serviceTarget(a callServiceArgs) sensitive.Target {
	var t sensitive.Target
	t.Add(map[string]any{"entity_id": anyList(a.EntityID), "area_id": anyList(a.AreaID), "device_id": anyList(a.DeviceID), "label_id": anyList(a.LabelID)})
	t.Add(a.Data)
	if tg, ok := a.Data["target"]; ok {
		if m, ok := tg.(map[string]any); ok {
			t.Add(m)
		} else {
			t.Templated = true
		}
	}
	return t
}

func anyList(s []string) any {
	if len(s) == 0 {
		return nil
	}
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func callServiceConfirm(d Deps) *toolkit.Confirm[callServiceArgs] {
	return &toolkit.Confirm[callServiceArgs]{
		When: "the service does something in the policy table, however its target is given, also through a script, scene or automation it runs",
		Check: func(ctx context.Context, c *toolkit.Call, a callServiceArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			name := a.Domain + "." + a.Service
			w.service(ctx, name, serviceTarget(a), a.Data, 0)
			return w.ask("Call " + name), nil
		},
	}
}

// automationConfirm: an automation runs its actions later without asking anyone (and at once through
// automation.trigger), so writing one that does something sensitive needs the same confirmation as
// doing it. always are classes every call of the tool needs (an overwrite is a change of its own).
func automationConfirm[In any](d Deps, when string, cfgOf func(In) automationConfigArgs, what func(In) string, always ...sensitive.Class) *toolkit.Confirm[In] {
	return &toolkit.Confirm[In]{
		When: when,
		Check: func(ctx context.Context, c *toolkit.Call, in In) (toolkit.Ask, error) {
			w := newWalk(d)
			if cfg, err := cfgOf(in).parse(); err == nil { // a bad config is refused by the handler with its parse error
				w.config(ctx, cfg, 0)
			}
			return askOf(what(in), w.hits, always...), nil
		},
	}
}

// updateAutomationConfirm: an update is a change of its own; its new actions count as in
// ha_create_automation, and with merge the stored actions count too: changing only the triggers of an
// automation that unlocks the door makes it unlock the door when the model likes.
func updateAutomationConfirm(d Deps) *toolkit.Confirm[updateAutomationArgs] {
	return &toolkit.Confirm[updateAutomationArgs]{
		When: "always (`change`: it overwrites the automation); its actions count as in ha_create_automation, with merge the stored ones too",
		Check: func(ctx context.Context, c *toolkit.Call, a updateAutomationArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			if cfg, err := a.automationConfigArgs.parse(); err == nil {
				w.config(ctx, cfg, 0)
			}
			if a.Merge {
				id, _, err := resolveAutomation(ctx, d.HA, a.AutomationID)
				var stored any
				if err == nil {
					stored, err = w.item(ctx, homeassistant.KindAutomation, id)
				}
				if err != nil {
					w.hits = append(w.hits, sensitive.Unknown("keep the stored actions of "+a.AutomationID+", which hamcp cannot read")...)
				} else {
					w.config(ctx, stored, 0)
				}
			}
			return askOf("Overwrite the automation "+a.AutomationID, w.hits, sensitive.Change), nil
		},
	}
}

// configFileConfirm: writing a file always asks (it overwrites); YAML whose actions do something
// sensitive (automations.yaml, scripts.yaml, packages) counts that too, since a reload runs it.
func configFileConfirm(d Deps) *toolkit.Confirm[writeConfigArgs] {
	return &toolkit.Confirm[writeConfigArgs]{
		When: "always (`change`: it overwrites the file); YAML whose actions do something in the policy table counts that too",
		Check: func(ctx context.Context, c *toolkit.Call, a writeConfigArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			if isYAML(a.Path) {
				doc, err := yamlTree(a.Content)
				if err != nil {
					w.hits = append(w.hits, sensitive.Unknown("the YAML does not parse, so what it does is unknown")...)
				}
				w.config(ctx, doc, 0)
			}
			return askOf("Overwrite "+a.Path+" in Home Assistant's configuration", w.hits, sensitive.Change), nil
		},
	}
}

// yamlTree reads every document of a YAML text into plain maps, lists and strings, ignoring tags
// (Home Assistant's !include, !secret, !input), so no tag can hide an action from the walk. A key given
// twice in one mapping is an error: which value Home Assistant keeps is not for the walk to guess.
func yamlTree(text string) (any, error) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var docs []any
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		r := yamlReader{budget: maxYAMLNodes}
		docs = append(docs, r.plain(&n, 0))
		if r.err != nil {
			return docs, r.err
		}
	}
}

// maxYAMLNodes bounds the walk, so aliases that expand exponentially cost nothing.
const maxYAMLNodes = 200_000

type yamlReader struct {
	budget int
	err    error
}

func (r *yamlReader) plain(n *yaml.Node, depth int) any {
	r.budget--
	switch {
	case n == nil || r.err != nil:
		return nil
	case r.budget < 0 || depth > 200:
		r.err = errors.New("too many nodes (aliases expand too far) or nested too deep")
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return r.plain(n.Content[0], depth+1)
		}
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if _, dup := m[k]; dup {
				r.err = fmt.Errorf("line %d: key %q given twice", n.Content[i].Line, k)
				return nil
			}
			m[k] = r.plain(n.Content[i+1], depth+1)
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			l = append(l, r.plain(c, depth+1))
		}
		return l
	case yaml.AliasNode:
		return r.plain(n.Alias, depth+1)
	case yaml.ScalarNode:
		return n.Value
	}
	return nil
}

// maxAssistConfigs bounds how many scripts and scenes one Assist call reads to see what they do; the
// rest count as unknown.
const maxAssistConfigs = 30

// conversationConfirm: Assist carries out what a sentence asks on every entity exposed to it (and an
// LLM agent behind it does the same), so what it reaches cannot be read from the text: "unlock the
// front door", a script's name, another language. A call needs what the most sensitive exposed entity
// needs: the user un-exposes locks, alarms and garage doors from Assist, or confirms.
func conversationConfirm(d Deps) *toolkit.Confirm[conversationArgs] {
	return &toolkit.Confirm[conversationArgs]{
		When: "a lock, alarm panel or garage door, or a script or scene that reaches one, is exposed to Assist",
		Check: func(ctx context.Context, c *toolkit.Call, a conversationArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			w.load(ctx)
			if w.statesErr != nil { // Assist cannot be reached either: say why, and do nothing
				return toolkit.Ask{}, haError(w.statesErr, false, "")
			}
			hidden := hiddenFromAssist(ctx, d)
			ids := make([]string, 0, len(w.states))
			for id := range w.states {
				if !hidden[id] {
					ids = append(ids, id)
				}
			}
			slices.Sort(ids)
			read := 0
			for _, id := range ids {
				e := w.entity(id)
				switch domain, _, _ := strings.Cut(id, "."); domain {
				case "lock", "alarm_control_panel", "cover":
					for _, h := range sensitive.Service("homeassistant", "toggle", []sensitive.Entity{e}, true) {
						w.hits = append(w.hits, sensitive.Hit{Class: h.Class, What: "reach " + e.ID + " (exposed to Assist)"})
					}
				case "script", "scene":
					if read++; read > maxAssistConfigs {
						w.hits = append(w.hits, sensitive.Unknown("run scripts and scenes exposed to Assist that hamcp did not read")...)
						continue
					}
					if domain == "script" {
						w.script(ctx, e, 1)
					} else {
						w.scene(ctx, e)
					}
				}
			}
			return askOf("Send \""+a.Text+"\" to Assist, which can act on every entity exposed to it", w.hits), nil
		},
	}
}

// hiddenFromAssist lists the entities the user did not expose to Assist. Entities without a setting,
// and every entity when the list cannot be read, count as exposed.
func hiddenFromAssist(ctx context.Context, d Deps) map[string]bool {
	hidden := map[string]bool{}
	exposed, err := d.HA.ExposedEntities(ctx)
	if err != nil {
		return hidden
	}
	for id, to := range exposed {
		if v, ok := to["conversation"]; ok && !v {
			hidden[id] = true
		}
	}
	return hidden
}
