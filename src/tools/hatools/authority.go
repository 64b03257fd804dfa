package hatools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
)

// What the confirmations decide from, besides the configuration they read fresh for each call:
// facts from Home Assistant's registries and configurations that change rarely, cached per client.
// Nothing here is fed by what an event says: an event only drops a cache (a forged one costs a
// re-read), and the states they are built from are read from the state machine itself.

// cached is one value read from Home Assistant, kept until ttl passes or invalidate drops it.
type cached[T any] struct {
	ttl  time.Duration
	load func(ctx context.Context) (T, error)

	mu      sync.Mutex
	val     T
	at      time.Time
	gen     uint64
	loading sync.Mutex
}

func (c *cached[T]) fresh() (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.val, !c.at.IsZero() && time.Since(c.at) < c.ttl
}

func (c *cached[T]) get(ctx context.Context) (T, error) {
	if v, ok := c.fresh(); ok {
		return v, nil
	}
	c.loading.Lock()
	defer c.loading.Unlock()
	if v, ok := c.fresh(); ok {
		return v, nil
	}
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	v, err := c.load(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.val = v
	if gen == c.gen { // nothing changed while reading; otherwise read again next time
		c.at = time.Now()
	}
	return v, nil
}

func (c *cached[T]) invalidate() {
	c.mu.Lock()
	c.gen++
	c.at = time.Time{}
	c.mu.Unlock()
}

// authority is the per-client set of caches.
type authority struct {
	ha       *homeassistant.Client
	marked   cached[map[string]string] // entity id → why any service on it counts
	triggers cached[*triggerIndex]

	watchMu  sync.Mutex
	watching bool
}

var authorities sync.Map // *homeassistant.Client → *authority

// markedTTL and triggerTTL bound how long a change Home Assistant did not announce (a missed
// event across a reconnect) can go unseen. The model's own changes drop the caches at once.
const (
	markedTTL  = time.Minute
	triggerTTL = 5 * time.Minute
)

func authorityOf(d Deps) *authority {
	if a, ok := authorities.Load(d.HA); ok {
		return a.(*authority)
	}
	a := &authority{ha: d.HA}
	a.marked = cached[map[string]string]{ttl: markedTTL, load: func(ctx context.Context) (map[string]string, error) { return loadMarked(ctx, d) }}
	a.triggers = cached[*triggerIndex]{ttl: triggerTTL, load: func(ctx context.Context) (*triggerIndex, error) { return loadTriggers(ctx, d) }}
	got, _ := authorities.LoadOrStore(d.HA, a)
	return got.(*authority)
}

// watch drops the caches when Home Assistant says their sources changed: the registries, and a
// reload of automations (which the UI's editor and automation.reload both do).
func (a *authority) watch(ctx context.Context) {
	a.watchMu.Lock()
	defer a.watchMu.Unlock()
	if a.watching {
		return
	}
	for _, ev := range registryEvents {
		if _, err := a.ha.SubscribeEvents(ctx, ev, func(homeassistant.Event) { a.marked.invalidate(); a.triggers.invalidate() }); err != nil {
			return
		}
	}
	if _, err := a.ha.SubscribeEvents(ctx, "automation_reloaded", func(homeassistant.Event) { a.triggers.invalidate() }); err != nil {
		return
	}
	a.watching = true
}

// guardedDomains are the domains whose entities open, unlock or disarm by themselves; an opener
// on the same device (a relay switch, a button) is counted with them.
func guardedEntity(id, class string) bool {
	switch d, _, _ := strings.Cut(id, "."); d {
	case "lock", "alarm_control_panel":
		return true
	case "cover":
		return class == "garage" || class == "gate"
	}
	return false
}

// openerDomains are the domains of entities that can work a lock, a garage door or a gate when
// they sit on its device.
var openerDomains = []string{"switch", "button", "input_button", "valve", "siren"}

// loadMarked lists the entities any service on which counts: the ones the user listed in the
// sensitive_entities option, and the switches and buttons on the device of a lock, an alarm panel,
// or a garage door or gate (the registry's device class, not the state's).
func loadMarked(ctx context.Context, d Deps) (map[string]string, error) {
	out := map[string]string{}
	for _, id := range d.SensitiveEntities {
		out[strings.ToLower(strings.TrimSpace(id))] = "listed in the sensitive_entities option"
	}
	reg, err := registryOf(d.HA).get(ctx)
	if err != nil {
		return nil, err
	}
	var covers []string
	for id := range reg.entities {
		if strings.HasPrefix(id, "cover.") {
			covers = append(covers, id)
		}
	}
	classes := map[string]string{}
	if len(covers) > 0 {
		entries, err := d.HA.EntityEntries(ctx, covers)
		if err != nil {
			return nil, err
		}
		for id, e := range entries {
			classes[id] = e.Class()
		}
	}
	guardedDevice := map[string]string{}
	for id, e := range reg.entities {
		if e.DeviceID != "" && guardedEntity(id, classes[id]) {
			guardedDevice[e.DeviceID] = id
		}
	}
	for id, e := range reg.entities {
		domain, _, _ := strings.Cut(id, ".")
		if g, ok := guardedDevice[e.DeviceID]; ok && e.DeviceID != "" && slices.Contains(openerDomains, domain) {
			if _, listed := out[id]; !listed {
				out[id] = "on the same device as " + g
			}
		}
	}
	return out, nil
}

// triggerIndex says which automations a change can start: by entity (state, numeric_state,
// template, device, zone and time triggers), by event type, by a sentence to Assist, by a
// persistent notification, and the ones any change can start. Values are automation config ids.
type triggerIndex struct {
	byEntity     map[string][]string
	byEvent      map[string][]string
	conversation []string
	notification []string
	any          []string
	entityOf     map[string]string // config id → automation entity id, for the question
}

func (ix *triggerIndex) add(m map[string][]string, key, id string) {
	if !slices.Contains(m[key], id) {
		m[key] = append(m[key], id)
	}
}

// loadTriggers reads every automation's configuration once and indexes its triggers. Group
// members count for the group (turning a light group on changes its members), read from the
// state machine when the index is built; devices count through their registry entities.
func loadTriggers(ctx context.Context, d Deps) (*triggerIndex, error) {
	all, err := d.HA.States(ctx)
	if err != nil {
		return nil, err
	}
	reg, _ := registryOf(d.HA).get(ctx)
	ix := &triggerIndex{byEntity: map[string][]string{}, byEvent: map[string][]string{}, entityOf: map[string]string{}}
	type auto struct{ id, entity string }
	var autos []auto
	groupsOf := map[string][]string{} // member → the groups listing it
	for _, s := range all {
		if s.Domain() == "automation" {
			if id := stringOf(s.Attributes["id"]); id != "" {
				autos = append(autos, auto{id, s.EntityID})
			}
		}
		if list, ok := s.Attributes["entity_id"].([]any); ok && s.Domain() != "scene" {
			for _, v := range list {
				if m, ok := v.(string); ok {
					groupsOf[m] = append(groupsOf[m], s.EntityID)
				}
			}
		}
	}
	cfgs := make([]any, len(autos))
	errs := make([]error, len(autos))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, a := range autos {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			raw, err := d.HA.GetConfigItem(ctx, homeassistant.KindAutomation, a.id)
			if err == nil {
				err = json.Unmarshal(raw, &cfgs[i])
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if outOfReach(err) {
			return nil, err // no decision can be made, and no call could run either
		}
	}
	w := newWalk(d)
	for i, a := range autos {
		ix.entityOf[a.id] = a.entity
		if errs[i] != nil {
			ix.any = append(ix.any, a.id) // unreadable: it may start on anything
			continue
		}
		cfg := cfgs[i]
		var t sensitive.Trigger
		if bp, ok := w.blueprintOf(cfg); ok {
			if cfg, err = w.expandBlueprint(ctx, bp); err != nil {
				// The blueprint cannot be read here (no configuration folder): Home Assistant
				// knows what the instance references, triggers included, with its inputs in.
				rel, rerr := d.HA.SearchRelated(ctx, "automation", a.entity)
				if rerr != nil {
					ix.any = append(ix.any, a.id)
					continue
				}
				t.Entities, t.Devices = rel["entity"], rel["device"]
			}
		}
		if cfg != nil {
			t = sensitive.Triggers(cfg)
		}
		ents := slices.Clone(t.Entities)
		if reg != nil {
			for _, dev := range t.Devices {
				for eid, e := range reg.entities {
					if e.DeviceID == dev {
						ents = append(ents, eid)
					}
				}
			}
		} else if len(t.Devices) > 0 {
			t.Any = true
		}
		// A change to a group changes its members: index the groups that list a trigger entity,
		// up the chain (a group of groups).
		for j := 0; j < len(ents) && j < 10_000; j++ {
			for _, g := range groupsOf[ents[j]] {
				if !slices.Contains(ents, g) {
					ents = append(ents, g)
				}
			}
		}
		for _, e := range ents {
			ix.add(ix.byEntity, e, a.id)
		}
		for _, ev := range t.Events {
			ix.add(ix.byEvent, ev, a.id)
		}
		if t.Conversation {
			ix.conversation = append(ix.conversation, a.id)
		}
		if t.Notification {
			ix.notification = append(ix.notification, a.id)
		}
		if t.Any {
			ix.any = append(ix.any, a.id)
		}
	}
	return ix, nil
}

// invalidateAutomations drops what hamcp knows of the automations after it changed one, so the next
// decision sees the change before Home Assistant's reload event arrives.
func invalidateAutomations(ha *homeassistant.Client) {
	if a, ok := authorities.Load(ha); ok {
		a.(*authority).triggers.invalidate()
	}
}

// outOfReach reports an error that means Home Assistant could not be asked at all.
func outOfReach(err error) bool {
	return errors.Is(err, homeassistant.ErrUnavailable) || errors.Is(err, homeassistant.ErrUnauthorized) || errors.Is(err, homeassistant.ErrNoAnswer)
}

// SensitiveEntity is one entity whose use the user confirms, for the panel's list.
type SensitiveEntity struct {
	EntityID string `json:"entity_id"`
	Why      string `json:"why"`
}

// SensitiveEntities lists, for the panel, the entities hamcp asks about however they are reached:
// locks, alarm panels, garage doors and gates (by the registry's device class), and the openers
// marked beside them or in the sensitive_entities option.
func SensitiveEntities(ctx context.Context, d Deps) ([]SensitiveEntity, error) {
	a := authorityOf(d)
	a.watch(ctx)
	marked, err := a.marked.get(ctx)
	if err != nil {
		return nil, err
	}
	reg, err := registryOf(d.HA).get(ctx)
	if err != nil {
		return nil, err
	}
	var out []SensitiveEntity
	var covers []string
	for id := range reg.entities {
		switch domain, _, _ := strings.Cut(id, "."); domain {
		case "lock":
			out = append(out, SensitiveEntity{id, "a lock: unlocking and opening"})
		case "alarm_control_panel":
			out = append(out, SensitiveEntity{id, "an alarm panel: disarming and triggering"})
		case "cover":
			covers = append(covers, id)
		}
	}
	if len(covers) > 0 {
		entries, err := d.HA.EntityEntries(ctx, covers)
		if err != nil {
			return nil, err
		}
		for _, id := range covers {
			if c := entries[id].Class(); c == "garage" || c == "gate" {
				out = append(out, SensitiveEntity{id, "a " + c + " cover: opening and moving"})
			}
		}
	}
	for id, why := range marked {
		out = append(out, SensitiveEntity{id, "any service: " + why})
	}
	slices.SortFunc(out, func(x, y SensitiveEntity) int { return strings.Compare(x.EntityID, y.EntityID) })
	return out, nil
}
