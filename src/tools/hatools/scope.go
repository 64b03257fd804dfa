package hatools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// The expose_scope option (issue 21). With expose_scope=assist hamcp sees and acts only on the
// entities the user exposed to Assist, like Home Assistant's own MCP server. One guard around every
// Home Assistant tool (Tools) does it, so a tool added later is scoped without knowing:
//   - before the call, every entity id in the arguments must be exposed (entity_id fields) or at
//     least not be a known, unexposed entity (any other string); templates are refused (a template
//     reads any state); targets by area, device, floor or label must reach exposed entities only;
//   - after the call, objects about unexposed entities are dropped from the answer and unexposed
//     entity ids left in text are replaced, in results and in error messages.
// Live events (events.go) and the listings whose counts would tell (states, search, areas, devices)
// filter before paging. The root tools (files, SQL, commands) are the user's separate grants and
// are not limited.
//
// Which entities are exposed comes from Home Assistant alone (homeassistant/expose_entity/list),
// never from the state mirror or an event: an event only drops the cached list (a forged one costs
// a re-read), so nothing the model writes can widen the scope.

// ScopeAll and ScopeAssist are the option's values.
const (
	ScopeAll    = "all"
	ScopeAssist = "assist"
)

// scopeTTL bounds how long a change of exposure Home Assistant did not announce stays unseen:
// exposing an entity with a registry entry fires entity_registry_updated (its options change), one
// without (a YAML entity with no unique id) fires nothing.
const scopeTTL = 30 * time.Second

// neverExposed mirrors CLOUD_NEVER_EXPOSED_ENTITIES: async_should_expose refuses them whatever
// their setting says.
var neverExposed = map[string]bool{"group.all_locks": true}

// hiddenMark replaces an unexposed entity id in text the model reads.
const hiddenMark = "[not exposed]"

// Scope is expose_scope=assist for one Home Assistant client. A nil *Scope is expose_scope=all.
type Scope struct {
	ha       *homeassistant.Client
	view     cached[*scopeView]
	watchMu  sync.Mutex
	watching bool
	// refreshing is set while a background read runs for a caller that cannot wait (live events).
	refreshing sync.Mutex
}

// NewScope returns the scope for an expose_scope value: nil for all (no limit).
func NewScope(ha *homeassistant.Client, mode string) *Scope {
	if mode != ScopeAssist {
		return nil
	}
	s := &Scope{ha: ha}
	s.view = cached[*scopeView]{ttl: scopeTTL, load: s.load}
	return s
}

// scopeView is one reading of the exposure list: O(1) per entity.
type scopeView struct {
	exposed map[string]bool // exposed to Assist: the only entities the tools see
	known   map[string]bool // every entity Home Assistant's registry or exposure list knows
	domains map[string]bool // the domains of the known entities
	mirror  *homeassistant.StateMirror
}

// load reads the exposure list and the entity registry. An entity with no setting for Assist counts
// as not exposed (fail closed); in practice Home Assistant's conversation agent records its default
// for every entity it looks at.
func (s *Scope) load(ctx context.Context) (*scopeView, error) {
	list, err := s.ha.ExposedEntities(ctx)
	if err != nil {
		return nil, err
	}
	v := &scopeView{exposed: make(map[string]bool, len(list)), known: make(map[string]bool, len(list)), mirror: s.ha.Mirror()}
	for id, to := range list {
		v.known[id] = true
		if to["conversation"] && !neverExposed[id] {
			v.exposed[id] = true
		}
	}
	reg, err := registryOf(s.ha).get(ctx)
	if err != nil {
		return nil, err
	}
	for id := range reg.entities {
		v.known[id] = true
	}
	v.domains = map[string]bool{}
	for id := range v.known {
		domain, _, _ := strings.Cut(id, ".")
		v.domains[domain] = true
	}
	return v, nil
}

// watch drops the list when the entity registry changes (exposure settings live in its options).
func (s *Scope) watch(ctx context.Context) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.watching {
		return
	}
	if _, err := s.ha.SubscribeEvents(ctx, "entity_registry_updated", func(homeassistant.Event) { s.view.invalidate() }); err != nil {
		return // the TTL stays in charge; retried on the next read
	}
	s.watching = true
}

// current is the scope for a call: an error when Home Assistant cannot say what is exposed, since
// then nothing may be shown.
func (s *Scope) current(ctx context.Context) (*scopeView, error) {
	s.watch(ctx)
	v, err := s.view.get(ctx)
	if err != nil {
		return nil, &toolkit.Error{Code: "backend_unavailable",
			Message: "expose_scope is assist, and hamcp could not read which entities are exposed to Assist: " + err.Error(),
			Hint:    "nothing was read or changed; try again when Home Assistant answers"}
	}
	return v, nil
}

