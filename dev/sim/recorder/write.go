package recorder

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

const (
	maxStateLen       = 255   // MAX_LENGTH_STATE_STATE
	maxEventTypeLen   = 64    // MAX_LENGTH_EVENT_EVENT_TYPE
	maxStateAttrBytes = 16384 // MAX_STATE_ATTRS_BYTES: larger attributes are stored as {}
	maxEventDataBytes = 32768 // MAX_EVENT_DATA_BYTES: larger event data is stored as {}
)

// excludedAttrs are ALL_DOMAIN_EXCLUDE_ATTRS: never written to state_attributes.
var excludedAttrs = map[string]bool{"attribution": true, "restored": true, "supported_features": true}

// sharedAttrs renders the state_attributes JSON for a state the way HA does.
func sharedAttrs(state string, attrs map[string]any) ([]byte, error) {
	if state == "" { // a removed entity is recorded with empty attributes
		return []byte("{}"), nil
	}
	kept := make(map[string]any, len(attrs))
	for k, v := range attrs {
		if !excludedAttrs[k] {
			kept[k] = v
		}
	}
	b, err := compactJSON(kept)
	if err != nil {
		return nil, fmt.Errorf("attributes: %w", err)
	}
	if len(b) > maxStateAttrBytes {
		return []byte("{}"), nil
	}
	return b, nil
}

func (s State) validate() error {
	if !validEntityID(s.EntityID) {
		return fmt.Errorf("entity_id %q: must be domain.object_id in lowercase letters, digits and underscores, e.g. sensor.kitchen_temperature", s.EntityID)
	}
	if len(s.State) > maxStateLen {
		return fmt.Errorf("state of %s: %d characters, at most %d allowed", s.EntityID, len(s.State), maxStateLen)
	}
	if s.LastUpdated.IsZero() {
		return fmt.Errorf("last_updated of %s: must be set", s.EntityID)
	}
	if !s.LastChanged.IsZero() && s.LastChanged.After(s.LastUpdated) {
		return fmt.Errorf("last_changed of %s: %s is after last_updated %s", s.EntityID, s.LastChanged.Format(time.RFC3339Nano), s.LastUpdated.Format(time.RFC3339Nano))
	}
	return nil
}

// newContextID makes a ULID at t, as HA does for every new Context.
func newContextID(t time.Time) []byte {
	var e [10]byte
	_, _ = rand.Read(e[:])
	return ulidBytes(t, e)
}

func contextOrNew(id string, t time.Time) ([]byte, error) {
	if id == "" {
		return newContextID(t), nil
	}
	return contextIDBytes(id)
}

