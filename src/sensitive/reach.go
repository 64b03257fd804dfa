package sensitive

import (
	"regexp"
	"slices"
	"strings"
)

// rawServices reach devices or run code without going through an entity's own services, so what
// they do cannot be read from a target: a Z-Wave value write can unlatch a lock, an MQTT message
// can open a garage, a shell command can do anything. Each counts as Unknown (design.md §5b rule 3).
// A domain listed with "*" counts for every service of the domain.
var rawServices = map[string][]string{
	"mqtt":          {"publish"},
	"zwave_js":      {"set_value", "multicast_set_value", "invoke_cc_api", "set_config_parameter", "bulk_set_partial_config_parameters", "set_lock_usercode", "clear_lock_usercode", "set_lock_configuration", "reset_meter"},
	"zha":           {"issue_zigbee_cluster_command", "issue_zigbee_group_command", "set_zigbee_cluster_attribute", "set_lock_user_code", "enable_lock_user_code", "disable_lock_user_code", "clear_lock_user_code", "permit"},
	"knx":           {"send", "event_register", "exposure_register"},
	"modbus":        {"write_register", "write_coil"},
	"deconz":        {"configure"},
	"esphome":       {"*"},
	"shell_command": {"*"},
	"python_script": {"*"},
	"rest_command":  {"*"},
	"pyscript":      {"*"},
	"hassio":        {"addon_stdin"},
	// A faked position arms and disarms alarms that follow presence, and opens doors on arrival.
	"device_tracker": {"see"},
}

// RawService reports whether domain.service reaches devices or runs code in a way no target shows.
func RawService(domain, service string) bool {
	domain, service = strings.ToLower(strings.TrimSpace(domain)), strings.ToLower(strings.TrimSpace(service))
	list, ok := rawServices[domain]
	return ok && (slices.Contains(list, "*") || slices.Contains(list, service))
}

// reservedEvents are event types Home Assistant fires itself; listeners (the state machine's
// subscribers, the recorder, the frontend, hamcp's own mirror) take them as facts. homeassistant/const.py
// names most of them; the integrations' own (automation_triggered, script_started, the registries')
// follow the patterns below.
var reservedEvents = []string{
	"state_changed", "state_reported", "call_service", "component_loaded", "core_config_updated",
	"logbook_entry", "logging_changed", "themes_updated", "panels_updated", "lovelace_updated",
	"service_registered", "service_removed", "user_added", "user_updated", "user_removed",
	"persistent_notifications_updated", "data_entry_flow_progressed", "config_entry_discovered",
	"labs_updated", "repairs_issue_registry_updated",
}

var reservedPrefixes = []string{"homeassistant_", "automation_", "script_", "scene_", "service_", "recorder_", "user_", "hassio_"}