// cachedView is the last reading when still fresh, for callers that must not wait (an event
// delivery); otherwise nil, and a background read is started.
func (s *Scope) cachedView() *scopeView {
	if v, ok := s.view.fresh(); ok && v != nil {
		return v
	}
	if s.refreshing.TryLock() {
		go func() {
			defer s.refreshing.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _ = s.current(ctx)
		}()
	}
	return nil
}

// sees reports whether the tools may show or act on id.
func (v *scopeView) sees(id string) bool { return v.exposed[id] }

// hides reports whether id is an entity the tools must not show: a known entity not exposed.
// Strings that only look like entity ids (service names, file names) are not entities.
func (v *scopeView) hides(id string) bool {
	if v.exposed[id] {
		return false
	}
	if v.known[id] || neverExposed[id] {
		return true
	}
	if v.mirror != nil {
		_, ok := v.mirror.Get(id)
		return ok
	}
	return false
}

// entityShaped reports whether s has the form domain.object_id.
func entityShaped(s string) bool {
	dot := strings.IndexByte(s, '.')
	if dot <= 0 || dot == len(s)-1 || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i != dot && !idByte(s[i]) {
			return false
		}
	}
	return true
}

func idByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' }

// firstHidden returns the first hidden entity id inside text ("" if none): every domain.object
// token is looked up once, so the cost is linear in the text.
func (v *scopeView) firstHidden(text string) string {
	found := ""
	v.scan(text, func(tok string) bool {
		if v.hides(tok) {
			found = tok
			return false
		}
		return true
	})
	return found
}

