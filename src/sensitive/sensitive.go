// Package sensitive is the one table of actions a user confirms themselves rather than take the
// model's word for: unlocking, disarming, opening a garage, restarting Home Assistant, deleting.
// It decides from names and the entities a call reaches (domain, device_class), never from what the
// model says about them; resolving a target to entities and reading configurations is the caller's
// job. It knows no MCP, HTTP or backend.
package sensitive

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Class is a kind of action the add-on option confirm_trusted names: for a trusted class the model's
// `confirm: true` is enough, for the others only the user's answer is.
type Class string

// The classes, in the order DOCS.md lists them.
const (
	Lock    Class = "lock"    // unlock or open a lock
	Alarm   Class = "alarm"   // disarm or trigger an alarm panel
	Garage  Class = "garage"  // open or move a garage door or gate (cover device_class garage or gate)
	Restart Class = "restart" // restart or stop Home Assistant, reboot or shut down the host
	Delete  Class = "delete"  // delete something that cannot come back (history, automations, list items)
	Change  Class = "change"  // any other change a tool asks about first (overwrites, add-on lifecycle, system events)
)

// Classes lists every class.
var Classes = []Class{Lock, Alarm, Garage, Restart, Delete, Change}

// DefaultTrusted are the classes whose confirm:true is accepted when the options say nothing.
var DefaultTrusted = []Class{Change}

// ParseClass accepts a class name in any case, with surrounding spaces.
func ParseClass(s string) (Class, error) {
	c := Class(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Classes, c) {
		return c, nil
	}
	names := make([]string, len(Classes))
	for i, c := range Classes {
		names[i] = string(c)
	}
	return "", fmt.Errorf("unknown confirmation class %q: use %s", s, strings.Join(names, ", "))
}

// garageLike are the cover device classes that open a way into the home.
var garageLike = []string{"garage", "gate"}

// Rule is one row of the policy table: a service, optionally only on entities of some device classes.
type Rule struct {
	Domain        string
	Service       string
	DeviceClasses []string // empty = any entity (or none)
	Class         Class
	What          string // what the call does, for the question shown to the user
}

// Rules is the policy table (DOCS.md "Actions the user confirms" shows it).
var Rules = []Rule{
	{"lock", "unlock", nil, Lock, "unlock"},
	{"lock", "open", nil, Lock, "open (unlatch)"},
	{"alarm_control_panel", "alarm_disarm", nil, Alarm, "disarm"},
	{"alarm_control_panel", "alarm_trigger", nil, Alarm, "trigger"},
	{"cover", "open_cover", garageLike, Garage, "open"},
	{"cover", "toggle", garageLike, Garage, "open or close"},
	{"cover", "set_cover_position", garageLike, Garage, "move"},
	{"homeassistant", "restart", nil, Restart, "restart Home Assistant"},
	{"homeassistant", "stop", nil, Restart, "stop Home Assistant"},
	{"hassio", "host_reboot", nil, Restart, "reboot the host"},
	{"hassio", "host_shutdown", nil, Restart, "shut the host down"},
	{"recorder", "purge", nil, Delete, "delete recorded history"},
	{"recorder", "purge_entities", nil, Delete, "delete recorded history"},
	{"system_log", "clear", nil, Delete, "clear the system log"},
	{"persistent_notification", "dismiss_all", nil, Delete, "dismiss every notification"},
	{"todo", "remove_item", nil, Delete, "remove to-do items"},
	{"todo", "remove_completed_items", nil, Delete, "remove completed to-do items"},
	{"shopping_list", "remove_item", nil, Delete, "remove shopping list items"},
	{"shopping_list", "clear_completed", nil, Delete, "clear the shopping list's completed items"},
	{"homeassistant", "set_location", nil, Change, "change the home's location"},
	{"valve", "open_valve", nil, Change, "open"},
	{"siren", "turn_on", nil, Change, "sound"},
}

// Entity is one entity a call reaches, as the caller resolved it.
type Entity struct {
	ID          string
	Name        string // friendly name, for the question
	DeviceClass string
	// Marked: any service on the entity counts (see Marked); MarkedWhy says why, for the question.
	Marked    bool
	MarkedWhy string
}

func (e Entity) domain() string { d, _, _ := strings.Cut(e.ID, "."); return d }

func (e Entity) label() string {
	if e.Name != "" && e.Name != e.ID {
		return e.ID + " (" + e.Name + ")"
	}
	return e.ID
}

// Hit is one reason a call needs confirming.
type Hit struct {
	Class Class
	What  string // "unlock lock.front_door (Front Door)"
}

// IsTemplate reports whether Home Assistant renders s as a template: what it becomes is unknown until
// it runs.
func IsTemplate(s string) bool { return strings.Contains(s, "{{") || strings.Contains(s, "{%") }

