package recorder

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Statistics tables.
const (
	TableStatistics          = "statistics"            // hourly, never purged
	TableStatisticsShortTerm = "statistics_short_term" // 5-minute, purged with the states
)

// StatRow is one statistics period; nil fields are NULL (a measurement has
// no sum, a meter no mean/min/max).
type StatRow struct {
	Start     time.Time  `json:"start"`
	Mean      *float64   `json:"mean,omitempty"`
	Min       *float64   `json:"min,omitempty"`
	Max       *float64   `json:"max,omitempty"`
	State     *float64   `json:"state,omitempty"`
	Sum       *float64   `json:"sum,omitempty"`
	LastReset *time.Time `json:"last_reset,omitempty"`
}

// StatisticMeta is one statistics_meta row.
type StatisticMeta struct {
	StatisticID string `json:"statistic_id"`
	Source      string `json:"source"`
	Unit        string `json:"unit_of_measurement,omitempty"`
	Name        string `json:"name,omitempty"`
	HasSum      bool   `json:"has_sum"`
	// MeanType: 0 none, 1 arithmetic, 2 circular (from has_mean on
	// databases older than the mean_type column).
	MeanType int `json:"mean_type"`
}

// Statistics pages through one statistic's rows in table (TableStatistics or
// TableStatisticsShortTerm) with start <= start_ts < end, oldest first,
// on HA's unique (metadata_id, start_ts) index. It returns the page and the
// total.
func (db *DB) Statistics(ctx context.Context, table, statisticID string, start, end time.Time, limit, offset int) ([]StatRow, int, error) {
	if table != TableStatistics && table != TableStatisticsShortTerm {
		return nil, 0, fmt.Errorf("table: %q is not a statistics table; use %q (hourly) or %q (5-minute)", table, TableStatistics, TableStatisticsShortTerm)
	}
	if statisticID == "" || len(statisticID) > 255 {
		return nil, 0, errors.New("statistic_id: must be 1..255 characters, e.g. sensor.house_energy")
	}
	limit, err := db.checkPage(limit, offset)
	if err != nil {
		return nil, 0, err
	}
	if err := checkRange(start, end); err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, db.opts.StatementTimeout)
	defer cancel()
	var meta int64
	err = db.queryRow(ctx, "SELECT id FROM statistics_meta WHERE statistic_id = ?", statisticID).Scan(&meta)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("statistic_id %s: %w in statistics_meta; list the ids first (entities without a state_class have no statistics)", statisticID, ErrNotFound)
	}
	if err != nil {
		return nil, 0, db.runError(ctx, err)
	}
	// table is one of two constants, so building the name into the text is safe.
	where := " FROM " + table + " WHERE metadata_id = ? AND start_ts >= ? AND start_ts < ?"
	var total int
	if err := db.queryRow(ctx, "SELECT COUNT(*)"+where, meta, ts(start), ts(end)).Scan(&total); err != nil {
		return nil, 0, db.runError(ctx, err)
	}
	out := []StatRow{}
	if offset >= total {
		return out, total, nil
	}
	rows, err := db.queryRows(ctx, "SELECT start_ts, mean, min, max, state, sum, last_reset_ts"+where+
		" ORDER BY start_ts LIMIT ? OFFSET ?", meta, ts(start), ts(end), limit, offset)
	if err != nil {
		return nil, 0, db.runError(ctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r StatRow
		var st float64
		var mean, mn, mx, state, sum, reset sql.NullFloat64
		if err := rows.Scan(&st, &mean, &mn, &mx, &state, &sum, &reset); err != nil {
			return nil, 0, db.runError(ctx, err)
		}
		r.Start = fromTS(st)
		r.Mean, r.Min, r.Max, r.State, r.Sum = ptr(mean), ptr(mn), ptr(mx), ptr(state), ptr(sum)
		if reset.Valid {
			t := fromTS(reset.Float64)
			r.LastReset = &t
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, db.runError(ctx, err)
	}
	return out, total, nil
}

func ptr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}

// ListStatisticIDs pages through statistics_meta ordered by statistic_id.
// search, when set, matches a substring of the id or the name, ignoring
// ASCII case.
func (db *DB) ListStatisticIDs(ctx context.Context, search string, limit, offset int) ([]StatisticMeta, int, error) {
	limit, err := db.checkPage(limit, offset)
	if err != nil {
		return nil, 0, err
	}
	if len(search) > 255 {
		return nil, 0, errors.New("search: at most 255 characters")
	}
	ctx, cancel := context.WithTimeout(ctx, db.opts.StatementTimeout)
	defer cancel()
	pattern := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(search) + "%"
	where := ` FROM statistics_meta WHERE statistic_id LIKE ?1 ESCAPE '\' OR COALESCE(name, '') LIKE ?1 ESCAPE '\'`
	var total int
	if err := db.queryRow(ctx, "SELECT COUNT(*)"+where, pattern).Scan(&total); err != nil {
		return nil, 0, db.runError(ctx, err)
	}
	// SELECT * keeps this working on schemas before mean_type existed.
	rows, err := db.queryRows(ctx, "SELECT *"+where+" ORDER BY statistic_id LIMIT ?2 OFFSET ?3", pattern, limit, offset)
	if err != nil {
		return nil, 0, db.runError(ctx, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, 0, err
	}
	out := []StatisticMeta{}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, 0, db.runError(ctx, err)
		}
		var m StatisticMeta
		hasMean := false
		meanType := -1
		for i, c := range cols {
			switch c {
			case "statistic_id":
				m.StatisticID = text(vals[i])
			case "source":
				m.Source = text(vals[i])
			case "unit_of_measurement":
				m.Unit = text(vals[i])
			case "name":
				m.Name = text(vals[i])
			case "has_sum":
				m.HasSum = integer(vals[i]) != 0
			case "has_mean":
				hasMean = integer(vals[i]) != 0
			case "mean_type":
				meanType = int(integer(vals[i]))
			}
		}
		switch {
		case meanType >= 0:
			m.MeanType = meanType
		case hasMean: // before mean_type existed, has_mean meant arithmetic
			m.MeanType = 1
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, db.runError(ctx, err)
	}
	return out, total, nil
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

func integer(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case bool:
		if x {
			return 1
		}
	}
	return 0
}