// scrub replaces every hidden entity id inside text.
func (v *scopeView) scrub(text string) string {
	if strings.IndexByte(text, '.') < 0 {
		return text
	}
	var b strings.Builder
	last := 0
	v.scanAt(text, func(start, end int) bool {
		if v.hides(text[start:end]) {
			b.WriteString(text[last:start])
			b.WriteString(hiddenMark)
			last = end
		}
		return true
	})
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

func (v *scopeView) scan(text string, f func(tok string) bool) {
	v.scanAt(text, func(s, e int) bool { return f(text[s:e]) })
}

// scanAt calls f with the bounds of every maximal domain.object token of text.
func (v *scopeView) scanAt(text string, f func(start, end int) bool) {
	for i := 0; i < len(text); i++ {
		if text[i] != '.' {
			continue
		}
		s := i
		for s > 0 && idByte(text[s-1]) {
			s--
		}
		e := i + 1
		for e < len(text) && idByte(text[e]) {
			e++
		}
		if s < i && e > i+1 && !f(s, e) {
			return
		}
		i = e - 1
	}
}

// entityKeys are the argument and result keys whose values are entity ids.
var entityKeys = map[string]bool{"entity_id": true, "entity_ids": true, "entities": true, "helper_id": true}

// refusedInScope are tools that cannot be narrowed to the exposed entities.
var refusedInScope = map[string]string{
	"ha_render_template": "a template can read the state of every entity, exposed or not",
	"ha_fire_event":      "an event can start automations that act on entities not exposed to Assist",
}

// notExposed is the error for an entity outside the scope; naming it tells the model nothing new,
// since it named it.
func notExposed(field, id string) error {
	return &toolkit.Error{Code: "not_exposed",
		Message: fmt.Sprintf("%s %q is not exposed to Assist, and expose_scope=assist limits hamcp to the entities that are; nothing was read or changed", field, id),
		Hint:    "use an exposed entity (ha_search_entities lists them); the user exposes more under Settings → Voice assistants → Expose"}
}

// checkArgs refuses arguments that name or reach an entity outside the scope.
func (v *scopeView) checkArgs(args map[string]any) error {
	return v.checkValue("arguments", "", args)
}

func (v *scopeView) checkValue(path, key string, val any) error {
	switch x := val.(type) {
	case map[string]any:
		for k, e := range x {
			if entityShaped(k) && v.hides(k) {
				return notExposed(path, k)
			}
			if err := v.checkValue(path+"."+k, k, e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := v.checkValue(path, key, e); err != nil {
				return err
			}
		}
	case string:
		if sensitive.IsTemplate(x) || strings.Contains(x, "{{") || strings.Contains(x, "{%") {
			return &toolkit.Error{Code: "not_exposed",
				Message: "expose_scope=assist refuses templates in " + strings.TrimPrefix(path, "arguments.") + ": a template can read the state of every entity, exposed or not",
				Hint:    "write the values themselves, naming exposed entities only"}
		}
		if entityKeys[key] {
			for _, id := range strings.Split(x, ",") {
				if err := v.checkEntityArg(path, strings.TrimSpace(id)); err != nil {
					return err
				}
			}
			return nil
		}
		if id := v.firstHidden(x); id != "" {
			return notExposed(strings.TrimPrefix(path, "arguments."), id)
		}
	}
	return nil
}

// checkEntityArg: a value given as an entity id must be an exposed one. Patterns (ha_subscribe_events
// light.*) pass: what they match is filtered on the way out.
func (v *scopeView) checkEntityArg(path, id string) error {
	switch {
	case id == "" || id == "none" || strings.ContainsAny(id, "*?["):
		return nil
	case id == "all":
		return &toolkit.Error{Code: "not_exposed", Message: `entity_id "all" reaches entities not exposed to Assist, and expose_scope=assist limits hamcp to the exposed ones; nothing was changed`,
			Hint: "name the exposed entities (ha_search_entities lists them)"}
	case !v.sees(strings.ToLower(id)):
		return notExposed(strings.TrimPrefix(path, "arguments."), id)
	}
	return nil
}

// checkTargets refuses service calls (ha_call_service, and the actions of a configuration being
// written) whose area, floor, device or label target reaches an entity not exposed: Home Assistant
// would act on all of them.
func (v *scopeView) checkTargets(ctx context.Context, d Deps, tool string, args map[string]any) error {
	type call struct {
		service string
		target  sensitive.Target
	}
	var calls []call
	if tool == "ha_call_service" {
		var a callServiceArgs
		if b, err := json.Marshal(args); err == nil && json.Unmarshal(b, &a) == nil {
			calls = append(calls, call{a.Domain + "." + a.Service, serviceTarget(a)})
		}
	} else {
		configs := []any{args}
		for k, val := range args {
			if text, ok := val.(string); ok && strings.HasSuffix(k, "yaml") {
				tree, err := yamlTree(text)
				if err != nil {
					return nil // the tool reports the YAML error itself
				}
				configs = append(configs, tree)
			}
		}
		for _, cfg := range configs {
			for _, c := range sensitive.Calls(cfg) {
				calls = append(calls, call{c.Service, c.Target})
			}
		}
	}
	for _, c := range calls {
		t := c.target
		if len(t.AreaIDs)+len(t.FloorIDs)+len(t.DeviceIDs)+len(t.LabelIDs) == 0 && !t.Templated {
			continue // entity ids alone: checkArgs saw them
		}
		if t.Templated {
			return &toolkit.Error{Code: "not_exposed", Message: "the target of " + c.service + " is computed when it runs, so hamcp cannot keep it to the entities exposed to Assist (expose_scope=assist); nothing was changed",
				Hint: "name exposed entities in entity_id"}
		}
		ids, all := newWalk(d).reach(ctx, t)
		if all {
			return &toolkit.Error{Code: "not_exposed", Message: "hamcp could not resolve what the target of " + c.service + " reaches, so it cannot keep it to the entities exposed to Assist; nothing was changed",
				Hint: "name exposed entities in entity_id"}
		}
		domain, _, _ := strings.Cut(c.service, ".")
		n := 0
		for _, id := range ids {
			if actsOn(v, domain, id) && !v.sees(id) {
				n++
			}
		}
		if n > 0 {
			return &toolkit.Error{Code: "not_exposed",
				Message: fmt.Sprintf("the area, floor, device or label target of %s reaches %d entities not exposed to Assist, and Home Assistant would act on them too; expose_scope=assist limits hamcp to exposed entities, so nothing was changed", c.service, n),
				Hint:    "name the exposed entities in entity_id instead (ha_search_entities with the area lists them)"}
		}
	}
	return nil
}

// actsOn reports whether a service of domain acting on an area or device would touch id: an entity
// service acts on its own domain's entities; homeassistant.* and services of domains without
// entities (zwave_js.set_value, mqtt.publish…) may act on any.
func actsOn(v *scopeView, domain, id string) bool {
	if domain == "homeassistant" || domain == "" {
		return true
	}
	return strings.HasPrefix(id, domain+".") || !v.domains[domain]
}

// clean removes what the model may not see from a tool's output.
func (v *scopeView) clean(out any) (any, error) {
	switch x := out.(type) {
	case nil:
		return nil, nil
	case toolkit.Contents:
		return out, nil // images and audio: the arguments named an exposed entity
	case toolkit.Text:
		return toolkit.Text(v.scrub(string(x))), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return out, nil // shape reports it
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return out, nil
	}
	g, _ = v.cleanValue("", g)
	cleaned, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(cleaned), nil
}

// cleanValue returns the value with hidden entities removed; keep is false when the whole value is
// about a hidden entity (an object whose entity_id is one, or the id itself in a list).
func (v *scopeView) cleanValue(key string, val any) (any, bool) {
	switch x := val.(type) {
	case map[string]any:
		if id, ok := x["entity_id"].(string); ok && entityShaped(id) && !v.sees(id) {
			return nil, false
		}
		for k, e := range x {
			if entityShaped(k) && v.hides(k) {
				delete(x, k)
				continue
			}
			ne, keep := v.cleanValue(k, e)
			if !keep {
				if _, isList := e.([]any); !isList {
					delete(x, k)
					continue
				}
			}
			x[k] = ne
		}
		return x, true
	case []any:
		out := x[:0]
		for _, e := range x {
			if ne, keep := v.cleanValue(key, e); keep {
				out = append(out, ne)
			}
		}
		return out, true
	case string:
		if entityKeys[key] && entityShaped(x) && !v.sees(x) {
			return nil, false
		}
		if entityShaped(x) && v.hides(x) {
			return nil, false
		}
		return v.scrub(x), true
	}
	return val, true
}

// cleanError scrubs hidden entity ids from an error's text.
func (v *scopeView) cleanError(err error) error {
	e := toolkit.AsError(err)
	c := *e
	c.Message, c.Hint = v.scrub(c.Message), v.scrub(c.Hint)
	return &c
}

// guard installs the scope on one tool.
func (s *Scope) guard(d Deps, t *toolkit.Tool) {
	if t.Category() != "" {
		return // a root tool: the user's own grant, not limited (DOCS.md)
	}
	name := t.Name()
	t.Guard(func(ctx context.Context, args map[string]any, next func(context.Context) (any, error)) (any, error) {
		if why, ok := refusedInScope[name]; ok {
			return nil, &toolkit.Error{Code: "not_exposed", Message: name + " is not available with expose_scope=assist: " + why,
				Hint: "the hamcp administrator sets expose_scope to all to use it"}
		}
		v, err := s.current(ctx)
		if err != nil {
			return nil, err
		}
		if err := v.checkArgs(args); err != nil {
			return nil, err
		}
		if !t.ReadOnly() {
			if err := v.checkTargets(ctx, d, name, args); err != nil {
				return nil, err
			}
			if err := v.checkReplaced(ctx, d, name, args); err != nil {
				return nil, err
			}
		}
		out, err := next(withScope(ctx, v))
		if err != nil {
			return nil, v.cleanError(err)
		}
		return v.clean(out)
	})
}

// checkReplaced refuses overwriting or deleting a stored configuration that belongs to, or names,
// an entity outside the scope. The model reads such a configuration with the hidden ids taken out,
// so a save of what it read would drop the user's own references; and the item itself may be one
// the user did not expose. A restore from the history counts what the version would write back too.
func (v *scopeView) checkReplaced(ctx context.Context, d Deps, tool string, args map[string]any) error {
	str := func(k string) string { s, _ := args[k].(string); return s }
	var kind, id, entityID, at string // at: where the item is now, when not at id
	var err error
	switch action := str("action"); {
	case tool == "ha_update_automation" || tool == "ha_delete_automation":
		kind = KindAutomation
		id, entityID, err = resolveAutomation(ctx, d.HA, str("automation_id"))
	case tool == "ha_manage_scripts" && (action == "update" || action == "delete"):
		kind = KindScript
		id, entityID, err = resolveScript(ctx, d.HA, str("script_id"))
	case tool == "ha_manage_scenes" && (action == "update" || action == "delete"):
		kind = KindScene
		id, entityID, err = resolveScene(ctx, d.HA, str("scene_id"))
	case tool == "ha_manage_dashboards" && (action == "save" || action == "delete"):
		kind, id = KindDashboard, cmp.Or(str("url_path"), "lovelace")
	case tool == "ha_config_history" && action == "restore":
		k, ok := kindOf(str("item"))
		if !ok || d.History == nil {
			return nil // the handler refuses it with the reason
		}
		kind, id = k.kind, strings.SplitN(str("item"), ":", 2)[1]
		at = id
		n, _ := args["version"].(float64)
		if ver, gerr := d.History.Get(ctx, str("item"), int(n)); gerr == nil {
			if hidden := v.firstHidden(string(ver.Config)); hidden != "" {
				return notExposed("version", hidden)
			}
			// The item may be elsewhere now (an entity renamed since): what the restore replaces is there.
			if at, err = k.at(ctx, d, id, ver.Config); err != nil {
				return nil // the handler reports an item it cannot find
			}
		}
		if kind == KindEntity || kind == KindHelper {
			entityID = at
		}
	default:
		return nil
	}
	if err != nil {
		return nil // the handler reports an item it cannot find
	}
	if entityID != "" && v.hides(entityID) {
		return notExposed("the item", entityID)
	}
	k, ok := kindOf(kind + ":" + id)
	if !ok {
		return nil
	}
	if at == "" {
		at = id
	}
	stored, _, rerr := k.read(ctx, d, at)
	if rerr != nil {
		return rerr
	}
	if v.firstHidden(string(stored)) != "" {
		return &toolkit.Error{Code: "not_exposed", Message: kind + " " + id + " refers to entities not exposed to Assist, and expose_scope=assist " +
			"shows it without them: replacing or deleting it here would lose them, so nothing was changed",
			Hint: "the user edits it in Home Assistant, or exposes the entities it uses"}
	}
	return nil
}

type scopeKey struct{}

// withScope hands the call's reading of the scope to handlers that filter before paging.
func withScope(ctx context.Context, v *scopeView) context.Context {
	return context.WithValue(ctx, scopeKey{}, v)
}

// scopeOf is the call's scope, nil when every entity is in it.
func scopeOf(ctx context.Context) *scopeView {
	v, _ := ctx.Value(scopeKey{}).(*scopeView)
	return v
}

// inScope keeps the states the call may see (all of them without a scope).
func inScope(ctx context.Context, all []homeassistant.State) []homeassistant.State {
	v := scopeOf(ctx)
	if v == nil {
		return all
	}
	return slices.DeleteFunc(slices.Clone(all), func(s homeassistant.State) bool { return !v.sees(s.EntityID) })
}

// resource scopes a resource's reads the way guard scopes a tool's calls.
func (s *Scope) resource(r *toolkit.Resource) {
	inner := r.Handler
	r.Handler = func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		v, err := s.current(ctx)
		if err != nil {
			return nil, err
		}
		if id, ok := strings.CutPrefix(req.Params.URI, entityURIPrefix); ok && !v.sees(id) {
			return nil, mcp.ResourceNotFoundError(req.Params.URI) // as if it did not exist: the same answer as a typo
		}
		res, err := inner(withScope(ctx, v), req)
		if err != nil || res == nil {
			return res, err
		}
		for _, c := range res.Contents {
			if c.Text == "" {
				continue
			}
			var g any
			dec := json.NewDecoder(strings.NewReader(c.Text))
			dec.UseNumber()
			if dec.Decode(&g) != nil {
				c.Text = v.scrub(c.Text)
				continue
			}
			g, _ = v.cleanValue("", g)
			b, err := json.Marshal(g)
			if err != nil {
				return nil, err
			}
			c.Text = string(b)
		}
		return res, nil
	}
}

// notifies reports whether a change of id may be announced to resource subscribers: the URI names
// the entity, and the timing tells that it changed.
func (s *Scope) notifies(id string) bool {
	if s == nil {
		return true
	}
	v := s.cachedView()
	return v != nil && v.sees(id)
}

// admits reports whether a live event may reach the session: every entity it is about is exposed
// and its message names no other. Without a current reading of the scope nothing passes (an event
// cannot wait for Home Assistant's answer); the reading is refreshed meanwhile.
func (s *Scope) admits(data map[string]any, msg []byte) bool {
	if s == nil {
		return true
	}
	v := s.cachedView()
	if v == nil {
		return false
	}
	for _, id := range eventEntities(data) {
		if !v.sees(id) {
			return false
		}
	}
	return v.firstHidden(string(msg)) == ""
}

// scopedRegistry is the registry a listing may show under the call's scope: only the exposed
// entities, and only the devices that carry one (a device's name and model tell what it is).
// Areas, floors and labels are the user's names for places, not entities, and stay.
func scopedRegistry(ctx context.Context, r *registry) *registry {
	v := scopeOf(ctx)
	if v == nil || r == nil {
		return r
	}
	out := &registry{areas: r.areas, floors: r.floors, labels: r.labels,
		deviceBy: map[string]*homeassistant.Device{}, entities: map[string]*homeassistant.DisplayEntity{}}
	for id, e := range r.entities {
		if v.sees(id) {
			out.entities[id] = e
			if d := r.deviceBy[e.DeviceID]; d != nil {
				out.deviceBy[d.ID] = d
			}
		}
	}
	for _, d := range r.devices {
		if out.deviceBy[d.ID] != nil {
			out.devices = append(out.devices, d)
		}
	}
	return out
}
