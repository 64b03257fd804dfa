package recorder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkGenerate measures bulk generation; rows/s is the figure that
// decides how long a 10M-row benchmark database takes to build.
func BenchmarkGenerate(b *testing.B) {
	const rows = 200_000
	for i := 0; b.Loop(); i++ {
		path := filepath.Join(b.TempDir(), fmt.Sprintf("g%d.db", i))
		if _, err := Generate(context.Background(), path, GenerateOptions{Entities: SyntheticEntities(100), Days: 7, Rows: rows, Now: fixedNow, Seed: int64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkRecordState(b *testing.B) {
	db, err := Create(filepath.Join(b.TempDir(), "w.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	attrs := map[string]any{"unit_of_measurement": "W", "device_class": "power", "friendly_name": "Plug"}
	t0 := fixedNow
	for i := 0; b.Loop(); i++ {
		s := State{EntityID: fmt.Sprintf("sensor.plug_%d", i%50), State: fmt.Sprint(i % 997), Attributes: attrs, LastUpdated: t0.Add(time.Duration(i) * time.Millisecond)}
		if err := db.RecordState(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPath is generated once per test binary; TestMain removes benchDir.
var benchPath, benchDir string

func benchDB(b *testing.B) *DB {
	b.Helper()
	if benchPath == "" {
		var err error
		if benchDir, err = os.MkdirTemp("", "recorder-bench-"); err != nil {
			b.Fatal(err)
		}
		benchPath = filepath.Join(benchDir, "bench.db")
		if _, err := Generate(context.Background(), benchPath, GenerateOptions{Entities: SyntheticEntities(200), Days: 14, Rows: 300_000, Now: fixedNow, Seed: 3}); err != nil {
			b.Fatal(err)
		}
	}
	db, err := Open(benchPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

func BenchmarkHistoryDay(b *testing.B) {
	db := benchDB(b)
	o := HistoryOptions{EntityIDs: []string{"sensor.kitchen_temperature", "light.kitchen", "binary_sensor.kitchen_motion"},
		Start: fixedNow.Add(-24 * time.Hour), End: fixedNow, IncludeStartState: true, SignificantChangesOnly: true}
	for b.Loop() {
		if _, err := db.History(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLogbookHour(b *testing.B) {
	db := benchDB(b)
	for b.Loop() {
		if _, err := db.Logbook(context.Background(), fixedNow.Add(-time.Hour), fixedNow, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStatisticsMonthOfDays(b *testing.B) {
	db := benchDB(b)
	for b.Loop() {
		if _, err := db.Statistics(context.Background(), []string{"sensor.kitchen_temperature", "sensor.kitchen_energy"}, fixedNow.AddDate(0, 0, -14), fixedNow, "day"); err != nil {
			b.Fatal(err)
		}
	}
}
