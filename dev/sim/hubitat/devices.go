package hubitat

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// attr is one device attribute. value is a string, a float64, or nil (never set).
type attr struct {
	name     string
	dataType string // STRING, ENUM, NUMBER, JSON_OBJECT
	values   []string
	value    any
	unit     string
}

type command struct {
	name  string
	types []string
}

type lockCode struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

type device struct {
	id           int
	name, label  string
	typ          string // driver name
	room         string
	model, maker string
	caps         []string
	attrs        []*attr
	cmds         []command
	authorised   bool // selected in the Maker API instance
	codes        map[int]lockCode
}

func (d *device) attr(name string) *attr {
	for _, a := range d.attrs {
		if a.name == name {
			return a
		}
	}
	return nil
}

func (d *device) hasCommand(name string) bool {
	return slices.ContainsFunc(d.cmds, func(c command) bool { return c.name == name })
}

func (d *device) num(name string) float64 {
	if a := d.attr(name); a != nil {
		if f, ok := a.value.(float64); ok {
			return f
		}
	}
	return 0
}

func (d *device) str(name string) string {
	if a := d.attr(name); a != nil && a.value != nil {
		return valueString(a.value)
	}
	return ""
}

func valueString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

// builder assembles a device from capabilities, each adding its attributes and commands as the
// hub's built-in drivers declare them.
type builder struct{ d *device }

func newDevice(id int, label, typ, room string) *builder {
	name := typ
	return &builder{d: &device{id: id, name: name, label: label, typ: typ, room: room, model: "", maker: "", authorised: true}}
}

func (b *builder) cap(names ...string) *builder { b.d.caps = append(b.d.caps, names...); return b }

func (b *builder) enum(name string, value string, values ...string) *builder {
	b.d.attrs = append(b.d.attrs, &attr{name: name, dataType: "ENUM", values: values, value: value})
	return b
}

func (b *builder) number(name string, value float64, unit string) *builder {
	b.d.attrs = append(b.d.attrs, &attr{name: name, dataType: "NUMBER", value: value, unit: unit})
	return b
}

func (b *builder) text(name string, value any) *builder {
	b.d.attrs = append(b.d.attrs, &attr{name: name, dataType: "STRING", value: value})
	return b
}

func (b *builder) jsonAttr(name string, value any) *builder {
	b.d.attrs = append(b.d.attrs, &attr{name: name, dataType: "JSON_OBJECT", value: value})
	return b
}

func (b *builder) cmd(name string, types ...string) *builder {
	b.d.cmds = append(b.d.cmds, command{name: name, types: types})
	return b
}

func (b *builder) made(model, maker string) *builder { b.d.model, b.d.maker = model, maker; return b }

func (b *builder) hidden() *builder { b.d.authorised = false; return b }

func (b *builder) sw(on bool) *builder {
	v := "off"
	if on {
		v = "on"
	}
	return b.cap("Switch").enum("switch", v, "on", "off").cmd("on").cmd("off")
}

func (b *builder) dim(level float64) *builder {
	return b.cap("SwitchLevel", "ChangeLevel").number("level", level, "%").cmd("setLevel", "NUMBER", "NUMBER").
		cmd("startLevelChange", "ENUM").cmd("stopLevelChange")
}

func (b *builder) refresh() *builder { return b.cap("Refresh").cmd("refresh") }

func (b *builder) battery(pct float64) *builder { return b.cap("Battery").number("battery", pct, "%") }

func (b *builder) temp(t float64) *builder {
	return b.cap("TemperatureMeasurement").number("temperature", t, "°F")
}

func (b *builder) power(w float64) *builder {
	return b.cap("PowerMeter", "EnergyMeter").number("power", w, "W").number("energy", 12.4, "kWh")
}

func (b *builder) build() *device { return b.d }

