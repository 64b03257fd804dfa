package home

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"weak"
)

// Config entries' life cycle (reload, disable, remove) and data entry flows, as
// homeassistant/config_entries.py and data_entry_flow.py run them: a config flow creates an entry,
// an options flow (its handler is the entry id) replaces an entry's options. The flows are modelled
// on core's hue (manual host, then link), shelly (host and port, then a password) and sun (single
// instance) config flows and on the options flows of hue, reolink, wled, cast and HACS.

// FlowError is a flow manager failure as the config views answer it: 404 "Invalid handler
// specified" (UnknownHandler) or "Invalid flow specified" (UnknownFlow), 400 {"errors": …}
// (InvalidData, Errors set), 500 for an options flow on an unknown entry (UnknownEntry, which no
// view catches).
type FlowError struct {
	Status int
	Msg    string
	Errors map[string]any
}

func (e *FlowError) Error() string { return e.Msg }

var (
	errUnknownHandler = &FlowError{Status: 404, Msg: "Invalid handler specified"}
	errUnknownFlow    = &FlowError{Status: 404, Msg: "Invalid flow specified"}
	errUnknownEntry   = &FlowError{Status: 500, Msg: "Unknown entry specified"}
)

// flowField is one voluptuous marker of a form's schema.
type flowField struct {
	name     string
	typ      string // string (str), integer (vol.Coerce(int)), boolean (bool), select (vol.In)
	required bool
	def      any // nil: no default
	options  []string
}

// serialize is voluptuous_serialize.convert's item for the field.
func (f flowField) serialize() map[string]any {
	m := map[string]any{"type": f.typ, "name": f.name}
	if f.typ == "select" {
		opts := make([][2]string, len(f.options))
		for i, o := range f.options {
			opts[i] = [2]string{o, o}
		}
		m["options"] = opts
	}
	if f.required {
		m["required"] = true
	} else {
		m["optional"] = true
	}
	if f.def != nil {
		m["default"] = f.def
	}
	return m
}

type flow struct {
	id, handler, domain string
	options             bool // an options flow: handler is the entry id
	step                string
	fields              []flowField // the current form's schema (nil: no schema)
	data                map[string]any
}

// flowState is what flows and entry changes keep per home, beside the Home like adminState.
type flowState struct {
	op       sync.Mutex // serialises entry changes; never held by readers
	mu       sync.Mutex
	flows    map[string]*flow
	disabled map[string]string // entry id → disabled_by
	saved    map[string][]*State
	options  map[string]map[string]any
	modified map[string]float64
	created  []EntryDetails
	hosts    map[string]string // entry id → the host a flow set it up with
}

var (
	flowsMu   sync.Mutex
	flowHomes = map[weak.Pointer[Home]]*flowState{}
)

func (h *Home) flowState() *flowState {
	key := weak.Make(h)
	flowsMu.Lock()
	defer flowsMu.Unlock()
	if f, ok := flowHomes[key]; ok {
		return f
	}
	f := &flowState{flows: map[string]*flow{}, disabled: map[string]string{}, saved: map[string][]*State{},
		options: map[string]map[string]any{}, modified: map[string]float64{}, hosts: map[string]string{}}
	flowHomes[key] = f
	runtime.AddCleanup(h, func(k weak.Pointer[Home]) {
		flowsMu.Lock()
		delete(flowHomes, k)
		flowsMu.Unlock()
	}, key)
	return f
}

// entryOverlay applies what flows and entry changes did to the entries ConfigEntryDetails lists.
func (h *Home) entryOverlay(in []EntryDetails) []EntryDetails {
	f := h.flowState()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := append(in, f.created...)
	for i := range out {
		e := &out[i]
		if by, ok := f.disabled[e.EntryID]; ok {
			e.DisabledBy, e.State, e.Reason = strp(by), "not_loaded", nil
		}
		if m, ok := f.modified[e.EntryID]; ok {
			e.ModifiedAt = m
		}
		_, e.SupportsOptions = optionSteps[e.Domain]
	}
	return out
}

