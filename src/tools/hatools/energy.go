package hatools

import (
	"context"
	"errors"
	"math"
	"sort"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetEnergy is the toolset of the energy dashboard and long-term statistics.
const SetEnergy = "energy"

// energyTools are the energy and statistics tools, in the order tools/list shows them.
func energyTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{getEnergyData(d), getStatistics(d)}
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

// unitOf names a statistic's entity and its unit from the state mirror ("" when it is not an entity).
func (d Deps) unitOf(id string) (name, unit string) {
	if s, ok := d.HA.Mirror().Get(id); ok {
		unit, _ = s.Attributes["unit_of_measurement"].(string)
		return s.FriendlyName(), unit
	}
	return "", ""
}

type energyArgs struct {
	Start     string `json:"start,omitempty" jsonschema:"ISO-8601 start (default: midnight today, home time zone)" validate:"omitempty,iso8601"`
	End       string `json:"end,omitempty" jsonschema:"ISO-8601 end (default now)" validate:"omitempty,iso8601"`
	Days      int    `json:"days,omitempty" jsonschema:"whole days back from midnight instead of start (1 = yesterday and today)" validate:"omitempty,min=1,max=366"`
	Period    string `json:"period,omitempty" jsonschema:"breakdown row size (default day)" validate:"omitempty,oneof=hour day week month"`
	Breakdown bool   `json:"breakdown,omitempty" jsonschema:"add per-period rows (paged)"`
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
	Wind            *float64                 `json:"wind_kwh,omitempty"`
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

// getEnergyData is ha_get_energy_data.
func getEnergyData(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[energyArgs, energyResult]{
		Name: "ha_get_energy_data", Toolset: SetEnergy, Title: "Energy dashboard data",
		Description: "Energy use over a period (default today so far) as the energy dashboard computes it from its meters: grid import/export, solar, wind, battery, " +
			"home consumption, gas, water and the top metered devices. breakdown=true adds per-period rows. For other sensors use ha_get_statistics.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a energyArgs) (energyResult, error) {
			return d.energyData(ctx, a)
		},
	})
}

