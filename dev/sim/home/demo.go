package home

import (
	"math"
	"strings"
)

// The demo home: a two-storey house with a garden. Registries first
// (floors, areas, labels, config entries, devices); entities are in
// demo_entities.go.

const (
	homeLat = 52.3731
	homeLon = 4.8922
)

type devSpec struct {
	key, name, manufacturer, model, modelID, area, integration, via string
	service                                                         bool
	labels                                                          []string
}

var demoFloors = []struct {
	id, name, icon string
	level          *int
}{
	{"ground_floor", "Ground floor", "mdi:home-floor-g", intp(0)},
	{"first_floor", "First floor", "mdi:home-floor-1", intp(1)},
	{"outside", "Outside", "mdi:tree", nil},
}

var demoAreas = []struct{ id, name, floor, icon string }{
	{"kitchen", "Kitchen", "ground_floor", "mdi:stove"},
	{"living_room", "Living room", "ground_floor", "mdi:sofa"},
	{"dining_room", "Dining room", "ground_floor", "mdi:table-chair"},
	{"hallway", "Hallway", "ground_floor", "mdi:door"},
	{"office", "Office", "ground_floor", "mdi:desk"},
	{"bedroom", "Bedroom", "first_floor", "mdi:bed"},
	{"kids_room", "Kids room", "first_floor", "mdi:teddy-bear"},
	{"bathroom", "Bathroom", "first_floor", "mdi:shower"},
	{"garage", "Garage", "outside", "mdi:garage"},
	{"garden", "Garden", "outside", "mdi:flower"},
}

var demoLabels = []struct{ id, name, color, icon, desc string }{
	{"energy", "Energy", "yellow", "mdi:lightning-bolt", "Power and energy monitoring"},
	{"security", "Security", "red", "mdi:shield-home", "Locks, doors, cameras and alarms"},
	{"night", "Night", "indigo", "mdi:weather-night", "Things the night routine touches"},
	{"climate", "Climate", "orange", "mdi:thermostat", "Heating and air quality"},
	{"outdoor", "Outdoor", "green", "mdi:pine-tree", "Outside the house"},
}