// entry finds one config entry as HA lists it.
func (h *Home) entry(id string) (EntryDetails, bool) {
	for _, e := range h.ConfigEntryDetails("", nil) {
		if e.EntryID == id {
			return e, true
		}
	}
	return EntryDetails{}, false
}

// ReloadEntry is POST /api/config/config_entries/entry/<id>/reload: unload and set up again.
// require_restart is "not entry.state.recoverable", false for every state the demo has.
func (h *Home) ReloadEntry(id string) (requireRestart bool, err error) {
	if _, ok := h.entry(id); !ok {
		return false, &NotFoundError{Msg: "Invalid entry specified"}
	}
	return false, nil
}

// SetEntryDisabled is WS config_entries/disable (ConfigEntries.async_set_disabled_by): the entry
// unloads, and the entity and device registries disable what the entry provides (disabled_by
// "config_entry"), whose states leave the state machine; enabling reverses both.
func (h *Home) SetEntryDisabled(id string, by *string) (requireRestart bool, err error) {
	f := h.flowState()
	f.op.Lock()
	defer f.op.Unlock()
	e, ok := h.entry(id)
	if !ok {
		return false, &NotFoundError{Msg: "Config entry not found"}
	}
	if (e.DisabledBy == nil) == (by == nil) {
		return false, nil
	}
	f.mu.Lock()
	if by != nil {
		f.disabled[id] = *by
	} else {
		delete(f.disabled, id)
	}
	f.modified[id] = Epoch(h.now())
	saved := f.saved[id]
	delete(f.saved, id)
	f.mu.Unlock()
	h.mu.Lock()
	defer h.flushAfter()()
	ctx := h.newContext("", nil)
	if by != nil {
		saved = h.disableEntryLocked(id, ctx)
		f.mu.Lock()
		f.saved[id] = saved
		f.mu.Unlock()
		return false, nil
	}
	h.enableEntryLocked(id, saved, ctx)
	return false, nil
}

func (h *Home) disableEntryLocked(id string, ctx Context) []*State {
	var saved []*State
	for _, eid := range h.entryEntitiesLocked(id) {
		e := h.entities[eid]
		if e.DisabledBy == nil {
			e.DisabledBy, e.ModifiedAt = strp("config_entry"), Epoch(h.now())
			h.fireLocked("entity_registry_updated", map[string]any{"action": "update", "entity_id": eid, "changes": map[string]any{"disabled_by": nil}}, "LOCAL", ctx)
		}
		if st := h.states[eid]; st != nil {
			saved = append(saved, st)
			h.removeStateLocked(eid, ctx)
		}
	}
	for _, d := range h.entryDevicesLocked(id) {
		if d.DisabledBy == nil {
			d.DisabledBy, d.ModifiedAt = strp("config_entry"), Epoch(h.now())
			h.fireLocked("device_registry_updated", map[string]any{"action": "update", "device_id": d.ID, "changes": map[string]any{"disabled_by": nil}}, "LOCAL", ctx)
		}
	}
	return saved
}

func (h *Home) enableEntryLocked(id string, saved []*State, ctx Context) {
	for _, d := range h.entryDevicesLocked(id) {
		if d.DisabledBy != nil && *d.DisabledBy == "config_entry" {
			d.DisabledBy, d.ModifiedAt = nil, Epoch(h.now())
			h.fireLocked("device_registry_updated", map[string]any{"action": "update", "device_id": d.ID, "changes": map[string]any{"disabled_by": "config_entry"}}, "LOCAL", ctx)
		}
	}
	for _, eid := range h.entryEntitiesLocked(id) {
		e := h.entities[eid]
		if e.DisabledBy != nil && *e.DisabledBy == "config_entry" {
			e.DisabledBy, e.ModifiedAt = nil, Epoch(h.now())
			h.fireLocked("entity_registry_updated", map[string]any{"action": "update", "entity_id": eid, "changes": map[string]any{"disabled_by": "config_entry"}}, "LOCAL", ctx)
		}
	}
	for _, st := range saved {
		if e := h.entities[st.EntityID]; e == nil || e.DisabledBy == nil {
			h.writeState(st.EntityID, st.State, cloneAttrs(st.Attributes), false, ctx)
		}
	}
}

