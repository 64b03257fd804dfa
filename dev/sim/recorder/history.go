package recorder

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// significantDomains return attribute-only changes even when only significant
// changes are asked for; needAttributeDomains keep full rows under
// minimal_response (recorder/history/const.py).
var (
	significantDomains   = map[string]bool{"climate": true, "device_tracker": true, "humidifier": true, "thermostat": true, "water_heater": true}
	needAttributeDomains = map[string]bool{"climate": true, "humidifier": true, "input_datetime": true, "thermostat": true, "water_heater": true}
)

func (o HistoryOptions) validate() error {
	if len(o.EntityIDs) == 0 {
		return errors.New("entity_ids: at least one entity id is required, e.g. [\"sensor.kitchen_temperature\"]")
	}
	for _, id := range o.EntityIDs {
		if !validEntityID(id) {
			return fmt.Errorf("entity_ids: %q is not a valid entity id (domain.object_id, lowercase), e.g. sensor.kitchen_temperature", id)
		}
	}
	if o.Start.IsZero() {
		return errors.New("start: must be set")
	}
	if !o.End.IsZero() && !o.End.After(o.Start) {
		return fmt.Errorf("end: %s must be after start %s", o.End.Format(time.RFC3339), o.Start.Format(time.RFC3339))
	}
	return nil
}

// History answers like HA's get_significant_states (history/modern.py):
//   - a start-time row (newest row before Start, timestamps set to Start)
//     when IncludeStartState;
//   - then rows with Start < last_updated < End (End zero: no bound), in time
//     order; with SignificantChangesOnly only rows whose state changed, except
//     for SIGNIFICANT_DOMAINS;
//   - when SignificantChangesOnly, LastChanged equals LastUpdated (HA does not
//     select last_changed_ts in that mode);
//   - MinimalResponse: the first row full, later rows only when the state
//     differs from the previous one, with nil Attributes (NEED_ATTRIBUTE_DOMAINS
//     excepted);
//   - NoAttributes: full rows carry an empty, non-nil map.
//
// Entities unknown to states_meta or without rows are absent from the map.
func (db *DB) History(ctx context.Context, o HistoryOptions) (map[string][]HistoryRow, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("recorder: history: %w", err)
	}
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	out := map[string][]HistoryRow{}
	seen := map[string]bool{}
	for _, id := range o.EntityIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		rows, err := entityHistory(ctx, tx, id, o)
		if err != nil {
			return nil, fmt.Errorf("recorder: history of %s: %w", id, err)
		}
		if len(rows) > 0 {
			out[id] = rows
		}
	}
	return out, nil
}

type rawState struct {
	state  string
	lu, lc float64
	attrs  sql.NullString
}

func entityHistory(ctx context.Context, tx *sql.Tx, entityID string, o HistoryOptions) ([]HistoryRow, error) {
	var metaID int64
	err := tx.QueryRowContext(ctx, "SELECT metadata_id FROM states_meta WHERE entity_id = ?", entityID).Scan(&metaID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	start := toTS(o.Start)
	var raws []rawState
	if o.IncludeStartState {
		var r rawState
		err := tx.QueryRowContext(ctx, `SELECT s.state, sa.shared_attrs FROM states s
			LEFT JOIN state_attributes sa ON s.attributes_id = sa.attributes_id
			WHERE s.metadata_id = ? AND s.last_updated_ts < ?
			ORDER BY s.last_updated_ts DESC LIMIT 1`, metaID, start).Scan(&r.state, &r.attrs)
		switch {
		case err == nil:
			r.lu, r.lc = start, start
			raws = append(raws, r)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
	}
	q := `SELECT s.state, s.last_updated_ts, COALESCE(s.last_changed_ts, s.last_updated_ts), sa.shared_attrs
		FROM states s LEFT JOIN state_attributes sa ON s.attributes_id = sa.attributes_id
		WHERE s.metadata_id = ? AND s.last_updated_ts > ?`
	args := []any{metaID, start}
	if !o.End.IsZero() {
		q += " AND s.last_updated_ts < ?"
		args = append(args, toTS(o.End))
	}
	domain := domainOf(entityID)
	if o.SignificantChangesOnly && !significantDomains[domain] {
		q += " AND (s.last_changed_ts = s.last_updated_ts OR s.last_changed_ts IS NULL)"
	}
	q += " ORDER BY s.last_updated_ts"
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r rawState
		var state sql.NullString
		if err := rows.Scan(&state, &r.lu, &r.lc, &r.attrs); err != nil {
			return nil, err
		}
		r.state = state.String
		if o.SignificantChangesOnly {
			r.lc = r.lu
		}
		raws = append(raws, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return shapeHistory(entityID, raws, o)
}

// shapeHistory applies minimal_response / no_attributes to the raw rows.
func shapeHistory(entityID string, raws []rawState, o HistoryOptions) ([]HistoryRow, error) {
	minimal := o.MinimalResponse && !needAttributeDomains[domainOf(entityID)]
	cache := map[string]map[string]any{}
	out := make([]HistoryRow, 0, len(raws))
	prev := ""
	for i, r := range raws {
		row := HistoryRow{EntityID: entityID, State: r.state, LastUpdated: fromTS(r.lu), LastChanged: fromTS(r.lc)}
		if minimal && i > 0 {
			if r.state == prev {
				continue
			}
			row.LastChanged = row.LastUpdated // HA reports last_updated here
			prev = r.state
			out = append(out, row)
			continue
		}
		prev = r.state
		if o.NoAttributes {
			row.Attributes = map[string]any{}
		} else {
			attrs, err := decodeAttrs(cache, r.attrs)
			if err != nil {
				return nil, err
			}
			row.Attributes = attrs
		}
		out = append(out, row)
	}
	return out, nil
}

// decodeAttrs parses shared_attrs, sharing one map per distinct text the way
// HA's attr_cache does. Callers must not mutate the returned maps.
func decodeAttrs(cache map[string]map[string]any, s sql.NullString) (map[string]any, error) {
	if !s.Valid || s.String == "" {
		return map[string]any{}, nil
	}
	if m, ok := cache[s.String]; ok {
		return m, nil
	}
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s.String), &m); err != nil {
		return nil, fmt.Errorf("shared_attrs %.60q: %w", s.String, err)
	}
	cache[s.String] = m
	return m, nil
}
