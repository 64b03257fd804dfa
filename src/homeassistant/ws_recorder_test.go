package homeassistant

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
)

// homeWithHistory starts a home with a day of recorder history, for the statistics and energy
// commands (the shared home's recorder is empty), and a client of it.
func homeWithHistory(t *testing.T) *Client {
	t.Helper()
	h, err := sim.Start(context.Background(), sim.Options{HistoryDays: 1, Seed: 4})
	if err != nil {
		t.Fatalf("starting the simulated home: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	c := fastClient(t, h.URL(), h.Token())
	waitConnected(t, c)
	return c
}

func TestRecorderCommands(t *testing.T) {
	t.Parallel()
	c := homeWithHistory(t)
	ctx := context.Background()
	end := time.Now().UTC()
	start := end.Add(-12 * time.Hour)

	t.Run("energy prefs name statistics the recorder keeps", func(t *testing.T) {
		t.Parallel()
		p, err := c.EnergyPrefs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var grid, solar string
		for _, s := range p.Sources {
			switch s.Type {
			case "grid":
				if imports := s.GridImports(); len(imports) > 0 {
					grid = imports[0]
				}
			case "solar":
				solar = s.From
			}
		}
		if grid == "" || solar == "" || len(p.Devices) == 0 || p.Devices[0].Stat == "" {
			t.Fatalf("prefs: %+v", p)
		}
		rows, err := c.Statistics(ctx, StatisticsQuery{IDs: []string{grid, solar}, Start: start, End: end, Period: "hour", Types: []string{"change"}})
		if err != nil || len(rows[grid]) < 10 || rows[grid][0].Change == nil {
			t.Fatalf("the grid meter's hourly change: %d rows, %v", len(rows[grid]), err)
		}
	})

	metas, err := c.StatisticIDs(ctx, "")
	if err != nil || len(metas) == 0 {
		t.Fatalf("statistic ids: %d, %v", len(metas), err)
	}
	var mean, sum string
	for _, m := range metas {
		if m.MeanType == 1 && mean == "" {
			mean = m.ID
		}
		if m.HasSum && sum == "" {
			sum = m.ID
		}
	}
	if mean == "" || sum == "" {
		t.Fatalf("no mean and sum statistics among %+v", metas)
	}

	for _, tc := range []struct {
		name  string
		query StatisticsQuery
		check func(map[string][]StatisticsRow) bool
		err   string
	}{
		{"hourly means, oldest first", StatisticsQuery{IDs: []string{mean}, Start: start, End: end, Period: "hour", Types: []string{"mean", "min", "max"}},
			func(r map[string][]StatisticsRow) bool {
				rows := r[mean]
				return len(rows) >= 10 && rows[0].Mean != nil && rows[0].Min != nil && rows[0].Start < rows[1].Start && rows[0].End > rows[0].Start
			}, ""},
		{"5-minute rows", StatisticsQuery{IDs: []string{mean}, Start: end.Add(-2 * time.Hour), End: end, Period: "5minute", Types: []string{"mean"}},
			func(r map[string][]StatisticsRow) bool { return len(r[mean]) >= 12 }, ""},
		{"a meter's sum and state", StatisticsQuery{IDs: []string{sum}, Start: start, End: end, Period: "hour", Types: []string{"sum", "state"}},
			func(r map[string][]StatisticsRow) bool {
				return len(r[sum]) >= 1 && r[sum][0].Sum != nil && r[sum][0].Mean == nil
			}, ""},
		{"every type when none is named", StatisticsQuery{IDs: []string{mean}, Start: start, End: end, Period: "hour"},
			func(r map[string][]StatisticsRow) bool { return len(r[mean]) > 0 && r[mean][0].Mean != nil }, ""},
		{"an id without rows is absent", StatisticsQuery{IDs: []string{"sensor.no_such_statistic"}, Start: start, End: end, Period: "hour"},
			func(r map[string][]StatisticsRow) bool { _, ok := r["sensor.no_such_statistic"]; return !ok }, ""},
		{"no ids", StatisticsQuery{Start: start, End: end, Period: "hour"}, nil, "at least one statistic id"},
		{"HA refuses a period", StatisticsQuery{IDs: []string{mean}, Start: start, End: end, Period: "fortnight"}, nil, "period"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rows, err := c.Statistics(ctx, tc.query)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want an error about %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil || !tc.check(rows) {
				t.Fatalf("%v: %+v", err, rows)
			}
		})
	}

	t.Run("listing by type", func(t *testing.T) {
		t.Parallel()
		sums, err := c.StatisticIDs(ctx, "sum")
		if err != nil || len(sums) == 0 || len(sums) >= len(metas) {
			t.Fatalf("%d sum statistics of %d, %v", len(sums), len(metas), err)
		}
		for _, m := range sums {
			if !m.HasSum {
				t.Errorf("statistic_type=sum listed %+v", m)
			}
		}
		var api *APIError
		if _, err := c.StatisticIDs(ctx, "median"); !errors.As(err, &api) {
			t.Fatalf("an unknown type: %v", err)
		}
	})
}

// The shared home has an empty recorder: HA answers statistics with nothing, and the energy
// dashboard was never set up (not_found), which the energy tool turns into advice.
func TestRecorderCommandsOnAnEmptyRecorder(t *testing.T) {
	t.Parallel()
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	waitConnected(t, c)
	ctx := context.Background()
	rows, err := c.Statistics(ctx, StatisticsQuery{IDs: []string{"sensor.house_power"}, Start: time.Now().Add(-time.Hour), End: time.Now(), Period: "hour"})
	if err != nil || len(rows) != 0 {
		t.Fatalf("statistics: %v, %v", rows, err)
	}
	if _, err := c.EnergyPrefs(ctx); err != nil {
		var api *APIError
		if !errors.As(err, &api) || api.Code != "not_found" {
			t.Fatalf("energy prefs: %v", err)
		}
	}
}

func TestDecodeStatistics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, err string
	}{
		{`{"sensor.a":[{"start":1700000000000,"end":1700003600000,"mean":1.5,"change":null}]}`, ""},
		{`{}`, ""},
		{`{"":[]}`, "empty statistic id"},
		{`{" ":[]}`, "empty statistic id"},
		{`[1,2]`, "not {statistic_id: [rows]}"},
		{`{"sensor.a":[{"start":-5}]}`, "bad start time"},
		{`{"sensor.a":[{"start":"soon"}]}`, "not {statistic_id: [rows]}"},
	} {
		_, err := DecodeStatistics([]byte(tc.raw))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.raw, err, tc.err)
		}
	}
}

func FuzzDecodeStatistics(f *testing.F) {
	f.Add(`{"sensor.a":[{"start":1700000000000,"end":1700003600000,"mean":1.5,"change":null}]}`)
	f.Add(`{"":[]}`)
	f.Add(`[1,2]`)
	f.Add(`{"sensor.a":[{"start":-5}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		out, err := DecodeStatistics([]byte(raw))
		if err != nil {
			return
		}
		for id, rows := range out {
			if strings.TrimSpace(id) == "" {
				t.Fatal("accepted an empty statistic id")
			}
			for _, r := range rows {
				if r.Start < 0 || math.IsNaN(r.Start) {
					t.Fatalf("accepted start %v", r.Start)
				}
			}
		}
	})
}
