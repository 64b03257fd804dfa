package recorder

import (
	"context"
	"os"
	"testing"
)

func TestInfo(t *testing.T) {
	path := generated(t)
	db := openDB(t, path, Options{})
	raw := rawDB(t, path)
	in, err := db.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	checks := []struct {
		name      string
		got, want any
	}{
		{"path", in.Path, path},
		{"file size", in.FileBytes, fi.Size()},
		{"pages cover the file", in.PageSize * in.PageCount, fi.Size()},
		{"schema version", in.SchemaVersion, 52},
		{"schema known", in.SchemaKnown, true},
		{"journal mode", in.JournalMode, "wal"},
		{"entities", in.Entities, int64(len(homeEntities()))},
		{"statistics", in.Statistics, scalar[int64](t, raw, "SELECT COUNT(*) FROM statistics_meta")},
		{"oldest state", in.OldestState.Unix(), int64(scalar[float64](t, raw, "SELECT MIN(last_updated_ts) FROM states"))},
		{"newest state", in.NewestState.Unix(), int64(scalar[float64](t, raw, "SELECT MAX(last_updated_ts) FROM states"))},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if n := scalar[int](t, raw, "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table'"); len(in.Tables) != n || n < 13 {
		t.Fatalf("%d tables, want all %d (HA has 13)", len(in.Tables), n)
	}
	for _, tc := range in.Tables {
		exact := scalar[int64](t, raw, "SELECT COUNT(*) FROM "+quoteIdent(tc.Name))
		if tc.Estimated || tc.Method != "count" || tc.Rows != exact {
			t.Errorf("%s: %+v, want an exact count of %d", tc.Name, tc, exact)
		}
	}
}

// TestInfoEstimates: a big rowid span switches to the two-lookup estimate
// and says so; a -wal file is measured.
func TestInfoEstimates(t *testing.T) {
	path := copyOf(t)
	raw := rawDB(t, path)
	lo := scalar[int64](t, raw, "SELECT MIN(state_id) FROM states")
	const hi = 5_000_000
	if _, err := raw.Exec("INSERT INTO states (state_id, state, last_updated_ts, metadata_id) VALUES (?, 'far', 1, 1)", hi); err != nil {
		t.Fatal(err)
	}
	// The raw connection stays open, so its WAL is not checkpointed away.
	db := openDB(t, path, Options{})
	in, err := db.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if in.WALBytes == 0 {
		t.Errorf("wal_bytes = 0 with an open writer's -wal file")
	}
	for _, tc := range in.Tables {
		if tc.Name != "states" {
			continue
		}
		if !tc.Estimated || tc.Method != "rowid_range" || tc.Rows != hi-lo+1 {
			t.Fatalf("states: %+v, want the estimate %d", tc, hi-lo+1)
		}
		return
	}
	t.Fatal("no states table in info")
}
