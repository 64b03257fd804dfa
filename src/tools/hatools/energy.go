package hatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetEnergy is the toolset of the energy dashboard and long-term statistics.
const SetEnergy = "energy"


// energyPrefs is energy/get_prefs: where the energy dashboard takes its numbers from.
type energyPrefs struct {
	Sources []struct {
		Type     string `json:"type"`
		FlowFrom []struct {
			Stat string `json:"stat_energy_from"`
		} `json:"flow_from"`
		FlowTo []struct {
			Stat string `json:"stat_energy_to"`
		} `json:"flow_to"`
		From string `json:"stat_energy_from"`
		To   string `json:"stat_energy_to"`
	} `json:"energy_sources"`
	Devices []struct {
		Stat string `json:"stat_consumption"`
		Name string `json:"name"`
	} `json:"device_consumption"`
}

// statRow is one statistics period as recorder/statistics_during_period sends it: start and end
// in epoch milliseconds, values possibly null.
type statRow struct {
	Start  float64  `json:"start"`
	End    float64  `json:"end"`
	Mean   *float64 `json:"mean,omitempty"`
	Min    *float64 `json:"min,omitempty"`
	Max    *float64 `json:"max,omitempty"`
	Sum    *float64 `json:"sum,omitempty"`
	State  *float64 `json:"state,omitempty"`
	Change *float64 `json:"change,omitempty"`
}

// round3 keeps three decimals: enough for kWh and degrees, fewer tokens than float noise.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func roundPtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := round3(*p)
	return &v
}

func epochMS(ms float64) string {
	return time.UnixMilli(int64(ms)).UTC().Format(time.RFC3339)
}

// readStatistics reads periods of the given statistics; HA omits ids without data.
func readStatistics(ctx context.Context, ha *homeassistant.Client, ids []string, start, end time.Time, period string, types []string) (map[string][]statRow, error) {
	payload := map[string]any{"start_time": start.Format(time.RFC3339), "end_time": end.Format(time.RFC3339),
		"statistic_ids": ids, "period": period}
	if len(types) > 0 {
		payload["types"] = types
	}
	var raw json.RawMessage
	if err := ha.Call(ctx, "recorder/statistics_during_period", payload, &raw); err != nil {
		return nil, err
	}
	return decodeStatRows(raw)
}

type energyArgs struct {
	Start     string `json:"start,omitempty" jsonschema:"ISO-8601 start (default: midnight today in the home's time zone)" validate:"omitempty,iso8601"`
	End       string `json:"end,omitempty" jsonschema:"ISO-8601 end (default now)" validate:"omitempty,iso8601"`
	Days      int    `json:"days,omitempty" jsonschema:"whole days back from midnight today instead of start (1 = yesterday and today)" validate:"omitempty,min=1,max=366"`
	Period    string `json:"period,omitempty" jsonschema:"size of the breakdown rows: hour, day (default), week or month" validate:"omitempty,oneof=hour day week month"`
	Breakdown bool   `json:"breakdown,omitempty" jsonschema:"add per-period rows (paged with limit/offset)"`
	toolkit.Page
}

