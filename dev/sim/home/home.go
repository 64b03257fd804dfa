// Package home is the simulated Home Assistant's model: entities and their
// states, services with real semantics, registries, calendars, automation /
// script / scene configs backed by YAML files, notifications and an event
// bus. It knows no HTTP; package hass serves it. Everything is thread-safe and,
// given the same seed and clock, deterministic.
package home

import (
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the demo home's zone must load on minimal images
)

// Version is the Home Assistant version the simulator reports.
const Version = "2026.8.1"

// Options configures New.
type Options struct {
	Seed int64
	// ConfigDir is HA's /config: automations.yaml, scripts.yaml, scenes.yaml and
	// home-assistant.log live there. "" keeps everything in memory.
	ConfigDir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// TimeZone is the home's zone; "" means Europe/Amsterdam.
	TimeZone string
	// ExtraSensors adds this many synthetic sensors, to stand for a large installation.
	ExtraSensors int
	// JournalLog logs as HA OS and Supervised installs do: to the journal (the Supervisor's
	// /core/logs) only, with no home-assistant.log. A log file already in ConfigDir seeds the
	// journal, as if it were the output of earlier runs.
	JournalLog bool
	Logger     *slog.Logger
}

// Home is the simulated home. Create it with New.
type Home struct {
	mu     sync.Mutex
	now    func() time.Time
	loc    *time.Location
	rng    *rand.Rand
	bus    *bus
	logger *slog.Logger
	cfgDir string
	start  time.Time

	states map[string]*State
	// platform entities: those a domain's services act on (not REST-created states).
	owned map[string]bool

	floors        map[string]*Floor
	areas         map[string]*Area
	labels        map[string]*Label
	devices       map[string]*Device
	entities      map[string]*EntityEntry
	configEntries map[string]*ConfigEntry
	users         []User

	services map[string]map[string]*serviceDef

	calendars  map[string]*calendar
	todos      map[string]*todoList
	media      map[string]*mediaModel
	lights     map[string]*lightModel
	powerLinks map[string]powerLink
	lastHVAC   map[string]string
	notes      notifications

	// automations, scripts and scenes
	configEnt map[string]configEntity
	dynScenes map[string]map[string]any
	loaded    map[string]bool
	running   map[string]int
	runs      map[*scriptRun]bool
	renderer  Renderer
	closed    bool

	// traces of automation/script runs (traces.go); traceActive is the stack of runs executing now
	traces      *traceStore
	traceActive []*runTrace

	configs   *configStore
	sent      []SentNotification
	logs      logBook
	onRestart func()
}

