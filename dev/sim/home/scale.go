package home

import (
	"fmt"
	"sort"
	"strconv"
)

// addScaleSensors adds n plausible sensors spread over the home's areas, so the simulator can
// stand for a large installation (thousands of entities) in size measurements and benchmarks.
func (h *Home) addScaleSensors(n int) {
	areas := make([]string, 0, len(h.areas))
	for id := range h.areas {
		areas = append(areas, id)
	}
	sort.Strings(areas)
	kinds := []struct {
		class, unit string
		lo, hi      float64
	}{
		{"temperature", "°C", 16, 26}, {"humidity", "%", 30, 70}, {"power", "W", 0, 2000},
		{"illuminance", "lx", 0, 800}, {"battery", "%", 5, 100}, {"voltage", "V", 225, 240},
	}
	for i := range n {
		k := kinds[i%len(kinds)]
		area := areas[i%len(areas)]
		eid := fmt.Sprintf("sensor.%s_%s_%d", area, k.class, i)
		v := k.lo + h.rng.Float64()*(k.hi-k.lo)
		attrs := map[string]any{"unit_of_measurement": k.unit, "state_class": "measurement"}
		h.addEntity(nil, eid, fmt.Sprintf("%s %s %d", area, k.class, i), strconv.FormatFloat(v, 'f', 1, 64), attrs,
			entOpt{area: area, platform: "mqtt", deviceClass: k.class})
	}
}
