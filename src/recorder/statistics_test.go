package recorder

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	simrec "github.com/hamcp/hamcp/dev/sim/recorder"
)

func eqFloat(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// TestStatistics compares against the simulator's own statistics reader,
// which answers the way HA's recorder API does.
func TestStatistics(t *testing.T) {
	path := generated(t)
	db := openDB(t, path, Options{})
	sim, err := simrec.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	tests := []struct {
		table, period, id string
		start, end        time.Time
		page              int
	}{
		{TableStatistics, "hour", "sensor.kitchen_temperature", fixedNow.Add(-72 * time.Hour), fixedNow, 17},
		{TableStatistics, "hour", "sensor.house_energy", fixedNow.Add(-30 * 24 * time.Hour), fixedNow, 100},
		{TableStatisticsShortTerm, "5minute", "sensor.kitchen_temperature", fixedNow.Add(-6 * time.Hour), fixedNow, 30},
		{TableStatisticsShortTerm, "5minute", "sensor.house_energy", fixedNow.Add(-2 * time.Hour), fixedNow.Add(-time.Hour), 5},
	}
	for _, tc := range tests {
		t.Run(tc.table+" "+tc.id, func(t *testing.T) {
			want, err := sim.Statistics(context.Background(), []string{tc.id}, tc.start, tc.end, tc.period)
			if err != nil {
				t.Fatal(err)
			}
			w := want[tc.id]
			if len(w) == 0 {
				t.Fatal("the simulator has no rows: the test data is wrong")
			}
			var got []StatRow
			for off := 0; ; off += tc.page {
				page, total, err := db.Statistics(context.Background(), tc.table, tc.id, tc.start, tc.end, tc.page, off)
				if err != nil {
					t.Fatal(err)
				}
				if total != len(w) {
					t.Fatalf("total = %d, want %d", total, len(w))
				}
				got = append(got, page...)
				if off+tc.page >= total {
					break
				}
			}
			if len(got) != len(w) {
				t.Fatalf("%d rows, want %d", len(got), len(w))
			}
			for i := range got {
				g, e := got[i], w[i]
				if !g.Start.Equal(e.Start) || !eqFloat(g.Mean, e.Mean) || !eqFloat(g.Min, e.Min) || !eqFloat(g.Max, e.Max) ||
					!eqFloat(g.State, e.State) || !eqFloat(g.Sum, e.Sum) {
					t.Fatalf("row %d = %+v, want %+v", i, g, e)
				}
			}
		})
	}
}

func TestStatisticsErrors(t *testing.T) {
	db := openDB(t, generated(t), Options{})
	day := fixedNow.Add(-24 * time.Hour)
	tests := []struct {
		name, table, id string
		want            string
		is              error
	}{
		{"bad table", "states", "sensor.house_energy", "table", nil},
		{"injection in table", "statistics; DROP TABLE states", "sensor.house_energy", "table", nil},
		{"empty id", TableStatistics, "", "statistic_id", nil},
		{"unknown id", TableStatistics, "sensor.unknown", "sensor.unknown", ErrNotFound},
		{"entity without statistics", TableStatistics, "light.kitchen", "light.kitchen", ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := db.Statistics(context.Background(), tc.table, tc.id, day, fixedNow, 10, 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func TestListStatisticIDs(t *testing.T) {
	path := generated(t)
	db := openDB(t, path, Options{})
	sim, err := simrec.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	all, err := sim.ListStatistics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		search string
		want   func(simrec.StatMeta) bool
	}{
		{"", func(simrec.StatMeta) bool { return true }},
		{"KITCHEN", func(m simrec.StatMeta) bool { return strings.Contains(m.StatisticID, "kitchen") }},
		{"energy", func(m simrec.StatMeta) bool { return strings.Contains(m.StatisticID, "energy") }},
		{"%", func(simrec.StatMeta) bool { return false }}, // LIKE wildcards are literal
		{"_", func(m simrec.StatMeta) bool { return strings.Contains(m.StatisticID+m.Name, "_") }},
	}
	for _, tc := range tests {
		t.Run("search "+tc.search, func(t *testing.T) {
			var want []simrec.StatMeta
			for _, m := range all {
				if tc.want(m) {
					want = append(want, m)
				}
			}
			var got []StatisticMeta
			for off := 0; ; off += 1 {
				page, total, err := db.ListStatisticIDs(context.Background(), tc.search, 1, off)
				if err != nil {
					t.Fatal(err)
				}
				if total != len(want) {
					t.Fatalf("total = %d, want %d", total, len(want))
				}
				got = append(got, page...)
				if off+1 >= total {
					break
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d ids, want %d", len(got), len(want))
			}
			for i, g := range got {
				w := want[i]
				if g.StatisticID != w.StatisticID || g.Source != w.Source || g.Unit != w.Unit || g.HasSum != w.HasSum || g.MeanType != w.MeanType {
					t.Fatalf("row %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