// RecordState writes one state change like HA's recorder: a states row linked
// to states_meta, deduplicated state_attributes (fnv1a-32 hash), old_state_id
// pointing at the previous row this DB wrote for the entity, and
// last_changed_ts NULL when it equals last_updated_ts. State "" records the
// entity's removal.
func (db *DB) RecordState(ctx context.Context, s State) error {
	if err := s.validate(); err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	attrs, err := sharedAttrs(s.State, s.Attributes)
	if err != nil {
		return fmt.Errorf("recorder: %s %w", s.EntityID, err)
	}
	ctxBin, err := contextOrNew(s.ContextID, s.LastUpdated)
	if err != nil {
		return fmt.Errorf("recorder: %s: %w", s.EntityID, err)
	}
	lu := toTS(s.LastUpdated)
	var lc any // NULL when equal to last_updated, like States.from_event
	if !s.LastChanged.IsZero() && toTS(s.LastChanged) != lu {
		lc = toTS(s.LastChanged)
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recorder: begin: %w", err)
	}
	defer tx.Rollback()
	metaID, newMeta, err := getOrInsert(ctx, tx, db.metaIDs, s.EntityID,
		"SELECT metadata_id FROM states_meta WHERE entity_id = ?",
		"INSERT INTO states_meta (entity_id) VALUES (?)", s.EntityID)
	if err != nil {
		return fmt.Errorf("recorder: states_meta for %s: %w", s.EntityID, err)
	}
	attrID, newAttr, err := db.sharedRow(ctx, tx, db.attrIDs, "state_attributes", "attributes_id", "shared_attrs", attrs)
	if err != nil {
		return fmt.Errorf("recorder: state_attributes for %s: %w", s.EntityID, err)
	}
	var old any
	if id := db.lastState[metaID]; id > 0 {
		old = id
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO states (state, last_changed_ts, last_reported_ts, last_updated_ts,
		old_state_id, attributes_id, origin_idx, context_id_bin, metadata_id) VALUES (?, ?, NULL, ?, ?, ?, 0, ?, ?)`,
		s.State, lc, lu, old, attrID, ctxBin, metaID)
	if err != nil {
		return fmt.Errorf("recorder: insert state of %s: %w", s.EntityID, err)
	}
	stateID, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recorder: commit state of %s: %w", s.EntityID, err)
	}
	// Caches change only after a successful commit, so a rollback never
	// leaves them pointing at rows that do not exist.
	if newMeta {
		db.metaIDs[s.EntityID] = metaID
	}
	if newAttr {
		remember(db.attrIDs, string(attrs), attrID)
	}
	if s.State == "" {
		delete(db.lastState, metaID) // a re-added entity starts a new chain
	} else {
		db.lastState[metaID] = stateID
	}
	return nil
}

// RecordEvent writes one event into events, event_types and deduplicated
// event_data. state_changed events are refused: HA stores those as states.
func (db *DB) RecordEvent(ctx context.Context, e Event) error {
	switch {
	case e.EventType == "":
		return errors.New("recorder: event_type: must be set, e.g. automation_triggered")
	case len(e.EventType) > maxEventTypeLen:
		return fmt.Errorf("recorder: event_type %q: at most %d characters", e.EventType, maxEventTypeLen)
	case e.EventType == "state_changed":
		return errors.New("recorder: event_type state_changed is not stored in events; record it with RecordState")
	case e.TimeFired.IsZero():
		return fmt.Errorf("recorder: time_fired of %s event: must be set", e.EventType)
	}
	origin, err := originIdx(e.Origin)
	if err != nil {
		return err
	}
	data, err := compactJSON(orEmpty(e.Data))
	if err != nil {
		return fmt.Errorf("recorder: data of %s event: %w", e.EventType, err)
	}
	if len(data) > maxEventDataBytes {
		data = []byte("{}")
	}
	ctxBin, err := contextOrNew(e.ContextID, e.TimeFired)
	if err != nil {
		return fmt.Errorf("recorder: %s event: %w", e.EventType, err)
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recorder: begin: %w", err)
	}
	defer tx.Rollback()
	typeID, newType, err := getOrInsert(ctx, tx, db.eventTypes, e.EventType,
		"SELECT event_type_id FROM event_types WHERE event_type = ?",
		"INSERT INTO event_types (event_type) VALUES (?)", e.EventType)
	if err != nil {
		return fmt.Errorf("recorder: event_types for %s: %w", e.EventType, err)
	}
	dataID, newData, err := db.sharedRow(ctx, tx, db.dataIDs, "event_data", "data_id", "shared_data", data)
	if err != nil {
		return fmt.Errorf("recorder: event_data for %s: %w", e.EventType, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (origin_idx, time_fired_ts, data_id, context_id_bin, event_type_id)
		VALUES (?, ?, ?, ?, ?)`, origin, toTS(e.TimeFired), dataID, ctxBin, typeID); err != nil {
		return fmt.Errorf("recorder: insert %s event: %w", e.EventType, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recorder: commit %s event: %w", e.EventType, err)
	}
	if newType {
		db.eventTypes[e.EventType] = typeID
	}
	if newData {
		remember(db.dataIDs, string(data), dataID)
	}
	return nil
}

func originIdx(origin string) (int, error) {
	switch origin {
	case "", "LOCAL":
		return 0, nil
	case "REMOTE":
		return 1, nil
	}
	return 0, fmt.Errorf(`recorder: origin %q: must be "LOCAL" or "REMOTE"`, origin)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// getOrInsert resolves a unique name to its id through the cache, the table,
// or a new row. fresh reports whether the caller should cache after commit.
func getOrInsert(ctx context.Context, tx *sql.Tx, cache map[string]int64, key, selectQ, insertQ string, arg any) (id int64, fresh bool, err error) {
	if id, ok := cache[key]; ok {
		return id, false, nil
	}
	err = tx.QueryRowContext(ctx, selectQ, arg).Scan(&id)
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, err
	}
	res, err := tx.ExecContext(ctx, insertQ, arg)
	if err != nil {
		return 0, false, err
	}
	id, err = res.LastInsertId()
	return id, true, err
}

// sharedRow finds or inserts a deduplicated JSON row: look up by fnv1a-32
// hash, then compare the text, since different JSON can share a hash.
func (db *DB) sharedRow(ctx context.Context, tx *sql.Tx, cache map[string]int64, tbl, idCol, textCol string, text []byte) (int64, bool, error) {
	if id, ok := cache[string(text)]; ok {
		return id, false, nil
	}
	hash := fnv1a32(text)
	rows, err := tx.QueryContext(ctx, fmt.Sprintf("SELECT %s, %s FROM %s WHERE hash = ?", idCol, textCol, tbl), hash)
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var got sql.NullString
		if err := rows.Scan(&id, &got); err != nil {
			return 0, false, err
		}
		if got.String == string(text) {
			return id, true, nil
		}
	}
	if err := rows.Err(); err != nil {
		return 0, false, err
	}
	rows.Close()
	res, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (hash, %s) VALUES (?, ?)", tbl, textCol), hash, string(text))
	if err != nil {
		return 0, false, err
	}
	id, err := res.LastInsertId()
	return id, true, err
}

func remember(cache map[string]int64, key string, id int64) {
	if len(cache) >= cacheLimit {
		clear(cache)
	}
	cache[key] = id
}
