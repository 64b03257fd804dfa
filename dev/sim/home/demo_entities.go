package home

import (
	"math/rand"
	"strconv"
	"strings"
)

// entOpt places an entity: its device, an area that overrides the
// device's, labels, category, platform and icon.
type entOpt struct {
	dev, area, category, platform, icon, deviceClass string
	labels                                           []string
	hidden                                           bool
}

// addEntity registers a platform entity and writes its first state.
func (h *Home) addEntity(devIDs map[string]string, eid, name, state string, attrs map[string]any, o entOpt) {
	ts := h.createdAt()
	e := &EntityEntry{
		ID: h.hexID(), EntityID: eid, Platform: o.platform, OriginalName: strp(name),
		Labels: cloneStrings(o.labels), CreatedAt: ts, ModifiedAt: ts, Aliases: []string{},
	}
	if e.Labels == nil {
		e.Labels = []string{}
	}
	domain, obj, _ := strings.Cut(eid, ".")
	e.UniqueID = obj
	if o.dev != "" {
		id := devIDs[o.dev]
		d := h.devices[id]
		e.DeviceID = strp(id)
		e.ConfigEntryID = d.ConfigEntryID
		if e.Platform == "" {
			e.Platform = h.configEntries[*d.ConfigEntryID].Domain
		}
		e.UniqueID = d.Identifiers[0][1] + "-" + obj
	}
	if e.Platform == "" {
		e.Platform = domain
	}
	if o.area != "" {
		e.AreaID = strp(o.area)
	}
	if o.category != "" {
		e.EntityCategory = strp(o.category)
	}
	if o.icon != "" {
		e.OriginalIcon = strp(o.icon)
		attrs["icon"] = o.icon
	}
	if o.deviceClass != "" {
		e.OriginalDeviceClass = strp(o.deviceClass)
		attrs["device_class"] = o.deviceClass
	}
	if o.hidden {
		e.HiddenBy = strp("user")
	}
	e.Capabilities = capabilities(domain, attrs)
	attrs["friendly_name"] = name
	h.entities[eid] = e
	h.owned[eid] = true
	h.writeState(eid, state, attrs, false, h.newContext("", nil))
}

// capabilities are the attributes HA keeps in the entity registry (capability_attributes).
func capabilities(domain string, attrs map[string]any) map[string]any {
	keys := map[string][]string{
		"light":        {"supported_color_modes", "min_color_temp_kelvin", "max_color_temp_kelvin", "effect_list"},
		"climate":      {"hvac_modes", "min_temp", "max_temp", "target_temp_step", "preset_modes"},
		"media_player": {"source_list"},
		"sensor":       {"state_class"},
		"input_select": {"options"},
	}[domain]
	if len(keys) == 0 {
		return nil
	}
	m := map[string]any{}
	for _, k := range keys {
		if v, ok := attrs[k]; ok {
			m[k] = v
		}
	}
	return m
}

func (h *Home) buildEntities(devs map[string]string) {
	h.buildLights(devs)
	h.buildSwitchesAndSensors(devs)
	h.buildClimateAndCovers(devs)
	h.buildMediaAndPeople(devs)
	h.buildHelpers(devs)
	h.buildCalendarsAndLists(devs)
}

