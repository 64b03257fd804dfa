package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// EnergyPrefs is energy/get_prefs: the meters the energy dashboard takes its numbers from.
type EnergyPrefs struct {
	Sources []EnergySource      `json:"energy_sources"`
	Devices []EnergyDeviceMeter `json:"device_consumption"`
}

// EnergySource is one source of the energy dashboard. Since Home Assistant 2026.2 (core PR #162200,
// energy storage 1.3) a grid source is one grid connection naming its import and export meters in
// From and To, like batteries; before, one grid source listed them in FlowFrom (import) and FlowTo
// (export). Both forms are read, so hamcp works with any version. Solar, wind, battery, gas and
// water name theirs in From and To.
type EnergySource struct {
	Type     string `json:"type"` // grid | solar | wind | battery | gas | water
	FlowFrom []struct {
		Stat string `json:"stat_energy_from"`
	} `json:"flow_from"` // grid before 2026.2
	FlowTo []struct {
		Stat string `json:"stat_energy_to"`
	} `json:"flow_to"` // grid before 2026.2
	From string `json:"stat_energy_from"`
	To   string `json:"stat_energy_to"`
}

// GridImports are a grid source's import meters in either form.
func (s EnergySource) GridImports() []string {
	out := make([]string, 0, len(s.FlowFrom)+1)
	for _, f := range s.FlowFrom {
		out = append(out, f.Stat)
	}
	if s.From != "" {
		out = append(out, s.From)
	}
	return out
}

// GridExports are a grid source's export meters in either form.
func (s EnergySource) GridExports() []string {
	out := make([]string, 0, len(s.FlowTo)+1)
	for _, f := range s.FlowTo {
		out = append(out, f.Stat)
	}
	if s.To != "" {
		out = append(out, s.To)
	}
	return out
}

// EnergyDeviceMeter is one individually metered device of the energy dashboard.
type EnergyDeviceMeter struct {
	Stat string `json:"stat_consumption"`
	Name string `json:"name"`
}

// EnergyPrefs reads the energy dashboard's configuration (WebSocket energy/get_prefs). Home
// Assistant answers the APIError code "not_found" when the dashboard was never set up.
func (c *Client) EnergyPrefs(ctx context.Context) (EnergyPrefs, error) {
	var p EnergyPrefs
	err := c.Call(ctx, "energy/get_prefs", nil, &p)
	return p, err
}

// StatisticsQuery selects rows of recorder/statistics_during_period.
type StatisticsQuery struct {
	IDs        []string // statistic ids: entity ids of sensors with a state_class, or external ids
	Start, End time.Time
	Period     string   // 5minute | hour | day | week | month
	Types      []string // mean, min, max, change, sum, state, last_reset; nil: every type
}

// StatisticsRow is one period of a statistic. Start and End are epoch milliseconds, as HA sends
// them; a value is nil when HA has none for the period.
type StatisticsRow struct {
	Start  float64  `json:"start"`
	End    float64  `json:"end"`
	Mean   *float64 `json:"mean,omitempty"`
	Min    *float64 `json:"min,omitempty"`
	Max    *float64 `json:"max,omitempty"`
	Sum    *float64 `json:"sum,omitempty"`
	State  *float64 `json:"state,omitempty"`
	Change *float64 `json:"change,omitempty"`
}

// Statistics reads long-term statistics (WebSocket recorder/statistics_during_period), rows per
// statistic id, oldest first; ids without rows in the period are absent. An answer shaped
// otherwise is an error rather than rows the caller would misread.
func (c *Client) Statistics(ctx context.Context, q StatisticsQuery) (map[string][]StatisticsRow, error) {
	if len(q.IDs) == 0 {
		return nil, errors.New(`homeassistant: statistics needs at least one statistic id, e.g. ["sensor.house_power"]`)
	}
	payload := map[string]any{"start_time": isoTime(q.Start), "end_time": isoTime(q.End), "statistic_ids": q.IDs, "period": q.Period}
	if len(q.Types) > 0 {
		payload["types"] = q.Types
	}
	var raw json.RawMessage
	if err := c.Call(ctx, "recorder/statistics_during_period", payload, &raw); err != nil {
		return nil, err
	}
	return DecodeStatistics(raw)
}

// DecodeStatistics reads a statistics_during_period answer, refusing shapes a summary would
// misread (an empty id, a negative or NaN start).
func DecodeStatistics(raw []byte) (map[string][]StatisticsRow, error) {
	out := map[string][]StatisticsRow{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("homeassistant: statistics answer is not {statistic_id: [rows]}: %w", err)
	}
	for id, rows := range out {
		if strings.TrimSpace(id) == "" {
			return nil, errors.New("homeassistant: statistics answer has an empty statistic id")
		}
		for _, r := range rows {
			if math.IsNaN(r.Start) || r.Start < 0 {
				return nil, errors.New("homeassistant: statistics answer has a bad start time for " + id)
			}
		}
	}
	return out, nil
}

// StatisticMeta describes one statistic the recorder keeps.
type StatisticMeta struct {
	ID     string `json:"statistic_id"`
	Name   string `json:"name,omitempty"`
	Unit   string `json:"unit,omitempty"`
	HasSum bool   `json:"has_sum"`
	Source string `json:"source,omitempty"`
	// MeanType is HA's StatisticMeanType: 0 none, 1 arithmetic, 2 circular (wind direction).
	MeanType int `json:"mean_type"`
}

// StatisticIDs lists the statistics the recorder keeps (WebSocket recorder/list_statistic_ids),
// only those of statisticType ("mean" or "sum") unless it is empty. Before 2025.4 HA sent only
// has_mean; it reads as an arithmetic mean.
func (c *Client) StatisticIDs(ctx context.Context, statisticType string) ([]StatisticMeta, error) {
	payload := map[string]any{}
	if statisticType != "" {
		payload["statistic_type"] = statisticType
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
	if err := c.Call(ctx, "recorder/list_statistic_ids", payload, &metas); err != nil {
		return nil, err
	}
	out := make([]StatisticMeta, 0, len(metas))
	for _, m := range metas {
		s := StatisticMeta{ID: m.ID, HasSum: m.HasSum, Source: m.Source}
		if m.Name != nil {
			s.Name = *m.Name
		}
		if m.Unit != nil {
			s.Unit = *m.Unit
		}
		switch {
		case m.MeanType != nil:
			s.MeanType = *m.MeanType
		case m.HasMean:
			s.MeanType = 1
		}
		out = append(out, s)
	}
	return out, nil
}
