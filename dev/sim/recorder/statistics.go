package recorder

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"
)

// Mean types stored in statistics_meta.mean_type (StatisticMeanType).
const (
	MeanNone       = 0
	MeanArithmetic = 1
	MeanCircular   = 2
)

type period int

const (
	period5Minute period = iota
	periodHour
	periodDay
	periodWeek
	periodMonth
)

// parsePeriod reads the statistics period name HA's API accepts.
func parsePeriod(s string) (period, error) {
	switch s {
	case "5minute":
		return period5Minute, nil
	case "hour":
		return periodHour, nil
	case "day":
		return periodDay, nil
	case "week":
		return periodWeek, nil
	case "month":
		return periodMonth, nil
	}
	return 0, fmt.Errorf("period %q: must be one of 5minute, hour, day, week, month", s)
}

// periodStart is the start of the day/week/month holding t, in t's zone
// (HA uses its configured time zone; callers pass start in that zone).
// Weeks start on Monday, as in HA.
func (p period) start(t time.Time) time.Time {
	y, m, d := t.Date()
	switch p {
	case periodDay:
		return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
	case periodWeek:
		wd := (int(t.Weekday()) + 6) % 7
		return time.Date(y, m, d-wd, 0, 0, 0, 0, t.Location())
	case periodMonth:
		return time.Date(y, m, 1, 0, 0, 0, 0, t.Location())
	}
	return t
}