// RemoveEntry is DELETE /api/config/config_entries/entry/<id> (ConfigEntries.async_remove): the
// entry goes, and with it its devices and entities (registry entries and states).
func (h *Home) RemoveEntry(id string) (requireRestart bool, err error) {
	f := h.flowState()
	f.op.Lock()
	defer f.op.Unlock()
	if _, ok := h.entry(id); !ok {
		return false, &NotFoundError{Msg: "Invalid entry specified"}
	}
	f.mu.Lock()
	f.created = slices.DeleteFunc(f.created, func(e EntryDetails) bool { return e.EntryID == id })
	delete(f.disabled, id)
	delete(f.hosts, id)
	delete(f.saved, id)
	delete(f.options, id)
	delete(f.modified, id)
	for fid, fl := range f.flows {
		if fl.options && fl.handler == id {
			delete(f.flows, fid)
		}
	}
	f.mu.Unlock()
	a := h.admin()
	a.mu.Lock()
	a.extraEntries = slices.DeleteFunc(a.extraEntries, func(e EntryDetails) bool { return e.EntryID == id })
	a.mu.Unlock()
	h.mu.Lock()
	defer h.flushAfter()()
	ctx := h.newContext("", nil)
	for _, eid := range h.entryEntitiesLocked(id) {
		delete(h.entities, eid)
		delete(h.owned, eid)
		h.removeStateLocked(eid, ctx)
		h.fireLocked("entity_registry_updated", map[string]any{"action": "remove", "entity_id": eid}, "LOCAL", ctx)
	}
	for _, d := range h.entryDevicesLocked(id) {
		d.ConfigEntries = slices.DeleteFunc(d.ConfigEntries, func(s string) bool { return s == id })
		delete(d.ConfigEntriesSubentries, id)
		if len(d.ConfigEntries) == 0 {
			delete(h.devices, d.ID)
			h.fireLocked("device_registry_updated", map[string]any{"action": "remove", "device_id": d.ID}, "LOCAL", ctx)
		}
	}
	delete(h.configEntries, id)
	return false, nil
}

// entryEntitiesLocked lists the registry entities the entry provides, sorted.
func (h *Home) entryEntitiesLocked(id string) []string {
	var out []string
	for eid, e := range h.entities {
		if e.ConfigEntryID != nil && *e.ConfigEntryID == id {
			out = append(out, eid)
		}
	}
	slices.Sort(out)
	return out
}

func (h *Home) entryDevicesLocked(id string) []*Device {
	var out []*Device
	for _, d := range h.devices {
		if slices.Contains(d.ConfigEntries, id) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b *Device) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// EntryOptions is what an entry's options flows saved.
func (h *Home) EntryOptions(id string) map[string]any {
	f := h.flowState()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]any{}
	for k, v := range f.options[id] {
		out[k] = v
	}
	return out
}

// StartFlow is POST /api/config/config_entries/flow {handler}: a config flow's first step.
func (h *Home) StartFlow(handler string) (map[string]any, error) {
	if configFlows[handler] == nil {
		return nil, errUnknownHandler
	}
	return h.startFlow(&flow{handler: handler, domain: handler, step: "user"})
}

// StartOptionsFlow is POST /api/config/config_entries/options/flow {handler: entry id}.
func (h *Home) StartOptionsFlow(entryID string) (map[string]any, error) {
	e, ok := h.entry(entryID)
	if !ok {
		return nil, errUnknownEntry
	}
	first, ok := optionSteps[e.Domain]
	if !ok {
		return nil, errUnknownHandler
	}
	return h.startFlow(&flow{handler: entryID, domain: e.Domain, options: true, step: first.id})
}

