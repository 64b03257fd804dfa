package home

import (
	"sort"
	"strings"
)

// SupportsResponse is HA's SupportsResponse for a service.
type SupportsResponse int

const (
	ResponseNone SupportsResponse = iota
	ResponseOptional
	ResponseOnly
)

// serviceDef declares a service: its schema, description and handler.
type serviceDef struct {
	domain, name string
	title, desc  string
	fields       []field
	// target is the entity domain an entity service acts on ("*" for any);
	// "" for services that take no target.
	target  string
	feature int // supported_features bit the entity must have
	extraOK bool
	// response says whether the service returns data.
	response SupportsResponse
	// entity runs once per targeted entity; its result (if any) is that
	// entity's part of the response.
	entity func(c *call, st *State) (any, error)
	// run handles the whole call.
	run func(c *call) (any, error)
	// external runs outside the home lock (services the sim wires in).
	external func(ServiceCall) (any, error)
}

// ServiceCall is one request to run a service.
type ServiceCall struct {
	Domain, Service string
	Data            map[string]any
	// Target holds entity_id/device_id/area_id/floor_id/label_id; it is merged
	// into Data as HA does.
	Target         map[string]any
	UserID         string
	ReturnResponse bool
}

// CallResult is what a finished call produced.
type CallResult struct {
	Context Context
	// Changed are the states that now carry this call's context.
	Changed []*State
	// Response is the service response (nil unless requested and supported).
	Response any
}

// call is the running state of one service call (and its nested calls).
type call struct {
	h       *Home
	def     *serviceDef
	data    map[string]any
	target  map[string][]string
	ctx     Context
	userID  string
	changed map[string]bool
	// log collects the states this call changed, in order (shared by nested calls)
	log   *[]*State
	depth int
	// explicit are entity ids the caller named (vs. reached through area/device/label).
	explicit map[string]bool
}

// ServiceSupport reports whether a service exists and how it answers.
func (h *Home) ServiceSupport(domain, service string) (SupportsResponse, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.services[domain][service]
	if d == nil {
		return ResponseNone, false
	}
	return d.response, true
}

// Services returns {domain: {service: description}} (WS get_services).
func (h *Home) Services() map[string]map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]map[string]any{}
	for dom, svcs := range h.services {
		m := map[string]any{}
		for name, d := range svcs {
			m[name] = d.description()
		}
		out[dom] = m
	}
	return out
}

// RegisterService adds a service whose handler runs outside the home lock
// (the sim wires recorder.purge to the recorder DB this way).
func (h *Home) RegisterService(domain, name, description string, fields []Field, response SupportsResponse, fn func(ServiceCall) (any, error)) {
	d := &serviceDef{domain: domain, name: name, title: titleCase(name), desc: description, response: response, external: fn}
	for _, f := range fields {
		d.fields = append(d.fields, f.internal())
	}
	h.mu.Lock()
	h.addService(d)
	h.mu.Unlock()
}

func (h *Home) addService(d *serviceDef) {
	if h.services[d.domain] == nil {
		h.services[d.domain] = map[string]*serviceDef{}
	}
	h.services[d.domain][d.name] = d
}

func (h *Home) removeService(domain, name string) {
	delete(h.services[domain], name)
	if len(h.services[domain]) == 0 {
		delete(h.services, domain)
	}
}

// CallService runs a service to completion (HA's blocking call).
func (h *Home) CallService(sc ServiceCall) (*CallResult, error) {
	h.mu.Lock()
	d := h.services[sc.Domain][sc.Service]
	if d == nil {
		h.mu.Unlock()
		return nil, &ServiceNotFoundError{Domain: sc.Domain, Service: sc.Service}
	}
	if sc.ReturnResponse && d.response == ResponseNone {
		h.mu.Unlock()
		return nil, &ServiceValidationError{Msg: "An action which does not return responses can't be called with return_response=True", Key: "service_does_not_support_response", Domain: "homeassistant"}
	}
	if !sc.ReturnResponse && d.response == ResponseOnly {
		h.mu.Unlock()
		return nil, &ServiceValidationError{Msg: "An action which returns responses must be called with return_response=True", Key: "service_lacks_response_request", Domain: "homeassistant"}
	}
	data := map[string]any{}
	for k, v := range sc.Data {
		data[k] = v
	}
	for k, v := range sc.Target {
		if !isTargetKey(k) {
			h.mu.Unlock()
			return nil, invalidf("extra keys not allowed @ data['target']['%s']", k)
		}
		data[k] = v
	}
	ctx := h.newContext(sc.UserID, nil)
	// HA announces every call on the bus before running it.
	h.fireLocked("call_service", map[string]any{"domain": sc.Domain, "service": sc.Service, "service_data": cloneAttrs(data)}, "LOCAL", ctx)
	if d.external != nil {
		h.mu.Unlock()
		h.bus.flush()
		clean, _, err := d.validate(data)
		if err != nil {
			return nil, err
		}
		sc.Data = clean
		resp, err := d.external(sc)
		if err != nil {
			return nil, err
		}
		res := &CallResult{Context: ctx, Changed: []*State{}}
		if sc.ReturnResponse {
			res.Response = resp
		}
		return res, nil
	}
	c := &call{h: h, ctx: ctx, userID: sc.UserID, changed: map[string]bool{}, log: &[]*State{}}
	resp, err := c.invoke(d, data)
	// like HA's REST view: every state_changed with this call's context, in order
	res := &CallResult{Context: ctx, Changed: append([]*State{}, *c.log...)}
	restart := h.onRestart
	restarting := err == nil && sc.Domain == "homeassistant" && sc.Service == "restart"
	h.mu.Unlock()
	h.flushNotes()
	h.bus.flush()
	if restarting && restart != nil {
		restart()
	}
	if err != nil {
		return nil, err
	}
	if sc.ReturnResponse {
		res.Response = resp
	}
	return res, nil
}

