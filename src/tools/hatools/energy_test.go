package hatools_test

import (
	"slices"
	"testing"
	"time"
)

func testEnergy(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	var en struct {
		Start           string   `json:"start"`
		GridImport      *float64 `json:"grid_import_kwh"`
		GridExport      *float64 `json:"grid_export_kwh"`
		Solar           *float64 `json:"solar_kwh"`
		HomeConsumption *float64 `json:"home_consumption_kwh"`
		Gas             *struct {
			Value float64 `json:"value"`
			Unit  string  `json:"unit"`
		} `json:"gas"`
		Devices []struct {
			Stat  string  `json:"stat"`
			Value float64 `json:"value"`
		} `json:"devices"`
		Breakdown *struct {
			Total int `json:"total"`
			Items []struct {
				Start  string             `json:"start"`
				Values map[string]float64 `json:"values"`
			} `json:"items"`
		} `json:"breakdown"`
	}
	// One day back from midnight: the generated history covers it whatever the time of day.
	dtOK(t, cs, "ha_get_energy_data", map[string]any{"days": 1, "period": "hour", "breakdown": true, "limit": 5}, &en)
	if en.GridImport == nil || *en.GridImport <= 0 || en.Solar == nil || en.HomeConsumption == nil || en.Gas == nil || en.Gas.Unit != "m³" {
		t.Fatalf("energy summary: %+v", en)
	}
	want := *en.GridImport + *en.Solar - *en.GridExport
	if d := *en.HomeConsumption - want; d > 0.01 || d < -0.01 {
		t.Errorf("home consumption %v, want import+solar-export %v", *en.HomeConsumption, want)
	}
	if len(en.Devices) != 3 {
		t.Errorf("devices: %+v", en.Devices)
	}
	for i := 1; i < len(en.Devices); i++ {
		if en.Devices[i].Value > en.Devices[i-1].Value {
			t.Errorf("devices not sorted by consumption: %+v", en.Devices)
		}
	}
	if en.Breakdown == nil || en.Breakdown.Total < 10 || len(en.Breakdown.Items) != 5 || en.Breakdown.Items[0].Values["grid_import"] < 0 {
		t.Errorf("breakdown: %+v", en.Breakdown)
	}
	dtOK(t, cs, "ha_get_energy_data", nil, &en)
	if start, err := time.Parse(time.RFC3339, en.Start); err != nil || time.Since(start) > 25*time.Hour {
		t.Errorf("default period starts %q", en.Start)
	}

	var list struct {
		Available *struct {
			Items []struct {
				StatisticID string `json:"statistic_id"`
				HasMean     bool   `json:"has_mean"`
				HasSum      bool   `json:"has_sum"`
			} `json:"items"`
		} `json:"available"`
	}
	dtOK(t, cs, "ha_get_statistics", map[string]any{"search": "house_power"}, &list)
	if list.Available == nil || len(list.Available.Items) != 1 || !list.Available.Items[0].HasMean {
		t.Fatalf("listing: %+v", list.Available)
	}
	dtOK(t, cs, "ha_get_statistics", map[string]any{"statistic_type": "sum", "limit": 1000}, &list)
	for _, s := range list.Available.Items {
		if !s.HasSum {
			t.Errorf("statistic_type=sum listed %+v", s)
		}
	}
	var st struct {
		Statistics []struct {
			StatisticID string `json:"statistic_id"`
			Unit        string `json:"unit"`
			Total       int    `json:"total"`
			Rows        []struct {
				Start string   `json:"start"`
				Mean  *float64 `json:"mean"`
				Min   *float64 `json:"min"`
				Max   *float64 `json:"max"`
			} `json:"rows"`
		} `json:"statistics"`
		NoData []string `json:"no_data"`
	}
	dtOK(t, cs, "ha_get_statistics", map[string]any{"statistic_ids": []string{"sensor.house_power", "sensor.nothing_here"}, "hours": 12, "limit": 3}, &st)
	if len(st.Statistics) != 1 || st.Statistics[0].Unit != "W" || st.Statistics[0].Total < 10 || len(st.Statistics[0].Rows) != 3 {
		t.Fatalf("statistics: %+v", st)
	}
	r := st.Statistics[0].Rows[0]
	if r.Mean == nil || r.Min == nil || r.Max == nil || *r.Min > *r.Mean || *r.Mean > *r.Max {
		t.Errorf("row: %+v", r)
	}
	if !slices.Equal(st.NoData, []string{"sensor.nothing_here"}) {
		t.Errorf("no_data: %v", st.NoData)
	}
	st.Statistics = nil // a fresh decode: json.Unmarshal merges into reused elements
	dtOK(t, cs, "ha_get_statistics", map[string]any{"statistic_ids": []string{"sensor.house_energy_import"}, "period": "day", "hours": 48, "types": []string{"change"}}, &st)
	if len(st.Statistics) != 1 || len(st.Statistics[0].Rows) == 0 || st.Statistics[0].Rows[0].Mean != nil {
		t.Errorf("daily change: %+v", st)
	}

	dtErrCases(t, cs, []dtErrCase{
		{"bad period", "ha_get_energy_data", map[string]any{"period": "fortnight"}, "invalid_argument", "period", ""},
		{"start after end", "ha_get_energy_data", map[string]any{"start": "2030-01-02", "end": "2030-01-01"}, "invalid_argument", "start", ""},
		{"bad type", "ha_get_statistics", map[string]any{"statistic_ids": []string{"sensor.house_power"}, "types": []string{"median"}}, "invalid_argument", "types", ""},
		{"bad statistics period", "ha_get_statistics", map[string]any{"statistic_ids": []string{"sensor.house_power"}, "period": "year"}, "invalid_argument", "period", ""},
		{"too many ids", "ha_get_statistics", map[string]any{"statistic_ids": make([]string, 21)}, "invalid_argument", "statistic_ids", ""},
		{"bad start", "ha_get_statistics", map[string]any{"statistic_ids": []string{"sensor.house_power"}, "start": "yesterday"}, "invalid_argument", "start", ""},
	})
}