// New builds the demo home. With a ConfigDir it loads (or, when absent,
// writes the demo) automations.yaml, scripts.yaml and scenes.yaml.
func New(o Options) (*Home, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	tz := o.TimeZone
	if tz == "" {
		tz = "Europe/Amsterdam"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("home: time zone %q: %w", tz, err)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &Home{
		now:           now,
		loc:           loc,
		rng:           rand.New(rand.NewSource(o.Seed)),
		bus:           newBus(),
		logger:        logger,
		cfgDir:        o.ConfigDir,
		states:        map[string]*State{},
		owned:         map[string]bool{},
		floors:        map[string]*Floor{},
		areas:         map[string]*Area{},
		labels:        map[string]*Label{},
		devices:       map[string]*Device{},
		entities:      map[string]*EntityEntry{},
		configEntries: map[string]*ConfigEntry{},
		services:      map[string]map[string]*serviceDef{},
		calendars:     map[string]*calendar{},
		todos:         map[string]*todoList{},
		media:         map[string]*mediaModel{},
		lights:        map[string]*lightModel{},
		powerLinks:    map[string]powerLink{},
		lastHVAC:      map[string]string{},
		configEnt:     map[string]configEntity{},
		dynScenes:     map[string]map[string]any{},
		loaded:        map[string]bool{},
		running:       map[string]int{},
		runs:          map[*scriptRun]bool{},
	}
	h.start = h.now().UTC()
	if o.ConfigDir != "" {
		h.logs.path = filepath.Join(o.ConfigDir, "home-assistant.log")
		if o.JournalLog {
			h.logs.lines = strings.Split(h.LogText(maxLogLines), "\n")
			h.logs.lines = h.logs.lines[:len(h.logs.lines)-1]
			h.logs.path = ""
		}
	}
	h.mu.Lock()
	h.registerServices()
	h.buildDemo()
	h.addScaleSensors(o.ExtraSensors)
	err = h.loadConfigs()
	h.mu.Unlock()
	h.bus.flush()
	if err == nil {
		err = h.lovelaceInit() // dashboards: lovelace.go
	}
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Now is the home's clock in UTC.
func (h *Home) Now() time.Time { return h.now().UTC() }

// Location is the home's time zone.
func (h *Home) Location() *time.Location { return h.loc }

// ConfigDir is the directory holding the YAML configs ("" when in memory).
func (h *Home) ConfigDir() string { return h.cfgDir }

// States returns every state, sorted by entity id.
func (h *Home) States() []*State {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.statesLocked()
}

func (h *Home) statesLocked() []*State {
	out := make([]*State, 0, len(h.states))
	for _, s := range h.states {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EntityID < out[j].EntityID })
	return out
}

// State returns one entity's state.
func (h *Home) State(entityID string) (*State, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.states[entityID]
	return s, ok
}

// SetState writes a state the way POST /api/states does: created reports a
// new entity; an identical state without force only refreshes last_reported.
func (h *Home) SetState(entityID, state string, attrs map[string]any, force bool, userID string) (st *State, created bool, err error) {
	if !ValidEntityID(entityID) {
		return nil, false, fmt.Errorf("invalid entity id %q", entityID)
	}
	if len(state) > 255 {
		return nil, false, fmt.Errorf("invalid state: longer than 255 characters")
	}
	h.mu.Lock()
	_, existed := h.states[entityID]
	ctx := h.newContext(userID, nil)
	st, _ = h.writeState(entityID, state, attrs, force, ctx)
	h.mu.Unlock()
	h.bus.flush()
	return st, !existed, nil
}

// RemoveState deletes an entity's state (DELETE /api/states); false if absent.
func (h *Home) RemoveState(entityID string) bool {
	h.mu.Lock()
	ok := h.removeStateLocked(entityID, h.newContext("", nil))
	h.mu.Unlock()
	h.bus.flush()
	return ok
}

func (h *Home) removeStateLocked(entityID string, ctx Context) bool {
	old, ok := h.states[entityID]
	if !ok {
		return false
	}
	delete(h.states, entityID)
	h.fireLocked("state_changed", map[string]any{"entity_id": entityID, "old_state": old, "new_state": nil}, "LOCAL", ctx)
	return true
}

// writeState makes the new State and fires state_changed. last_changed moves
// only when the state string changes; an unchanged write updates nothing but
// last_reported (HA's async_set), unless force.
func (h *Home) writeState(entityID, state string, attrs map[string]any, force bool, ctx Context) (*State, bool) {
	now := h.now().UTC()
	if attrs == nil {
		attrs = map[string]any{}
	}
	old := h.states[entityID]
	if old != nil && old.State == state && attrsEqual(old.Attributes, attrs) && !force {
		cp := *old
		cp.LastReported = now
		h.states[entityID] = &cp
		return &cp, false
	}
	st := &State{EntityID: entityID, State: state, Attributes: attrs, LastChanged: now, LastReported: now, LastUpdated: now, Context: ctx}
	if old != nil && old.State == state {
		st.LastChanged = old.LastChanged
	}
	h.states[entityID] = st
	var oldv any
	if old != nil {
		oldv = old
	}
	// Like core.py StateMachine.async_set_internal: the event carries the state's own context and
	// its time_fired is the state's last_updated, to the microsecond. hamcp's mirror relies on that
	// binding to tell the state machine's events from fired look-alikes.
	h.fireAtLocked("state_changed", map[string]any{"entity_id": entityID, "old_state": oldv, "new_state": st}, "LOCAL", ctx, now)
	return st, true
}

// Subscribe registers fn for events of eventType (MatchAll or "" for all).
// fn runs on the delivering goroutine, in event order; it must not block for long.
func (h *Home) Subscribe(eventType string, fn func(Event)) (cancel func()) {
	return h.bus.subscribe(eventType, fn)
}

// Listeners counts subscribers per event type ("*" = all), for GET /api/events.
func (h *Home) Listeners() map[string]int { return h.bus.listeners() }

// FireEvent puts an event on the bus and returns its context. origin is "REMOTE" for events fired
// over the APIs (api/__init__.py APIEventView, websocket_api handle_fire_event) and "LOCAL" for
// events fired inside Home Assistant (a script's event action, integrations).
func (h *Home) FireEvent(eventType string, data map[string]any, origin, userID string) Context {
	h.mu.Lock()
	ctx := h.newContext(userID, nil)
	h.fireLocked(eventType, data, origin, ctx)
	h.mu.Unlock()
	h.bus.flush()
	return ctx
}

func (h *Home) fireLocked(eventType string, data map[string]any, origin string, ctx Context) {
	h.fireAtLocked(eventType, data, origin, ctx, h.now().UTC())
}

func (h *Home) fireAtLocked(eventType string, data map[string]any, origin string, ctx Context, at time.Time) {
	if data == nil {
		data = map[string]any{}
	}
	h.bus.enqueue(Event{EventType: eventType, Data: data, Origin: origin, TimeFired: at, Context: ctx})
}

// newContext makes a context with a fresh ULID.
func (h *Home) newContext(userID string, parent *string) Context {
	c := Context{ID: h.ulid(), ParentID: parent}
	if userID != "" {
		c.UserID = strp(userID)
	}
	return c
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ulid is a 26-character ULID: 48-bit ms time then 80 random bits from the seeded source.
func (h *Home) ulid() string {
	var b [16]byte
	ms := uint64(h.now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	for i := 6; i < 16; i++ {
		b[i] = byte(h.rng.Intn(256))
	}
	// 128 bits -> 26 base32 digits, most significant first (2 leading pad bits).
	out := make([]byte, 26)
	var acc uint64
	bits := 2 // the first digit holds only 3 bits: pad with 2 zero bits
	idx := 0
	for _, by := range b {
		acc = acc<<8 | uint64(by)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out[idx] = crockford[(acc>>uint(bits))&31]
			idx++
		}
	}
	return string(out)
}

// hexID is a 32-hex-digit id like HA's uuid4().hex registry ids.
func (h *Home) hexID() string {
	const hexd = "0123456789abcdef"
	b := make([]byte, 32)
	for i := range b {
		b[i] = hexd[h.rng.Intn(16)]
	}
	return string(b)
}

// Users returns the auth users: the owner (admin) first, then a non-admin.
func (h *Home) Users() []User {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]User(nil), h.users...)
}