func (h *Home) startFlow(fl *flow) (map[string]any, error) {
	f := h.flowState()
	fl.id, fl.data = h.flowID(), map[string]any{}
	f.mu.Lock()
	f.flows[fl.id] = fl
	f.mu.Unlock()
	return h.runStep(fl, nil)
}

// flowID is a random_uuid_hex, like data_entry_flow's flow ids.
func (h *Home) flowID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hexID()
}

// ConfigureFlow is GET (submit false) or POST /flow/<id>: the current step again, or the step
// given user input, validated against the form's schema first.
func (h *Home) ConfigureFlow(options bool, id string, input map[string]any, submit bool) (map[string]any, error) {
	f := h.flowState()
	f.mu.Lock()
	fl := f.flows[id]
	f.mu.Unlock()
	if fl == nil || fl.options != options {
		return nil, errUnknownFlow
	}
	if !submit {
		return h.runStep(fl, nil)
	}
	if input == nil {
		input = map[string]any{}
	}
	valid, errs := validateFlowInput(fl.fields, input)
	if len(errs) > 0 {
		return nil, &FlowError{Status: 400, Msg: "Schema validation failed", Errors: errs}
	}
	return h.runStep(fl, valid)
}

// AbortFlow is DELETE /flow/<id>.
func (h *Home) AbortFlow(options bool, id string) error {
	f := h.flowState()
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl := f.flows[id]; fl == nil || fl.options != options {
		return errUnknownFlow
	}
	delete(f.flows, id)
	return nil
}

// runStep runs the flow's current step; a finished flow leaves the progress list.
func (h *Home) runStep(fl *flow, input map[string]any) (map[string]any, error) {
	var res map[string]any
	if fl.options {
		res = h.optionsStep(fl, input)
	} else {
		res = configFlows[fl.domain](h, fl, input)
	}
	if t := res["type"]; t == "abort" || t == "create_entry" {
		f := h.flowState()
		f.mu.Lock()
		delete(f.flows, fl.id)
		f.mu.Unlock()
	}
	return res, nil
}

func (fl *flow) form(step string, fields []flowField, errs map[string]string) map[string]any {
	fl.step, fl.fields = step, fields
	schema := make([]map[string]any, len(fields))
	for i, f := range fields {
		schema[i] = f.serialize()
	}
	var e any
	if errs != nil {
		e = errs
	}
	return map[string]any{"type": "form", "flow_id": fl.id, "handler": fl.handler, "data_schema": schema, "errors": e,
		"description_placeholders": nil, "last_step": nil, "preview": nil, "step_id": step}
}

func (fl *flow) abort(reason string) map[string]any {
	return map[string]any{"type": "abort", "flow_id": fl.id, "handler": fl.handler, "reason": reason, "description_placeholders": nil}
}

// createEntry adds the flow's entry and answers as ConfigManagerFlowResourceView does: the
// entry's JSON as result, data and context left out.
func (h *Home) createEntry(fl *flow, title, host string) map[string]any {
	f := h.flowState()
	h.mu.Lock()
	id := h.ulid()
	now := Epoch(h.now())
	h.mu.Unlock()
	e := newEntryDetails(id, fl.domain, title, "user", "loaded", nil, now)
	f.mu.Lock()
	f.created = append(f.created, e)
	if host != "" {
		f.hosts[id] = host
	}
	f.mu.Unlock()
	_, e.SupportsOptions = optionSteps[e.Domain]
	return map[string]any{"type": "create_entry", "flow_id": fl.id, "handler": fl.handler, "description": nil, "description_placeholders": nil,
		"title": title, "minor_version": 1, "options": map[string]any{}, "subentries": []any{}, "version": 1, "result": e}
}

// configured reports whether an entry of domain was set up with host (unique id checks).
func (h *Home) configured(domain, host string) bool {
	f := h.flowState()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.created {
		if e.Domain == domain && f.hosts[e.EntryID] == host {
			return true
		}
	}
	return false
}

