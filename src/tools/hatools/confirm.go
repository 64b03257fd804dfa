package hatools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// The confirmations of the Home Assistant tools (toolkit.Confirm), built on design.md §5b: whether a
// call needs the user is decided from Home Assistant's authority — its registries, the
// configurations it stores, and states read from its state machine for this decision, never from
// hamcp's mirror, which listens to a bus the model can write to. Targets by area, floor, device and
// label are resolved to entities; running a script or a scene, enabling or triggering an
// automation, changing a group, or writing any of them counts what they can do; and so does every
// automation of the user's that the call's own changes would start. What hamcp cannot resolve
// counts as the worst case. The walk also sums up what it read (Ask.Digest), so a yes covers this
// effect and no other.

// maxConfigs bounds how many configurations one decision reads (scripts, scenes, automations,
// blueprints); past it, what is left counts as unknown. Each is read once, so a ring of scripts or
// automations that start each other ends; the bound is for a home so large that one call could start
// hundreds of them.
const maxConfigs = 400

// walk collects what a set of service calls needs confirmed. It reads the states and registries at
// most once per call.
type walk struct {
	d         Deps
	states    map[string]homeassistant.State
	reg       *registry
	regRead   bool
	read      bool
	statesErr error
	entries   map[string]homeassistant.EntityEntry
	noEntry   map[string]bool // registry entries that could not be read: the worst case
	marked    map[string]string
	markRead  bool
	trig      *triggerIndex
	trigRead  bool
	trigErr   error
	// fail is Home Assistant out of reach while deciding: the call could not run either.
	fail    error
	seen    map[string]bool
	hits    []sensitive.Hit
	facts   map[string]bool
	configs int // configurations read, against maxConfigs
	// reserved lists the reserved event types the configuration being written fires (refused).
	reserved []string
}

func newWalk(d Deps) *walk {
	return &walk{d: d, seen: map[string]bool{}, facts: map[string]bool{}, entries: map[string]homeassistant.EntityEntry{}, noEntry: map[string]bool{}}
}

// fact records something the decision rests on, for the digest.
func (w *walk) fact(parts ...string) { w.facts[strings.Join(parts, "\x1f")] = true }

// digest sums up the facts and the hits, in an order that does not depend on map iteration.
func (w *walk) digest() string {
	for _, h := range w.hits {
		w.fact("hit", string(h.Class), h.What)
	}
	keys := make([]string, 0, len(w.facts))
	for k := range w.facts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sum := sha256.New()
	for _, k := range keys {
		sum.Write([]byte(k))
		sum.Write([]byte{0})
	}
	return hex.EncodeToString(sum.Sum(nil)[:16])
}