func demoDevices() []*device {
	ds := []*device{
		newDevice(1, "Living Room Lamp", "Generic Zigbee Dimmer", "Living Room").sw(true).dim(60).refresh().made("ZLL-DIM", "Sengled").build(),
		newDevice(2, "Kitchen Lights", "Generic Z-Wave Smart Dimmer", "Kitchen").sw(false).dim(100).refresh().made("ZEN72", "Zooz").build(),
		newDevice(3, "Porch Light", "Generic Z-Wave Switch", "Outside").sw(false).refresh().made("ZEN71", "Zooz").build(),
		newDevice(4, "Coffee Maker", "Generic Zigbee Outlet", "Kitchen").sw(false).power(0).refresh().made("3210-L", "Centralite").build(),
		newDevice(5, "Bedroom Color Bulb", "Advanced Zigbee RGBW Bulb", "Bedroom").sw(false).dim(40).
			cap("ColorControl", "ColorTemperature", "ColorMode").
			number("hue", 8, "%").number("saturation", 70, "%").number("colorTemperature", 2700, "K").
			enum("colorMode", "CT", "CT", "RGB", "EFFECTS").text("colorName", "Warm White").
			cmd("setColor", "COLOR_MAP").cmd("setHue", "NUMBER").cmd("setSaturation", "NUMBER").
			cmd("setColorTemperature", "NUMBER", "NUMBER", "NUMBER").refresh().made("A19 RGBW", "Sengled").build(),
		newDevice(6, "Office Desk Strip", "Generic Zigbee RGB Light", "Office").sw(true).dim(80).
			cap("ColorControl", "ColorMode").number("hue", 66, "%").number("saturation", 100, "%").
			enum("colorMode", "RGB", "CT", "RGB").text("colorName", "Blue").
			cmd("setColor", "COLOR_MAP").cmd("setHue", "NUMBER").cmd("setSaturation", "NUMBER").refresh().build(),
		newDevice(7, "Hallway Tunable", "Generic Zigbee CT Bulb", "Hallway").sw(false).dim(50).
			cap("ColorTemperature").number("colorTemperature", 3000, "K").
			cmd("setColorTemperature", "NUMBER", "NUMBER", "NUMBER").refresh().build(),
		newDevice(8, "Front Door Lock", "Generic Z-Wave Lock", "Entry").cap("Lock", "LockCodes").
			enum("lock", "locked", "locked", "unlocked", "unknown").
			jsonAttr("lockCodes", `{"1":{"name":"Family","code":"1234"}}`).number("maxCodes", 30, "").
			number("codeLength", 4, "").text("lastCodeName", nil).text("codeChanged", nil).battery(88).
			cmd("lock").cmd("unlock").cmd("setCode", "NUMBER", "STRING", "STRING").cmd("deleteCode", "NUMBER").
			cmd("getCodes").refresh().made("BE469ZP", "Schlage").build(),
		newDevice(9, "Back Door Lock", "Generic Z-Wave Lock", "Kitchen").cap("Lock", "LockCodes").
			enum("lock", "unlocked", "locked", "unlocked", "unknown").jsonAttr("lockCodes", `{}`).
			number("maxCodes", 20, "").number("codeLength", 4, "").text("lastCodeName", nil).text("codeChanged", nil).battery(64).
			cmd("lock").cmd("unlock").cmd("setCode", "NUMBER", "STRING", "STRING").cmd("deleteCode", "NUMBER").
			cmd("getCodes").refresh().made("YRD256", "Yale").build(),
		newDevice(10, "Front Door Contact", "Generic Zigbee Contact Sensor", "Entry").cap("ContactSensor").
			enum("contact", "closed", "open", "closed").temp(68.5).battery(95).build(),
		newDevice(11, "Garage Side Door", "Generic Zigbee Contact Sensor", "Garage").cap("ContactSensor").
			enum("contact", "closed", "open", "closed").battery(72).build(),
		newDevice(12, "Living Room Motion", "Generic Zigbee Motion Sensor", "Living Room").cap("MotionSensor").
			enum("motion", "inactive", "active", "inactive").temp(70.2).battery(90).build(),
		newDevice(13, "Hallway Motion", "Generic Zigbee Motion Sensor", "Hallway").cap("MotionSensor", "IlluminanceMeasurement").
			enum("motion", "inactive", "active", "inactive").number("illuminance", 120, "lux").battery(81).build(),
		newDevice(14, "Bathroom Climate", "Generic Zigbee Temp/Humidity Sensor", "Bathroom").temp(71.6).
			cap("RelativeHumidityMeasurement").number("humidity", 48, "%").battery(77).build(),
		newDevice(15, "Basement Climate", "Generic Zigbee Temp/Humidity Sensor", "Basement").temp(62.1).
			cap("RelativeHumidityMeasurement").number("humidity", 61, "%").battery(55).build(),
		newDevice(16, "Hallway Thermostat", "Generic Z-Wave Thermostat", "Hallway").temp(69.0).
			cap("Thermostat", "ThermostatHeatingSetpoint", "ThermostatCoolingSetpoint", "ThermostatMode", "ThermostatFanMode", "ThermostatOperatingState").
			number("heatingSetpoint", 68, "°F").number("coolingSetpoint", 76, "°F").number("thermostatSetpoint", 68, "°F").
			enum("thermostatMode", "heat", "auto", "off", "heat", "emergency heat", "cool").
			enum("thermostatFanMode", "auto", "on", "circulate", "auto").
			enum("thermostatOperatingState", "idle", "heating", "pending cool", "pending heat", "vent economizer", "idle", "cooling", "fan only").
			jsonAttr("supportedThermostatModes", `["off","heat","cool","auto","emergency heat"]`).
			jsonAttr("supportedThermostatFanModes", `["auto","on","circulate"]`).
			cmd("setHeatingSetpoint", "NUMBER").cmd("setCoolingSetpoint", "NUMBER").cmd("setThermostatMode", "ENUM").
			cmd("setThermostatFanMode", "ENUM").cmd("heat").cmd("cool").cmd("auto").cmd("off").cmd("emergencyHeat").
			cmd("fanAuto").cmd("fanOn").cmd("fanCirculate").refresh().made("T6 Pro", "Honeywell").build(),
		newDevice(17, "Bedside Button", "Generic Zigbee Button", "Bedroom").cap("PushableButton", "HoldableButton", "DoubleTapableButton", "ReleasableButton").
			number("numberOfButtons", 4, "").number("pushed", 0, "").number("held", 0, "").number("doubleTapped", 0, "").
			number("released", 0, "").battery(93).
			cmd("push", "NUMBER").cmd("hold", "NUMBER").cmd("doubleTap", "NUMBER").cmd("release", "NUMBER").build(),
		newDevice(18, "Kitchen Scene Pico", "Lutron Pico", "Kitchen").cap("PushableButton", "HoldableButton", "ReleasableButton").
			number("numberOfButtons", 5, "").number("pushed", 0, "").number("held", 0, "").number("released", 0, "").
			cmd("push", "NUMBER").cmd("hold", "NUMBER").cmd("release", "NUMBER").build(),
		newDevice(19, "Living Room Shade", "Generic Zigbee Shade", "Living Room").cap("WindowShade").
			enum("windowShade", "closed", "opening", "partially open", "closed", "open", "closing", "unknown").
			number("position", 0, "%").cmd("open").cmd("close").cmd("setPosition", "NUMBER").
			cmd("startPositionChange", "ENUM").cmd("stopPositionChange").battery(86).build(),
		newDevice(20, "Bedroom Blind", "Generic Zigbee Shade", "Bedroom").cap("WindowShade").
			enum("windowShade", "open", "opening", "partially open", "closed", "open", "closing", "unknown").
			number("position", 100, "%").cmd("open").cmd("close").cmd("setPosition", "NUMBER").
			cmd("startPositionChange", "ENUM").cmd("stopPositionChange").battery(91).build(),
		newDevice(21, "Garden Water Valve", "Generic Zigbee Valve", "Outside").cap("Valve").
			enum("valve", "closed", "open", "closed").cmd("open").cmd("close").refresh().build(),
		newDevice(22, "Bedroom Ceiling Fan", "Hampton Bay Fan Controller", "Bedroom").sw(false).cap("FanControl").
			enum("speed", "off", "low", "medium-low", "medium", "medium-high", "high", "on", "off", "auto").
			jsonAttr("supportedFanSpeeds", `["low","medium-low","medium","medium-high","high","on","off","auto"]`).
			cmd("setSpeed", "ENUM").cmd("cycleSpeed").refresh().build(),
		newDevice(23, "Kitchen Speaker", "Sonos Advanced Player", "Kitchen").cap("MusicPlayer", "AudioVolume", "SpeechSynthesis").
			enum("status", "stopped", "playing", "paused", "stopped").number("volume", 25, "%").
			enum("mute", "unmuted", "muted", "unmuted").text("trackDescription", "").
			cmd("play").cmd("pause").cmd("stop").cmd("setVolume", "NUMBER").cmd("mute").cmd("unmute").
			cmd("speak", "STRING", "NUMBER").cmd("nextTrack").cmd("previousTrack").build(),
		// The Hubitat mobile app's device: presence, and notifications sent to the phone.
		newDevice(24, "Alex's Phone", "Mobile App Device", "").cap("PresenceSensor", "Notification").
			enum("presence", "present", "present", "not present").cmd("arrived").cmd("departed").
			cmd("deviceNotification", "STRING").build(),
		newDevice(25, "Sam's Phone", "Virtual Presence", "").cap("PresenceSensor").
			enum("presence", "not present", "present", "not present").cmd("arrived").cmd("departed").build(),
		newDevice(26, "Laundry Leak Sensor", "Generic Zigbee Moisture Sensor", "Basement").cap("WaterSensor").
			enum("water", "dry", "wet", "dry").temp(64.4).battery(97).build(),
		newDevice(27, "Dining Chandelier", "Generic Z-Wave Smart Dimmer", "Dining Room").sw(false).dim(75).refresh().build(),
		newDevice(28, "Outdoor Temperature", "Weather Station", "Outside").temp(54.3).
			cap("RelativeHumidityMeasurement", "IlluminanceMeasurement").number("humidity", 72, "%").number("illuminance", 8400, "lux").build(),
		// On the hub but not selected in Maker API: the eventsocket streams its events anyway.
		newDevice(29, "Garage Door Relay", "Generic Z-Wave Relay", "Garage").sw(false).refresh().hidden().build(),
	}
	return ds
}

