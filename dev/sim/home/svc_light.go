package home

import (
	"math"
	"strings"
)

// lightModel is what a bulb remembers while off (brightness, colour), which
// the state attributes do not show (they are null when off).
type lightModel struct {
	modes      []string
	minK, maxK int
	on         bool
	brightness int
	mode       string
	kelvin     int
	hs         [2]float64
	effects    []string
	effect     string
}

const (
	lightEffect     = 4
	lightFlash      = 8
	lightTransition = 32
)

func (m *lightModel) supports(mode string) bool { return contains(m.modes, mode) }

func (m *lightModel) hasColor() bool {
	return m.supports("hs") || m.supports("xy") || m.supports("rgb")
}

// colorMode picks the light's own mode for a colour given in any space.
func (m *lightModel) colorMode(prefer string) string {
	if m.supports(prefer) {
		return prefer
	}
	for _, c := range []string{"hs", "xy", "rgb"} {
		if m.supports(c) {
			return c
		}
	}
	return ""
}

func (m *lightModel) attributes() map[string]any {
	a := map[string]any{"supported_color_modes": toAny(m.modes)}
	feat := 0
	if m.mode != "onoff" {
		feat = lightTransition | lightFlash
	}
	if len(m.effects) > 0 {
		feat |= lightEffect
		a["effect_list"] = toAny(m.effects)
		a["effect"] = nil
		if m.on {
			a["effect"] = m.effect
		}
	}
	a["supported_features"] = feat
	a["color_mode"] = nil
	if m.on {
		a["color_mode"] = m.mode
	}
	if m.supports("onoff") {
		return a
	}
	a["brightness"] = nil
	if m.on {
		a["brightness"] = m.brightness
	}
	if !m.supports("color_temp") && !m.hasColor() {
		return a
	}
	if m.supports("color_temp") {
		a["min_color_temp_kelvin"], a["max_color_temp_kelvin"] = m.minK, m.maxK
	}
	for _, k := range []string{"color_temp_kelvin", "hs_color", "rgb_color", "xy_color"} {
		a[k] = nil
	}
	if !m.on {
		return a
	}
	var rgb [3]int
	var hs [2]float64
	if m.mode == "color_temp" {
		a["color_temp_kelvin"] = m.kelvin
		rgb = kelvinToRGB(m.kelvin)
		hs = rgbToHS(float64(rgb[0]), float64(rgb[1]), float64(rgb[2]))
	} else {
		hs = m.hs
		rgb = hsToRGB(hs)
	}
	a["hs_color"] = []any{hs[0], hs[1]}
	a["rgb_color"] = []any{rgb[0], rgb[1], rgb[2]}
	xy := rgbToXY(rgb)
	a["xy_color"] = []any{xy[0], xy[1]}
	return a
}

var lightOnFields = []field{
	{name: "transition", kind: kFloat, min: num(0), max: num(6553), desc: "Duration it takes to get to next state."},
	{name: "brightness", kind: kInt, min: num(0), max: num(255), group: "Brightness descriptors", desc: "Number indicating brightness, where 0 turns the light off, 1 is the minimum brightness, and 255 is the maximum brightness."},
	{name: "brightness_pct", kind: kFloat, min: num(0), max: num(100), group: "Brightness descriptors", desc: "Number indicating the percentage of full brightness."},
	{name: "brightness_step", kind: kInt, min: num(-255), max: num(255), group: "Brightness descriptors", desc: "Change brightness by an amount."},
	{name: "brightness_step_pct", kind: kFloat, min: num(-100), max: num(100), group: "Brightness descriptors", desc: "Change brightness by a percentage."},
	{name: "color_temp_kelvin", kind: kInt, min: num(1), desc: "Color temperature in Kelvin.", group: "Color descriptors"},
	{name: "rgb_color", kind: kRGB, group: "Color descriptors", desc: "The color in RGB format.", example: []int{255, 100, 100}},
	{name: "hs_color", kind: kList, group: "Color descriptors", desc: "Color in hue/sat format: [hue (0..360), saturation (0..100)]."},
	{name: "xy_color", kind: kList, group: "Color descriptors", desc: "Color in XY format."},
	{name: "color_name", kind: kString, group: "Color descriptors", desc: "A human-readable color name."},
	{name: "effect", kind: kString, desc: "Light effect."},
	{name: "flash", kind: kEnum, options: []string{"short", "long"}, desc: "Tell light to flash."},
}

func (h *Home) registerLight() {
	on := func(c *call, st *State) (any, error) { return nil, c.lightOn(st) }
	h.addService(&serviceDef{domain: "light", name: "turn_on", title: "Turn on", desc: "Turns on one or more lights and adjusts their properties, even when they are turned on already.", target: "light", fields: lightOnFields, entity: on})
	h.addService(&serviceDef{domain: "light", name: "turn_off", title: "Turn off", desc: "Turns off one or more lights.", target: "light",
		fields: []field{lightOnFields[0], {name: "flash", kind: kEnum, options: []string{"short", "long"}, desc: "Tell light to flash."}},
		entity: func(c *call, st *State) (any, error) { c.lightSet(st.EntityID, false); return nil, nil }})
	h.addService(&serviceDef{domain: "light", name: "toggle", title: "Toggle", desc: "Toggles one or more lights, from on to off, or off to on, based on their current state.", target: "light", fields: lightOnFields,
		entity: func(c *call, st *State) (any, error) {
			if st.State == "on" {
				c.lightSet(st.EntityID, false)
				return nil, nil
			}
			return nil, c.lightOn(st)
		}})
}

