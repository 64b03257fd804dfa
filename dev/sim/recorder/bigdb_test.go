package recorder

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestGenerateBig prints the bulk-load rate. It is skipped unless
// HAMCP_RECORDER_BIG_ROWS is set (e.g. 1000000 or 10000000); the file goes to
// HAMCP_RECORDER_BIG_PATH (default: a temp dir) so benchmarks can reuse it.
func TestGenerateBig(t *testing.T) {
	rowsEnv := os.Getenv("HAMCP_RECORDER_BIG_ROWS")
	if rowsEnv == "" {
		t.Skip("set HAMCP_RECORDER_BIG_ROWS=1000000 to measure bulk generation")
	}
	rows, err := strconv.ParseInt(rowsEnv, 10, 64)
	if err != nil || rows <= 0 {
		t.Fatalf("HAMCP_RECORDER_BIG_ROWS=%q: want a positive integer", rowsEnv)
	}
	path := os.Getenv("HAMCP_RECORDER_BIG_PATH")
	if path == "" {
		path = t.TempDir() + "/big.db"
	}
	begin := time.Now()
	st, err := Generate(context.Background(), path, GenerateOptions{
		Entities: SyntheticEntities(400), Days: 30, Rows: rows, Seed: 42,
		Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(begin)
	if st.States != rows {
		t.Errorf("states = %d, want %d", st.States, rows)
	}
	t.Logf("%d states, %d attributes, %d events, %d statistics rows; %.1f MB in %s = %.0f rows/s",
		st.States, st.Attributes, st.Events, st.Statistics, float64(st.Bytes)/1e6, took.Round(time.Millisecond), float64(st.States)/took.Seconds())
}