// roomsOf groups devices by room, in first-seen order, as /rooms lists them.
func roomsOf(ds []*device) []room {
	var out []room
	idx := map[string]int{}
	for _, d := range ds {
		if d.room == "" {
			continue
		}
		i, ok := idx[d.room]
		if !ok {
			i = len(out)
			idx[d.room] = i
			out = append(out, room{ID: i + 1, Name: d.room})
		}
		out[i].DeviceIDs = append(out[i].DeviceIDs, d.id)
	}
	return out
}

type room struct {
	ID        int    `json:"id"`
	Name      string `json:"name"`
	DeviceIDs []int  `json:"deviceIds"`
}

// change is one attribute change a command made; forced changes (button presses) are events
// even when the value repeats.
type change struct {
	name   string
	value  any
	forced bool
	desc   string
}

// cmdError is a command the device refuses; status is the HTTP status Maker API answers.
type cmdError struct {
	status int
	msg    string
}

func (e *cmdError) Error() string { return e.msg }

func badArg(format string, a ...any) error {
	return &cmdError{status: 400, msg: fmt.Sprintf(format, a...)}
}

func argNum(args []string, i int, name string) (float64, error) {
	if i >= len(args) {
		return 0, badArg("%s needs a %s argument", name, "NUMBER")
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(args[i]), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, badArg("%s: %q is not a number", name, args[i])
	}
	return f, nil
}

