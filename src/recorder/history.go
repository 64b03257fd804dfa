package recorder

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// DefaultLimit is the page size of the history and statistics calls when
// the caller passes 0.
const DefaultLimit = 100

// ErrNotFound means the entity or statistic is not in the database.
var ErrNotFound = errors.New("not found")

// StateRow is one recorded state of an entity.
type StateRow struct {
	StateID     int64           `json:"state_id"`
	EntityID    string          `json:"entity_id"`
	State       string          `json:"state"` // "" when the entity was removed
	LastChanged time.Time       `json:"last_changed"`
	LastUpdated time.Time       `json:"last_updated"`
	Attributes  json.RawMessage `json:"attributes,omitempty"` // with WithAttributes; rows may share one slice: do not modify
	// BeforeStart marks the state in effect at start (WithStartState): it
	// was recorded earlier and is still current at start.
	BeforeStart bool `json:"before_start,omitempty"`
}

// HistoryOption adds to what StateHistory returns.
type HistoryOption int

const (
	// WithAttributes joins each row's attributes from state_attributes.
	WithAttributes HistoryOption = iota + 1
	// WithStartState puts the state in effect at start first (total counts it).
	WithStartState
	// SignificantOnly keeps rows whose state changed, dropping
	// attribute-only updates (last_changed != last_updated), except for the
	// domains whose attributes are their news (significantDomains).
	SignificantOnly
)

// significantDomains are HA's SIGNIFICANT_DOMAINS (recorder/history/const.py): their
// attribute-only updates (a thermostat's target or current temperature) count as significant
// changes, so HA's history keeps them even with significant_changes_only.
var significantDomains = map[string]bool{"climate": true, "device_tracker": true, "humidifier": true, "thermostat": true, "water_heater": true}

var entityIDPattern = regexp.MustCompile(`^[a-z0-9_]+\.[a-z0-9_]+$`)

// StateHistory pages through one entity's states with start <= last_updated
// < end, oldest first, and returns the page and the total. It runs on HA's
// (metadata_id, last_updated_ts) index like HA's own history query;
// last_changed is COALESCE(last_changed_ts, last_updated_ts) as HA stores
// NULL when the two are equal. limit 0 means DefaultLimit; more than
// Options.MaxRows is capped.
func (db *DB) StateHistory(ctx context.Context, entityID string, start, end time.Time, limit, offset int, opts ...HistoryOption) ([]StateRow, int, error) {
	limit, err := db.checkPage(limit, offset)
	if err != nil {
		return nil, 0, err
	}
	if !entityIDPattern.MatchString(entityID) {
		return nil, 0, fmt.Errorf("entity_id: %q is not an entity id; use domain.object_id in lowercase, e.g. sensor.kitchen_temperature", entityID)
	}
	if err := checkRange(start, end); err != nil {
		return nil, 0, err
	}
	var attrs, startState, significant bool
	for _, o := range opts {
		switch o {
		case WithAttributes:
			attrs = true
		case WithStartState:
			startState = true
		case SignificantOnly:
			domain, _, _ := strings.Cut(entityID, ".")
			significant = !significantDomains[domain]
		default:
			return nil, 0, fmt.Errorf("history option %d is unknown", o)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, db.opts.StatementTimeout)
	defer cancel()
	q := historySQL(attrs, significant)
	from, to := ts(start), ts(end)
	// One statement resolves the entity and counts its rows in range.
	var meta int64
	var total int
	err = db.queryRow(ctx, q.count, from, to, entityID).Scan(&meta, &total)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("entity_id %s: %w in the recorder (states_meta); check the spelling, or the recorder may exclude it", entityID, ErrNotFound)
	}
	if err != nil {
		return nil, 0, db.runError(ctx, err)
	}

	var out []StateRow
	var first *StateRow
	if startState {
		rows, err := db.states(ctx, entityID, q.before, meta, from)
		if err != nil {
			return nil, 0, err
		}
		if len(rows) == 1 {
			first = &rows[0]
			first.BeforeStart = true
		}
	}
	skip := offset
	if first != nil {
		total++
		if offset == 0 {
			out = append(out, *first)
			limit--
		} else {
			skip--
		}
	}
	if limit > 0 && skip < total {
		rows, err := db.states(ctx, entityID, q.page, meta, from, to, limit, skip)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, rows...)
	}
	if out == nil {
		out = []StateRow{}
	}
	return out, total, nil
}

