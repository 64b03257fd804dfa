package recorder

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// digest hashes every row of every table in primary-key order.
func digest(t *testing.T, path string) map[string]string {
	t.Helper()
	db := rawDB(t, path)
	out := map[string]string{}
	for tbl := range wantColumns {
		rows, err := db.Query("SELECT * FROM " + tbl + " ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		h := sha256.New()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%v\n", vals)
		}
		rows.Close()
		out[tbl] = fmt.Sprintf("%x", h.Sum(nil))
	}
	return out
}

func gen(t *testing.T, o GenerateOptions) (string, GenerateStats) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "home-assistant_v2.db")
	st, err := Generate(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	return path, st
}

func TestGenerateDeterministic(t *testing.T) {
	o := GenerateOptions{Entities: smallEntities(), Days: 1, Now: fixedNow, Seed: 99}
	a, sa := gen(t, o)
	b, sb := gen(t, o)
	if sa != sb {
		t.Errorf("stats differ: %+v vs %+v", sa, sb)
	}
	da, db := digest(t, a), digest(t, b)
	for tbl := range da {
		if da[tbl] != db[tbl] {
			t.Errorf("table %s differs between runs with the same seed", tbl)
		}
	}
	o.Seed = 100
	c, _ := gen(t, o)
	if dc := digest(t, c); dc["states"] == da["states"] || dc["events"] == da["events"] {
		t.Error("a different seed produced the same states/events")
	}
}

func TestGenerateRowsTarget(t *testing.T) {
	for _, rows := range []int64{1500, 2345} {
		path, st := gen(t, GenerateOptions{Entities: SyntheticEntities(12), Days: 1, Now: fixedNow, Seed: 1, Rows: rows})
		if st.States != rows {
			t.Errorf("Rows=%d: stats report %d states", rows, st.States)
		}
		if n := scalar[int64](t, rawDB(t, path), "SELECT count(*) FROM states"); n != rows {
			t.Errorf("Rows=%d: table holds %d states", rows, n)
		}
		if st.Bytes <= 0 || st.Statistics <= 0 || st.Events <= 0 || st.Attributes <= 0 {
			t.Errorf("stats not filled: %+v", st)
		}
	}
}

func TestGenerateRealism(t *testing.T) {
	path := sharedDB(t)
	db := rawDB(t, path)
	checks := []struct {
		name, query string
		want        int64
	}{
		{"every entity has states_meta", "SELECT count(*) FROM states_meta", int64(len(smallEntities()))},
		{"states outside the window", "SELECT count(*) FROM states WHERE last_updated_ts >= " + ftoa(toTS(fixedNow)) + " OR last_updated_ts < " + ftoa(toTS(fixedNow.AddDate(0, 0, -12))), 0},
		{"old_state_id links the previous row of the same entity", `SELECT count(*) FROM states s WHERE s.old_state_id IS NOT (
			SELECT p.state_id FROM states p WHERE p.metadata_id = s.metadata_id AND p.last_updated_ts < s.last_updated_ts
			ORDER BY p.last_updated_ts DESC LIMIT 1)`, 0},
		{"state_ids grow with time", "SELECT count(*) FROM states a JOIN states b ON b.state_id = a.state_id + 1 WHERE b.last_updated_ts < a.last_updated_ts", 0},
		{"energy never decreases", `SELECT count(*) FROM states s JOIN states o ON s.old_state_id = o.state_id JOIN states_meta m ON s.metadata_id = m.metadata_id
			WHERE m.entity_id = 'sensor.house_energy' AND CAST(s.state AS REAL) <= CAST(o.state AS REAL)`, 0},
		{"binary sensors toggle", `SELECT count(*) FROM states s JOIN states o ON s.old_state_id = o.state_id JOIN states_meta m ON s.metadata_id = m.metadata_id
			WHERE m.entity_id = 'binary_sensor.hall_motion' AND s.state = o.state`, 0},
		{"temperature stays in range", `SELECT count(*) FROM states s JOIN states_meta m ON s.metadata_id = m.metadata_id
			WHERE m.entity_id = 'sensor.kitchen_temperature' AND (CAST(s.state AS REAL) < 17 OR CAST(s.state AS REAL) > 25)`, 0},
		{"last_changed_ts is NULL or earlier", "SELECT count(*) FROM states WHERE last_changed_ts IS NOT NULL AND last_changed_ts >= last_updated_ts", 0},
		{"hash matches shared_attrs", "SELECT count(*) FROM state_attributes WHERE hash IS NULL OR shared_attrs IS NULL", 0},
		{"legacy columns NULL", "SELECT count(*) FROM states WHERE entity_id IS NOT NULL OR attributes IS NOT NULL OR last_updated IS NOT NULL OR context_id IS NOT NULL OR event_id IS NOT NULL", 0},
		{"16-byte contexts", "SELECT count(*) FROM states WHERE length(context_id_bin) != 16", 0},
		{"no state_changed events", "SELECT count(*) FROM event_types WHERE event_type = 'state_changed'", 0},
	}
	for _, c := range checks {
		if got := scalar[int64](t, db, c.query); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
	// Attribute-only rows exist (light dimming) and attributes are shared.
	if n := scalar[int64](t, db, "SELECT count(*) FROM states WHERE last_changed_ts IS NOT NULL"); n == 0 {
		t.Error("no attribute-only changes generated")
	}
	states, attrs := scalar[int64](t, db, "SELECT count(*) FROM states"), scalar[int64](t, db, "SELECT count(*) FROM state_attributes")
	if attrs*20 > states {
		t.Errorf("%d attribute rows for %d states: deduplication not effective", attrs, states)
	}
	rows, err := db.Query("SELECT hash, shared_attrs FROM state_attributes")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var h int64
		var s string
		if err := rows.Scan(&h, &s); err != nil {
			t.Fatal(err)
		}
		if h != fnv1a32([]byte(s)) {
			t.Errorf("hash %d != fnv1a32(%s)", h, s)
		}
	}
	for _, typ := range []string{"automation_triggered", "call_service", "logbook_entry", "script_started", "homeassistant_start"} {
		if n := scalar[int64](t, db, "SELECT count(*) FROM events JOIN event_types USING (event_type_id) WHERE event_types.event_type = ?", typ); n == 0 {
			t.Errorf("no %s events", typ)
		}
	}
	if n := scalar[int64](t, db, `SELECT count(*) FROM events a JOIN events b ON a.context_id_bin = b.context_id_bin AND a.event_id != b.event_id`); n == 0 {
		t.Error("automation_triggered and its call_service should share a context")
	}
}