func clamp(f, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, f)) }

// run carries out one command and returns the attribute changes, as the built-in drivers do.
func (d *device) run(cmd string, args []string) ([]change, error) {
	if !d.hasCommand(cmd) {
		return nil, &cmdError{status: 400, msg: fmt.Sprintf("Command %s not found on device %d", cmd, d.id)}
	}
	on := func() change { return change{name: "switch", value: "on"} }
	switch cmd {
	case "on":
		if d.attr("speed") != nil {
			return []change{on(), {name: "speed", value: "on"}}, nil
		}
		return []change{on()}, nil
	case "off":
		if d.attr("thermostatMode") != nil {
			return d.thermostat("off")
		}
		if d.attr("speed") != nil {
			return []change{{name: "switch", value: "off"}, {name: "speed", value: "off"}}, nil
		}
		return []change{{name: "switch", value: "off"}}, nil
	case "setLevel":
		lvl, err := argNum(args, 0, cmd)
		if err != nil {
			return nil, err
		}
		lvl = math.Round(clamp(lvl, 0, 100))
		if lvl == 0 {
			return []change{{name: "switch", value: "off"}}, nil
		}
		return []change{{name: "level", value: lvl}, on()}, nil
	case "setColorTemperature":
		ct, err := argNum(args, 0, cmd)
		if err != nil {
			return nil, err
		}
		out := []change{{name: "colorTemperature", value: math.Round(clamp(ct, 2000, 6500))}, on()}
		if d.attr("colorMode") != nil {
			out = append(out, change{name: "colorMode", value: "CT"})
		}
		if len(args) > 1 {
			lvl, err := argNum(args, 1, cmd)
			if err != nil {
				return nil, err
			}
			out = append(out, change{name: "level", value: math.Round(clamp(lvl, 1, 100))})
		}
		return out, nil
	case "setHue", "setSaturation":
		v, err := argNum(args, 0, cmd)
		if err != nil {
			return nil, err
		}
		name := map[string]string{"setHue": "hue", "setSaturation": "saturation"}[cmd]
		return []change{{name: name, value: math.Round(clamp(v, 0, 100))}, {name: "colorMode", value: "RGB"}, on()}, nil
	case "setColor":
		if len(args) == 0 {
			return nil, badArg(`setColor needs a COLOR_MAP argument such as {"hue":50,"saturation":100,"level":80}`)
		}
		var m map[string]float64
		if err := json.Unmarshal([]byte(strings.Join(args, ",")), &m); err != nil {
			return nil, badArg("setColor: %q is not a color map", strings.Join(args, ","))
		}
		out := []change{}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			switch k {
			case "hue", "saturation":
				out = append(out, change{name: k, value: math.Round(clamp(m[k], 0, 100))})
			case "level":
				out = append(out, change{name: k, value: math.Round(clamp(m[k], 1, 100))})
			}
		}
		return append(out, change{name: "colorMode", value: "RGB"}, on()), nil
	case "startLevelChange", "stopLevelChange", "refresh", "getCodes", "startPositionChange", "stopPositionChange", "nextTrack", "previousTrack":
		return nil, nil
	case "lock":
		return []change{{name: "lock", value: "locked", desc: d.label + " was locked [digital]"}}, nil
	case "unlock":
		return []change{{name: "lock", value: "unlocked", desc: d.label + " was unlocked [digital]"}}, nil
	case "setCode":
		slot, err := argNum(args, 0, cmd)
		if err != nil {
			return nil, err
		}
		if len(args) < 2 || strings.TrimSpace(args[1]) == "" {
			return nil, badArg("setCode needs a code")
		}
		if slot < 1 || slot > d.num("maxCodes") || slot != math.Trunc(slot) {
			return nil, badArg("setCode: slot %v is outside 1..%v", slot, d.num("maxCodes"))
		}
		name := fmt.Sprintf("code #%d", int(slot))
		if len(args) > 2 && args[2] != "" {
			name = args[2]
		}
		d.loadCodes()
		d.codes[int(slot)] = lockCode{Name: name, Code: args[1]}
		return []change{{name: "lockCodes", value: d.codesJSON()}, {name: "codeChanged", value: fmt.Sprintf("%d added", int(slot)), forced: true}}, nil
	case "deleteCode":
		slot, err := argNum(args, 0, cmd)
		if err != nil {
			return nil, err
		}
		d.loadCodes()
		delete(d.codes, int(slot))
		return []change{{name: "lockCodes", value: d.codesJSON()}, {name: "codeChanged", value: fmt.Sprintf("%d deleted", int(slot)), forced: true}}, nil
	case "setHeatingSetpoint", "setCoolingSetpoint":
		t, err := argNum(args, 0, cmd)
		if err != nil {
			return nil, err
		}
		t = clamp(t, 40, 100)
		name := map[string]string{"setHeatingSetpoint": "heatingSetpoint", "setCoolingSetpoint": "coolingSetpoint"}[cmd]
		out := []change{{name: name, value: t}}
		mode := d.str("thermostatMode")
		if (name == "heatingSetpoint" && mode == "heat") || (name == "coolingSetpoint" && mode == "cool") {
			out = append(out, change{name: "thermostatSetpoint", value: t})
		}
		return append(out, d.operating(mode, name, t)), nil
	case "setThermostatMode":
		if len(args) == 0 {
			return nil, badArg("setThermostatMode needs a mode")
		}
		return d.thermostat(args[0])
	case "heat", "cool", "auto":
		return d.thermostat(cmd)
	case "emergencyHeat":
		return d.thermostat("emergency heat")
	case "setThermostatFanMode":
		if len(args) == 0 || !slices.Contains(d.attr("thermostatFanMode").values, args[0]) {
			return nil, badArg("setThermostatFanMode: use one of auto, on, circulate")
		}
		return []change{{name: "thermostatFanMode", value: args[0]}}, nil
	case "fanAuto", "fanOn", "fanCirculate":
		return []change{{name: "thermostatFanMode", value: strings.ToLower(strings.TrimPrefix(cmd, "fan"))}}, nil
	case "push", "hold", "doubleTap", "release":
		n := 1.0
		if len(args) > 0 {
			var err error
			if n, err = argNum(args, 0, cmd); err != nil {
				return nil, err
			}
		}
		if n < 1 || n > d.num("numberOfButtons") {
			return nil, badArg("%s: button %v does not exist (1..%v)", cmd, n, d.num("numberOfButtons"))
		}
		name := map[string]string{"push": "pushed", "hold": "held", "doubleTap": "doubleTapped", "release": "released"}[cmd]
		return []change{{name: name, value: n, forced: true, desc: fmt.Sprintf("%s button %v was %s", d.label, n, name)}}, nil
	case "open", "close":
		state := map[string]string{"open": "open", "close": "closed"}[cmd]
		if d.attr("valve") != nil {
			return []change{{name: "valve", value: state}}, nil
		}
		pos := map[string]float64{"open": 100, "close": 0}[cmd]
		return []change{{name: "windowShade", value: state}, {name: "position", value: pos}}, nil
	case "setPosition":
		p, err := argNum(args, 0, cmd)
		if err != nil {
			return nil, err
		}
		p = math.Round(clamp(p, 0, 100))
		state := "partially open"
		switch p {
		case 0:
			state = "closed"
		case 100:
			state = "open"
		}
		return []change{{name: "position", value: p}, {name: "windowShade", value: state}}, nil
	case "setSpeed":
		if len(args) == 0 || !slices.Contains(d.attr("speed").values, args[0]) {
			return nil, badArg("setSpeed: use one of %s", strings.Join(d.attr("speed").values, ", "))
		}
		sw := "on"
		if args[0] == "off" {
			sw = "off"
		}
		return []change{{name: "speed", value: args[0]}, {name: "switch", value: sw}}, nil
	case "cycleSpeed":
		cycle := []string{"low", "medium", "high", "off"}
		i := (slices.Index(cycle, d.str("speed")) + 1) % len(cycle)
		sw := map[bool]string{true: "off", false: "on"}[cycle[i] == "off"]
		return []change{{name: "speed", value: cycle[i]}, {name: "switch", value: sw}}, nil
	case "play":
		return []change{{name: "status", value: "playing"}}, nil
	case "pause":
		return []change{{name: "status", value: "paused"}}, nil
	case "stop":
		return []change{{name: "status", value: "stopped"}}, nil
	case "setVolume":
		v, err := argNum(args, 0, cmd)
		if err != nil {
			return nil, err
		}
		return []change{{name: "volume", value: math.Round(clamp(v, 0, 100))}}, nil
	case "mute":
		return []change{{name: "mute", value: "muted"}}, nil
	case "unmute":
		return []change{{name: "mute", value: "unmuted"}}, nil
	case "speak":
		if len(args) == 0 {
			return nil, badArg("speak needs text")
		}
		out := []change{{name: "trackDescription", value: args[0]}, {name: "status", value: "playing"}}
		if len(args) > 1 {
			v, err := argNum(args, 1, cmd)
			if err != nil {
				return nil, err
			}
			out = append(out, change{name: "volume", value: math.Round(clamp(v, 0, 100))})
		}
		return out, nil
	case "deviceNotification":
		// The phone shows it; the device's attributes do not change (the hub logs the request).
		if len(args) == 0 || args[0] == "" {
			return nil, badArg("deviceNotification needs text")
		}
		return nil, nil
	case "arrived":
		return []change{{name: "presence", value: "present"}}, nil
	case "departed":
		return []change{{name: "presence", value: "not present"}}, nil
	}
	return nil, &cmdError{status: 400, msg: fmt.Sprintf("Command %s not implemented by the simulated driver", cmd)}
}

