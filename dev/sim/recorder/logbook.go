package recorder

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Logbook state rows leave out continuous entities, as HA's logbook queries
// do: counter/proximity always, sensor/number/input_number when they carry a
// unit_of_measurement.
var (
	alwaysContinuous        = map[string]bool{"counter": true, "proximity": true}
	conditionallyContinuous = map[string]bool{"sensor": true, "number": true, "input_number": true}
)

// logbookEventTypes are the stored event types HA turns into logbook lines.
// call_service is only context for other lines, never a line itself.
var logbookEventTypes = []string{"logbook_entry", "automation_triggered", "script_started", "homeassistant_start", "homeassistant_stop"}

// Logbook returns what HA's logbook shows for start < time < end, in time
// order: state changes (last_changed == last_updated, with a previous state
// that differs, continuous sensors excluded) and the logbook-worthy events.
// With entityIDs only those entities' lines are returned (events matched by
// their data's entity_id; Home Assistant start/stop lines are dropped).
// End zero means no upper bound.
func (db *DB) Logbook(ctx context.Context, start, end time.Time, entityIDs []string) ([]LogbookEntry, error) {
	if start.IsZero() {
		return nil, fmt.Errorf("recorder: logbook: start: must be set")
	}
	if !end.IsZero() && !end.After(start) {
		return nil, fmt.Errorf("recorder: logbook: end %s must be after start %s", end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	for _, id := range entityIDs {
		if !validEntityID(id) {
			return nil, fmt.Errorf("recorder: logbook: entity_ids: %q is not a valid entity id, e.g. light.kitchen", id)
		}
	}
	endTS := 1e18
	if !end.IsZero() {
		endTS = toTS(end)
	}
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	states, err := logbookStates(ctx, tx, toTS(start), endTS, entityIDs)
	if err != nil {
		return nil, fmt.Errorf("recorder: logbook states: %w", err)
	}
	events, err := logbookEvents(ctx, tx, toTS(start), endTS, entityIDs)
	if err != nil {
		return nil, fmt.Errorf("recorder: logbook events: %w", err)
	}
	out := append(states, events...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].When.Before(out[j].When) })
	return out, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func logbookStates(ctx context.Context, tx *sql.Tx, start, end float64, entityIDs []string) ([]LogbookEntry, error) {
	q := `SELECT s.last_updated_ts, m.entity_id, s.state, s.context_id_bin, sa.shared_attrs
		FROM states s
		JOIN states_meta m ON s.metadata_id = m.metadata_id
		JOIN states old ON s.old_state_id = old.state_id
		LEFT JOIN state_attributes sa ON s.attributes_id = sa.attributes_id
		WHERE s.last_updated_ts > ? AND s.last_updated_ts < ?
		AND s.state IS NOT NULL AND s.state != old.state
		AND (s.last_changed_ts IS NULL OR s.last_changed_ts = s.last_updated_ts)`
	args := []any{start, end}
	if len(entityIDs) > 0 {
		q += " AND m.entity_id IN (" + placeholders(len(entityIDs)) + ")"
		for _, id := range entityIDs {
			args = append(args, id)
		}
	}
	q += " ORDER BY s.last_updated_ts"
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cache := map[string]map[string]any{}
	var out []LogbookEntry
	for rows.Next() {
		var ts float64
		var entityID, state string
		var ctxBin []byte
		var attrsText sql.NullString
		if err := rows.Scan(&ts, &entityID, &state, &ctxBin, &attrsText); err != nil {
			return nil, err
		}
		attrs, err := decodeAttrs(cache, attrsText)
		if err != nil {
			return nil, err
		}
		domain := domainOf(entityID)
		if alwaysContinuous[domain] {
			continue
		}
		if _, hasUnit := attrs["unit_of_measurement"]; hasUnit && conditionallyContinuous[domain] {
			continue
		}
		e := LogbookEntry{When: fromTS(ts), EntityID: entityID, State: state, Name: friendlyName(entityID, attrs), ContextID: ulidString(ctxBin)}
		if icon, ok := attrs["icon"].(string); ok {
			e.Icon = icon
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// friendlyName is HA's EntityNameCache fallback: the friendly_name attribute,
// else the object id with underscores as spaces.
func friendlyName(entityID string, attrs map[string]any) string {
	if n, ok := attrs["friendly_name"].(string); ok && n != "" {
		return n
	}
	return strings.ReplaceAll(entityID[strings.IndexByte(entityID, '.')+1:], "_", " ")
}

func logbookEvents(ctx context.Context, tx *sql.Tx, start, end float64, entityIDs []string) ([]LogbookEntry, error) {
	args := []any{start, end}
	for _, t := range logbookEventTypes {
		args = append(args, t)
	}
	rows, err := tx.QueryContext(ctx, `SELECT e.time_fired_ts, t.event_type, d.shared_data, e.context_id_bin
		FROM events e
		JOIN event_types t ON e.event_type_id = t.event_type_id
		LEFT JOIN event_data d ON e.data_id = d.data_id
		WHERE e.time_fired_ts > ? AND e.time_fired_ts < ?
		AND t.event_type IN (`+placeholders(len(logbookEventTypes))+`)
		ORDER BY e.time_fired_ts`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, id := range entityIDs {
		want[id] = true
	}
	var out []LogbookEntry
	for rows.Next() {
		var ts float64
		var typ string
		var dataText sql.NullString
		var ctxBin []byte
		if err := rows.Scan(&ts, &typ, &dataText, &ctxBin); err != nil {
			return nil, err
		}
		data := map[string]any{}
		if dataText.Valid && dataText.String != "" {
			if err := json.Unmarshal([]byte(dataText.String), &data); err != nil {
				return nil, fmt.Errorf("event_data of %s: %w", typ, err)
			}
		}
		e := describeEvent(typ, data)
		e.When, e.ContextID = fromTS(ts), ulidString(ctxBin)
		if len(want) > 0 && !want[e.EntityID] {
			continue
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// describeEvent renders an event the way the integration's logbook platform
// describes it (automation/logbook.py, script/logbook.py, logbook itself).
func describeEvent(typ string, data map[string]any) LogbookEntry {
	str := func(k string) string { s, _ := data[k].(string); return s }
	e := LogbookEntry{EntityID: str("entity_id"), Name: str("name")}
	switch typ {
	case "automation_triggered":
		e.Domain, e.Message, e.Source = "automation", "triggered", str("source")
		if e.Source != "" {
			e.Message += " by " + e.Source
		}
	case "script_started":
		e.Domain, e.Message = "script", "started"
	case "logbook_entry":
		e.Message, e.Domain = str("message"), str("domain")
		if e.Domain == "" && e.EntityID != "" {
			e.Domain = domainOf(e.EntityID)
		}
	case "homeassistant_start", "homeassistant_stop":
		e.Name, e.Domain, e.Message = "Home Assistant", "homeassistant", "started"
		if typ == "homeassistant_stop" {
			e.Message = "stopped"
		}
	}
	return e
}