// load reads every state from Home Assistant's state machine, once per walk.
func (w *walk) load(ctx context.Context) {
	if w.read {
		return
	}
	w.read = true
	all, err := readStates(ctx, w.d.HA, true)
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

// markedSet is the entities any service on which counts (authority.go).
func (w *walk) markedSet(ctx context.Context) map[string]string {
	if !w.markRead {
		w.markRead = true
		a := authorityOf(w.d)
		a.watch(ctx)
		m, err := a.marked.get(ctx)
		if err != nil {
			m = map[string]string{}
			for _, id := range w.d.SensitiveEntities {
				m[strings.ToLower(strings.TrimSpace(id))] = "listed in the sensitive_entities option"
			}
		}
		w.marked = m
	}
	return w.marked
}

// triggers is the index of what starts the user's automations; nil when it cannot be read.
func (w *walk) triggers(ctx context.Context) *triggerIndex {
	if !w.trigRead {
		w.trigRead = true
		a := authorityOf(w.d)
		a.watch(ctx)
		w.trig, w.trigErr = a.triggers.get(ctx)
	}
	return w.trig
}

// unreadable records why the index of the user's automations could not be read: Home Assistant
// out of reach fails the call (it could not run either); anything else counts as the worst case.
func (w *walk) unreadable(what string) {
	if outOfReach(w.trigErr) {
		w.fail = w.trigErr
		return
	}
	w.hits = append(w.hits, sensitive.Unknown("hamcp cannot read which of your automations "+what+" would start")...)
}

// classes reads the registry's device class of the entities among ids that need one, in one call.
func (w *walk) classes(ctx context.Context, ids []string) {
	var need []string
	for _, id := range ids {
		if _, done := w.entries[id]; !done && strings.HasPrefix(id, "cover.") {
			need = append(need, id)
		}
	}
	if len(need) == 0 {
		return
	}
	got, err := w.d.HA.EntityEntries(ctx, need)
	for _, id := range need {
		w.entries[id] = got[id] // the zero entry: the registry does not know it
		w.noEntry[id] = err != nil
	}
}

// entity is one entity as the decision sees it. The device class is the registry's; only an
// entity the registry does not know (no unique id) is taken at its state's word, and an entity
// whose registry entry could not be read counts as a garage door.
func (w *walk) entity(id string) sensitive.Entity {
	e := sensitive.Entity{ID: id}
	s, known := w.states[id]
	if known {
		e.Name = s.FriendlyName()
	}
	if w.noEntry[id] {
		e.DeviceClass = "garage"
	} else if entry, ok := w.entries[id]; ok && entry.UniqueID != "" {
		e.DeviceClass = entry.Class()
	} else if known {
		e.DeviceClass, _ = s.Attributes["device_class"].(string)
	}
	if why, ok := w.marked[id]; ok {
		e.Marked, e.MarkedWhy = true, why
	}
	w.fact("entity", id, e.DeviceClass, e.MarkedWhy)
	return e
}

// resolve turns a target into the entities Home Assistant would act on for a service of domain, as
// its service helper does: entity ids ("all" = every entity of the domain), areas and floors (the
// entities in them and on their devices), devices (their entities) and labels (entities, devices and
// areas carrying them), and the members of groups among them. complete is false when part of it
// cannot be known here.
func (w *walk) resolve(ctx context.Context, domain string, t sensitive.Target) (ents []sensitive.Entity, complete bool) {
	w.load(ctx)
	w.markedSet(ctx)
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
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	slices.Sort(list)
	w.classes(ctx, list)
	for _, id := range list {
		ents = append(ents, w.entity(id))
	}
	w.fact("resolved", domain, strings.Join(list, ","), fmt.Sprint(complete))
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

// reach lists the entity ids a target names or reaches through the registries, without reading
// states: what a call may change, for finding the automations it starts. all is true for "all".
func (w *walk) reach(ctx context.Context, t sensitive.Target) (ids []string, all bool) {
	for _, id := range t.EntityIDs {
		switch {
		case id == "all":
			all = true
		case strings.Contains(id, "."):
			ids = append(ids, id)
		}
	}
	if len(t.AreaIDs)+len(t.FloorIDs)+len(t.DeviceIDs)+len(t.LabelIDs) > 0 {
		if reg := w.registry(ctx); reg != nil {
			ids = append(ids, reg.reached(t)...)
		} else {
			all = true
		}
	}
	return ids, all || t.Templated
}

// touchesMarked reports whether a target may reach an entity the user marked as sensitive.
func (w *walk) touchesMarked(ctx context.Context, t sensitive.Target) bool {
	marked := w.markedSet(ctx)
	if len(marked) == 0 {
		return false
	}
	ids, all := w.reach(ctx, t)
	if all {
		return true
	}
	return slices.ContainsFunc(ids, func(id string) bool { _, ok := marked[id]; return ok })
}

// service adds what calling domain.service on target (with data) needs, following the scripts,
// scenes and automations it runs or changes, and the user's automations its changes start.
func (w *walk) service(ctx context.Context, name string, t sensitive.Target, data map[string]any) {
	if sensitive.IsTemplate(name) {
		w.hits = append(w.hits, sensitive.Unknown(name+" is a template, so the service it calls is unknown until it runs")...)
		return
	}
	domain, service, ok := strings.Cut(strings.ToLower(strings.TrimSpace(name)), ".")
	if !ok {
		return
	}
	w.fact("service", name)
	if sensitive.Relevant(domain, service) || runsOthers(domain, service) || writesBehaviour(domain, service) || w.touchesMarked(ctx, t) {
		w.effects(ctx, name, domain, service, t, data)
	}
	w.follow(ctx, name, domain, service, t)
}

// effects adds what the service itself does to what it reaches.
func (w *walk) effects(ctx context.Context, name, domain, service string, t sensitive.Target, data map[string]any) {
	ents, complete := w.resolve(ctx, domain, t)
	w.hits = append(w.hits, sensitive.Service(domain, service, ents, complete)...)
	for _, e := range ents {
		w.hits = append(w.hits, sensitive.Marked(e, name)...)
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
			w.script(ctx, e)
		}
		if generic {
			for _, e := range runs("scene") {
				w.scene(ctx, e)
			}
			for _, e := range runs("automation") {
				w.automation(ctx, e, "enable")
			}
		}
	case domain == "script" && service != "turn_off" && service != "reload":
		w.script(ctx, w.entity("script."+service))
	case domain == "scene" && service == "turn_on":
		for _, e := range runs("scene") {
			w.scene(ctx, e)
		}
	case domain == "scene" && service == "apply":
		w.sceneEntities(ctx, "scene.apply", data["entities"])
	case domain == "scene" && service == "create":
		w.sceneCreate(ctx, data)
	case domain == "group" && service == "set":
		w.groupSet(ctx, data)
	case domain == "automation" && service == "trigger":
		for _, e := range runs("automation") {
			w.automation(ctx, e, "trigger")
		}
	case domain == "automation" && (service == "turn_on" || service == "toggle"):
		for _, e := range runs("automation") {
			w.automation(ctx, e, "enable")
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
		return service == "trigger" || service == "turn_on" || service == "toggle"
	}
	return false
}

// writesBehaviour reports whether a service writes something that acts later: a scene made on the
// fly, a group's members.
func writesBehaviour(domain, service string) bool {
	return domain == "scene" && service == "create" || domain == "group" && service == "set"
}

// follow adds the user's automations that the call's changes can start: a state trigger on an
// entity it changes (or a group, device or template that reads one), and automations listening to
// every service call.
func (w *walk) follow(ctx context.Context, name, domain, service string, t sensitive.Target) {
	if domain == "homeassistant" && (service == "update_entity" || service == "reload_all" || strings.HasPrefix(service, "reload")) {
		return // reads or reloads: no state the model chooses
	}
	ix := w.triggers(ctx)
	if ix == nil {
		w.unreadable(name)
		return
	}
	if len(ix.byEntity)+len(ix.byEvent)+len(ix.any)+len(ix.notification) == 0 {
		return
	}
	ids, all := w.reach(ctx, t)
	var autos []string
	why := map[string]string{}
	add := func(list []string, reason string) {
		for _, a := range list {
			if !slices.Contains(autos, a) {
				autos = append(autos, a)
				why[a] = reason
			}
		}
	}
	for _, id := range ids {
		add(ix.byEntity[id], "a change to "+id)
	}
	if all {
		prefix := domain + "."
		for e, list := range ix.byEntity {
			if domain == "homeassistant" || strings.HasPrefix(e, prefix) || t.Templated {
				add(list, "a change to "+e)
			}
		}
	}
	add(ix.byEvent["call_service"], "the call_service event of "+name)
	if domain == "persistent_notification" || domain == "notify" {
		add(ix.notification, "a notification")
	}
	add(ix.any, "any change")
	slices.Sort(autos)
	for _, a := range autos {
		w.startedBy(ctx, ix, a, why[a])
	}
}

// event adds what firing an event of type et can start.
func (w *walk) event(ctx context.Context, et string) {
	if sensitive.IsTemplate(et) {
		w.hits = append(w.hits, sensitive.Unknown("an event type given as a template may start any automation")...)
		return
	}
	et = strings.ToLower(strings.TrimSpace(et))
	if sensitive.ReservedEvent(et) {
		w.reserved = append(w.reserved, et)
		return
	}
	ix := w.triggers(ctx)
	if ix == nil {
		w.unreadable("the event " + et)
		return
	}
	var autos []string
	autos = append(autos, ix.byEvent[et]...)
	autos = append(autos, ix.any...)
	slices.Sort(autos)
	for _, a := range slices.Compact(autos) {
		w.startedBy(ctx, ix, a, "the event "+et)
	}
}

// startedBy walks one of the user's automations that the call would start, saying so in the hits.
func (w *walk) startedBy(ctx context.Context, ix *triggerIndex, id, reason string) {
	eid := ix.entityOf[id]
	if eid == "" {
		eid = "automation " + id
	}
	if !w.once("started:" + id) {
		return
	}
	before := len(w.hits)
	cfg, err := w.item(ctx, homeassistant.KindAutomation, id)
	if outOfReach(err) {
		w.fail = err
		return
	}
	if err != nil {
		w.hits = append(w.hits, sensitive.Unknown("start "+eid+" ("+reason+" starts it), whose actions hamcp cannot read")...)
		return
	}
	w.config(ctx, cfg)
	for i := before; i < len(w.hits); i++ {
		if !strings.HasPrefix(w.hits[i].What, "start ") { // a longer chain names its last link
			w.hits[i].What = "start " + eid + " (" + reason + " starts it), which would " + w.hits[i].What
		}
	}
}

// config walks an automation or script configuration's actions.
func (w *walk) config(ctx context.Context, cfg any) {
	if bp, ok := w.blueprintOf(cfg); ok {
		exp, err := w.expandBlueprint(ctx, bp)
		if err != nil {
			w.hits = append(w.hits, sensitive.Unknown("run the blueprint "+bp.path+", which hamcp cannot read ("+err.Error()+")")...)
			return
		}
		cfg = exp
	}
	for _, c := range sensitive.Calls(cfg) {
		switch {
		case c.Blueprint != "":
			// a use_blueprint below the top (a blueprint input that is itself one): unknown
			w.hits = append(w.hits, sensitive.Unknown("run a nested blueprint hamcp does not follow")...)
		case c.Event != "":
			w.event(ctx, c.Event)
		default:
			w.service(ctx, c.Service, c.Target, c.Data)
		}
	}
}

func (w *walk) once(id string) bool {
	if w.seen[id] {
		return false
	}
	w.seen[id] = true
	return true
}

func (w *walk) script(ctx context.Context, e sensitive.Entity) {
	if !w.once(e.ID) {
		return
	}
	key := strings.TrimPrefix(e.ID, "script.")
	cfg, err := w.item(ctx, homeassistant.KindScript, key)
	if err != nil {
		w.hits = append(w.hits, sensitive.Unknown("run "+e.ID+", whose actions hamcp cannot read ("+err.Error()+")")...)
		return
	}
	w.config(ctx, cfg)
}

// automation walks an automation the call triggers or enables (verb says which, for the question).
func (w *walk) automation(ctx context.Context, e sensitive.Entity, verb string) {
	if !w.once(verb + ":" + e.ID) {
		return
	}
	w.load(ctx)
	id, _ := w.states[e.ID].Attributes["id"].(string)
	if id == "" {
		w.hits = append(w.hits, sensitive.Unknown(verb+" "+e.ID+", whose actions hamcp cannot read (it has no id)")...)
		return
	}
	before := len(w.hits)
	cfg, err := w.item(ctx, homeassistant.KindAutomation, id)
	if err != nil {
		w.hits = append(w.hits, sensitive.Unknown(verb+" "+e.ID+", whose actions hamcp cannot read ("+err.Error()+")")...)
		return
	}
	w.config(ctx, cfg)
	if verb == "enable" {
		for i := before; i < len(w.hits); i++ {
			w.hits[i].What = "enable " + e.ID + ", which can " + w.hits[i].What
		}
	}
}

// scene counts the states a scene sets: from its stored configuration, else (a scene made with
// scene.create, or one hamcp cannot read) every lock, alarm panel and garage door it lists, whatever
// state it sets them to.
func (w *walk) scene(ctx context.Context, e sensitive.Entity) {
	if !w.once(e.ID) {
		return
	}
	w.load(ctx)
	if id, _ := w.states[e.ID].Attributes["id"].(string); id != "" {
		if cfg, err := w.item(ctx, homeassistant.KindScene, id); err == nil {
			m, _ := cfg.(map[string]any)
			w.sceneEntities(ctx, e.ID, m["entities"])
			return
		}
	}
	listed, _ := w.states[e.ID].Attributes["entity_id"].([]any)
	var ids []string
	for _, v := range listed {
		if id, ok := v.(string); ok {
			ids = append(ids, strings.ToLower(id))
		}
	}
	w.fact("scene", e.ID, strings.Join(ids, ","))
	w.classes(ctx, ids)
	for _, id := range ids {
		w.hits = append(w.hits, sensitive.SceneState(w.entity(id), "")...)
		w.hits = append(w.hits, sensitive.Marked(w.entity(id), "set by "+e.ID)...)
	}
	if _, known := w.states[e.ID]; !known {
		w.hits = append(w.hits, sensitive.Unknown("activate "+e.ID+", which hamcp does not know")...)
	}
}

func (w *walk) sceneEntities(ctx context.Context, scene string, v any) {
	switch ents := v.(type) {
	case map[string]any:
		ids := make([]string, 0, len(ents))
		for id := range ents {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		w.classes(ctx, lowered(ids))
		for _, id := range ids {
			e := w.entity(strings.ToLower(id))
			w.hits = append(w.hits, sensitive.SceneState(e, ents[id])...)
			w.hits = append(w.hits, sensitive.Marked(e, "set by "+scene)...)
		}
	case nil:
	default:
		w.hits = append(w.hits, sensitive.Unknown(scene+" sets entities hamcp cannot read")...)
	}
}

// sceneCreate is scene.create: the scene it writes can be activated later, so what it sets counts
// now. Entities it snapshots are set back to whatever state they are in when it is made.
func (w *walk) sceneCreate(ctx context.Context, data map[string]any) {
	id, _ := data["scene_id"].(string)
	w.sceneEntities(ctx, "scene."+id, data["entities"])
	snap, _ := idList(data["snapshot_entities"])
	w.classes(ctx, snap)
	for _, sid := range snap {
		w.hits = append(w.hits, sensitive.SceneState(w.entity(sid), "")...)
	}
}

// groupSet is group.set: a group's members are what any later call on the group reaches.
func (w *walk) groupSet(ctx context.Context, data map[string]any) {
	obj, _ := data["object_id"].(string)
	var ids []string
	for _, k := range []string{"entities", "add_entities"} {
		l, known := idList(data[k])
		if !known {
			w.hits = append(w.hits, sensitive.Unknown("group."+obj+" gets members hamcp cannot read")...)
		}
		ids = append(ids, l...)
	}
	w.markedSet(ctx)
	w.classes(ctx, ids)
	for _, id := range ids {
		e := w.entity(id)
		for _, h := range sensitive.Service("homeassistant", "toggle", []sensitive.Entity{e}, true) {
			w.hits = append(w.hits, sensitive.Hit{Class: h.Class, What: "make " + e.ID + " a member of group." + obj + ", which any call on the group then reaches"})
		}
		w.hits = append(w.hits, sensitive.Marked(e, "group.set")...)
	}
}

// idList reads entity ids given as a string (comma-separated) or a list; known is false for a
// template or another shape.
func idList(v any) (ids []string, known bool) {
	var t sensitive.Target
	t.Add(map[string]any{"entity_id": v})
	return t.EntityIDs, !t.Templated
}

func lowered(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strings.ToLower(id)
	}
	return out
}

func (w *walk) item(ctx context.Context, kind homeassistant.ConfigKind, key string) (any, error) {
	if w.configs++; w.configs > maxConfigs {
		w.fact("too many configurations")
		return nil, fmt.Errorf("this call reaches more than %d scripts, scenes and automations, more than hamcp reads for one decision", maxConfigs)
	}
	raw, err := w.d.HA.GetConfigItem(ctx, kind, key)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	w.fact("config", string(kind), key, hex.EncodeToString(sum[:]))
	var cfg any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// ask turns what was found into the question for the user, bound to what was read to decide
// (Ask.Digest). prefix says what the call is; always are classes every call of the tool needs.
func (w *walk) ask(prefix string, always ...sensitive.Class) (toolkit.Ask, error) {
	if w.fail != nil {
		return toolkit.Ask{}, haError(w.fail, false, "")
	}
	a := askOf(prefix, w.hits, always...)
	if len(a.Classes) > 0 {
		a.Digest = w.digest()
	}
	return a, nil
}

// writable refuses a configuration the model wrote that fires an event Home Assistant fires
// itself (design.md §5b rule 4): listeners take those as facts.
func (w *walk) writable(field string) error {
	if len(w.reserved) == 0 {
		return nil
	}
	return toolkit.InvalidArg(field, "fires "+strings.Join(slices.Compact(w.reserved), ", ")+", an event Home Assistant fires itself, "+
		"which an assistant may not fire; nothing was saved", `{"event": "my_custom_event"}`)
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
