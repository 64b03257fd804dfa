package recorder

import (
	"context"
	"database/sql"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func newDB(t *testing.T) *DB {
	t.Helper()
	db, err := Create(t.TempDir() + "/home-assistant_v2.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustRecord(t *testing.T, db *DB, states ...State) {
	t.Helper()
	for _, s := range states {
		if err := db.RecordState(context.Background(), s); err != nil {
			t.Fatalf("RecordState(%s=%q): %v", s.EntityID, s.State, err)
		}
	}
}

func TestFNV1a32KnownVectors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"", 0x811c9dc5}, {"a", 0xe40c292c}, {"foobar", 0xbf9cf968}} {
		if got := fnv1a32([]byte(c.in)); got != c.want {
			t.Errorf("fnv1a32(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

func TestULIDRoundTrip(t *testing.T) {
	const id = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	b, err := parseULID(id)
	if err != nil {
		t.Fatal(err)
	}
	if got := ulidString(b); got != id {
		t.Errorf("round trip = %s, want %s", got, id)
	}
	// The first 6 bytes are the millisecond timestamp.
	at := time.UnixMilli(1469918176385)
	if got := ulidString(ulidBytes(at, [10]byte{}))[:10]; got != "01ARYZ6S41" {
		t.Errorf("timestamp part = %s, want 01ARYZ6S41", got)
	}
}

func TestRecordStateRows(t *testing.T) {
	db := newDB(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	attrs := map[string]any{"unit_of_measurement": "°C", "friendly_name": "Kitchen <temp>", "supported_features": 3, "attribution": "x"}
	ctxID := "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	mustRecord(t, db,
		State{EntityID: "sensor.kitchen", State: "20.5", Attributes: attrs, LastUpdated: t0, ContextID: ctxID},
		State{EntityID: "sensor.kitchen", State: "21.0", Attributes: attrs, LastUpdated: t0.Add(time.Minute)},
		State{EntityID: "sensor.kitchen", State: "21.0", Attributes: map[string]any{"friendly_name": "Kitchen"}, LastChanged: t0.Add(time.Minute), LastUpdated: t0.Add(2 * time.Minute)},
		State{EntityID: "sensor.other", State: "1", Attributes: attrs, LastUpdated: t0.Add(3 * time.Minute)},
	)
	raw := rawDB(t, db.Path())

	if n := scalar[int](t, raw, "SELECT count(*) FROM states_meta"); n != 2 {
		t.Errorf("states_meta rows = %d, want 2", n)
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM state_attributes"); n != 2 {
		t.Errorf("state_attributes rows = %d, want 2 (deduplicated)", n)
	}
	wantJSON := `{"friendly_name":"Kitchen <temp>","unit_of_measurement":"°C"}`
	var text string
	var hash int64
	if err := raw.QueryRow("SELECT shared_attrs, hash FROM state_attributes ORDER BY attributes_id LIMIT 1").Scan(&text, &hash); err != nil {
		t.Fatal(err)
	}
	if text != wantJSON {
		t.Errorf("shared_attrs = %s, want %s (excluded attrs dropped, no HTML escaping)", text, wantJSON)
	}
	if hash != fnv1a32([]byte(wantJSON)) {
		t.Errorf("hash = %d, want fnv1a32 of shared_attrs", hash)
	}

	rows, err := raw.Query(`SELECT s.state_id, s.state, s.last_updated_ts, s.last_changed_ts, s.old_state_id, s.attributes_id,
		s.origin_idx, s.context_id_bin, s.entity_id, s.attributes, s.last_updated, s.context_id, m.entity_id
		FROM states s JOIN states_meta m USING (metadata_id) ORDER BY state_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		id     int64
		state  string
		lu     float64
		lc     sql.NullFloat64
		old    sql.NullInt64
		attr   int64
		origin int
		ctx    []byte
		legacy [4]sql.NullString
		entity string
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.state, &r.lu, &r.lc, &r.old, &r.attr, &r.origin, &r.ctx, &r.legacy[0], &r.legacy[1], &r.legacy[2], &r.legacy[3], &r.entity); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 4 {
		t.Fatalf("states rows = %d, want 4", len(got))
	}
	if got[0].lu != 1767323045.123456 {
		t.Errorf("last_updated_ts = %f, want 1767323045.123456", got[0].lu)
	}
	if got[0].lc.Valid || got[1].lc.Valid {
		t.Error("last_changed_ts must be NULL when it equals last_updated_ts")
	}
	if !got[2].lc.Valid || got[2].lc.Float64 != got[1].lu {
		t.Errorf("attribute-only change: last_changed_ts = %v, want %f", got[2].lc, got[1].lu)
	}
	if got[0].old.Valid || got[1].old.Int64 != got[0].id || got[2].old.Int64 != got[1].id || got[3].old.Valid {
		t.Errorf("old_state_id chain wrong: %v %v %v %v", got[0].old, got[1].old, got[2].old, got[3].old)
	}
	if got[0].attr != got[1].attr || got[0].attr != got[3].attr || got[2].attr == got[0].attr {
		t.Errorf("attributes_id sharing wrong: %d %d %d %d", got[0].attr, got[1].attr, got[2].attr, got[3].attr)
	}
	if ulidString(got[0].ctx) != ctxID {
		t.Errorf("context_id_bin = %s, want %s", ulidString(got[0].ctx), ctxID)
	}
	if len(got[1].ctx) != 16 {
		t.Errorf("generated context_id_bin has %d bytes, want 16", len(got[1].ctx))
	}
	for _, r := range got {
		if r.origin != 0 {
			t.Errorf("origin_idx = %d, want 0 (local)", r.origin)
		}
		for _, l := range r.legacy {
			if l.Valid {
				t.Errorf("legacy column holds %q, want NULL", l.String)
			}
		}
	}
}

func TestRecordStateRemovalRestartsChain(t *testing.T) {
	db := newDB(t)
	t0 := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	mustRecord(t, db,
		State{EntityID: "light.a", State: "on", Attributes: map[string]any{"brightness": 10}, LastUpdated: t0},
		State{EntityID: "light.a", State: "", LastUpdated: t0.Add(time.Second)},
		State{EntityID: "light.a", State: "off", LastUpdated: t0.Add(2 * time.Second)},
	)
	raw := rawDB(t, db.Path())
	if s := scalar[string](t, raw, "SELECT sa.shared_attrs FROM states s JOIN state_attributes sa USING (attributes_id) WHERE s.state = ''"); s != "{}" {
		t.Errorf("removed state attributes = %s, want {}", s)
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM states WHERE state = '' AND old_state_id IS NOT NULL"); n != 1 {
		t.Error("removal row must link to the last state")
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM states WHERE state = 'off' AND old_state_id IS NULL"); n != 1 {
		t.Error("state after removal must start a new chain (old_state_id NULL)")
	}
}

func TestRecordStateReopenStartsNewChain(t *testing.T) {
	db := newDB(t)
	t0 := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	mustRecord(t, db, State{EntityID: "switch.a", State: "on", LastUpdated: t0})
	db.Close()
	db2, err := Open(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	mustRecord(t, db2, State{EntityID: "switch.a", State: "off", LastUpdated: t0.Add(time.Second)},
		State{EntityID: "switch.a", State: "on", LastUpdated: t0.Add(2 * time.Second)})
	raw := rawDB(t, db.Path())
	if n := scalar[int](t, raw, "SELECT count(*) FROM states_meta"); n != 1 {
		t.Errorf("states_meta rows after reopen = %d, want 1 (found, not duplicated)", n)
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM states WHERE old_state_id IS NULL"); n != 2 {
		t.Errorf("rows without old_state_id = %d, want 2 (first ever, first after restart)", n)
	}
}

func TestRecordStateOversizedAttributes(t *testing.T) {
	db := newDB(t)
	mustRecord(t, db, State{EntityID: "sensor.big", State: "1", Attributes: map[string]any{"blob": strings.Repeat("x", 17000)}, LastUpdated: time.Unix(1e9, 0)})
	if s := scalar[string](t, rawDB(t, db.Path()), "SELECT shared_attrs FROM state_attributes"); s != "{}" {
		t.Errorf("oversized attributes stored as %.30s..., want {}", s)
	}
}

func TestRecordStateRejectsBadInput(t *testing.T) {
	db := newDB(t)
	now := time.Unix(1e9, 0)
	for _, c := range []struct {
		name string
		s    State
		want string
	}{
		{"bad entity", State{EntityID: "Sensor.X", State: "1", LastUpdated: now}, "entity_id"},
		{"no dot", State{EntityID: "sensor", State: "1", LastUpdated: now}, "entity_id"},
		{"long state", State{EntityID: "sensor.x", State: strings.Repeat("a", 256), LastUpdated: now}, "at most 255"},
		{"no time", State{EntityID: "sensor.x", State: "1"}, "last_updated"},
		{"changed after updated", State{EntityID: "sensor.x", State: "1", LastUpdated: now, LastChanged: now.Add(time.Second)}, "last_changed"},
		{"bad context", State{EntityID: "sensor.x", State: "1", LastUpdated: now, ContextID: "nope"}, "context id"},
		{"unencodable attrs", State{EntityID: "sensor.x", State: "1", LastUpdated: now, Attributes: map[string]any{"f": func() {}}}, "attributes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := db.RecordState(context.Background(), c.s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want mention of %q", err, c.want)
			}
		})
	}
	if n := scalar[int](t, rawDB(t, db.Path()), "SELECT count(*) FROM states"); n != 0 {
		t.Errorf("rejected states wrote %d rows", n)
	}
}

func TestRecordEvent(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	data := map[string]any{"name": "Hall", "entity_id": "automation.hall"}
	for i, e := range []Event{
		{EventType: "automation_triggered", Data: data, TimeFired: t0},
		{EventType: "automation_triggered", Data: data, TimeFired: t0.Add(time.Second), Origin: "REMOTE"},
		{EventType: "custom_event", TimeFired: t0.Add(2 * time.Second), ContextID: "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
	} {
		if err := db.RecordEvent(ctx, e); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	raw := rawDB(t, db.Path())
	if n := scalar[int](t, raw, "SELECT count(*) FROM event_types"); n != 2 {
		t.Errorf("event_types = %d, want 2", n)
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM event_data"); n != 2 {
		t.Errorf("event_data = %d, want 2 (one shared, one {})", n)
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM events WHERE origin_idx = 1"); n != 1 {
		t.Errorf("remote events = %d, want 1", n)
	}
	if s := scalar[string](t, raw, "SELECT d.shared_data FROM events e JOIN event_data d USING (data_id) JOIN event_types t USING (event_type_id) WHERE t.event_type = 'custom_event'"); s != "{}" {
		t.Errorf("event without data stored %s, want {}", s)
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM events WHERE event_type IS NULL AND event_data IS NULL AND origin IS NULL AND time_fired IS NULL AND context_id IS NULL AND length(context_id_bin) = 16"); n != 3 {
		t.Errorf("events with NULL legacy columns and 16-byte context = %d, want 3", n)
	}

	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{TimeFired: t0}, "event_type"},
		{Event{EventType: "state_changed", TimeFired: t0}, "RecordState"},
		{Event{EventType: strings.Repeat("e", 65), TimeFired: t0}, "at most 64"},
		{Event{EventType: "x"}, "time_fired"},
		{Event{EventType: "x", TimeFired: t0, Origin: "local"}, "origin"},
		{Event{EventType: "x", TimeFired: t0, ContextID: "bad"}, "context id"},
	} {
		if err := db.RecordEvent(ctx, c.e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RecordEvent(%+v) = %v, want mention of %q", c.e, err, c.want)
		}
	}
}

// TestWritesWhileAnotherProcessReads runs the sqlite3 CLI against the file
// while RecordState commits, as hamcp's database tools will do against HA.
func TestWritesWhileAnotherProcessReads(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 CLI not installed")
	}
	db := newDB(t)
	t0 := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	const n = 400
	var wg sync.WaitGroup
	wg.Add(1)
	errs := make(chan error, 1)
	go func() {
		defer wg.Done()
		for i := range n {
			s := State{EntityID: "sensor.load", State: strconv.Itoa(i), Attributes: map[string]any{"unit_of_measurement": "W"}, LastUpdated: t0.Add(time.Duration(i) * time.Second)}
			if err := db.RecordState(context.Background(), s); err != nil {
				errs <- err
				return
			}
		}
	}()
	reads := 0
	for done := false; !done; {
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		out, err := exec.Command(cli, "-readonly", "-cmd", ".timeout 5000", db.Path(), "SELECT count(*) FROM states;").CombinedOutput()
		if err != nil {
			t.Fatalf("concurrent sqlite3 read: %v: %s", err, out)
		}
		reads++
		done = strings.TrimSpace(string(out)) == strconv.Itoa(n)
	}
	wg.Wait()
	if reads < 2 {
		t.Logf("only %d reads overlapped the writer", reads)
	}
}
