package recorder

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestPurge(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	now := time.Now().UTC()
	old, recent := now.Add(-5*24*time.Hour), now.Add(-time.Hour)
	mustRecord(t, db,
		State{EntityID: "light.a", State: "on", Attributes: map[string]any{"brightness": 1}, LastUpdated: old},
		State{EntityID: "light.a", State: "off", Attributes: map[string]any{"brightness": 2}, LastUpdated: old.Add(time.Minute)},
		State{EntityID: "switch.b", State: "on", Attributes: map[string]any{"only": "old"}, LastUpdated: old.Add(2 * time.Minute)},
		State{EntityID: "light.a", State: "on", Attributes: map[string]any{"brightness": 3}, LastUpdated: recent},
	)
	for _, e := range []Event{{EventType: "old_event", Data: map[string]any{"x": 1}, TimeFired: old}, {EventType: "new_event", TimeFired: recent}} {
		if err := db.RecordEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	raw := rawDB(t, db.Path())
	if _, err := db.w.Exec(`INSERT INTO statistics_meta (statistic_id, source, has_sum, mean_type) VALUES ('sensor.x', 'recorder', 0, 1)`); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range []string{"statistics", "statistics_short_term"} {
		for _, at := range []time.Time{old, recent} {
			if _, err := db.w.Exec("INSERT INTO "+tbl+" (metadata_id, start_ts, mean) VALUES (1, ?, 1.5)", toTS(at.Truncate(time.Hour))); err != nil {
				t.Fatal(err)
			}
		}
	}

	if err := db.Purge(ctx, -1, false); err == nil || !strings.Contains(err.Error(), "keep_days") {
		t.Errorf("negative keep_days: %v", err)
	}
	if err := db.Purge(ctx, 2, true); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    string
		want int
	}{
		{"SELECT count(*) FROM states", 1},
		{"SELECT count(*) FROM states WHERE old_state_id IS NOT NULL", 0},
		{"SELECT count(*) FROM state_attributes", 1},
		{"SELECT count(*) FROM events", 1},
		{"SELECT count(*) FROM event_data", 1},
		{"SELECT count(*) FROM statistics", 2},
		{"SELECT count(*) FROM statistics_short_term", 1},
		{"SELECT count(*) FROM states_meta", 2},
	} {
		if got := scalar[int](t, raw, c.q); got != c.want {
			t.Errorf("%s = %d, want %d", c.q, got, c.want)
		}
	}
	// switch.b's last state was purged: its next state must not link to it.
	mustRecord(t, db,
		State{EntityID: "switch.b", State: "off", Attributes: map[string]any{"only": "old"}, LastUpdated: now},
		State{EntityID: "light.a", State: "off", LastUpdated: now})
	if n := scalar[int](t, raw, "SELECT count(*) FROM states s JOIN states_meta m USING (metadata_id) WHERE m.entity_id = 'switch.b' AND s.old_state_id IS NULL"); n != 1 {
		t.Error("state after purge links to a purged row")
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM states s JOIN states_meta m USING (metadata_id) WHERE m.entity_id = 'light.a' AND s.old_state_id IS NOT NULL"); n != 1 {
		t.Error("surviving chain should continue after purge")
	}
	if cli, err := exec.LookPath("sqlite3"); err == nil {
		out, err := exec.Command(cli, "-readonly", db.Path(), "PRAGMA integrity_check; PRAGMA foreign_key_check;").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Errorf("after purge: %v %s", err, out)
		}
	}
}

func TestPurgeInBatches(t *testing.T) {
	saved := purgeBatch
	purgeBatch = 97 // many batches on a small database
	t.Cleanup(func() { purgeBatch = saved })
	path, _ := gen(t, GenerateOptions{Entities: smallEntities()[:3], Days: 2, Now: time.Now().UTC(), Seed: 5, Rows: 1200})
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Purge(context.Background(), 1, false); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	cutoff := toTS(time.Now().Add(-24 * time.Hour))
	if n := scalar[int](t, raw, "SELECT count(*) FROM states WHERE last_updated_ts < ?", cutoff-60); n != 0 {
		t.Errorf("%d states older than keep_days survived", n)
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM states"); n < 400 {
		t.Errorf("only %d states left; the last day should remain", n)
	}
	if n := scalar[int](t, raw, "SELECT count(*) FROM states s LEFT JOIN states o ON s.old_state_id = o.state_id WHERE s.old_state_id IS NOT NULL AND o.state_id IS NULL"); n != 0 {
		t.Errorf("%d dangling old_state_id references", n)
	}
}