var demoDevices = []devSpec{
	{key: "hue_bridge", name: "Hue Bridge", manufacturer: "Signify Netherlands B.V.", model: "Hue Bridge", modelID: "BSB002", area: "living_room", integration: "hue"},
	{key: "kitchen_ceiling", name: "Kitchen Ceiling", manufacturer: "Signify Netherlands B.V.", model: "Hue White and Color Ambiance", modelID: "LCA001", area: "kitchen", integration: "hue", via: "hue_bridge"},
	{key: "kitchen_island", name: "Kitchen Island", manufacturer: "Signify Netherlands B.V.", model: "Hue White", modelID: "LWA001", area: "kitchen", integration: "hue", via: "hue_bridge"},
	{key: "living_room_lamp", name: "Living Room Lamp", manufacturer: "Signify Netherlands B.V.", model: "Hue Go", modelID: "LLC020", area: "living_room", integration: "hue", via: "hue_bridge"},
	{key: "living_room_ceiling", name: "Living Room Ceiling", manufacturer: "IKEA of Sweden", model: "TRADFRI bulb E27 WS opal 1000lm", modelID: "LED1732G11", area: "living_room", integration: "zha"},
	{key: "dining_table", name: "Dining Table", manufacturer: "Signify Netherlands B.V.", model: "Hue White Ambiance", modelID: "LTA001", area: "dining_room", integration: "hue", via: "hue_bridge"},
	{key: "hallway_dimmer", name: "Hallway Dimmer", manufacturer: "Shelly", model: "Shelly Dimmer 2", modelID: "SHDM-2", area: "hallway", integration: "shelly"},
	{key: "office_desk", name: "Office Desk Lamp", manufacturer: "Signify Netherlands B.V.", model: "Hue Play", modelID: "LCT024", area: "office", integration: "hue", via: "hue_bridge"},
	{key: "bedroom_ceiling", name: "Bedroom Ceiling", manufacturer: "IKEA of Sweden", model: "TRADFRI bulb E27 WS opal 1000lm", modelID: "LED1732G11", area: "bedroom", integration: "zha", labels: []string{"night"}},
	{key: "bedroom_nightstand", name: "Nightstand", manufacturer: "Signify Netherlands B.V.", model: "Hue Go", modelID: "LLC020", area: "bedroom", integration: "hue", via: "hue_bridge", labels: []string{"night"}},
	{key: "kids_led", name: "Kids Room LED Strip", manufacturer: "WLED", model: "FOSS", modelID: "ESP32", area: "kids_room", integration: "wled"},
	{key: "bathroom_dimmer", name: "Bathroom Mirror Light", manufacturer: "Shelly", model: "Shelly Dimmer 2", modelID: "SHDM-2", area: "bathroom", integration: "shelly"},
	{key: "garden_relay", name: "Garden Path Lights", manufacturer: "Shelly", model: "Shelly Plus 1", modelID: "SNSW-001X16EU", area: "garden", integration: "shelly", labels: []string{"outdoor"}},
	{key: "garage_relay", name: "Garage Light", manufacturer: "Shelly", model: "Shelly 1", modelID: "SHSW-1", area: "garage", integration: "shelly"},
	{key: "coffee_plug", name: "Coffee Machine Plug", manufacturer: "Shelly", model: "Shelly Plug S", modelID: "SHPLG-S", area: "kitchen", integration: "shelly", labels: []string{"energy"}},
	{key: "washer_plug", name: "Washing Machine Plug", manufacturer: "Shelly", model: "Shelly Plug S", modelID: "SHPLG-S", area: "bathroom", integration: "shelly", labels: []string{"energy"}},
	{key: "office_plug", name: "Office Monitor Plug", manufacturer: "IKEA of Sweden", model: "TRETAKT smart plug", modelID: "E2204", area: "office", integration: "zha"},
	{key: "garage_heater_plug", name: "Garage Heater Plug", manufacturer: "Aqara", model: "Smart Plug", modelID: "SP-EUC01", area: "garage", integration: "zha", labels: []string{"energy"}},
	{key: "irrigation", name: "Garden Irrigation Valve", manufacturer: "Shelly", model: "Shelly Plus 1", modelID: "SNSW-001X16EU", area: "garden", integration: "shelly", labels: []string{"outdoor"}},
	{key: "p1_meter", name: "P1 Meter", manufacturer: "HomeWizard", model: "Wi-Fi P1 Meter", modelID: "HWE-P1", area: "hallway", integration: "homewizard", labels: []string{"energy"}},
	{key: "solar_inverter", name: "Solar Inverter", manufacturer: "SolarEdge", model: "SE5000H", modelID: "SE5000H-RW000BNN4", area: "garage", integration: "solaredge", labels: []string{"energy"}},
	{key: "living_room_thermostat", name: "Living Room Thermostat", manufacturer: "ecobee Inc.", model: "ecobee3 lite", modelID: "EB-STATE3LT-02", area: "living_room", integration: "ecobee", labels: []string{"climate"}},
	{key: "bedroom_trv", name: "Bedroom Radiator", manufacturer: "Danfoss", model: "Ally thermostat", modelID: "eTRV0100", area: "bedroom", integration: "zha", labels: []string{"climate"}},
	{key: "office_trv", name: "Office Radiator", manufacturer: "tado°", model: "Smart Radiator Thermostat", modelID: "VA02", area: "office", integration: "tado", labels: []string{"climate"}},
	{key: "kitchen_climate_sensor", name: "Kitchen Sensor", manufacturer: "Aqara", model: "Temperature and humidity sensor", modelID: "WSDCGQ11LM", area: "kitchen", integration: "zha"},
	{key: "bedroom_climate_sensor", name: "Bedroom Sensor", manufacturer: "Aqara", model: "Temperature and humidity sensor", modelID: "WSDCGQ11LM", area: "bedroom", integration: "zha"},
	{key: "bathroom_climate_sensor", name: "Bathroom Sensor", manufacturer: "Aqara", model: "Temperature and humidity sensor", modelID: "WSDCGQ11LM", area: "bathroom", integration: "zha"},
	{key: "office_air", name: "Office Air Monitor", manufacturer: "AirGradient", model: "ONE", modelID: "I-9PSL", area: "office", integration: "airgradient", labels: []string{"climate"}},
	{key: "hallway_motion", name: "Hallway Motion", manufacturer: "Aqara", model: "Motion sensor P1", modelID: "RTCGQ14LM", area: "hallway", integration: "zha", labels: []string{"security"}},
	{key: "living_room_motion", name: "Living Room Motion", manufacturer: "Aqara", model: "Motion sensor P1", modelID: "RTCGQ14LM", area: "living_room", integration: "zha"},
	{key: "garage_motion", name: "Garage Motion", manufacturer: "Aqara", model: "Motion sensor P1", modelID: "RTCGQ14LM", area: "garage", integration: "zha", labels: []string{"security"}},
	{key: "garden_motion", name: "Garden Sensor", manufacturer: "Signify Netherlands B.V.", model: "Hue outdoor motion sensor", modelID: "SML002", area: "garden", integration: "hue", via: "hue_bridge", labels: []string{"outdoor"}},
	{key: "front_door_contact", name: "Front Door Contact", manufacturer: "Aqara", model: "Door and window sensor", modelID: "MCCGQ11LM", area: "hallway", integration: "zha", labels: []string{"security"}},
	{key: "back_door_contact", name: "Back Door Contact", manufacturer: "Aqara", model: "Door and window sensor", modelID: "MCCGQ11LM", area: "kitchen", integration: "zha", labels: []string{"security"}},
	{key: "bedroom_window", name: "Bedroom Window", manufacturer: "Aqara", model: "Door and window sensor", modelID: "MCCGQ11LM", area: "bedroom", integration: "zha"},
	{key: "kitchen_window", name: "Kitchen Window", manufacturer: "Aqara", model: "Door and window sensor", modelID: "MCCGQ11LM", area: "kitchen", integration: "zha"},
	{key: "office_window", name: "Office Window", manufacturer: "Aqara", model: "Door and window sensor", modelID: "MCCGQ11LM", area: "office", integration: "zha"},
	{key: "smoke_detector", name: "Hallway Smoke Detector", manufacturer: "Heiman", model: "Smart smoke sensor", modelID: "HS1SA", area: "hallway", integration: "zha", labels: []string{"security"}},
	{key: "leak_sensor", name: "Bathroom Leak Sensor", manufacturer: "Aqara", model: "Water leak sensor", modelID: "SJCGQ11LM", area: "bathroom", integration: "zha"},
	{key: "living_room_blinds", name: "Living Room Blinds", manufacturer: "Somfy", model: "Sonesse 30 WireFree", modelID: "1822647", area: "living_room", integration: "overkiz"},
	{key: "bedroom_blinds", name: "Bedroom Blinds", manufacturer: "IKEA of Sweden", model: "FYRTUR block-out roller blind", modelID: "E1757", area: "bedroom", integration: "zha", labels: []string{"night"}},
	{key: "garage_door_opener", name: "Garage Door", manufacturer: "Meross", model: "Smart Garage Door Opener", modelID: "MSG100", area: "garage", integration: "meross", labels: []string{"security"}},
	{key: "front_door_lock", name: "Front Door Lock", manufacturer: "Nuki", model: "Smart Lock 3.0 Pro", modelID: "SL3P", area: "hallway", integration: "nuki", labels: []string{"security", "night"}},
	{key: "back_door_lock", name: "Back Door Lock", manufacturer: "Yale", model: "Linus Smart Lock", modelID: "YD-01-CON", area: "kitchen", integration: "yale", labels: []string{"security", "night"}},
	{key: "living_room_tv", name: "Living Room TV", manufacturer: "Samsung", model: "QE55Q80B", modelID: "QE55Q80BATXXN", area: "living_room", integration: "samsungtv"},
	{key: "kitchen_speaker", name: "Kitchen Speaker", manufacturer: "Sonos", model: "One", modelID: "S18", area: "kitchen", integration: "sonos"},
	{key: "bedroom_speaker", name: "Bedroom Speaker", manufacturer: "Sonos", model: "One SL", modelID: "S38", area: "bedroom", integration: "sonos"},
	{key: "front_door_camera", name: "Front Door Doorbell", manufacturer: "Reolink", model: "Video Doorbell PoE", modelID: "D340P", area: "hallway", integration: "reolink", labels: []string{"security"}},
	{key: "garden_camera", name: "Garden Camera", manufacturer: "Reolink", model: "RLC-810A", modelID: "RLC-810A", area: "garden", integration: "reolink", labels: []string{"security", "outdoor"}},
	{key: "alex_phone", name: "Alex's iPhone", manufacturer: "Apple", model: "iPhone 15", modelID: "iPhone15,4", integration: "mobile_app"},
	{key: "sam_phone", name: "Sam's Pixel", manufacturer: "Google", model: "Pixel 8", modelID: "shiba", integration: "mobile_app"},
	{key: "forecast", name: "Forecast", manufacturer: "Met.no", model: "Forecast", integration: "met", service: true},
	{key: "sun", name: "Sun", integration: "sun", service: true},
}

