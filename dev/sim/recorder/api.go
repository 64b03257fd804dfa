// Package recorder emulates Home Assistant's recorder SQLite database: the
// schema HA creates (SchemaVersion), the rows it writes on state changes and
// events, and the history / logbook / statistics answers HA computes from it.
// It also generates realistic and, for benchmarks, very large databases.
//
// The simulated HA server writes through RecordState/RecordEvent (one writer,
// like HA's recorder thread) while other processes may read the WAL file.
package recorder

import "time"

// SchemaVersion is the recorder schema version this package emulates; it is
// written to schema_changes. 52 is what HA ≥ 2025.11 records (db_schema.py,
// PR #156267: 51 added statistics_meta.unit_class, then 52); the layout
// includes statistics_meta.mean_type and unit_class and statistics.mean_weight.
const SchemaVersion = 52

// State is one state change to record.
type State struct {
	EntityID    string
	State       string // "" records the entity's removal
	Attributes  map[string]any
	LastChanged time.Time // zero => LastUpdated
	LastUpdated time.Time
	ContextID   string // ULID string; empty => generated
}

// Event is one event to record.
type Event struct {
	EventType string
	Data      map[string]any
	TimeFired time.Time
	Origin    string // "LOCAL" (default) | "REMOTE"
	ContextID string // ULID string; empty => generated
}

// HistoryOptions selects a history query (see DB.History).
type HistoryOptions struct {
	EntityIDs                                                                []string
	Start, End                                                               time.Time
	IncludeStartState, SignificantChangesOnly, MinimalResponse, NoAttributes bool
}

// HistoryRow is one state in a history answer. Attributes is nil on
// minimal-response rows; maps may be shared between rows and must not be
// modified.
type HistoryRow struct {
	EntityID, State          string
	Attributes               map[string]any
	LastChanged, LastUpdated time.Time
}

// LogbookEntry is one logbook line; empty fields are to be omitted.
type LogbookEntry struct {
	When                                                            time.Time
	EntityID, Name, State, Message, Domain, Icon, Source, ContextID string
}

// StatMeta is one statistics_meta row.
type StatMeta struct {
	StatisticID, Source, Unit, Name string
	HasSum                          bool
	MeanType                        int // MeanNone, MeanArithmetic, MeanCircular
}

// StatRow is one statistics period; nil fields are NULL in the database.
type StatRow struct {
	Start                      time.Time
	Mean, Min, Max, State, Sum *float64
}

// EntitySpec describes one generated entity.
type EntitySpec struct {
	EntityID string
	Kind     string   // "numeric" | "binary" | "enum" | "static"
	Values   []string // enum/binary states (binary default off/on); static: Values[0] (default "unknown")
	Min, Max float64  // numeric range; total_increasing counts up from Min toward Max
	// Unit, DeviceClass, StateClass and FriendlyName become attributes;
	// StateClass measurement | measurement_angle | total | total_increasing
	// also makes the entity a statistic.
	Unit, DeviceClass, StateClass, FriendlyName string
	Every                                       time.Duration // mean interval between changes; zero => 5m numeric, 30m binary, 1h enum
}

// GenerateOptions controls Generate.
type GenerateOptions struct {
	Entities []EntitySpec
	Days     int       // history span ending at Now, 1..3650
	Now      time.Time // zero => time.Now()
	Rows     int64     // if > 0: this many states rows in total, spread over Entities and Days by change rate
	Seed     int64     // same options and seed => same database content
}

// GenerateStats counts what Generate wrote.
type GenerateStats struct {
	States, Attributes, Events, Statistics int64 // Statistics counts hourly + 5-minute rows
	Bytes                                  int64 // file size
}