// energyMeters lists the dashboard's statistic ids in order, with what each measures.
func energyMeters(prefs homeassistant.EnergyPrefs) (ids []string, kinds map[string]string) {
	kinds = map[string]string{}
	add := func(id, kind string) {
		if id != "" && kinds[id] == "" {
			kinds[id] = kind
			ids = append(ids, id)
		}
	}
	for _, s := range prefs.Sources {
		switch s.Type {
		case "grid":
			for _, id := range s.GridImports() {
				add(id, "grid_import")
			}
			for _, id := range s.GridExports() {
				add(id, "grid_export")
			}
		case "solar", "wind":
			add(s.From, s.Type)
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
	return ids, kinds
}

func (d Deps) energyData(ctx context.Context, a energyArgs) (energyResult, error) {
	prefs, err := d.HA.EnergyPrefs(ctx)
	if err != nil {
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
	if a.Start != "" {
		start, _ = toolkit.ParseTime(a.Start)
	} else {
		start = localMidnight(ctx, d.HA).AddDate(0, 0, -a.Days)
	}
	if !start.Before(end) {
		return energyResult{}, toolkit.InvalidArg("start", "must be before end", `{"start": "2026-01-30T00:00:00Z"}`)
	}
	period := a.Period
	if period == "" {
		period = "day"
	}
	ids, kinds := energyMeters(prefs)
	out := energyResult{Start: start.Format(time.RFC3339), End: end.Format(time.RFC3339)}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := d.HA.Statistics(ctx, homeassistant.StatisticsQuery{IDs: ids, Start: start, End: end, Period: period, Types: []string{"change"}})
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
			name, unit := d.unitOf(id)
			out.Devices = append(out.Devices, energyFlow{Stat: id, Name: name, Value: round3(totals[id]), Unit: unit})
		case "gas", "water":
			name, unit := d.unitOf(id)
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
	out.GridImport, out.GridExport, out.Solar, out.Wind = byKind["grid_import"], byKind["grid_export"], byKind["solar"], byKind["wind"]
	out.BatteryIn, out.BatteryOut = byKind["battery_in"], byKind["battery_out"]
	if out.GridImport != nil || out.Solar != nil || out.Wind != nil {
		v := 0.0
		for kind, sign := range map[string]float64{"grid_import": 1, "solar": 1, "wind": 1, "battery_out": 1, "grid_export": -1, "battery_in": -1} {
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
}

type statisticsArgs struct {
	StatisticIDs  []string `json:"statistic_ids,omitempty" jsonschema:"statistics to read (usually sensor entity ids); none lists them" validate:"omitempty,max=20,dive,min=3,max=255" example:"[\"sensor.house_power\"]"`
	Start         string   `json:"start,omitempty" jsonschema:"ISO-8601 start (default: hours before end)" validate:"omitempty,iso8601"`
	End           string   `json:"end,omitempty" jsonschema:"ISO-8601 end (default now)" validate:"omitempty,iso8601"`
	Hours         int      `json:"hours,omitempty" jsonschema:"period length without start (default 24)" validate:"omitempty,min=1,max=8784"`
	Period        string   `json:"period,omitempty" jsonschema:"row size (default hour; 5minute rows are kept ~10 days)" validate:"omitempty,oneof=5minute hour day week month"`
	Types         []string `json:"types,omitempty" jsonschema:"values per row (default mean, min, max, change)" validate:"omitempty,dive,oneof=mean min max change sum state"`
	Search        string   `json:"search,omitempty" jsonschema:"listing: text in statistic id or name"`
	StatisticType string   `json:"statistic_type,omitempty" jsonschema:"listing: mean (measurements) or sum (meters) only" validate:"omitempty,oneof=mean sum"`
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

// getStatistics is ha_get_statistics: the one tool for long-term statistics (it replaced the
// database tool ha_query_statistics_db, which read the same rows from the recorder's file).
func getStatistics(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[statisticsArgs, statisticsResult]{
		Name: "ha_get_statistics", Toolset: SetEnergy, Title: "Long-term statistics",
		Description: "Home Assistant's long-term statistics of numeric sensors (kept forever): mean/min/max of measurements, change/sum of meters, per period; paged per statistic. " +
			"Without statistic_ids it lists them. Cheaper than ha_get_history for long periods. Not an overview of the home (ha_get_overview); while HA is down, SQL via ha_query_sql.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a statisticsArgs) (statisticsResult, error) {
			if len(a.StatisticIDs) == 0 {
				return d.listStatistics(ctx, a)
			}
			return d.statistics(ctx, a)
		},
	})
}

func (d Deps) listStatistics(ctx context.Context, a statisticsArgs) (statisticsResult, error) {
	metas, err := d.HA.StatisticIDs(ctx, a.StatisticType)
	if err != nil {
		return statisticsResult{}, haError(err, false, "")
	}
	var list []statListing
	for _, m := range metas {
		if a.Search != "" && !hasFold(m.ID+" "+m.Name, a.Search) {
			continue
		}
		list = append(list, statListing{StatisticID: m.ID, Name: m.Name, Unit: m.Unit, HasMean: m.MeanType != 0, MeanType: meanTypes[m.MeanType],
			HasSum: m.HasSum, Source: m.Source})
	}
	page := toolkit.Paginate(list, a.Page)
	return statisticsResult{Available: &page}, nil
}

func (d Deps) statistics(ctx context.Context, a statisticsArgs) (statisticsResult, error) {
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
	rows, err := d.HA.Statistics(ctx, homeassistant.StatisticsQuery{IDs: a.StatisticIDs, Start: start, End: end, Period: period, Types: types})
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
		_, s.Unit = d.unitOf(id)
		for _, r := range page.Items {
			s.Rows = append(s.Rows, statOut{Start: epochMS(r.Start), Mean: roundPtr(r.Mean), Min: roundPtr(r.Min), Max: roundPtr(r.Max),
				Change: roundPtr(r.Change), Sum: roundPtr(r.Sum), State: roundPtr(r.State)})
		}
		out.Statistics = append(out.Statistics, s)
	}
	return out, nil
}