func intp(i int) *int { return &i }

// createdAt is registry time: fixed before start so the demo looks settled.
func (h *Home) createdAt() float64 { return Epoch(h.start) - 86400*30 }

func (h *Home) buildDemo() {
	ts := h.createdAt()
	h.users = []User{
		{ID: h.hexID(), Name: "Alex", IsOwner: true, IsAdmin: true},
		{ID: h.hexID(), Name: "Sam", IsOwner: false, IsAdmin: false},
	}
	for _, f := range demoFloors {
		h.floors[f.id] = &Floor{FloorID: f.id, Name: f.name, Level: f.level, Icon: strp(f.icon), Aliases: []string{}, CreatedAt: ts, ModifiedAt: ts}
	}
	for _, a := range demoAreas {
		h.areas[a.id] = &Area{AreaID: a.id, Name: a.name, FloorID: strp(a.floor), Icon: strp(a.icon), Aliases: []string{}, Labels: []string{}, CreatedAt: ts, ModifiedAt: ts}
	}
	h.areas["garden"].Labels = []string{"outdoor"}
	h.areas["bedroom"].Labels = []string{"night"}
	for _, l := range demoLabels {
		h.labels[l.id] = &Label{LabelID: l.id, Name: l.name, Color: strp(l.color), Icon: strp(l.icon), Description: strp(l.desc), CreatedAt: ts, ModifiedAt: ts}
	}
	devIDs := map[string]string{}
	entries := map[string]string{}
	for _, d := range demoDevices {
		entry := h.configEntryFor(d, entries)
		dev := &Device{
			ID: h.hexID(), Name: d.name, ConfigEntries: []string{entry}, ConfigEntryID: strp(entry),
			ConfigEntriesSubentries: map[string][]*string{entry: {nil}}, PrimaryConfigEntry: strp(entry),
			Connections: [][2]string{}, Identifiers: [][2]string{{d.integration, h.hexID()[:12]}},
			Labels: cloneStrings(d.labels), CreatedAt: ts, ModifiedAt: ts,
		}
		if dev.Labels == nil {
			dev.Labels = []string{}
		}
		if d.area != "" {
			dev.AreaID = strp(d.area)
		}
		if d.manufacturer != "" {
			dev.Manufacturer, dev.Model = strp(d.manufacturer), strp(d.model)
		}
		if d.modelID != "" {
			dev.ModelID = strp(d.modelID)
		}
		if d.service {
			dev.EntryType = strp("service")
		} else {
			dev.SWVersion = strp(h.swVersion())
			dev.SerialNumber = strp(strings.ToUpper(h.hexID()[:12]))
			mac := h.hexID()[:12]
			dev.Connections = [][2]string{{"mac", mac[0:2] + ":" + mac[2:4] + ":" + mac[4:6] + ":" + mac[6:8] + ":" + mac[8:10] + ":" + mac[10:12]}}
		}
		if d.via != "" {
			dev.ViaDeviceID = strp(devIDs[d.via])
		}
		devIDs[d.key] = dev.ID
		h.devices[dev.ID] = dev
	}
	h.buildEntities(devIDs)
	h.buildAlarmPanel(devIDs)
	h.buildUpdates() // updates.go
}

// configEntryFor returns the integration's config entry, creating it on
// first use; mobile_app has one entry per phone as in HA.
func (h *Home) configEntryFor(d devSpec, byKey map[string]string) string {
	key, title := d.integration, d.integration
	if d.integration == "mobile_app" {
		key, title = d.integration+":"+d.key, d.name
	}
	if id, ok := byKey[key]; ok {
		return id
	}
	id := h.ulid()
	byKey[key] = id
	h.configEntries[id] = &ConfigEntry{EntryID: id, Domain: d.integration, Title: title, State: "loaded"}
	return id
}

func (h *Home) swVersion() string {
	return strings.Join([]string{itoa(1 + h.rng.Intn(3)), itoa(h.rng.Intn(20)), itoa(h.rng.Intn(10))}, ".")
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b []byte
	for i > 0 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

// randf is a seeded value in [lo,hi] rounded to the given decimals.
func (h *Home) randf(lo, hi float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round((lo+h.rng.Float64()*(hi-lo))*p) / p
}
