package recorder

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	simrec "github.com/hamcp/hamcp/dev/sim/recorder"
)

type stateSnap struct {
	state       string
	lu          float64
	attrs       sql.NullInt64
	old         sql.NullInt64
	oldIsPurged bool
}

// snapshot reads what must survive a purge: states at or after cut (with
// whether their old_state_id points at a purged row) and a digest of the
// long-term statistics.
func snapshot(t *testing.T, raw *sql.DB, cut float64) (map[int64]stateSnap, string) {
	t.Helper()
	rows, err := raw.Query(`SELECT s.state_id, s.state, s.last_updated_ts, s.attributes_id, s.old_state_id,
		COALESCE(o.last_updated_ts < ?, 0) FROM states s LEFT JOIN states o ON o.state_id = s.old_state_id
		WHERE s.last_updated_ts >= ?`, cut, cut)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]stateSnap{}
	for rows.Next() {
		var id int64
		var s stateSnap
		if err := rows.Scan(&id, &s.state, &s.lu, &s.attrs, &s.old, &s.oldIsPurged); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	digest := scalar[string](t, raw, `SELECT COUNT(*) || '/' || TOTAL(id) || '/' || TOTAL(metadata_id) || '/' || TOTAL(start_ts) || '/' ||
		TOTAL(mean) || '/' || TOTAL(min) || '/' || TOTAL(max) || '/' || TOTAL(state) || '/' || TOTAL(sum) FROM statistics`)
	return out, digest
}