// The demo's network: what a config flow finds at each host.
const hueConfiguredHost = "192.168.1.20" // the bridge behind the demo's lights

var hueBridges = map[string]string{"192.168.1.21": "ECB5FAFFFE0A1B2C"}

type shellyDevice struct {
	name     string
	password string // "" = no authentication
}

// shellyDevices: the Study's Shelly Plus 2PM is protected with the password "study-shelly".
var shellyDevices = map[string]shellyDevice{
	"192.168.1.70": {name: "Study Shutter", password: "study-shelly"},
	"192.168.1.71": {name: "shellyplug-s-C8C9A3"},
}

var configFlows = map[string]func(h *Home, fl *flow, in map[string]any) map[string]any{
	"hue":    hueFlow,
	"shelly": shellyFlow,
	"sun":    sunFlow,
}

// hueFlow: no bridge discovered, so the manual step asks for the host, then the link step waits
// for the bridge's button.
func hueFlow(h *Home, fl *flow, in map[string]any) map[string]any {
	manual := []flowField{{name: "host", typ: "string", required: true}}
	switch fl.step {
	case "user", "manual":
		if in == nil {
			return fl.form("manual", manual, nil)
		}
		host, _ := in["host"].(string)
		if host == hueConfiguredHost || h.configured("hue", host) {
			return fl.abort("already_configured")
		}
		id, ok := hueBridges[host]
		if !ok {
			return fl.form("manual", manual, map[string]string{"base": "cannot_connect"})
		}
		fl.data["host"], fl.data["bridge_id"] = host, id
		return fl.form("link", nil, nil)
	default: // link
		if in == nil {
			return fl.form("link", nil, nil)
		}
		return h.createEntry(fl, "Hue Bridge "+fl.data["bridge_id"].(string), fl.data["host"].(string))
	}
}

// shellyFlow: host and port, then the device's password when it has one.
func shellyFlow(h *Home, fl *flow, in map[string]any) map[string]any {
	user := []flowField{{name: "host", typ: "string", required: true}, {name: "port", typ: "integer", required: true, def: int64(80)}}
	credentials := []flowField{{name: "password", typ: "string", required: true}}
	switch fl.step {
	case "user":
		if in == nil {
			return fl.form("user", user, nil)
		}
		host, _ := in["host"].(string)
		dev, ok := shellyDevices[host]
		if !ok || in["port"] != int64(80) {
			return fl.form("user", user, map[string]string{"base": "cannot_connect"})
		}
		if h.configured("shelly", host) {
			return fl.abort("already_configured")
		}
		fl.data["host"] = host
		if dev.password != "" {
			return fl.form("credentials", credentials, nil)
		}
		return h.createEntry(fl, dev.name, host)
	default: // credentials
		if in == nil {
			return fl.form("credentials", credentials, nil)
		}
		host := fl.data["host"].(string)
		dev := shellyDevices[host]
		if in["password"] != dev.password {
			return fl.form("credentials", credentials, map[string]string{"base": "invalid_auth"})
		}
		return h.createEntry(fl, dev.name, host)
	}
}

// sunFlow: the sun integration allows one entry.
func sunFlow(h *Home, fl *flow, in map[string]any) map[string]any {
	if len(h.ConfigEntryDetails("sun", nil)) > 0 {
		return fl.abort("single_instance_allowed")
	}
	if in == nil {
		return fl.form("user", nil, nil)
	}
	return h.createEntry(fl, "Sun", "")
}