// Service returns what calling domain.service on the given entities needs confirmed. complete is
// false when the target could not be resolved entirely (a template, an unknown registry id): then
// every entity it might reach is assumed, the worst case.
func Service(domain, service string, ents []Entity, complete bool) []Hit {
	domain, service = strings.ToLower(strings.TrimSpace(domain)), strings.ToLower(strings.TrimSpace(service))
	if IsTemplate(domain) || IsTemplate(service) {
		return Unknown(domain + "." + service + " is a template, so the service it calls is unknown until it runs")
	}
	if RawService(domain, service) {
		return Unknown(domain + "." + service + " reaches devices or runs code directly, so what it does cannot be read from its target")
	}
	if domain == "homeassistant" && (service == "turn_on" || service == "turn_off" || service == "toggle") {
		return generic(service, ents, complete)
	}
	var out []Hit
	for _, r := range Rules {
		if r.Domain != domain || r.Service != service {
			continue
		}
		if len(r.DeviceClasses) == 0 {
			out = append(out, Hit{r.Class, r.What + on(ents, domain)})
			continue
		}
		for _, e := range ents {
			if e.domain() == domain && slices.Contains(r.DeviceClasses, e.DeviceClass) {
				out = append(out, Hit{r.Class, r.What + " " + e.label()})
			}
		}
		if !complete {
			out = append(out, Hit{r.Class, r.What + " whatever " + domain + "." + service + "'s unresolved target reaches"})
		}
	}
	return out
}

// Relevant reports whether calling domain.service can need confirming for some target: a row of the
// table, or a generic homeassistant.turn_on/turn_off/toggle. Other calls need no target resolved.
func Relevant(domain, service string) bool {
	domain, service = strings.ToLower(strings.TrimSpace(domain)), strings.ToLower(strings.TrimSpace(service))
	if IsTemplate(domain) || IsTemplate(service) || RawService(domain, service) || domain == "homeassistant" && (service == "turn_on" || service == "turn_off" || service == "toggle") {
		return true
	}
	return slices.ContainsFunc(Rules, func(r Rule) bool { return r.Domain == domain && r.Service == service })
}

// generic is homeassistant.turn_on/turn_off/toggle, which Home Assistant splits by the targets'
// domains into each domain's own service (covers open and close). A lock or an alarm panel reached
// this way counts whatever Home Assistant does with it today: the call was aimed at it.
func generic(service string, ents []Entity, complete bool) []Hit {
	var out []Hit
	what := func(e Entity) string {
		return strings.ReplaceAll(service, "_", " ") + " " + e.label() + " (homeassistant." + service + ")"
	}
	for _, e := range ents {
		switch d := e.domain(); d {
		case "lock":
			out = append(out, Hit{Lock, what(e)})
		case "alarm_control_panel":
			out = append(out, Hit{Alarm, what(e)})
		case "cover":
			svc := map[string]string{"turn_on": "open_cover", "turn_off": "close_cover", "toggle": "toggle"}[service]
			out = append(out, Service(d, svc, []Entity{e}, true)...)
		default:
			out = append(out, Service(d, service, []Entity{e}, true)...)
		}
	}
	if !complete {
		out = append(out, Hit{Lock, "homeassistant." + service + " on an unresolved target (it may reach a lock)"},
			Hit{Alarm, "homeassistant." + service + " on an unresolved target (it may reach an alarm panel)"},
			Hit{Garage, "homeassistant." + service + " on an unresolved target (it may reach a garage door)"})
	}
	return out
}

// Unknown is the worst case: an action whose effect cannot be known before it runs counts in every
// class but Change, so only a user who trusts the model with all of them lets confirm:true through.
func Unknown(why string) []Hit {
	var out []Hit
	for _, c := range Classes {
		if c != Change {
			out = append(out, Hit{c, why})
		}
	}
	return out
}

func on(ents []Entity, domain string) string {
	var ids []string
	for _, e := range ents {
		if e.domain() == domain {
			ids = append(ids, e.label())
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return " " + strings.Join(ids, ", ")
}

// SceneState returns what a scene setting entity e to state does that needs confirming: unlocking a
// lock, disarming or triggering an alarm panel, opening a garage door. state is a scene entry as
// Home Assistant stores it: a state string, or a map with "state" and attributes.
func SceneState(e Entity, state any) []Hit {
	s, attrs := "", map[string]any(nil)
	switch v := state.(type) {
	case string:
		s = v
	case map[string]any:
		s, _ = v["state"].(string)
		attrs = v
	}
	s = strings.ToLower(strings.TrimSpace(s))
	if IsTemplate(s) {
		return Unknown("a scene sets " + e.ID + " from a template")
	}
	switch e.domain() {
	case "lock":
		if s != "locked" && s != "locking" {
			return []Hit{{Lock, "set " + e.label() + " to " + orUnknown(s)}}
		}
	case "alarm_control_panel":
		if !strings.HasPrefix(s, "armed_") && s != "arming" {
			return []Hit{{Alarm, "set " + e.label() + " to " + orUnknown(s)}}
		}
	case "cover":
		if !slices.Contains(garageLike, e.DeviceClass) {
			return nil
		}
		pos, hasPos := number(attrs["current_position"])
		if s != "closed" && s != "closing" || hasPos && pos > 0 {
			return []Hit{{Garage, "set " + e.label() + " to " + orUnknown(s)}}
		}
	}
	return nil
}

// number reads a scene attribute as Home Assistant's schema coerces it: a JSON number or a numeric
// string ("100"). Anything else that is present counts as an unknown position (hasPos with +Inf),
// so a shape hamcp cannot read is never taken for "closed".
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case nil:
		return 0, false
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f, true
		}
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f, true
		}
	}
	return math.Inf(1), true
}

func orUnknown(s string) string {
	if s == "" {
		return "an unstated state"
	}
	return s
}

// Classes of a set of hits, each once, in table order.
func ClassesOf(hits []Hit) []Class {
	var out []Class
	for _, c := range Classes {
		if slices.ContainsFunc(hits, func(h Hit) bool { return h.Class == c }) {
			out = append(out, c)
		}
	}
	return out
}