func TestPurgeOffline(t *testing.T) {
	for _, tc := range []struct {
		name     string
		keepDays int
		batch    int
	}{
		{"HA batch size", 2, purgeBatch},
		{"several small batches", 1, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := copyOf(t)
			raw := rawDB(t, path)
			cutoff := fixedNow.Add(-time.Duration(tc.keepDays) * 24 * time.Hour)
			cut := ts(cutoff)
			kept, statsBefore := snapshot(t, raw, cut)
			before := map[string]int64{}
			for _, q := range []string{"states", "events", "statistics_short_term", "state_attributes", "event_data", "recorder_runs", "statistics_runs"} {
				before[q] = scalar[int64](t, raw, "SELECT COUNT(*) FROM "+q)
			}
			oldStates := scalar[int64](t, raw, "SELECT COUNT(*) FROM states WHERE last_updated_ts < ?", cut)
			oldEvents := scalar[int64](t, raw, "SELECT COUNT(*) FROM events WHERE time_fired_ts < ?", cut)
			oldShort := scalar[int64](t, raw, "SELECT COUNT(*) FROM statistics_short_term WHERE start_ts < ?", cut)
			newShort := before["statistics_short_term"] - oldShort
			maxRun := scalar[int64](t, raw, "SELECT MAX(run_id) FROM recorder_runs")
			raw.Close() // HA is "stopped": nothing else has the file open

			var calls [][2]int64
			res, err := purgeOffline(context.Background(), path, tc.keepDays, fixedNow, tc.batch, func(done, total int64) {
				calls = append(calls, [2]int64{done, total})
			})
			if err != nil {
				t.Fatal(err)
			}
			raw = rawDB(t, path)
			if res.States != oldStates || res.Events != oldEvents || res.ShortTermStatistics != oldShort {
				t.Errorf("deleted %d states, %d events, %d short-term; want %d, %d, %d", res.States, res.Events, res.ShortTermStatistics, oldStates, oldEvents, oldShort)
			}
			if oldStates == 0 && tc.keepDays > 0 {
				t.Fatal("test data has nothing to purge")
			}
			if want := (oldStates + int64(tc.batch) - 1) / int64(tc.batch); int64(res.Batches) < want {
				t.Errorf("%d batches for %d states in batches of %d", res.Batches, oldStates, tc.batch)
			}
			// Progress: monotonic, ends at the announced total.
			total := oldStates + oldEvents + oldShort
			for i, c := range calls {
				if c[1] != total || (i > 0 && c[0] < calls[i-1][0]) {
					t.Fatalf("progress %v at call %d, total want %d", c, i, total)
				}
			}
			if last := calls[len(calls)-1]; last[0] != total {
				t.Errorf("last progress %v, want done == %d", last, total)
			}
			// Everything older than the cutoff is gone, everything newer untouched.
			for q, want := range map[string]int64{
				"SELECT COUNT(*) FROM states WHERE last_updated_ts < ?":          0,
				"SELECT COUNT(*) FROM events WHERE time_fired_ts < ?":            0,
				"SELECT COUNT(*) FROM statistics_short_term WHERE start_ts < ?":  0,
				"SELECT COUNT(*) FROM statistics_short_term WHERE start_ts >= ?": newShort,
			} {
				if got := scalar[int64](t, raw, q, cut); got != want {
					t.Errorf("%s = %d, want %d", q, got, want)
				}
			}
			after, statsAfter := snapshot(t, raw, cut)
			if statsAfter != statsBefore {
				t.Errorf("long-term statistics changed: %s -> %s", statsBefore, statsAfter)
			}
			if len(after) != len(kept) {
				t.Fatalf("%d newer states left, want %d", len(after), len(kept))
			}
			for id, b := range kept {
				a, ok := after[id]
				wantOld := b.old
				if b.oldIsPurged {
					wantOld = sql.NullInt64{}
				}
				if !ok || a.state != b.state || a.lu != b.lu || a.attrs != b.attrs || a.old != wantOld {
					t.Fatalf("state %d: %+v, want %+v with old_state_id %v", id, a, b, wantOld)
				}
			}
			// Links stay valid and nothing is orphaned.
			for q, want := range map[string]int64{
				"SELECT COUNT(*) FROM states s WHERE old_state_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM states o WHERE o.state_id = s.old_state_id)":                  0,
				"SELECT COUNT(*) FROM states s WHERE attributes_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM state_attributes a WHERE a.attributes_id = s.attributes_id)": 0,
				"SELECT COUNT(*) FROM state_attributes a WHERE NOT EXISTS (SELECT 1 FROM states s WHERE s.attributes_id = a.attributes_id)":                               0,
				"SELECT COUNT(*) FROM event_data d WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.data_id = d.data_id)":                                                 0,
				"SELECT COUNT(*) FROM recorder_runs WHERE run_id = " + itoa(maxRun):                                                                                       1,
			} {
				if got := scalar[int64](t, raw, q); got != want {
					t.Errorf("%s = %d, want %d", q, got, want)
				}
			}
			if got := scalar[int64](t, raw, "SELECT COUNT(*) FROM state_attributes"); before["state_attributes"]-got != res.Attributes {
				t.Errorf("state_attributes went %d -> %d, result says %d deleted", before["state_attributes"], got, res.Attributes)
			}
			if got := scalar[int64](t, raw, "SELECT COUNT(*) FROM event_data"); before["event_data"]-got != res.EventData {
				t.Errorf("event_data went %d -> %d, result says %d deleted", before["event_data"], got, res.EventData)
			}
			if ok := scalar[string](t, raw, "PRAGMA integrity_check"); ok != "ok" {
				t.Errorf("integrity_check: %s", ok)
			}
			if n := scalar[int64](t, raw, "SELECT COUNT(*) FROM pragma_foreign_key_check"); n != 0 {
				t.Errorf("%d foreign key violations", n)
			}
			if !res.WALCheckpointed {
				t.Errorf("WAL not checkpointed")
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// withVersion copies the generated database, records schema version v and runs the extra
// statements on it.
func withVersion(t *testing.T, v int, stmts ...string) string {
	t.Helper()
	path := copyOf(t)
	raw := rawDB(t, path)
	defer raw.Close()
	for _, q := range append([]string{"INSERT INTO schema_changes (schema_version, changed) VALUES (" + strconv.Itoa(v) + ", '2027-01-01 00:00:00')"}, stmts...) {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestPurgeOfflineSchemaVersions: every HA since 2025.11 records schema 52 or later; a newer
// version with the same layout is purged, only an older layout or a missing column refuses.
func TestPurgeOfflineSchemaVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		version int
		stmts   []string
		want    string // "" = purged
	}{
		{"HA 2025.11 (52)", 52, nil, ""},
		{"a future version with the same layout", 60, nil, ""},
		{"an older layout", 42, nil, "older than this purge knows"},
		{"a future version without a column the purge uses", 61, []string{"ALTER TABLE statistics_short_term RENAME COLUMN start_ts TO begin_ts"}, "statistics_short_term table has no start_ts column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := withVersion(t, tc.version, tc.stmts...)
			// Reads take any version from 43 on as it is.
			db := openDB(t, path, Options{})
			if in, err := db.Info(context.Background()); err != nil || in.SchemaVersion != tc.version || in.SchemaKnown != (tc.version >= MinSchemaVersion) {
				t.Fatalf("Info: %+v, %v", in, err)
			}
			db.Close()
			res, err := PurgeOffline(context.Background(), path, 1, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("schema %d refused: %v", tc.version, err)
			case tc.want == "" && res.States == 0:
				t.Fatalf("schema %d: nothing purged: %+v", tc.version, res)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "recorder.purge")):
				t.Fatalf("schema %d: err = %v, want one naming %q and recorder.purge", tc.version, err, tc.want)
			}
		})
	}
}

func TestPurgeOfflineRefuses(t *testing.T) {
	unknown := withVersion(t, 42)
	tests := []struct {
		name     string
		path     string
		keepDays int
		want     string
	}{
		{"unknown schema", unknown, 10, "schema version 42"},
		{"negative keep_days", unknown, -1, "keep_days"},
		{"empty path", "", 10, "path"},
		{"missing file", filepath.Join(t.TempDir(), "none.db"), 10, "none.db"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PurgeOffline(context.Background(), tc.path, tc.keepDays, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(unknown), "none.db")); err == nil {
		t.Error("purge created a database file")
	}
}

// TestPurgeOfflineCancel: a cancelled purge stops between batches and
// leaves a consistent database.
func TestPurgeOfflineCancel(t *testing.T) {
	path := copyOf(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := purgeOffline(ctx, path, 1, fixedNow, 100, func(done, total int64) {
		if done > 0 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || res == nil || res.Batches < 1 || res.States == 0 {
		t.Fatalf("res=%+v err=%v; want a partial result and context.Canceled", res, err)
	}
	raw := rawDB(t, path)
	if n := scalar[int64](t, raw, "SELECT COUNT(*) FROM states WHERE last_updated_ts < ?", ts(fixedNow.Add(-24*time.Hour))); n == 0 {
		t.Error("the cancelled purge ran to the end")
	}
	if n := scalar[int64](t, raw, "SELECT COUNT(*) FROM states s WHERE old_state_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM states o WHERE o.state_id = s.old_state_id)"); n != 0 {
		t.Errorf("%d dangling old_state_id links", n)
	}
}

// TestPurgeOfflineNow uses the exported entry point on a database whose
// history ends now.
func TestPurgeOfflineNow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home-assistant_v2.db")
	if _, err := simrec.Generate(context.Background(), path, simrec.GenerateOptions{Entities: homeEntities()[:3], Days: 3, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	res, err := PurgeOffline(context.Background(), path, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	if res.States == 0 || scalar[int64](t, raw, "SELECT COUNT(*) FROM states WHERE last_updated_ts < ?", ts(res.Cutoff)) != 0 {
		t.Fatalf("purge of a live-dated database: %+v", res)
	}
	if d := time.Since(res.Cutoff); d < 24*time.Hour || d > 25*time.Hour {
		t.Errorf("cutoff %s is not a day ago", res.Cutoff)
	}
}