// CoreState is the CoreState string the simulator is in.
func (h *Home) CoreState() string { return "RUNNING" }

// Components is the list of loaded integrations.
func (h *Home) Components() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.componentsLocked()
}

func (h *Home) componentsLocked() []string {
	set := map[string]bool{}
	for _, c := range []string{"api", "auth", "config", "default_config", "frontend", "hassio", "history",
		"homeassistant", "http", "intent", "logbook", "mobile_app", "onboarding", "persistent_notification",
		"recorder", "search", "system_log", "websocket_api", "hue", "shelly", "zha", "sonos", "ecobee",
		"local_calendar", "local_todo", "met", "cast", "generic"} {
		set[c] = true
	}
	for d := range h.services {
		set[d] = true
	}
	for id := range h.states {
		d, _, _ := strings.Cut(id, ".")
		set[d] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Config is hass.config.as_dict(): GET /api/config and WS get_config.
func (h *Home) Config() map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	dir := h.cfgDir
	if dir == "" {
		dir = "/config"
	}
	return map[string]any{
		"allowlist_external_dirs": []string{filepath.Join(dir, "www"), "/media"},
		"allowlist_external_urls": []string{},
		"components":              h.componentsLocked(),
		"config_dir":              dir,
		"config_source":           "storage",
		"country":                 "NL",
		"currency":                "EUR",
		"debug":                   false,
		"elevation":               2,
		"external_url":            nil,
		"internal_url":            nil,
		"language":                "en",
		"latitude":                homeLat,
		"location_name":           "Demo Home",
		"longitude":               homeLon,
		"radius":                  100,
		"recovery_mode":           false,
		"safe_mode":               false,
		"state":                   "RUNNING",
		"time_zone":               h.loc.String(),
		"unit_system": map[string]any{
			"length": "km", "accumulated_precipitation": "mm", "area": "m²", "mass": "g",
			"pressure": "Pa", "temperature": "°C", "volume": "L", "wind_speed": "m/s",
		},
		"version":                 Version,
		"whitelist_external_dirs": []string{filepath.Join(dir, "www"), "/media"},
	}
}

// OnRestart sets what homeassistant.restart does besides logging (the sim
// uses it to drop WebSocket clients, as a real restart would).
func (h *Home) OnRestart(fn func()) {
	h.mu.Lock()
	h.onRestart = fn
	h.mu.Unlock()
}

// ensureDir makes the config dir when writing the first file into it.
func ensureDir(dir string) error { return os.MkdirAll(dir, 0o755) }