func ftoa(f float64) string { return fmt.Sprintf("%f", f) }

func TestGenerateValidation(t *testing.T) {
	ok := smallEntities()
	for _, c := range []struct {
		name string
		o    GenerateOptions
		want string
	}{
		{"no entities", GenerateOptions{Days: 1}, "entities"},
		{"zero days", GenerateOptions{Entities: ok}, "days"},
		{"too many days", GenerateOptions{Entities: ok, Days: 5000}, "days"},
		{"negative rows", GenerateOptions{Entities: ok, Days: 1, Rows: -1}, "rows"},
		{"duplicate", GenerateOptions{Entities: []EntitySpec{ok[0], ok[0]}, Days: 1}, "twice"},
		{"bad id", GenerateOptions{Entities: []EntitySpec{{EntityID: "x", Kind: "static"}}, Days: 1}, "entity_id"},
		{"bad kind", GenerateOptions{Entities: []EntitySpec{{EntityID: "sensor.x", Kind: "gauge"}}, Days: 1}, "kind"},
		{"numeric range", GenerateOptions{Entities: []EntitySpec{{EntityID: "sensor.x", Kind: "numeric", Min: 5, Max: 5}}, Days: 1}, "max"},
		{"state class", GenerateOptions{Entities: []EntitySpec{{EntityID: "sensor.x", Kind: "numeric", Max: 1, StateClass: "sum"}}, Days: 1}, "state_class"},
		{"binary values", GenerateOptions{Entities: []EntitySpec{{EntityID: "lock.x", Kind: "binary", Values: []string{"a", "b", "c"}}}, Days: 1}, "exactly 2"},
		{"enum values", GenerateOptions{Entities: []EntitySpec{{EntityID: "select.x", Kind: "enum", Values: []string{"a"}}}, Days: 1}, "at least 2"},
		{"negative every", GenerateOptions{Entities: []EntitySpec{{EntityID: "select.x", Kind: "static", Every: -time.Second}}, Days: 1}, "negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			_, err := Generate(context.Background(), path, c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want mention of %q", err, c.want)
			}
		})
	}
	path := sharedDB(t)
	if _, err := Generate(context.Background(), path, GenerateOptions{Entities: ok, Days: 1}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Generate over existing file: %v", err)
	}
}

func TestGenerateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := filepath.Join(t.TempDir(), "x.db")
	if _, err := Generate(ctx, path, GenerateOptions{Entities: SyntheticEntities(10), Days: 1, Now: fixedNow}); err == nil {
		t.Fatal("cancelled Generate succeeded")
	}
	if m, _ := filepath.Glob(path + "*"); len(m) != 0 {
		t.Errorf("cancelled Generate left files: %v", m)
	}
}

func TestSyntheticEntities(t *testing.T) {
	ents := SyntheticEntities(250)
	if len(ents) != 250 {
		t.Fatalf("got %d entities", len(ents))
	}
	if err := (GenerateOptions{Entities: ents, Days: 1}).validate(); err != nil {
		t.Fatalf("synthetic entities are invalid: %v", err)
	}
	kinds := map[string]int{}
	for _, e := range ents {
		kinds[domainOf(e.EntityID)+"/"+e.StateClass]++
	}
	for _, k := range []string{"sensor/measurement", "sensor/total_increasing", "binary_sensor/", "light/"} {
		if kinds[k] == 0 {
			t.Errorf("no %s entities in %v", k, kinds)
		}
	}
	if len(SyntheticEntities(0)) != 0 {
		t.Error("SyntheticEntities(0) should be empty")
	}
}