func (h *Home) buildLights(devs map[string]string) {
	type l struct {
		id, name, dev string
		modes         []string
		labels        []string
	}
	for _, x := range []l{
		{"kitchen_ceiling", "Kitchen Ceiling", "kitchen_ceiling", []string{"color_temp", "xy"}, nil},
		{"kitchen_island", "Kitchen Island", "kitchen_island", []string{"brightness"}, nil},
		{"living_room_lamp", "Living Room Lamp", "living_room_lamp", []string{"color_temp", "xy"}, nil},
		{"living_room_ceiling", "Living Room Ceiling", "living_room_ceiling", []string{"color_temp"}, nil},
		{"dining_table", "Dining Table", "dining_table", []string{"color_temp"}, nil},
		{"hallway", "Hallway", "hallway_dimmer", []string{"brightness"}, []string{"night"}},
		{"office_desk", "Office Desk Lamp", "office_desk", []string{"color_temp", "xy"}, nil},
		{"bedroom_ceiling", "Bedroom Ceiling", "bedroom_ceiling", []string{"color_temp"}, nil},
		{"bedroom_nightstand", "Nightstand", "bedroom_nightstand", []string{"color_temp", "xy"}, nil},
		{"kids_room", "Kids Room LED Strip", "kids_led", []string{"rgb"}, nil},
		{"bathroom_mirror", "Bathroom Mirror", "bathroom_dimmer", []string{"brightness"}, nil},
		{"garden_path", "Garden Path", "garden_relay", []string{"onoff"}, []string{"outdoor", "night"}},
		{"garage", "Garage Light", "garage_relay", []string{"onoff"}, nil},
	} {
		m := &lightModel{modes: x.modes, minK: 2202, maxK: 6535, on: h.rng.Intn(3) == 0, brightness: 40 + h.rng.Intn(215), kelvin: 2700 + 100*h.rng.Intn(20), hs: [2]float64{h.randf(0, 360, 0), h.randf(40, 100, 0)}}
		m.mode = m.modes[0]
		if contains(m.modes, "xy") && h.rng.Intn(2) == 0 {
			m.mode = "xy"
		}
		if x.dev == "kids_led" {
			m.effects = []string{"Solid", "Rainbow", "Candle", "Fireworks"}
			m.effect = "Solid"
		}
		eid := "light." + x.id
		h.lights[eid] = m
		h.addEntity(devs, eid, x.name, onOff(m.on), m.attributes(), entOpt{dev: x.dev, labels: x.labels})
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func sensorAttrs(unit, deviceClass, stateClass string) map[string]any {
	m := map[string]any{}
	if unit != "" {
		m["unit_of_measurement"] = unit
	}
	if stateClass != "" {
		m["state_class"] = stateClass
	}
	if deviceClass != "" {
		m["device_class"] = deviceClass
	}
	return m
}

func ftoa(f float64, decimals int) string { return strconv.FormatFloat(f, 'f', decimals, 64) }

func (h *Home) buildSwitchesAndSensors(devs map[string]string) {
	type sw struct {
		id, name, dev, class, power string
		watts                       float64
		labels                      []string
	}
	for _, s := range []sw{
		{"coffee_machine", "Coffee Machine", "coffee_plug", "outlet", "sensor.coffee_machine_power", 1350, []string{"energy"}},
		{"washing_machine", "Washing Machine", "washer_plug", "outlet", "sensor.washing_machine_power", 480, []string{"energy"}},
		{"office_monitor", "Office Monitor", "office_plug", "outlet", "", 0, nil},
		{"garage_heater", "Garage Heater", "garage_heater_plug", "outlet", "sensor.garage_heater_power", 1800, []string{"energy", "climate"}},
		{"garden_irrigation", "Garden Irrigation", "irrigation", "switch", "", 0, []string{"outdoor"}},
		{"christmas_lights", "Christmas Lights", "", "outlet", "", 0, []string{"night"}},
	} {
		on := h.rng.Intn(3) == 0
		o := entOpt{dev: s.dev, labels: s.labels, deviceClass: s.class}
		if s.dev == "" {
			o.area, o.platform, o.icon = "living_room", "template", "mdi:pine-tree"
		}
		h.addEntity(devs, "switch."+s.id, s.name, onOff(on), map[string]any{}, o)
		if s.power != "" {
			h.powerLinks["switch."+s.id] = powerLink{sensor: s.power, watts: s.watts}
			w := 0.0
			if on {
				w = s.watts
			}
			name := strings.TrimSuffix(s.name, " Machine") + " Power"
			if strings.HasSuffix(s.name, "Machine") {
				name = s.name + " Power"
			}
			h.addEntity(devs, s.power, name, ftoa(w, 1), sensorAttrs("W", "power", "measurement"), entOpt{dev: s.dev, labels: []string{"energy"}})
			h.addEntity(devs, strings.TrimSuffix(s.power, "_power")+"_energy", strings.TrimSuffix(name, " Power")+" Energy",
				ftoa(h.randf(20, 400, 2), 2), sensorAttrs("kWh", "energy", "total_increasing"), entOpt{dev: s.dev, labels: []string{"energy"}})
		}
	}
	type sn struct {
		id, name, dev, unit, class, stateClass string
		lo, hi                                 float64
		dec                                    int
		o                                      entOpt
	}
	for _, s := range []sn{
		{"kitchen_temperature", "Kitchen Temperature", "kitchen_climate_sensor", "°C", "temperature", "measurement", 19, 23, 1, entOpt{}},
		{"kitchen_humidity", "Kitchen Humidity", "kitchen_climate_sensor", "%", "humidity", "measurement", 40, 60, 0, entOpt{}},
		{"bedroom_temperature", "Bedroom Temperature", "bedroom_climate_sensor", "°C", "temperature", "measurement", 17, 20, 1, entOpt{}},
		{"bedroom_humidity", "Bedroom Humidity", "bedroom_climate_sensor", "%", "humidity", "measurement", 40, 60, 0, entOpt{}},
		{"bathroom_temperature", "Bathroom Temperature", "bathroom_climate_sensor", "°C", "temperature", "measurement", 20, 24, 1, entOpt{}},
		{"bathroom_humidity", "Bathroom Humidity", "bathroom_climate_sensor", "%", "humidity", "measurement", 55, 85, 0, entOpt{}},
		{"living_room_temperature", "Living Room Temperature", "living_room_thermostat", "°C", "temperature", "measurement", 19.5, 22, 1, entOpt{}},
		{"living_room_humidity", "Living Room Humidity", "living_room_thermostat", "%", "humidity", "measurement", 38, 55, 0, entOpt{}},
		{"office_temperature", "Office Temperature", "office_air", "°C", "temperature", "measurement", 19, 23, 1, entOpt{}},
		{"office_co2", "Office CO2", "office_air", "ppm", "carbon_dioxide", "measurement", 420, 1300, 0, entOpt{labels: []string{"climate"}}},
		{"office_pm25", "Office PM2.5", "office_air", "µg/m³", "pm25", "measurement", 2, 25, 0, entOpt{}},
		{"outdoor_temperature", "Outdoor Temperature", "garden_motion", "°C", "temperature", "measurement", 6, 18, 1, entOpt{labels: []string{"outdoor"}}},
		{"garden_illuminance", "Garden Illuminance", "garden_motion", "lx", "illuminance", "measurement", 0, 20000, 0, entOpt{labels: []string{"outdoor"}}},
		{"house_power", "House Power", "p1_meter", "W", "power", "measurement", 180, 2400, 0, entOpt{labels: []string{"energy"}}},
		{"house_voltage", "House Voltage", "p1_meter", "V", "voltage", "measurement", 228, 236, 1, entOpt{}},
		{"house_energy_import", "Energy Import", "p1_meter", "kWh", "energy", "total_increasing", 8000, 12000, 3, entOpt{labels: []string{"energy"}}},
		{"house_energy_export", "Energy Export", "p1_meter", "kWh", "energy", "total_increasing", 1500, 3000, 3, entOpt{labels: []string{"energy"}}},
		{"gas_consumption", "Gas Consumption", "p1_meter", "m³", "gas", "total_increasing", 3000, 5000, 3, entOpt{labels: []string{"energy"}}},
		{"solar_power", "Solar Power", "solar_inverter", "W", "power", "measurement", 0, 3800, 0, entOpt{labels: []string{"energy"}}},
		{"solar_energy_total", "Solar Energy", "solar_inverter", "kWh", "energy", "total_increasing", 9000, 14000, 2, entOpt{labels: []string{"energy"}}},
		{"electricity_price", "Electricity Price", "", "EUR/kWh", "monetary", "", 0.12, 0.38, 3, entOpt{platform: "nordpool", area: "hallway", icon: "mdi:cash"}},
		{"hallway_motion_battery", "Hallway Motion Battery", "hallway_motion", "%", "battery", "measurement", 40, 100, 0, entOpt{category: "diagnostic"}},
		{"front_door_contact_battery", "Front Door Contact Battery", "front_door_contact", "%", "battery", "measurement", 30, 100, 0, entOpt{category: "diagnostic"}},
		{"front_door_lock_battery", "Front Door Lock Battery", "front_door_lock", "%", "battery", "measurement", 15, 100, 0, entOpt{category: "diagnostic"}},
		{"alex_phone_battery", "Alex's iPhone Battery Level", "alex_phone", "%", "battery", "measurement", 20, 100, 0, entOpt{}},
		{"sam_phone_battery", "Sam's Pixel Battery Level", "sam_phone", "%", "battery", "measurement", 20, 100, 0, entOpt{}},
	} {
		o := s.o
		o.dev = s.dev
		h.addEntity(devs, "sensor."+s.id, s.name, ftoa(h.randf(s.lo, s.hi, s.dec), s.dec), sensorAttrs(s.unit, s.class, s.stateClass), o)
	}
	type bs struct {
		id, name, dev, class string
		on                   bool
		o                    entOpt
	}
	for _, b := range []bs{
		{"hallway_motion", "Hallway Motion", "hallway_motion", "motion", false, entOpt{labels: []string{"security"}}},
		{"living_room_motion", "Living Room Motion", "living_room_motion", "motion", true, entOpt{}},
		{"garage_motion", "Garage Motion", "garage_motion", "motion", false, entOpt{labels: []string{"security"}}},
		{"garden_motion", "Garden Motion", "garden_motion", "motion", false, entOpt{labels: []string{"outdoor"}}},
		{"front_door", "Front Door", "front_door_contact", "door", false, entOpt{labels: []string{"security"}}},
		{"back_door", "Back Door", "back_door_contact", "door", false, entOpt{labels: []string{"security"}}},
		{"bedroom_window", "Bedroom Window", "bedroom_window", "window", true, entOpt{}},
		{"kitchen_window", "Kitchen Window", "kitchen_window", "window", false, entOpt{}},
		{"office_window", "Office Window", "office_window", "window", false, entOpt{}},
		{"hallway_smoke", "Hallway Smoke", "smoke_detector", "smoke", false, entOpt{labels: []string{"security"}}},
		{"bathroom_leak", "Bathroom Leak", "leak_sensor", "moisture", false, entOpt{}},
		{"washing_machine_running", "Washing Machine Running", "washer_plug", "running", false, entOpt{}},
		{"alex_phone_charging", "Alex's iPhone Charging", "alex_phone", "battery_charging", false, entOpt{}},
	} {
		o := b.o
		o.dev, o.deviceClass = b.dev, b.class
		h.addEntity(devs, "binary_sensor."+b.id, b.name, onOff(b.on), map[string]any{}, o)
	}
}

func (h *Home) buildClimateAndCovers(devs map[string]string) {
	type cl struct {
		id, name, dev string
		modes         []string
		mode          string
		cur, target   float64
		presets       []string
	}
	for _, c := range []cl{
		{"living_room", "Living Room", "living_room_thermostat", []string{"off", "heat", "cool", "heat_cool", "auto"}, "heat", h.randf(19.5, 21, 1), 21, []string{"home", "away", "sleep", "eco"}},
		{"bedroom", "Bedroom Radiator", "bedroom_trv", []string{"off", "heat", "auto"}, "auto", h.randf(17, 19, 1), 18, nil},
		{"office", "Office Radiator", "office_trv", []string{"off", "heat"}, "off", h.randf(18, 20, 1), 19.5, nil},
	} {
		a := map[string]any{
			"hvac_modes": toAny(c.modes), "min_temp": 7.0, "max_temp": 35.0, "target_temp_step": 0.5,
			"current_temperature": c.cur, "temperature": c.target, "supported_features": climateTarget | climateTurnOff | climateTurnOn,
		}
		if c.presets != nil {
			a["preset_modes"], a["preset_mode"] = toAny(c.presets), "home"
			a["supported_features"] = climateTarget | climatePreset | climateTurnOff | climateTurnOn
			a["target_temp_high"], a["target_temp_low"] = nil, nil
		}
		a["hvac_action"] = hvacAction(c.mode, c.cur, c.target)
		h.addEntity(devs, "climate."+c.id, c.name, c.mode, a, entOpt{dev: c.dev, labels: []string{"climate"}})
	}
	pos := 20 * h.rng.Intn(6)
	h.addEntity(devs, "cover.living_room_blinds", "Living Room Blinds", coverState(pos), map[string]any{"current_position": pos, "supported_features": coverOpen | coverClose | coverSetPos | coverStop}, entOpt{dev: "living_room_blinds", deviceClass: "blind"})
	h.addEntity(devs, "cover.bedroom_blinds", "Bedroom Blinds", "closed", map[string]any{"current_position": 0, "supported_features": coverOpen | coverClose | coverSetPos | coverStop}, entOpt{dev: "bedroom_blinds", deviceClass: "shade", labels: []string{"night"}})
	h.addEntity(devs, "cover.garage_door", "Garage Door", "closed", map[string]any{"supported_features": coverOpen | coverClose}, entOpt{dev: "garage_door_opener", deviceClass: "garage", labels: []string{"security"}})
	h.addEntity(devs, "lock.front_door", "Front Door", "locked", map[string]any{"supported_features": 1, "code_format": nil}, entOpt{dev: "front_door_lock", labels: []string{"security", "night"}})
	h.addEntity(devs, "lock.back_door", "Back Door", "unlocked", map[string]any{"supported_features": 0}, entOpt{dev: "back_door_lock", labels: []string{"security", "night"}})
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func (h *Home) buildMediaAndPeople(devs map[string]string) {
	tracks := []track{
		{"So What", "Miles Davis", "Kind of Blue", 562}, {"Take Five", "The Dave Brubeck Quartet", "Time Out", 324},
		{"Blue in Green", "Miles Davis", "Kind of Blue", 337}, {"Naima", "John Coltrane", "Giant Steps", 261},
		{"Autumn Leaves", "Cannonball Adderley", "Somethin' Else", 659},
	}
	h.media["media_player.living_room_tv"] = &mediaModel{state: "off", volume: 0.25, source: "HDMI 1", sources: []string{"TV", "HDMI 1", "HDMI 2", "Netflix", "YouTube"}, features: mpTV, tracks: []track{{"Nature Documentary", "", "", 3000}}}
	h.media["media_player.kitchen_speaker"] = &mediaModel{state: "playing", volume: 0.35, source: "Jazz Classics", sources: []string{"Jazz Classics", "Radio 1", "Morning Chill", "Line-in"}, features: mpSpeaker, tracks: tracks}
	h.media["media_player.bedroom_speaker"] = &mediaModel{state: "idle", volume: 0.15, source: "Morning Chill", sources: []string{"Jazz Classics", "Radio 1", "Morning Chill"}, features: mpSpeaker, tracks: tracks[2:]}
	for _, m := range []struct{ id, name, dev, class string }{
		{"living_room_tv", "Living Room TV", "living_room_tv", "tv"},
		{"kitchen_speaker", "Kitchen Speaker", "kitchen_speaker", "speaker"},
		{"bedroom_speaker", "Bedroom Speaker", "bedroom_speaker", "speaker"},
	} {
		mm := h.media["media_player."+m.id]
		mm.posAt = h.now().UTC()
		h.addEntity(devs, "media_player."+m.id, m.name, mm.state, mm.attributes(), entOpt{dev: m.dev, deviceClass: m.class})
	}
	alex, sam := h.users[0].ID, h.users[1].ID
	h.addEntity(devs, "device_tracker.alex_phone", "Alex's iPhone", "home", trackerAttrs(homeLat+0.0001, homeLon-0.0002, 85), entOpt{dev: "alex_phone"})
	h.addEntity(devs, "device_tracker.sam_phone", "Sam's Pixel", "Work", trackerAttrs(52.3561, 4.9531, 40), entOpt{dev: "sam_phone"})
	h.addEntity(devs, "person.alex", "Alex", "home", personAttrs("alex", alex, "device_tracker.alex_phone", homeLat+0.0001, homeLon-0.0002), entOpt{platform: "person"})
	h.addEntity(devs, "person.sam", "Sam", "Work", personAttrs("sam", sam, "device_tracker.sam_phone", 52.3561, 4.9531), entOpt{platform: "person"})
	h.addEntity(devs, "zone.home", "Home", "1", map[string]any{"latitude": homeLat, "longitude": homeLon, "radius": 100, "passive": false, "persons": []any{"person.alex"}, "editable": true, "icon": "mdi:home"}, entOpt{platform: "zone"})
	h.addEntity(devs, "zone.work", "Work", "1", map[string]any{"latitude": 52.3561, "longitude": 4.9531, "radius": 150, "passive": false, "persons": []any{"person.sam"}, "editable": true, "icon": "mdi:briefcase"}, entOpt{platform: "zone"})
	for _, c := range []struct{ id, name, dev, model string }{{"front_door", "Front Door", "front_door_camera", "Video Doorbell PoE"}, {"garden", "Garden", "garden_camera", "RLC-810A"}} {
		tok := h.hexID() + h.hexID()
		h.addEntity(devs, "camera."+c.id, c.name, "idle", map[string]any{
			"access_token": tok, "entity_picture": "/api/camera_proxy/camera." + c.id + "?token=" + tok,
			"brand": "Reolink", "model_name": c.model, "frontend_stream_type": "hls", "supported_features": 2,
		}, entOpt{dev: c.dev, labels: []string{"security"}})
	}
	h.addEntity(devs, "weather.forecast_home", "Forecast Home", "partlycloudy", h.weatherAttrs(), entOpt{dev: "forecast"})
	h.addEntity(devs, "sun.sun", "Sun", h.sunState(), h.sunAttrs(), entOpt{dev: "sun"})
}

func trackerAttrs(lat, lon float64, acc int) map[string]any {
	return map[string]any{"source_type": "gps", "latitude": lat, "longitude": lon, "gps_accuracy": acc, "altitude": 2, "course": -1, "speed": 0, "vertical_accuracy": 8}
}

func personAttrs(id, userID, tracker string, lat, lon float64) map[string]any {
	return map[string]any{"editable": true, "id": id, "device_trackers": []any{tracker}, "latitude": lat, "longitude": lon,
		"gps_accuracy": 20, "source": tracker, "user_id": userID}
}

func (h *Home) buildHelpers(devs map[string]string) {
	h.addEntity(devs, "input_boolean.guest_mode", "Guest mode", "off", map[string]any{"editable": true}, entOpt{icon: "mdi:account-multiple"})
	h.addEntity(devs, "input_boolean.vacation_mode", "Vacation mode", "off", map[string]any{"editable": true}, entOpt{icon: "mdi:airplane", labels: []string{"security"}})
	h.addEntity(devs, "input_number.night_temperature", "Night temperature", "17.5", map[string]any{"initial": nil, "editable": true, "min": 12.0, "max": 22.0, "step": 0.5, "mode": "slider", "unit_of_measurement": "°C"}, entOpt{icon: "mdi:thermometer", labels: []string{"night", "climate"}})
	h.addEntity(devs, "input_number.irrigation_minutes", "Irrigation minutes", "15.0", map[string]any{"initial": nil, "editable": true, "min": 0.0, "max": 60.0, "step": 5.0, "mode": "box", "unit_of_measurement": "min"}, entOpt{icon: "mdi:sprinkler", labels: []string{"outdoor"}})
	h.addEntity(devs, "input_select.house_mode", "House mode", "Home", map[string]any{"options": []any{"Home", "Away", "Night", "Vacation"}, "editable": true}, entOpt{icon: "mdi:home-switch"})
	h.addEntity(devs, "input_text.welcome_message", "Welcome message", "Welcome home!", map[string]any{"editable": true, "min": 0, "max": 100, "pattern": nil, "mode": "text"}, entOpt{icon: "mdi:message-text"})
}

// sunState/sunAttrs use a fixed day: rise 07:00, set 20:00 local. The
// simulator has no ephemeris; this is enough for templates and conditions.
func (h *Home) sunState() string {
	n := h.now().In(h.loc)
	if n.Hour() >= 7 && n.Hour() < 20 {
		return "above_horizon"
	}
	return "below_horizon"
}

func (h *Home) sunAttrs() map[string]any {
	n := h.now().In(h.loc)
	day := func(hour, min int) string {
		t := timeAt(n, hour, min, h.loc)
		if !t.After(n) {
			t = t.AddDate(0, 0, 1)
		}
		return ISOTime(t)
	}
	elev := 45.0 * (1 - float64(abs(n.Hour()-13))/7)
	return map[string]any{
		"next_dawn": day(6, 25), "next_dusk": day(20, 35), "next_midnight": day(1, 30), "next_noon": day(13, 30),
		"next_rising": day(7, 0), "next_setting": day(20, 0), "elevation": elev, "azimuth": float64(90 + 15*(n.Hour()-6)),
		"rising": n.Hour() < 13,
	}
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

func (h *Home) weatherAttrs() map[string]any {
	return map[string]any{
		"temperature": h.randf(8, 18, 1), "dew_point": h.randf(4, 9, 1), "temperature_unit": "°C", "humidity": 70 + h.rng.Intn(20),
		"cloud_coverage": 40 + h.rng.Intn(50), "uv_index": 2.1, "pressure": h.randf(1005, 1022, 1), "pressure_unit": "hPa",
		"wind_bearing": 180 + h.rng.Intn(90), "wind_speed": h.randf(5, 30, 1), "wind_speed_unit": "km/h", "visibility_unit": "km",
		"precipitation_unit": "mm", "attribution": "Weather forecast from met.no, delivered by the Norwegian Meteorological Institute.",
		"supported_features": 3,
	}
}

// alarmPanel is the home's alarm system, added after everything else with ids from a random stream of
// its own, so the rest of the seeded home stays what tests and recordings expect.
var alarmPanel = devSpec{key: "alarm_panel", name: "Alarm Panel", manufacturer: "Risco", model: "LightSYS Plus", modelID: "RP432MP",
	area: "hallway", integration: "risco", labels: []string{"security"}}

func (h *Home) buildAlarmPanel(devs map[string]string) {
	saved := h.rng
	h.rng = rand.New(rand.NewSource(0x0a1a7))
	defer func() { h.rng = saved }()
	ts := h.createdAt()
	entry := h.configEntryFor(alarmPanel, map[string]string{})
	dev := &Device{
		ID: h.hexID(), Name: alarmPanel.name, ConfigEntries: []string{entry}, ConfigEntryID: strp(entry),
		ConfigEntriesSubentries: map[string][]*string{entry: {nil}}, PrimaryConfigEntry: strp(entry),
		Identifiers: [][2]string{{alarmPanel.integration, h.hexID()[:12]}}, Connections: [][2]string{},
		Labels: cloneStrings(alarmPanel.labels), CreatedAt: ts, ModifiedAt: ts, AreaID: strp(alarmPanel.area),
		Manufacturer: strp(alarmPanel.manufacturer), Model: strp(alarmPanel.model), ModelID: strp(alarmPanel.modelID),
		SWVersion: strp("4.2.1"), SerialNumber: strp(strings.ToUpper(h.hexID()[:12])),
	}
	devs[alarmPanel.key] = dev.ID
	h.devices[dev.ID] = dev
	// Risco panels report no code format: HA's risco integration arms and disarms without a code.
	h.addEntity(devs, "alarm_control_panel.home_alarm", "Home Alarm", "armed_away", map[string]any{"code_format": nil, "changed_by": nil,
		"code_arm_required": false, "supported_features": alarmArmHome | alarmArmAway | alarmArmNight | alarmTrigger},
		entOpt{dev: alarmPanel.key, labels: []string{"security"}})
}