// invoke validates and runs a service within an existing call (nested calls
// from scripts, scenes and homeassistant.* share the outer context).
func (c *call) invoke(d *serviceDef, data map[string]any) (any, error) {
	if c.depth > 10 {
		return nil, &HAError{Msg: "Maximum script nesting reached"}
	}
	clean, tgt, err := d.validate(data)
	if err != nil {
		return nil, err
	}
	sub := *c
	sub.def, sub.data, sub.target = d, clean, tgt
	sub.depth = c.depth + 1
	if d.run != nil {
		return d.run(&sub)
	}
	if d.entity == nil {
		return nil, nil
	}
	ids, explicit := c.h.resolveTarget(tgt, d.target)
	sub.explicit = explicit
	responses := map[string]any{}
	for _, id := range ids {
		st := c.h.states[id]
		if st == nil || !c.h.owned[id] || c.h.unavailable(id) { // core skips entities that are not available
			continue
		}
		if d.feature != 0 && featuresOf(st)&d.feature == 0 {
			if explicit[id] {
				return nil, &ServiceValidationError{
					Msg: "Entity " + id + " does not support action " + d.domain + "." + d.name,
					Key: "entity_service_not_supported", Domain: "homeassistant",
					Placeholders: map[string]string{"entity_id": id, "action": d.domain + "." + d.name},
				}
			}
			continue
		}
		r, err := d.entity(&sub, st)
		if err != nil {
			return nil, err
		}
		if r != nil {
			responses[id] = r
		}
	}
	if d.response != ResponseNone {
		return responses, nil
	}
	return nil, nil
}

// callNested runs domain.service inside this call with the same context.
func (c *call) callNested(domain, service string, data map[string]any) (any, error) {
	d := c.h.services[domain][service]
	if d == nil {
		return nil, &ServiceNotFoundError{Domain: domain, Service: service}
	}
	if d.external != nil {
		return nil, &HAError{Msg: domain + "." + service + " cannot be called from a script in the simulator"}
	}
	return c.invoke(d, data)
}

// set writes a state with this call's context and remembers it as changed.
func (c *call) set(entityID, state string, attrs map[string]any) *State {
	st, changed := c.h.writeState(entityID, state, attrs, false, c.ctx)
	c.changed[entityID] = true
	if changed && c.log != nil {
		*c.log = append(*c.log, st)
	}
	return st
}

func (c *call) str(key string) string    { s, _ := c.data[key].(string); return s }
func (c *call) has(key string) bool      { _, ok := c.data[key]; return ok }
func (c *call) float(key string) float64 { f, _ := toFloat(c.data[key]); return f }

func featuresOf(st *State) int {
	f, _ := toFloat(st.Attributes["supported_features"])
	return int(f)
}

// resolveTarget expands a target to entity ids of the given domain ("*" any),
// following HA: entities named directly always count; entities reached through
// a device, area, floor or label count unless hidden or config/diagnostic.
func (h *Home) resolveTarget(tgt map[string][]string, domain string) ([]string, map[string]bool) {
	set := map[string]bool{}
	explicit := map[string]bool{}
	inDomain := func(id string) bool { return domain == "*" || strings.HasPrefix(id, domain+".") }
	var missing []string
	for _, id := range tgt["entity_id"] {
		switch {
		case id == "all":
			for eid := range h.states {
				if inDomain(eid) && h.owned[eid] {
					set[eid] = true
				}
			}
		case id == "none":
		case isHexID(id):
			for _, e := range h.entities {
				if e.ID == id && inDomain(e.EntityID) {
					set[e.EntityID], explicit[e.EntityID] = true, true
				}
			}
		default:
			if _, ok := h.states[id]; !ok {
				missing = append(missing, id)
			}
			if inDomain(id) {
				set[id], explicit[id] = true, true
			}
		}
	}
	if len(missing) > 0 {
		h.Log("warning", "homeassistant.helpers.service", "Referenced entities %s are missing or not currently available", strings.Join(missing, ", "))
	}
	areas := map[string]bool{}
	devices := map[string]bool{}
	for _, a := range tgt["area_id"] {
		areas[a] = true
	}
	for _, f := range tgt["floor_id"] {
		for _, a := range h.areas {
			if a.FloorID != nil && *a.FloorID == f {
				areas[a.AreaID] = true
			}
		}
	}
	for _, d := range tgt["device_id"] {
		devices[d] = true
	}
	labelled := map[string]bool{}
	for _, l := range tgt["label_id"] {
		for _, a := range h.areas {
			if contains(a.Labels, l) {
				areas[a.AreaID] = true
			}
		}
		for _, d := range h.devices {
			if contains(d.Labels, l) {
				devices[d.ID] = true
			}
		}
		for _, e := range h.entities {
			if contains(e.Labels, l) {
				labelled[e.EntityID] = true
			}
		}
	}
	areaDevices := map[string]bool{}
	for a := range areas {
		for _, d := range h.devices {
			if d.AreaID != nil && *d.AreaID == a {
				areaDevices[d.ID] = true
			}
		}
	}
	for _, e := range h.entities {
		if e.EntityCategory != nil || e.HiddenBy != nil || e.DisabledBy != nil || !inDomain(e.EntityID) {
			continue
		}
		hit := labelled[e.EntityID]
		if e.DeviceID != nil && devices[*e.DeviceID] {
			hit = true
		}
		if e.AreaID != nil && areas[*e.AreaID] {
			hit = true
		}
		if e.AreaID == nil && e.DeviceID != nil && areaDevices[*e.DeviceID] {
			hit = true
		}
		if hit {
			set[e.EntityID] = true
		}
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, explicit
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