// ListStatistics lists statistics_meta ordered by statistic_id.
func (db *DB) ListStatistics(ctx context.Context) ([]StatMeta, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT statistic_id, source, unit_of_measurement, name, has_sum, mean_type
		FROM statistics_meta ORDER BY statistic_id`)
	if err != nil {
		return nil, fmt.Errorf("recorder: list statistics: %w", err)
	}
	defer rows.Close()
	var out []StatMeta
	for rows.Next() {
		var id, source, unit, name sql.NullString
		var hasSum sql.NullBool
		var m StatMeta
		if err := rows.Scan(&id, &source, &unit, &name, &hasSum, &m.MeanType); err != nil {
			return nil, fmt.Errorf("recorder: list statistics: %w", err)
		}
		m.StatisticID, m.Source, m.Unit, m.Name, m.HasSum = id.String, source.String, unit.String, name.String, hasSum.Bool
		out = append(out, m)
	}
	return out, rows.Err()
}

// Statistics returns rows per statistic id with start <= row start < end
// (end zero: no bound). "5minute" reads statistics_short_term, "hour"
// statistics; "day", "week" and "month" reduce hourly rows like HA: mean of
// means (circular for mean_type 2), min of mins, max of maxes, state and sum of
// the period's last hour. Ids without rows are absent.
func (db *DB) Statistics(ctx context.Context, ids []string, start, end time.Time, periodName string) (map[string][]StatRow, error) {
	p, err := parsePeriod(periodName)
	if err != nil {
		return nil, fmt.Errorf("recorder: statistics: %w", err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("recorder: statistics: statistic_ids: at least one id is required, e.g. [\"sensor.energy_total\"]")
	}
	if start.IsZero() {
		return nil, fmt.Errorf("recorder: statistics: start: must be set")
	}
	if !end.IsZero() && !end.After(start) {
		return nil, fmt.Errorf("recorder: statistics: end %s must be after start %s", end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	tbl := "statistics"
	if p == period5Minute {
		tbl = "statistics_short_term"
	}
	q := `SELECT m.statistic_id, m.mean_type, s.start_ts, s.mean, s.mean_weight, s.min, s.max, s.state, s.sum
		FROM ` + tbl + ` s JOIN statistics_meta m ON s.metadata_id = m.id
		WHERE m.statistic_id IN (` + placeholders(len(ids)) + `) AND s.start_ts >= ?`
	args := make([]any, 0, len(ids)+2)
	for _, id := range ids {
		args = append(args, id)
	}
	args = append(args, toTS(start))
	if !end.IsZero() {
		q += " AND s.start_ts < ?"
		args = append(args, toTS(end))
	}
	q += " ORDER BY m.statistic_id, s.start_ts"
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("recorder: statistics: %w", err)
	}
	defer rows.Close()
	out := map[string][]StatRow{}
	meanType := map[string]int{}
	weights := map[string][]*float64{}
	for rows.Next() {
		var id string
		var mt int
		var ts float64
		var mean, weight, mn, mx, state, sum sql.NullFloat64
		if err := rows.Scan(&id, &mt, &ts, &mean, &weight, &mn, &mx, &state, &sum); err != nil {
			return nil, fmt.Errorf("recorder: statistics: %w", err)
		}
		out[id] = append(out[id], StatRow{Start: fromTS(ts).In(start.Location()), Mean: ptr(mean), Min: ptr(mn), Max: ptr(mx), State: ptr(state), Sum: ptr(sum)})
		weights[id] = append(weights[id], ptr(weight))
		meanType[id] = mt
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recorder: statistics: %w", err)
	}
	if p <= periodHour {
		return out, nil
	}
	for id, hourly := range out {
		out[id] = reduce(hourly, weights[id], p, meanType[id])
	}
	return out, nil
}

func ptr(n sql.NullFloat64) *float64 {
	if !n.Valid {
		return nil
	}
	v := n.Float64
	return &v
}

// reduce folds hourly rows (sorted by start) into day/week/month rows.
func reduce(hourly []StatRow, weights []*float64, p period, meanType int) []StatRow {
	var out []StatRow
	for i := 0; i < len(hourly); {
		ps := p.start(hourly[i].Start)
		j := i
		for j < len(hourly) && p.start(hourly[j].Start).Equal(ps) {
			j++
		}
		out = append(out, fold(ps, hourly[i:j], weights[i:j], meanType))
		i = j
	}
	return out
}

func fold(start time.Time, rows []StatRow, weights []*float64, meanType int) StatRow {
	r := StatRow{Start: start, State: rows[len(rows)-1].State, Sum: rows[len(rows)-1].Sum}
	var sum, sin, cos, wsum float64
	n := 0
	for i, row := range rows {
		if row.Min != nil && (r.Min == nil || *row.Min < *r.Min) {
			v := *row.Min
			r.Min = &v
		}
		if row.Max != nil && (r.Max == nil || *row.Max > *r.Max) {
			v := *row.Max
			r.Max = &v
		}
		if row.Mean == nil {
			continue
		}
		n++
		sum += *row.Mean
		w := 1.0
		if weights[i] != nil {
			w = *weights[i]
		}
		rad := *row.Mean * math.Pi / 180
		sin += w * math.Sin(rad)
		cos += w * math.Cos(rad)
		wsum += w
	}
	if n > 0 {
		m := sum / float64(n)
		if meanType == MeanCircular && wsum > 0 {
			m = math.Mod(math.Atan2(sin, cos)*180/math.Pi+360, 360)
		}
		r.Mean = &m
	}
	return r
}

// unitClass is the statistics_meta.unit_class HA derives from the unit's
// converter (None when no converter handles the unit).
func unitClass(unit string) any {
	switch strings.TrimSpace(unit) {
	case "°C", "°F", "K":
		return "temperature"
	case "W", "kW", "MW":
		return "power"
	case "Wh", "kWh", "MWh", "GJ":
		return "energy"
	case "%", "ppm", "ppb":
		return "unitless"
	case "hPa", "Pa", "kPa", "bar", "mbar", "psi", "inHg", "mmHg":
		return "pressure"
	case "V", "mV":
		return "voltage"
	case "A", "mA":
		return "current"
	case "lx":
		return "illuminance"
	case "m³", "L", "ft³", "gal":
		return "volume"
	case "km/h", "m/s", "mph":
		return "speed"
	}
	return nil
}
