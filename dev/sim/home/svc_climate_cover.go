package home

import (
	"fmt"
	"strings"
)

const (
	climateTarget  = 1
	climateRange   = 2
	climatePreset  = 16
	climateTurnOff = 128
	climateTurnOn  = 256

	coverOpen   = 1
	coverClose  = 2
	coverSetPos = 4
	coverStop   = 8

	lockOpen = 1
)

var hvacModes = []string{"off", "heat", "cool", "heat_cool", "auto", "dry", "fan_only"}

func hvacAction(mode string, cur, target float64) string {
	switch mode {
	case "off":
		return "off"
	case "cool":
		if cur > target {
			return "cooling"
		}
	case "heat", "auto", "heat_cool":
		if cur < target {
			return "heating"
		}
	}
	return "idle"
}

func (h *Home) registerClimate() {
	h.addService(&serviceDef{domain: "climate", name: "set_temperature", title: "Set target temperature", desc: "Sets the temperature setpoint.", target: "climate", feature: climateTarget,
		fields: []field{
			{name: "temperature", kind: kFloat, desc: "The temperature setpoint."},
			{name: "target_temp_high", kind: kFloat, desc: "The max temperature setpoint."},
			{name: "target_temp_low", kind: kFloat, desc: "The min temperature setpoint."},
			{name: "hvac_mode", kind: kEnum, options: hvacModes, desc: "HVAC operation mode."},
		},
		entity: func(c *call, st *State) (any, error) { return nil, c.climateSetTemp(st) }})
	h.addService(&serviceDef{domain: "climate", name: "set_hvac_mode", title: "Set HVAC mode", desc: "Sets HVAC operation mode.", target: "climate",
		fields: []field{{name: "hvac_mode", kind: kEnum, options: hvacModes, required: true, desc: "HVAC operation mode."}},
		entity: func(c *call, st *State) (any, error) { return nil, c.climateMode(st, c.str("hvac_mode")) }})
	h.addService(&serviceDef{domain: "climate", name: "set_preset_mode", title: "Set preset mode", desc: "Sets preset mode.", target: "climate", feature: climatePreset,
		fields: []field{{name: "preset_mode", kind: kString, required: true, desc: "Preset mode.", example: "away"}},
		entity: func(c *call, st *State) (any, error) {
			p := c.str("preset_mode")
			modes := strList(st.Attributes["preset_modes"])
			if !contains(modes, p) {
				return nil, &ServiceValidationError{Msg: fmt.Sprintf("Preset mode %s is not valid. Valid preset modes are: %s", p, strings.Join(modes, ", ")), Key: "not_valid_preset_mode", Domain: "climate"}
			}
			a := cloneAttrs(st.Attributes)
			a["preset_mode"] = p
			c.set(st.EntityID, st.State, a)
			return nil, nil
		}})
	h.addService(&serviceDef{domain: "climate", name: "turn_on", title: "Turn on", desc: "Turns climate device on.", target: "climate", feature: climateTurnOn,
		entity: func(c *call, st *State) (any, error) {
			if st.State != "off" {
				return nil, nil
			}
			mode := c.h.lastHVAC[st.EntityID]
			if mode == "" {
				for _, m := range strList(st.Attributes["hvac_modes"]) {
					if m != "off" {
						mode = m
						break
					}
				}
			}
			return nil, c.climateMode(st, mode)
		}})
	h.addService(&serviceDef{domain: "climate", name: "turn_off", title: "Turn off", desc: "Turns climate device off.", target: "climate", feature: climateTurnOff,
		entity: func(c *call, st *State) (any, error) { return nil, c.climateMode(st, "off") }})
	h.addService(&serviceDef{domain: "climate", name: "toggle", title: "Toggle", desc: "Toggles climate device, from on to off, or off to on.", target: "climate", feature: climateTurnOff | climateTurnOn,
		entity: func(c *call, st *State) (any, error) {
			if st.State == "off" {
				return c.callNested("climate", "turn_on", map[string]any{"entity_id": st.EntityID})
			}
			return nil, c.climateMode(st, "off")
		}})
}