// historyQueries are StateHistory's statements; every one is answered from
// the (metadata_id, last_updated_ts) index, whose entries are ordered by
// rowid too, so the ORDER BY needs no sort.
type historyQueries struct{ before, count, page string }

func historySQL(attrs, significant bool) historyQueries {
	cols := "s.state_id, s.state, COALESCE(s.last_changed_ts, s.last_updated_ts), s.last_updated_ts, s.attributes_id, "
	join := ""
	if attrs {
		cols += "a.shared_attrs"
		join = " LEFT JOIN state_attributes a ON a.attributes_id = s.attributes_id"
	} else {
		cols += "NULL"
	}
	where := " WHERE s.metadata_id = ? AND s.last_updated_ts >= ? AND s.last_updated_ts < ?"
	if significant {
		where += " AND (s.last_changed_ts IS NULL OR s.last_changed_ts = s.last_updated_ts)"
	}
	return historyQueries{
		// The newest row before start, found backwards on the same index.
		before: "SELECT " + cols + " FROM states s" + join +
			" WHERE s.metadata_id = ? AND s.last_updated_ts < ? ORDER BY s.last_updated_ts DESC LIMIT 1",
		count: "SELECT m.metadata_id, (SELECT COUNT(*) FROM states s" + strings.Replace(where, "s.metadata_id = ?", "s.metadata_id = m.metadata_id", 1) +
			") FROM states_meta m WHERE m.entity_id = ?",
		page: "SELECT " + cols + " FROM states s" + join + where + " ORDER BY s.last_updated_ts, s.state_id LIMIT ? OFFSET ?",
	}
}

func (db *DB) states(ctx context.Context, entityID, q string, args ...any) ([]StateRow, error) {
	rows, err := db.queryRows(ctx, q, args...)
	if err != nil {
		return nil, db.runError(ctx, err)
	}
	defer rows.Close()
	var out []StateRow
	// HA deduplicates attributes, so most rows share a few: check and copy
	// each attributes row once per call.
	seen := map[int64]json.RawMessage{}
	for rows.Next() {
		var r StateRow
		var state, attrs sql.NullString
		var attrID sql.NullInt64
		var lc, lu float64
		if err := rows.Scan(&r.StateID, &state, &lc, &lu, &attrID, &attrs); err != nil {
			return nil, db.runError(ctx, err)
		}
		r.EntityID, r.State = entityID, state.String
		r.LastChanged, r.LastUpdated = fromTS(lc), fromTS(lu)
		if attrs.Valid {
			raw, ok := seen[attrID.Int64]
			if !ok {
				raw = json.RawMessage(attrs.String)
				if !json.Valid(raw) {
					raw, _ = json.Marshal(attrs.String) // keep damaged JSON readable as text
				}
				seen[attrID.Int64] = raw
			}
			r.Attributes = raw
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, db.runError(ctx, err)
	}
	return out, nil
}

func (db *DB) checkPage(limit, offset int) (int, error) {
	switch {
	case limit < 0:
		return 0, fmt.Errorf("limit: %d is negative; use 1..%d", limit, db.opts.MaxRows)
	case offset < 0:
		return 0, fmt.Errorf("offset: %d is negative; use 0, or next_offset from the previous page", offset)
	case limit == 0:
		return min(DefaultLimit, db.opts.MaxRows), nil
	}
	return min(limit, db.opts.MaxRows), nil
}

func checkRange(start, end time.Time) error {
	switch {
	case start.IsZero():
		return errors.New("start: must be set, e.g. 2026-03-04T00:00:00Z")
	case end.IsZero():
		return errors.New("end: must be set, e.g. 2026-03-05T00:00:00Z")
	case !end.After(start):
		return fmt.Errorf("end: %s must be after start %s", end.UTC().Format(time.RFC3339), start.UTC().Format(time.RFC3339))
	}
	return nil
}

// ts is HA's timestamp column value: Unix seconds as a float, microsecond
// precision.
func ts(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

func fromTS(v float64) time.Time { return time.UnixMicro(int64(math.Round(v * 1e6))).UTC() }
