package home

import (
	"encoding/json"
	"sync"
)

// Energy dashboard preferences (the energy integration's stored prefs). The
// demo home starts configured the way a user would set up its P1 meter, solar
// inverter and metering plugs; only statistics that exist are referenced.

var energyPrefs = struct {
	sync.Mutex
	byHome map[*Home]map[string]any
}{byHome: map[*Home]map[string]any{}}

// EnergyPrefs returns energy/get_prefs' result; false means HA's "No prefs".
func (h *Home) EnergyPrefs() (map[string]any, bool) {
	energyPrefs.Lock()
	defer energyPrefs.Unlock()
	p, ok := energyPrefs.byHome[h]
	if !ok {
		p = h.defaultEnergyPrefs()
		energyPrefs.byHome[h] = p
	}
	if p == nil {
		return nil, false
	}
	return cloneEnergyJSON(p).(map[string]any), true
}

// SaveEnergyPrefs is energy/save_prefs: the given top-level keys replace the
// stored ones; the result is the whole new set.
func (h *Home) SaveEnergyPrefs(update map[string]any) map[string]any {
	energyPrefs.Lock()
	defer energyPrefs.Unlock()
	p, ok := energyPrefs.byHome[h]
	if !ok {
		p = h.defaultEnergyPrefs()
	}
	if p == nil {
		p = map[string]any{"energy_sources": []any{}, "device_consumption": []any{}, "device_consumption_water": []any{}}
	}
	for _, k := range []string{"energy_sources", "device_consumption", "device_consumption_water"} {
		if v, ok := update[k]; ok {
			p[k] = cloneEnergyJSON(v)
		}
	}
	energyPrefs.byHome[h] = p
	return cloneEnergyJSON(p).(map[string]any)
}

func (h *Home) defaultEnergyPrefs() map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	has := func(id string) bool { _, ok := h.states[id]; return ok }
	sources := []any{}
	if has("sensor.house_energy_import") {
		// Home Assistant 2026.2's form (energy storage 1.3, core PR #162200): one source per grid
		// connection with its import and export meters and their prices side by side.
		grid := map[string]any{"type": "grid", "cost_adjustment_day": 0.0,
			"stat_energy_from": "sensor.house_energy_import", "stat_cost": nil,
			"entity_energy_price": energyRef(has("sensor.electricity_price"), "sensor.electricity_price"), "number_energy_price": nil,
			"stat_energy_to": nil, "stat_compensation": nil, "entity_energy_price_export": nil, "number_energy_price_export": nil}
		if has("sensor.house_energy_export") {
			grid["stat_energy_to"], grid["number_energy_price_export"] = "sensor.house_energy_export", 0.07
		}
		sources = append(sources, grid)
	}
	if has("sensor.solar_energy_total") {
		sources = append(sources, map[string]any{"type": "solar", "stat_energy_from": "sensor.solar_energy_total", "config_entry_solar_forecast": nil})
	}
	if has("sensor.gas_consumption") {
		sources = append(sources, map[string]any{"type": "gas", "stat_energy_from": "sensor.gas_consumption", "stat_cost": nil,
			"entity_energy_price": nil, "number_energy_price": 1.35})
	}
	devices := []any{}
	for _, id := range []string{"sensor.coffee_machine_energy", "sensor.washing_machine_energy", "sensor.garage_heater_energy"} {
		if has(id) {
			devices = append(devices, map[string]any{"stat_consumption": id})
		}
	}
	if len(sources) == 0 && len(devices) == 0 {
		return nil
	}
	return map[string]any{"energy_sources": sources, "device_consumption": devices, "device_consumption_water": []any{}}
}

func energyRef(ok bool, v string) any {
	if ok {
		return v
	}
	return nil
}

// cloneEnergyJSON deep-copies a JSON-shaped value so callers cannot alias the store.
func cloneEnergyJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
