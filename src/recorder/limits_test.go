package recorder

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

const manyRows = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 1000) "

// Queries an attacker with a database grant would send to exhaust the add-on's memory. Each must fail
// with a clear error before SQLite or Go hold more than the limits, and the Go heap must not grow by
// more than a few MB while it runs (it grew by the whole result before: 500 MB for one zeroblob).
func TestHostileQueriesStayBounded(t *testing.T) {
	t.Parallel()
	db := openDB(t, generated(t), Options{})
	cols := make([]string, maxColumns+1)
	for i := range cols {
		cols[i] = "1"
	}
	tests := []struct {
		name, sql, want string
	}{
		{"zeroblob", "SELECT zeroblob(500000000)", "too big"},
		{"randomblob", "SELECT randomblob(200000000)", "too big"},
		{"printf padding", "SELECT printf('%.*c', 100000000, 'x')", "too big"},
		{"group_concat", manyRows + "SELECT group_concat(hex(zeroblob(1200))) FROM c", "too big"},
		{"huge text over many rows", manyRows + "SELECT hex(zeroblob(30000)) a, hex(randomblob(30000)) b FROM c a, c b LIMIT 1000", "add LIMIT or select fewer columns"},
		{"wide rows", manyRows + "SELECT " + strings.Repeat("hex(zeroblob(30000)), ", 20) + "1 FROM c", "passed 2048 KB"},
		{"too many columns", "SELECT " + strings.Join(cols, ","), "too many columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := db.Query(context.Background(), tt.sql, nil, 0, 0)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v (rows %v), want an error containing %q", err, res != nil, tt.want)
			}
			// TotalAlloc counts every byte allocated meanwhile, parallel tests' included: a generous bound
			// that the old code broke by two orders of magnitude.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("%d MB allocated for one refused query", grew>>20)
			}
		})
	}
	// The limits leave ordinary large values alone.
	res, err := db.Query(context.Background(), "SELECT length(zeroblob(1000000)), length(hex(randomblob(400000)))", nil, 0, 0)
	if err != nil || res.Rows[0][0] != int64(1000000) || res.Rows[0][1] != int64(800000) {
		t.Fatalf("%v %v", err, res)
	}
}

// A write cannot build an oversized value either, and is rolled back.
func TestHostileWriteStaysBounded(t *testing.T) {
	t.Parallel()
	db := openDB(t, copyOf(t), Options{})
	_, err := db.Exec(context.Background(), "UPDATE states SET state = hex(zeroblob(600000)) WHERE state_id = (SELECT min(state_id) FROM states)", nil)
	if err == nil || !strings.Contains(err.Error(), "too big") || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("got %v", err)
	}
}

// BenchmarkRefusedZeroblob reports the memory one refused zeroblob costs (B/op).
func BenchmarkRefusedZeroblob(b *testing.B) {
	db := openDB(b, generated(b), Options{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.Query(context.Background(), "SELECT zeroblob(500000000)", nil, 0, 0); err == nil {
			b.Fatal("zeroblob(500000000) ran")
		}
	}
}