// optionSteps is each modelled options flow's one step; defaults come from the entry's options.
var optionSteps = map[string]struct {
	id     string
	fields []flowField
}{
	"hue":     {"init", []flowField{{name: "allow_hue_groups", typ: "boolean", def: false}, {name: "allow_unreachable", typ: "boolean", def: false}}},
	"reolink": {"init", []flowField{{name: "protocol", typ: "select", required: true, def: "rtsp", options: []string{"rtsp", "rtmp", "flv"}}}},
	"wled":    {"init", []flowField{{name: "keep_master_light", typ: "boolean", def: false}}},
	"cast":    {"basic_options", []flowField{{name: "known_hosts", typ: "string", def: ""}}},
	"hacs": {"user", []flowField{{name: "sidepanel_title", typ: "string", def: "HACS"}, {name: "sidepanel_icon", typ: "string", def: "hacs:hacs"},
		{name: "appdaemon", typ: "boolean", def: false}}},
}

// optionsStep shows the entry's options form, or saves what was given: the options flow's
// create_entry, which the views answer without result, data or context.
func (h *Home) optionsStep(fl *flow, in map[string]any) map[string]any {
	st := optionSteps[fl.domain]
	if in == nil {
		current := h.EntryOptions(fl.handler)
		fields := slices.Clone(st.fields)
		for i := range fields {
			if v, ok := current[fields[i].name]; ok {
				fields[i].def = v
			}
		}
		return fl.form(st.id, fields, nil)
	}
	f := h.flowState()
	f.mu.Lock()
	f.options[fl.handler] = in
	f.mu.Unlock()
	h.mu.Lock()
	now := Epoch(h.now())
	h.mu.Unlock()
	f.mu.Lock()
	f.modified[fl.handler] = now
	f.mu.Unlock()
	return map[string]any{"type": "create_entry", "flow_id": fl.id, "handler": fl.handler, "description": nil, "description_placeholders": nil, "title": ""}
}

// validateFlowInput is the form's voluptuous schema applied to user input (PREVENT_EXTRA,
// defaults filled in), with data_entry_flow's schema_errors: a field's error under its name,
// errors without a field of the schema under "base".
func validateFlowInput(fields []flowField, in map[string]any) (map[string]any, map[string]any) {
	out := map[string]any{}
	errs := map[string]any{}
	var base []any
	known := map[string]bool{}
	for _, f := range fields {
		known[f.name] = true
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !known[k] {
			base = append(base, "extra keys not allowed @ data['"+k+"']")
		}
	}
	for _, f := range fields {
		v, ok := in[f.name]
		if !ok {
			switch {
			case f.def != nil:
				out[f.name] = f.def
			case f.required:
				errs[f.name] = "required key not provided"
			}
			continue
		}
		val, msg := coerceFlowField(f, v)
		if msg != "" {
			errs[f.name] = msg
			continue
		}
		out[f.name] = val
	}
	if base != nil {
		errs["base"] = base
	}
	return out, errs
}

// coerceFlowField validates one value like the field's validator: str and bool check the type,
// vol.Coerce(int) converts as Python's int() does, vol.In checks membership.
func coerceFlowField(f flowField, v any) (any, string) {
	switch f.typ {
	case "string":
		if s, ok := v.(string); ok {
			return s, ""
		}
		return nil, "expected str"
	case "boolean":
		if b, ok := v.(bool); ok {
			return b, ""
		}
		return nil, "expected bool"
	case "integer":
		if n, ok := flowInt(v); ok {
			return n, ""
		}
		return nil, "expected int"
	case "select":
		if s, ok := v.(string); ok && slices.Contains(f.options, s) {
			return s, ""
		}
		sorted := slices.Clone(f.options)
		slices.Sort(sorted)
		quoted := make([]string, len(sorted))
		for i, o := range sorted {
			quoted[i] = "'" + o + "'"
		}
		return nil, fmt.Sprintf("value must be one of [%s]", flowJoin(quoted))
	}
	return v, ""
}

func flowJoin(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// flowInt is Python's int() on a JSON value: numbers truncate, numeric strings parse, booleans
// are 0 and 1.
func flowInt(v any) (int64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		f, err := x.Float64()
		return int64(f), err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	case float64:
		return int64(x), !math.IsInf(x, 0) && !math.IsNaN(x)
	case int64:
		return x, true
	case int:
		return int64(x), true
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		return i, err == nil
	}
	return 0, false
}