func (d *device) thermostat(mode string) ([]change, error) {
	a := d.attr("thermostatMode")
	if !slices.Contains(a.values, mode) {
		return nil, badArg("setThermostatMode: use one of %s", strings.Join(a.values, ", "))
	}
	out := []change{{name: "thermostatMode", value: mode}}
	switch mode {
	case "heat", "emergency heat":
		out = append(out, change{name: "thermostatSetpoint", value: d.num("heatingSetpoint")})
	case "cool":
		out = append(out, change{name: "thermostatSetpoint", value: d.num("coolingSetpoint")})
	}
	return append(out, d.operating(mode, "", 0)), nil
}

// operating derives thermostatOperatingState from the mode, setpoints and temperature.
func (d *device) operating(mode, changed string, v float64) change {
	heat, cool, t := d.num("heatingSetpoint"), d.num("coolingSetpoint"), d.num("temperature")
	switch changed {
	case "heatingSetpoint":
		heat = v
	case "coolingSetpoint":
		cool = v
	}
	state := "idle"
	switch {
	case (mode == "heat" || mode == "emergency heat" || mode == "auto") && t < heat:
		state = "heating"
	case (mode == "cool" || mode == "auto") && t > cool:
		state = "cooling"
	}
	return change{name: "thermostatOperatingState", value: state}
}

func (d *device) loadCodes() {
	if d.codes != nil {
		return
	}
	d.codes = map[int]lockCode{}
	var m map[string]lockCode
	if json.Unmarshal([]byte(d.str("lockCodes")), &m) == nil {
		for k, v := range m {
			if n, err := strconv.Atoi(k); err == nil {
				d.codes[n] = v
			}
		}
	}
}

func (d *device) codesJSON() string {
	m := map[string]lockCode{}
	for k, v := range d.codes {
		m[strconv.Itoa(k)] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}