type energyFlow struct {
	Stat  string  `json:"stat"`
	Name  string  `json:"name,omitempty"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

type energyRow struct {
	Start  string             `json:"start"`
	Values map[string]float64 `json:"values"`
}

type energyResult struct {
	Start           string                   `json:"start"`
	End             string                   `json:"end"`
	GridImport      *float64                 `json:"grid_import_kwh,omitempty"`
	GridExport      *float64                 `json:"grid_export_kwh,omitempty"`
	Solar           *float64                 `json:"solar_kwh,omitempty"`
	BatteryIn       *float64                 `json:"battery_in_kwh,omitempty"`
	BatteryOut      *float64                 `json:"battery_out_kwh,omitempty"`
	HomeConsumption *float64                 `json:"home_consumption_kwh,omitempty"`
	Gas             *energyFlow              `json:"gas,omitempty"`
	Water           *energyFlow              `json:"water,omitempty"`
	Devices         []energyFlow             `json:"devices,omitempty"`
	DevicesTotal    int                      `json:"devices_total,omitempty"`
	NoData          []string                 `json:"no_data,omitempty"`
	Breakdown       *toolkit.List[energyRow] `json:"breakdown,omitempty"`
}

// maxEnergyDevices keeps the summary small on homes that meter every plug.
const maxEnergyDevices = 20

// localMidnight is today's start in HA's time zone (UTC when it cannot be read).
func localMidnight(ctx context.Context, ha *homeassistant.Client) time.Time {
	loc := time.UTC
	if cfg, err := ha.Config(ctx); err == nil {
		if l, err := time.LoadLocation(cfg.TimeZone); err == nil {
			loc = l
		}
	}
	n := time.Now().In(loc)
	return time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc).UTC()
}

type statisticsArgs struct {
	StatisticIDs  []string `json:"statistic_ids,omitempty" jsonschema:"statistics to read (usually entity ids of sensors with a state_class); leave out to list the available ones" validate:"omitempty,max=20,dive,min=3,max=255" example:"[\"sensor.house_power\"]"`
	Start         string   `json:"start,omitempty" jsonschema:"ISO-8601 start (default: hours before end)" validate:"omitempty,iso8601"`
	End           string   `json:"end,omitempty" jsonschema:"ISO-8601 end (default now)" validate:"omitempty,iso8601"`
	Hours         int      `json:"hours,omitempty" jsonschema:"length of the period when start is not given (default 24, max 8784)" validate:"omitempty,min=1,max=8784"`
	Period        string   `json:"period,omitempty" jsonschema:"row size: 5minute, hour (default), day, week or month" validate:"omitempty,oneof=5minute hour day week month"`
	Types         []string `json:"types,omitempty" jsonschema:"values per row: mean, min, max, change, sum, state (default mean, min, max, change)" validate:"omitempty,dive,oneof=mean min max change sum state"`
	Search        string   `json:"search,omitempty" jsonschema:"listing: text matched against statistic id and name"`
	StatisticType string   `json:"statistic_type,omitempty" jsonschema:"listing: only mean (measurements) or sum (meters) statistics" validate:"omitempty,oneof=mean sum"`
	toolkit.Page
}

type statListing struct {
	StatisticID string `json:"statistic_id"`
	Name        string `json:"name,omitempty"`
	Unit        string `json:"unit,omitempty"`
	HasMean     bool   `json:"has_mean"`
	MeanType    string `json:"mean_type,omitempty"` // arithmetic | circular (a circular mean: wind direction)
	HasSum      bool   `json:"has_sum"`
	Source      string `json:"source,omitempty"`
}

// meanTypes names Home Assistant's StatisticMeanType values (0 is none).
var meanTypes = map[int]string{1: "arithmetic", 2: "circular"}

type statSeries struct {
	StatisticID string    `json:"statistic_id"`
	Unit        string    `json:"unit,omitempty"`
	Total       int       `json:"total"`
	Offset      int       `json:"offset"`
	NextOffset  *int      `json:"next_offset,omitempty"`
	Rows        []statOut `json:"rows"`
}

type statOut struct {
	Start  string   `json:"start"`
	Mean   *float64 `json:"mean,omitempty"`
	Min    *float64 `json:"min,omitempty"`
	Max    *float64 `json:"max,omitempty"`
	Change *float64 `json:"change,omitempty"`
	Sum    *float64 `json:"sum,omitempty"`
	State  *float64 `json:"state,omitempty"`
}

type statisticsResult struct {
	Start      string                     `json:"start,omitempty"`
	End        string                     `json:"end,omitempty"`
	Period     string                     `json:"period,omitempty"`
	Statistics []statSeries               `json:"statistics,omitempty"`
	NoData     []string                   `json:"no_data,omitempty"`
	Available  *toolkit.List[statListing] `json:"available,omitempty"`
}

func energyTools(d Deps) []*toolkit.Tool {
	unitOf := func(id string) (name, unit string) {
		if s, ok := d.HA.Mirror().Get(id); ok {
			unit, _ = s.Attributes["unit_of_measurement"].(string)
			return s.FriendlyName(), unit
		}
		return "", ""
	}
	energy := toolkit.Define(toolkit.Spec[energyArgs, energyResult]{
		Name: "ha_get_energy_data", Toolset: SetEnergy, Title: "Energy dashboard data",
		Description: "Energy use over a period (default today so far) as the energy dashboard computes it from its configured meters: " +
			"grid import and export, solar production, battery, home consumption, gas and water, and the top metered devices. " +
			"breakdown=true adds per-period rows (period hour, day, week or month). For other sensors use ha_get_statistics.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a energyArgs) (energyResult, error) {
			var prefs energyPrefs
			if err := d.HA.Call(ctx, "energy/get_prefs", nil, &prefs); err != nil {
				var api *homeassistant.APIError
				if errors.As(err, &api) && api.Code == "not_found" {
					return energyResult{}, toolkit.NotFound("the energy dashboard is not configured in Home Assistant (energy/get_prefs: "+api.Message+")",
						"the user can set it up under Settings → Dashboards → Energy; meanwhile ha_get_statistics reads energy sensors directly")
				}
				return energyResult{}, haError(err, false, "")
			}
			end := time.Now().UTC()
			if a.End != "" {
				end, _ = toolkit.ParseTime(a.End)
			}
			var start time.Time
			switch {
			case a.Start != "":
				start, _ = toolkit.ParseTime(a.Start)
			default:
				start = localMidnight(ctx, d.HA).AddDate(0, 0, -a.Days)
			}
			if !start.Before(end) {
				return energyResult{}, toolkit.InvalidArg("start", "must be before end", `{"start": "2026-01-30T00:00:00Z"}`)
			}
			period := a.Period
			if period == "" {
				period = "day"
			}
			kinds := map[string]string{} // statistic id → what it measures
			var ids []string
			add := func(id, kind string) {
				if id != "" && kinds[id] == "" {
					kinds[id] = kind
					ids = append(ids, id)
				}
			}
			for _, s := range prefs.Sources {
				switch s.Type {
				case "grid":
					for _, f := range s.FlowFrom {
						add(f.Stat, "grid_import")
					}
					for _, f := range s.FlowTo {
						add(f.Stat, "grid_export")
					}
				case "solar":
					add(s.From, "solar")
				case "battery":
					add(s.From, "battery_out")
					add(s.To, "battery_in")
				case "gas", "water":
					add(s.From, s.Type)
				}
			}
			for _, dv := range prefs.Devices {
				add(dv.Stat, "device")
			}
			out := energyResult{Start: start.Format(time.RFC3339), End: end.Format(time.RFC3339)}
			if len(ids) == 0 {
				return out, nil
			}
			rows, err := readStatistics(ctx, d.HA, ids, start, end, period, []string{"change"})
			if err != nil {
				return energyResult{}, haError(err, false, "")
			}
			totals := map[string]float64{}
			perPeriod := map[float64]map[string]float64{}
			for _, id := range ids {
				list, ok := rows[id]
				if !ok {
					out.NoData = append(out.NoData, id)
					continue
				}
				for _, r := range list {
					if r.Change == nil {
						continue
					}
					kind := kinds[id]
					totals[id] += *r.Change
					if kind != "device" {
						if perPeriod[r.Start] == nil {
							perPeriod[r.Start] = map[string]float64{}
						}
						perPeriod[r.Start][kind] = round3(perPeriod[r.Start][kind] + *r.Change)
					}
				}
			}
			byKind := map[string]*float64{}
			for _, id := range ids {
				if _, ok := rows[id]; !ok {
					continue
				}
				kind := kinds[id]
				switch kind {
				case "device":
					name, unit := unitOf(id)
					out.Devices = append(out.Devices, energyFlow{Stat: id, Name: name, Value: round3(totals[id]), Unit: unit})
				case "gas", "water":
					name, unit := unitOf(id)
					f := &energyFlow{Stat: id, Name: name, Value: round3(totals[id]), Unit: unit}
					if kind == "gas" {
						out.Gas = f
					} else {
						out.Water = f
					}
				default:
					v := totals[id]
					if p := byKind[kind]; p != nil {
						v += *p
					}
					v = round3(v)
					byKind[kind] = &v
				}
			}
			out.GridImport, out.GridExport, out.Solar = byKind["grid_import"], byKind["grid_export"], byKind["solar"]
			out.BatteryIn, out.BatteryOut = byKind["battery_in"], byKind["battery_out"]
			if out.GridImport != nil || out.Solar != nil {
				v := 0.0
				for kind, sign := range map[string]float64{"grid_import": 1, "solar": 1, "battery_out": 1, "grid_export": -1, "battery_in": -1} {
					if p := byKind[kind]; p != nil {
						v += sign * *p
					}
				}
				v = round3(v)
				out.HomeConsumption = &v
			}
			sort.SliceStable(out.Devices, func(i, j int) bool { return out.Devices[i].Value > out.Devices[j].Value })
			if len(out.Devices) > maxEnergyDevices {
				out.DevicesTotal = len(out.Devices)
				out.Devices = out.Devices[:maxEnergyDevices]
			}
			if a.Breakdown {
				starts := make([]float64, 0, len(perPeriod))
				for s := range perPeriod {
					starts = append(starts, s)
				}
				sort.Float64s(starts)
				list := make([]energyRow, 0, len(starts))
				for _, s := range starts {
					list = append(list, energyRow{Start: epochMS(s), Values: perPeriod[s]})
				}
				page := toolkit.Paginate(list, a.Page)
				out.Breakdown = &page
			}
			return out, nil
		},
	})

	stats := toolkit.Define(toolkit.Spec[statisticsArgs, statisticsResult]{
		Name: "ha_get_statistics", Toolset: SetEnergy, Title: "Long-term statistics",
		Description: "Read Home Assistant's long-term statistics (hourly aggregates kept forever, 5-minute ones for days): mean/min/max for measurements, " +
			"change/sum for meters, per 5minute, hour, day, week or month. Cheaper than ha_get_history for long periods. " +
			"Without statistic_ids it lists the available statistics (filter with search, statistic_type). Rows are paged per statistic.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a statisticsArgs) (statisticsResult, error) {
			if len(a.StatisticIDs) == 0 {
				payload := map[string]any{}
				if a.StatisticType != "" {
					payload["statistic_type"] = a.StatisticType
				}
				var metas []struct {
					ID       string  `json:"statistic_id"`
					Name     *string `json:"name"`
					Unit     *string `json:"statistics_unit_of_measurement"`
					HasMean  bool    `json:"has_mean"`  // deprecated, arithmetic only; gone after 2026.4
					MeanType *int    `json:"mean_type"` // since 2025.4
					HasSum   bool    `json:"has_sum"`
					Source   string  `json:"source"`
				}
				if err := d.HA.Call(ctx, "recorder/list_statistic_ids", payload, &metas); err != nil {
					return statisticsResult{}, haError(err, false, "")
				}
				var list []statListing
				for _, m := range metas {
					if a.Search != "" && !hasFold(m.ID+" "+strOf(m.Name), a.Search) {
						continue
					}
					mt := 0
					switch {
					case m.MeanType != nil:
						mt = *m.MeanType
					case m.HasMean:
						mt = 1
					}
					list = append(list, statListing{StatisticID: m.ID, Name: strOf(m.Name), Unit: strOf(m.Unit), HasMean: mt != 0, MeanType: meanTypes[mt],
						HasSum: m.HasSum, Source: m.Source})
				}
				page := toolkit.Paginate(list, a.Page)
				return statisticsResult{Available: &page}, nil
			}
			start, end, err := periodWindow(a.Start, a.End, a.Hours, 24)
			if err != nil {
				return statisticsResult{}, err
			}
			period := a.Period
			if period == "" {
				period = "hour"
			}
			types := a.Types
			if len(types) == 0 {
				types = []string{"mean", "min", "max", "change"}
			}
			rows, err := readStatistics(ctx, d.HA, a.StatisticIDs, start, end, period, types)
			if err != nil {
				var api *homeassistant.APIError
				if errors.As(err, &api) && api.Code == "invalid_format" {
					return statisticsResult{}, toolkit.InvalidArg("statistic_ids", "were refused by Home Assistant: "+api.Message, `{"statistic_ids": ["sensor.house_power"]}`)
				}
				return statisticsResult{}, haError(err, false, "")
			}
			out := statisticsResult{Start: start.Format(time.RFC3339), End: end.Format(time.RFC3339), Period: period}
			for _, id := range a.StatisticIDs {
				list, ok := rows[id]
				if !ok {
					out.NoData = append(out.NoData, id)
					continue
				}
				page := toolkit.Paginate(list, a.Page)
				s := statSeries{StatisticID: id, Total: page.Total, Offset: page.Offset, NextOffset: page.NextOffset, Rows: make([]statOut, 0, page.Count)}
				_, s.Unit = unitOf(id)
				for _, r := range page.Items {
					s.Rows = append(s.Rows, statOut{Start: epochMS(r.Start), Mean: roundPtr(r.Mean), Min: roundPtr(r.Min), Max: roundPtr(r.Max),
						Change: roundPtr(r.Change), Sum: roundPtr(r.Sum), State: roundPtr(r.State)})
				}
				out.Statistics = append(out.Statistics, s)
			}
			return out, nil
		},
	})
	return []*toolkit.Tool{energy, stats}
}

// decodeStatRows reads a statistics answer, refusing shapes the summaries would misread.
func decodeStatRows(raw []byte) (map[string][]statRow, error) {
	out := map[string][]statRow{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("statistics answer is not {statistic_id: [rows]}: %w", err)
	}
	for id, rows := range out {
		if strings.TrimSpace(id) == "" {
			return nil, errors.New("statistics answer has an empty statistic id")
		}
		for _, r := range rows {
			if math.IsNaN(r.Start) || r.Start < 0 {
				return nil, errors.New("statistics answer has a bad start time for " + id)
			}
		}
	}
	return out, nil
}