func strList(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, e := range l {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func (c *call) climateMode(st *State, mode string) error {
	modes := strList(st.Attributes["hvac_modes"])
	if !contains(modes, mode) {
		return &ServiceValidationError{Msg: fmt.Sprintf("HVAC mode %s is not valid. Valid HVAC modes are: %s", mode, strings.Join(modes, ", ")), Key: "not_valid_hvac_mode", Domain: "climate",
			Placeholders: map[string]string{"mode": mode, "modes": strings.Join(modes, ", ")}}
	}
	if st.State != "off" {
		c.h.lastHVAC[st.EntityID] = st.State
	}
	a := cloneAttrs(st.Attributes)
	cur, _ := toFloat(a["current_temperature"])
	tgt, _ := toFloat(a["temperature"])
	a["hvac_action"] = hvacAction(mode, cur, tgt)
	c.set(st.EntityID, mode, a)
	return nil
}

func (c *call) climateSetTemp(st *State) error {
	if !c.has("temperature") && !c.has("target_temp_high") && !c.has("target_temp_low") {
		return invalidf("must contain at least one of temperature, target_temp_high, target_temp_low.")
	}
	lo, _ := toFloat(st.Attributes["min_temp"])
	hi, _ := toFloat(st.Attributes["max_temp"])
	if c.has("target_temp_high") || c.has("target_temp_low") {
		if featuresOf(st)&climateRange == 0 {
			return &ServiceValidationError{Msg: "Set temperature action was used with the target temperature low/high parameter but the entity does not support it", Key: "missing_target_temperature_range_entity_feature", Domain: "climate"}
		}
	}
	a := cloneAttrs(st.Attributes)
	if c.has("temperature") {
		t := c.float("temperature")
		if t < lo || t > hi {
			return &ServiceValidationError{Msg: fmt.Sprintf("Provided temperature %s is not valid. Accepted range is %s to %s", pyRepr(t, kFloat), pyRepr(lo, kFloat), pyRepr(hi, kFloat)), Key: "temp_out_of_range", Domain: "climate"}
		}
		a["temperature"] = t
	}
	mode := st.State
	if c.has("hvac_mode") {
		mode = c.str("hvac_mode")
		if !contains(strList(st.Attributes["hvac_modes"]), mode) {
			return c.climateMode(st, mode)
		}
	}
	cur, _ := toFloat(a["current_temperature"])
	tgt, _ := toFloat(a["temperature"])
	a["hvac_action"] = hvacAction(mode, cur, tgt)
	c.set(st.EntityID, mode, a)
	return nil
}

func coverState(pos int) string {
	if pos > 0 {
		return "open"
	}
	return "closed"
}

func (h *Home) registerCover() {
	move := func(pos int) func(c *call, st *State) (any, error) {
		return func(c *call, st *State) (any, error) { c.coverTo(st, pos); return nil, nil }
	}
	h.addService(&serviceDef{domain: "cover", name: "open_cover", title: "Open", desc: "Opens a cover.", target: "cover", feature: coverOpen, entity: move(100)})
	h.addService(&serviceDef{domain: "cover", name: "close_cover", title: "Close", desc: "Closes a cover.", target: "cover", feature: coverClose, entity: move(0)})
	h.addService(&serviceDef{domain: "cover", name: "set_cover_position", title: "Set position", desc: "Moves a cover to a specific position.", target: "cover", feature: coverSetPos,
		fields: []field{{name: "position", kind: kInt, min: num(0), max: num(100), required: true, desc: "Target position."}},
		entity: func(c *call, st *State) (any, error) { c.coverTo(st, int(c.float("position"))); return nil, nil }})
	h.addService(&serviceDef{domain: "cover", name: "stop_cover", title: "Stop", desc: "Stops the cover movement.", target: "cover", feature: coverStop,
		// covers here move instantly, so there is never a movement to stop;
		// HA still refreshes the state.
		entity: func(c *call, st *State) (any, error) { return nil, nil }})
	h.addService(&serviceDef{domain: "cover", name: "toggle", title: "Toggle", desc: "Toggles a cover open/closed.", target: "cover", feature: coverOpen | coverClose,
		entity: func(c *call, st *State) (any, error) {
			if st.State == "closed" {
				c.coverTo(st, 100)
			} else {
				c.coverTo(st, 0)
			}
			return nil, nil
		}})
}

func (c *call) coverTo(st *State, pos int) {
	a := cloneAttrs(st.Attributes)
	if _, ok := a["current_position"]; ok {
		a["current_position"] = pos
	}
	c.set(st.EntityID, coverState(pos), a)
}

// Alarm control panel features (homeassistant.components.alarm_control_panel.const).
const (
	alarmArmHome  = 1
	alarmArmAway  = 2
	alarmArmNight = 4
	alarmTrigger  = 8
)

// registerAlarm is the alarm_control_panel domain: arming and disarming set the state at once (a real
// panel passes through arming for its exit delay).
func (h *Home) registerAlarm() {
	code := []field{{name: "code", kind: kString, desc: "Code to arm or disarm the alarm."}}
	to := func(state string) func(c *call, st *State) (any, error) {
		return func(c *call, st *State) (any, error) {
			a := cloneAttrs(st.Attributes)
			a["changed_by"] = nil
			c.set(st.EntityID, state, a)
			return nil, nil
		}
	}
	for _, s := range []struct {
		name, title, state string
		feature            int
	}{
		{"alarm_disarm", "Disarm", "disarmed", 0},
		{"alarm_arm_home", "Arm home", "armed_home", alarmArmHome},
		{"alarm_arm_away", "Arm away", "armed_away", alarmArmAway},
		{"alarm_arm_night", "Arm night", "armed_night", alarmArmNight},
		{"alarm_trigger", "Trigger", "triggered", alarmTrigger},
	} {
		h.addService(&serviceDef{domain: "alarm_control_panel", name: s.name, title: s.title, desc: s.title + " the alarm.",
			target: "alarm_control_panel", fields: code, feature: s.feature, entity: to(s.state)})
	}
}

func (h *Home) registerLock() {
	code := []field{{name: "code", kind: kString, desc: "Code used to lock/unlock the lock."}}
	to := func(state string) func(c *call, st *State) (any, error) {
		return func(c *call, st *State) (any, error) {
			c.set(st.EntityID, state, cloneAttrs(st.Attributes))
			return nil, nil
		}
	}
	h.addService(&serviceDef{domain: "lock", name: "lock", title: "Lock", desc: "Locks a lock.", target: "lock", fields: code, entity: to("locked")})
	h.addService(&serviceDef{domain: "lock", name: "unlock", title: "Unlock", desc: "Unlocks a lock.", target: "lock", fields: code, entity: to("unlocked")})
	h.addService(&serviceDef{domain: "lock", name: "open", title: "Open", desc: "Opens a lock.", target: "lock", fields: code, feature: lockOpen, entity: to("open")})
}
