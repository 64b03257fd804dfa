package recorder

import (
	"fmt"
	"strings"
)

// The DDL below is what SQLAlchemy emits on SQLite for HA's db_schema.py
// models (schema 50): legacy columns compile to CHAR(0), timestamps to FLOAT,
// context ids to BLOB(16), and every integer primary key is a rowid alias.

type column struct{ name, typ string }

type foreignKey struct{ col, ref string }

type index struct {
	name, table string
	cols        []string
	unique      bool
}

type table struct {
	name string
	cols []column
	pk   string
	fks  []foreignKey
}

const (
	unused   = "CHAR(0)"
	tsType   = "FLOAT"
	ctxType  = "BLOB(16)"
	intType  = "INTEGER"
	pkType   = "INTEGER NOT NULL"
	smallint = "SMALLINT"
)

var contextCols = []column{{"context_id_bin", ctxType}, {"context_user_id_bin", ctxType}, {"context_parent_id_bin", ctxType}}

func statisticsTable(name string) table {
	return table{name: name, pk: "id", cols: []column{
		{"id", pkType}, {"created", unused}, {"created_ts", tsType}, {"metadata_id", intType},
		{"start", unused}, {"start_ts", tsType}, {"mean", tsType}, {"mean_weight", tsType},
		{"min", tsType}, {"max", tsType}, {"last_reset", unused}, {"last_reset_ts", tsType},
		{"state", tsType}, {"sum", tsType},
	}, fks: []foreignKey{{"metadata_id", "statistics_meta (id) ON DELETE CASCADE"}}}
}

// tables is in dependency order, the order create_all uses.
var tables = []table{
	{name: "event_data", pk: "data_id", cols: []column{{"data_id", pkType}, {"hash", "BIGINT"}, {"shared_data", "TEXT"}}},
	{name: "event_types", pk: "event_type_id", cols: []column{{"event_type_id", pkType}, {"event_type", "VARCHAR(64)"}}},
	{name: "state_attributes", pk: "attributes_id", cols: []column{{"attributes_id", pkType}, {"hash", "BIGINT"}, {"shared_attrs", "TEXT"}}},
	{name: "states_meta", pk: "metadata_id", cols: []column{{"metadata_id", pkType}, {"entity_id", "VARCHAR(255)"}}},
	{name: "statistics_meta", pk: "id", cols: []column{
		{"id", pkType}, {"statistic_id", "VARCHAR(255)"}, {"source", "VARCHAR(32)"},
		{"unit_of_measurement", "VARCHAR(255)"}, {"unit_class", "VARCHAR(255)"}, {"has_mean", "BOOLEAN"},
		{"has_sum", "BOOLEAN"}, {"name", "VARCHAR(255)"}, {"mean_type", "SMALLINT NOT NULL"},
	}},
	{name: "recorder_runs", pk: "run_id", cols: []column{
		{"run_id", pkType}, {"start", "DATETIME NOT NULL"}, {`"end"`, "DATETIME"},
		{"closed_incorrect", "BOOLEAN NOT NULL"}, {"created", "DATETIME NOT NULL"},
	}},
	{name: "migration_changes", pk: "migration_id", cols: []column{{"migration_id", "VARCHAR(255) NOT NULL"}, {"version", "SMALLINT NOT NULL"}}},
	{name: "schema_changes", pk: "change_id", cols: []column{{"change_id", pkType}, {"schema_version", intType}, {"changed", "DATETIME NOT NULL"}}},
	{name: "statistics_runs", pk: "run_id", cols: []column{{"run_id", pkType}, {"start", "DATETIME NOT NULL"}}},
	{name: "events", pk: "event_id", cols: append([]column{
		{"event_id", pkType}, {"event_type", unused}, {"event_data", unused}, {"origin", unused},
		{"origin_idx", smallint}, {"time_fired", unused}, {"time_fired_ts", tsType},
		{"context_id", unused}, {"context_user_id", unused}, {"context_parent_id", unused},
		{"data_id", intType}}, append(contextCols[:3:3], column{"event_type_id", intType})...),
		fks: []foreignKey{{"data_id", "event_data (data_id)"}, {"event_type_id", "event_types (event_type_id)"}}},
	{name: "states", pk: "state_id", cols: append([]column{
		{"state_id", pkType}, {"entity_id", unused}, {"state", "VARCHAR(255)"}, {"attributes", unused},
		{"event_id", smallint}, {"last_changed", unused}, {"last_changed_ts", tsType},
		{"last_reported_ts", tsType}, {"last_updated", unused}, {"last_updated_ts", tsType},
		{"old_state_id", intType}, {"attributes_id", intType}, {"context_id", unused},
		{"context_user_id", unused}, {"context_parent_id", unused}, {"origin_idx", smallint}},
		append(contextCols[:3:3], column{"metadata_id", intType})...),
		fks: []foreignKey{
			{"old_state_id", "states (state_id)"},
			{"attributes_id", "state_attributes (attributes_id)"},
			{"metadata_id", "states_meta (metadata_id)"},
		}},
	statisticsTable("statistics"),
	statisticsTable("statistics_short_term"),
}