func (c *call) lightSet(eid string, on bool) {
	m := c.h.lights[eid]
	m.on = on
	c.set(eid, onOff(on), withName(m.attributes(), c.h.states[eid]))
}

// withName carries over the attributes the model does not own (friendly_name, icon).
func withName(a map[string]any, old *State) map[string]any {
	if old != nil {
		for _, k := range []string{"friendly_name", "icon", "device_class", "entity_picture"} {
			if v, ok := old.Attributes[k]; ok {
				a[k] = v
			}
		}
	}
	return a
}

func (c *call) lightOn(st *State) error {
	m := c.h.lights[st.EntityID]
	if m == nil {
		return nil
	}
	bri := m.brightness
	if !m.on {
		if bri <= 0 {
			bri = 255
		}
	}
	switch {
	case c.has("brightness"):
		bri = int(c.float("brightness"))
	case c.has("brightness_pct"):
		bri = int(math.Round(c.float("brightness_pct") * 255 / 100))
	case c.has("brightness_step"), c.has("brightness_step_pct"):
		step := c.float("brightness_step")
		if c.has("brightness_step_pct") {
			step = math.Round(c.float("brightness_step_pct") * 255 / 100)
		}
		base := 0
		if m.on {
			base = m.brightness
		}
		bri = base + int(step)
		if bri > 255 {
			bri = 255
		}
		if bri < 0 {
			bri = 0
		}
	}
	if bri == 0 && (c.has("brightness") || c.has("brightness_pct") || c.has("brightness_step") || c.has("brightness_step_pct")) {
		c.lightSet(st.EntityID, false)
		return nil
	}
	if m.mode != "onoff" {
		m.brightness = bri
	}
	if err := c.lightColor(m); err != nil {
		return err
	}
	if e := c.str("effect"); e != "" && contains(m.effects, e) {
		m.effect = e
	}
	c.lightSet(st.EntityID, true)
	return nil
}

// lightColor applies a requested colour, converting between spaces the way
// HA does for lights that do not support the requested mode.
func (c *call) lightColor(m *lightModel) error {
	var hs *[2]float64
	prefer := "hs"
	switch {
	case c.has("color_temp_kelvin"):
		k := int(c.float("color_temp_kelvin"))
		if m.supports("color_temp") {
			k = max(m.minK, min(m.maxK, k))
			m.mode, m.kelvin = "color_temp", k
			return nil
		}
		rgb := kelvinToRGB(k)
		v := rgbToHS(float64(rgb[0]), float64(rgb[1]), float64(rgb[2]))
		hs = &v
	case c.has("rgb_color"):
		l := c.data["rgb_color"].([]any)
		v := rgbToHS(float64(l[0].(int)), float64(l[1].(int)), float64(l[2].(int)))
		hs, prefer = &v, "rgb"
	case c.has("color_name"):
		rgb, ok := namedColors[strings.ToLower(strings.ReplaceAll(c.str("color_name"), " ", ""))]
		if !ok {
			return invalidf("Invalid color name %s for dictionary value @ data['color_name']", c.str("color_name"))
		}
		v := rgbToHS(float64(rgb[0]), float64(rgb[1]), float64(rgb[2]))
		hs, prefer = &v, "rgb"
	case c.has("hs_color"):
		l, _ := c.data["hs_color"].([]any)
		hv, ok1 := listFloat(l, 0)
		sv, ok2 := listFloat(l, 1)
		if len(l) != 2 || !ok1 || !ok2 || hv < 0 || hv > 360 || sv < 0 || sv > 100 {
			return invalidf("expected [hue 0..360, saturation 0..100] for dictionary value @ data['hs_color']")
		}
		v := [2]float64{hv, sv}
		hs = &v
	case c.has("xy_color"):
		l, _ := c.data["xy_color"].([]any)
		xv, ok1 := listFloat(l, 0)
		yv, ok2 := listFloat(l, 1)
		if len(l) != 2 || !ok1 || !ok2 || xv < 0 || xv > 1 || yv < 0 || yv > 1 {
			return invalidf("expected [x 0..1, y 0..1] for dictionary value @ data['xy_color']")
		}
		if !m.hasColor() && m.supports("color_temp") {
			m.mode, m.kelvin = "color_temp", max(m.minK, min(m.maxK, xyToKelvin([2]float64{xv, yv})))
			return nil
		}
		rgb := xyToRGB([2]float64{xv, yv})
		v := rgbToHS(float64(rgb[0]), float64(rgb[1]), float64(rgb[2]))
		hs, prefer = &v, "xy"
	}
	if hs == nil {
		return nil
	}
	if mode := m.colorMode(prefer); mode != "" {
		m.mode, m.hs = mode, *hs
		return nil
	}
	if m.supports("color_temp") {
		rgb := hsToRGB(*hs)
		m.mode, m.kelvin = "color_temp", max(m.minK, min(m.maxK, xyToKelvin(rgbToXY(rgb))))
	}
	return nil
}

func listFloat(l []any, i int) (float64, bool) {
	if i >= len(l) {
		return 0, false
	}
	return toFloat(l[i])
}
