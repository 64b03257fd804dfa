package recorder

import (
	"fmt"
	"time"
)

// room names make synthetic entity ids read like a real install.
var rooms = []string{"living_room", "kitchen", "bedroom", "office", "bathroom", "hallway", "garage", "basement",
	"attic", "dining_room", "guest_room", "laundry", "porch", "garden", "nursery", "study"}

// SyntheticEntities returns n plausible entities for big benchmark databases:
// temperature, humidity and power sensors (measurement), energy meters
// (total_increasing), motion/door binary sensors, lights, and a few enums.
func SyntheticEntities(n int) []EntitySpec {
	out := make([]EntitySpec, 0, max(n, 0))
	for i := 0; len(out) < n; i++ {
		room := rooms[i%len(rooms)]
		suffix := ""
		if lap := i / len(rooms); lap > 0 {
			suffix = fmt.Sprintf("_%d", lap+1)
		}
		specs := []EntitySpec{
			{EntityID: "sensor." + room + "_temperature" + suffix, Kind: "numeric", Min: 16, Max: 26, Unit: "°C", DeviceClass: "temperature", StateClass: "measurement", Every: 2 * time.Minute},
			{EntityID: "sensor." + room + "_humidity" + suffix, Kind: "numeric", Min: 30, Max: 70, Unit: "%", DeviceClass: "humidity", StateClass: "measurement", Every: 5 * time.Minute},
			{EntityID: "sensor." + room + "_power" + suffix, Kind: "numeric", Min: 0, Max: 2500, Unit: "W", DeviceClass: "power", StateClass: "measurement", Every: time.Minute},
			{EntityID: "sensor." + room + "_energy" + suffix, Kind: "numeric", Min: 1000, Max: 1400, Unit: "kWh", DeviceClass: "energy", StateClass: "total_increasing", Every: 5 * time.Minute},
			{EntityID: "binary_sensor." + room + "_motion" + suffix, Kind: "binary", DeviceClass: "motion", Every: 20 * time.Minute},
			{EntityID: "light." + room + suffix, Kind: "binary", Every: 90 * time.Minute},
			{EntityID: "binary_sensor." + room + "_window" + suffix, Kind: "binary", DeviceClass: "window", Every: 6 * time.Hour},
			{EntityID: "sensor." + room + "_air_quality" + suffix, Kind: "enum", DeviceClass: "enum", Values: []string{"good", "moderate", "poor"}, Every: 3 * time.Hour},
		}
		for _, s := range specs {
			if len(out) < n {
				out = append(out, s)
			}
		}
	}
	return out
}
