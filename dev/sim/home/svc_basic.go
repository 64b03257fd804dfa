package home

import (
	"sort"
	"strings"
)

// powerLink ties a plug's switch to its power sensor, so turning the switch
// off drops the reading the way a real metering plug does.
type powerLink struct {
	sensor string
	watts  float64
}

func (h *Home) registerServices() {
	h.registerCore()
	h.registerLight()
	h.registerToggles()
	h.registerClimate()
	h.registerCover()
	h.registerLock()
	h.registerAlarm()
	h.registerMedia()
	h.registerInputs()
	h.registerNotify()
	h.registerTodoWeatherCalendar()
	h.registerAutomation()
	h.registerUpdate() // updates.go
}

// onOffServices registers turn_on/turn_off/toggle for a plain on/off domain.
func (h *Home) onOffServices(domain string) {
	set := func(on bool) func(c *call, st *State) (any, error) {
		return func(c *call, st *State) (any, error) { c.setOnOff(st, on); return nil, nil }
	}
	h.addService(&serviceDef{domain: domain, name: "turn_on", title: "Turn on", desc: "Turns on the " + domain + ".", target: domain, entity: set(true)})
	h.addService(&serviceDef{domain: domain, name: "turn_off", title: "Turn off", desc: "Turns off the " + domain + ".", target: domain, entity: set(false)})
	h.addService(&serviceDef{domain: domain, name: "toggle", title: "Toggle", desc: "Toggles the " + domain + " on/off.", target: domain,
		entity: func(c *call, st *State) (any, error) { c.setOnOff(st, st.State != "on"); return nil, nil }})
}

func (c *call) setOnOff(st *State, on bool) {
	c.set(st.EntityID, onOff(on), cloneAttrs(st.Attributes))
	if link, ok := c.h.powerLinks[st.EntityID]; ok {
		if ps := c.h.states[link.sensor]; ps != nil {
			w := 0.0
			if on {
				w = link.watts
			}
			// the meter reports on its own, not as part of the caller's context.
			c.h.writeState(link.sensor, ftoa(w, 1), cloneAttrs(ps.Attributes), false, c.h.newContext("", nil))
		}
	}
}

func (h *Home) registerToggles() {
	h.onOffServices("switch")
	h.onOffServices("input_boolean")
	h.addService(&serviceDef{domain: "input_boolean", name: "reload", title: "Reload", desc: "Reloads helpers from the YAML-configuration.", run: func(c *call) (any, error) { return nil, nil }})
	h.addService(&serviceDef{domain: "camera", name: "turn_on", title: "Turn on", desc: "Turns on the camera.", target: "camera", feature: 1,
		entity: func(c *call, st *State) (any, error) {
			c.set(st.EntityID, "idle", cloneAttrs(st.Attributes))
			return nil, nil
		}})
	h.addService(&serviceDef{domain: "camera", name: "turn_off", title: "Turn off", desc: "Turns off the camera.", target: "camera", feature: 1,
		entity: func(c *call, st *State) (any, error) {
			c.set(st.EntityID, "off", cloneAttrs(st.Attributes))
			return nil, nil
		}})
}

// registerCore is the homeassistant domain.
func (h *Home) registerCore() {
	for _, svc := range []string{"turn_on", "turn_off", "toggle"} {
		svc := svc
		h.addService(&serviceDef{domain: "homeassistant", name: svc, title: titleCase(svc), desc: "Generic action to " + strings.ReplaceAll(svc, "_", " ") + " devices/entities.",
			target: "*", extraOK: true, run: func(c *call) (any, error) { return nil, c.genericToggle(svc) }})
	}
	h.addService(&serviceDef{domain: "homeassistant", name: "update_entity", title: "Update entity", desc: "Forces one or more entities to update their data.", target: "*",
		run: func(c *call) (any, error) { return nil, nil }})
	h.addService(&serviceDef{domain: "homeassistant", name: "check_config", title: "Check configuration", desc: "Checks the Home Assistant YAML-configuration files for errors. Errors will be shown in the Home Assistant logs.",
		run: func(c *call) (any, error) {
			res := c.h.checkConfigLocked()
			if res.Result != "valid" {
				c.h.createNotificationLocked("homeassistant.check_config", "Config validating", res.Errors)
			}
			return nil, nil
		}})
	h.addService(&serviceDef{domain: "homeassistant", name: "restart", title: "Restart", desc: "Restarts Home Assistant.",
		fields: []field{{name: "safe_mode", kind: kBool, desc: "Restart in safe mode."}},
		run: func(c *call) (any, error) {
			if res := c.h.checkConfigLocked(); res.Result != "valid" {
				c.h.Log("error", "homeassistant.core", "The system cannot restart because the configuration is not valid: %s", res.Errors)
				c.h.createNotificationLocked("homeassistant.check_config", "Config validating", "Config error. See [the logs](/config/logs) for details.")
				return nil, &HAError{Msg: "Cannot perform the action because the configuration is not valid: " + res.Errors}
			}
			c.h.Log("warning", "homeassistant.core", "Restart requested; the simulator keeps running and drops its clients")
			return nil, nil
		}})
	h.addService(&serviceDef{domain: "homeassistant", name: "reload_all", title: "Reload all", desc: "Reloads all YAML configuration that can be reloaded without restarting Home Assistant.",
		run: func(c *call) (any, error) { return nil, c.h.reloadAllLocked(c) }})
	h.addService(&serviceDef{domain: "homeassistant", name: "reload_core_config", title: "Reload core configuration", desc: "Reloads the core configuration from the YAML-configuration.",
		run: func(c *call) (any, error) { return nil, nil }})
}

// genericToggle is homeassistant.turn_on/off/toggle: split the targets by
// domain and call each domain's own service (covers open/close instead).
func (c *call) genericToggle(svc string) error {
	ids, _ := c.h.resolveTarget(c.target, "*")
	byDomain := map[string][]any{}
	for _, id := range ids {
		d, _, _ := strings.Cut(id, ".")
		byDomain[d] = append(byDomain[d], id)
	}
	domains := make([]string, 0, len(byDomain))
	for d := range byDomain {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	for _, d := range domains {
		name := svc
		if d == "cover" {
			name = map[string]string{"turn_on": "open_cover", "turn_off": "close_cover", "toggle": "toggle"}[svc]
		}
		if c.h.services[d][name] == nil {
			c.h.Log("warning", "homeassistant.components.homeassistant", "The action homeassistant.%s does not support entities %s", svc, joinAny(byDomain[d]))
			continue
		}
		data := map[string]any{}
		for k, v := range c.data {
			data[k] = v
		}
		data["entity_id"] = byDomain[d]
		if _, err := c.callNested(d, name, data); err != nil {
			return err
		}
	}
	return nil
}

func joinAny(l []any) string {
	s := make([]string, len(l))
	for i, v := range l {
		s[i], _ = v.(string)
	}
	return strings.Join(s, ", ")
}