// ReservedEvent reports whether eventType is one Home Assistant fires itself, which the model may
// never fire (design.md §5b rule 4).
func ReservedEvent(eventType string) bool {
	t := strings.ToLower(strings.TrimSpace(eventType))
	if slices.Contains(reservedEvents, t) || strings.HasSuffix(t, "_registry_updated") {
		return true
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// Marked is an entity the user marked as sensitive (an opener behind a switch, a gate behind a
// button) or one that sits on the same device as a lock, alarm panel or garage door: any service
// on it counts, whatever its domain.
func Marked(e Entity, service string) []Hit {
	if !e.Marked {
		return nil
	}
	switch strings.ToLower(service) {
	case "update_entity", "reload":
		return nil
	}
	return []Hit{{Garage, service + " " + e.label() + " (a sensitive entity: " + e.MarkedWhy + ")"}}
}

// Trigger is what can start one automation: the entities whose state changes, the event types and
// the other things the model can cause. Any is true when a trigger can fire on a change hamcp
// cannot bound (a template over every state, an unknown trigger with an entity template).
type Trigger struct {
	Entities     []string
	Devices      []string
	Events       []string
	Conversation bool // a sentence sent to Assist
	Notification bool // a persistent notification created or dismissed
	Any          bool
}

// entityInTemplate finds entity ids a template reads: states('x.y'), is_state('x.y', …),
// state_attr('x.y', …), states.x.y. A template that reads whole domains or areas (states.light,
// expand(), area_entities()) can fire on any of them.
var (
	entityInTemplate = regexp.MustCompile(`['"]([a-z0-9_]+\.[a-z0-9_]+)['"]|\bstates\.([a-z0-9_]+)\.([a-z0-9_]+)`)
	wideTemplate     = regexp.MustCompile(`\bstates\.[a-z0-9_]+\s*[|)\]}]|\bstates\s*[|)\]}]|\bexpand\s*\(|\barea_entities\s*\(|\bfloor_entities\s*\(|\blabel_entities\s*\(|\bdevice_entities\s*\(|\bintegration_entities\s*\(|\bstates\s*\(\s*\)|\bstates\.[a-z0-9_]+\s*%}|\bstates\s*%}`)
)

// Triggers reads what can start an automation from its configuration (decoded JSON or YAML):
// state, numeric_state, template, device, zone, event, tag, conversation, calendar and
// persistent_notification triggers, at any depth of a trigger list. Time and sun triggers
// cannot be caused by a service call, except through an input_datetime they read, which counts as
// an entity.
func Triggers(cfg any) Trigger {
	var t Trigger
	m, _ := cfg.(map[string]any)
	for _, k := range []string{"triggers", "trigger"} {
		addTriggers(&t, m[k])
	}
	return t
}

func addTriggers(t *Trigger, v any) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			addTriggers(t, e)
		}
	case map[string]any:
		if inner, ok := x["triggers"]; ok { // a trigger list nested as in blueprints' inputs
			addTriggers(t, inner)
		}
		kind, _ := x["trigger"].(string)
		if kind == "" {
			kind, _ = x["platform"].(string)
		}
		addIDs := func(key string, into *[]string) {
			ids, known := idList(x[key])
			if !known && x[key] != nil {
				t.Any = true
			}
			*into = append(*into, ids...)
		}
		switch strings.ToLower(kind) {
		case "state", "numeric_state", "zone", "geo_location", "calendar":
			addIDs("entity_id", &t.Entities)
			if z, ok := x["zone"].(string); ok {
				t.Entities = append(t.Entities, strings.ToLower(z))
			}
			if vt, ok := x["value_template"].(string); ok {
				t.template(vt)
			}
		case "device":
			addIDs("device_id", &t.Devices)
			if s, ok := x["entity_id"].(string); ok && strings.Contains(s, ".") {
				t.Entities = append(t.Entities, strings.ToLower(s))
			}
		case "template":
			vt, _ := x["value_template"].(string)
			t.template(vt)
		case "event":
			switch et := x["event_type"].(type) {
			case string:
				if IsTemplate(et) {
					t.Any = true
				} else {
					t.Events = append(t.Events, strings.ToLower(et))
				}
			case []any:
				for _, e := range et {
					if s, ok := e.(string); ok && !IsTemplate(s) {
						t.Events = append(t.Events, strings.ToLower(s))
					} else {
						t.Any = true
					}
				}
			}
		case "tag":
			t.Events = append(t.Events, "tag_scanned")
		case "conversation":
			t.Conversation = true
		case "persistent_notification":
			t.Notification = true
		case "time":
			switch at := x["at"].(type) {
			case string:
				if strings.HasPrefix(at, "input_datetime.") || strings.HasPrefix(at, "sensor.") {
					t.Entities = append(t.Entities, strings.ToLower(at))
				}
			case []any:
				for _, e := range at {
					if s, ok := e.(string); ok && strings.Contains(s, ".") {
						t.Entities = append(t.Entities, strings.ToLower(s))
					}
				}
			}
		}
	}
}

// template adds what a template trigger reads.
func (t *Trigger) template(s string) {
	s = strings.ToLower(s)
	if wideTemplate.MatchString(s) {
		t.Any = true
	}
	for _, m := range entityInTemplate.FindAllStringSubmatch(s, -1) {
		switch {
		case m[1] != "":
			t.Entities = append(t.Entities, m[1])
		case m[2] != "":
			t.Entities = append(t.Entities, m[2]+"."+m[3])
		}
	}
}