var indexes = []index{
	{"ix_event_data_hash", "event_data", []string{"hash"}, false},
	{"ix_event_types_event_type", "event_types", []string{"event_type"}, true},
	{"ix_state_attributes_hash", "state_attributes", []string{"hash"}, false},
	{"ix_states_meta_entity_id", "states_meta", []string{"entity_id"}, true},
	{"ix_statistics_meta_statistic_id", "statistics_meta", []string{"statistic_id"}, true},
	{"ix_recorder_runs_start_end", "recorder_runs", []string{"start", `"end"`}, false},
	{"ix_statistics_runs_start", "statistics_runs", []string{"start"}, false},
	{"ix_events_event_type_id_time_fired_ts", "events", []string{"event_type_id", "time_fired_ts"}, false},
	{"ix_events_context_id_bin", "events", []string{"context_id_bin"}, false},
	{"ix_events_time_fired_ts", "events", []string{"time_fired_ts"}, false},
	{"ix_events_data_id", "events", []string{"data_id"}, false},
	{"ix_states_metadata_id_last_updated_ts", "states", []string{"metadata_id", "last_updated_ts"}, false},
	{"ix_states_context_id_bin", "states", []string{"context_id_bin"}, false},
	{"ix_states_last_updated_ts", "states", []string{"last_updated_ts"}, false},
	{"ix_states_old_state_id", "states", []string{"old_state_id"}, false},
	{"ix_states_attributes_id", "states", []string{"attributes_id"}, false},
	{"ix_statistics_statistic_id_start_ts", "statistics", []string{"metadata_id", "start_ts"}, true},
	{"ix_statistics_start_ts", "statistics", []string{"start_ts"}, false},
	{"ix_statistics_short_term_statistic_id_start_ts", "statistics_short_term", []string{"metadata_id", "start_ts"}, true},
	{"ix_statistics_short_term_start_ts", "statistics_short_term", []string{"start_ts"}, false},
}

// migrationsDone are the data migrations a fresh HA database marks complete
// in migration_changes (id → version), so HA never tries to run them.
var migrationsDone = []struct {
	id      string
	version int
}{
	{"state_context_id_as_binary", 2},
	{"event_context_id_as_binary", 2},
	{"event_type_id_migration", 1},
	{"entity_id_migration", 1},
	{"event_id_post_migration", 2},
	{"entity_id_post_migration", 1},
}

// ddl renders the CREATE TABLE text in SQLAlchemy's layout, which is what
// sqlite_master of a real HA database holds.
func (t table) ddl() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", t.name)
	for _, c := range t.cols {
		fmt.Fprintf(&b, "\t%s %s, \n", c.name, c.typ)
	}
	fmt.Fprintf(&b, "\tPRIMARY KEY (%s)", t.pk)
	for _, fk := range t.fks {
		fmt.Fprintf(&b, ", \n\tFOREIGN KEY(%s) REFERENCES %s", fk.col, fk.ref)
	}
	b.WriteString("\n)")
	return b.String()
}

func (ix index) ddl() string {
	kind := "INDEX"
	if ix.unique {
		kind = "UNIQUE INDEX"
	}
	return fmt.Sprintf("CREATE %s %s ON %s (%s)", kind, ix.name, ix.table, strings.Join(ix.cols, ", "))
}

func tableDDL() []string {
	out := make([]string, 0, len(tables))
	for _, t := range tables {
		out = append(out, t.ddl())
	}
	return out
}

func indexDDL() []string {
	out := make([]string, 0, len(indexes))
	for _, ix := range indexes {
		out = append(out, ix.ddl())
	}
	return out
}
