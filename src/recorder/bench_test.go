package recorder

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	simrec "github.com/hamcp/hamcp/dev/sim/recorder"
)

// The benchmark database: HAMCP_BENCH_ROWS states (default 200k so the
// normal suite stays quick; run with 10000000 for the figures in
// docs/performance.md) over 30 days of 400 synthetic entities. It is cached
// in os.TempDir() by row count, so re-runs do not regenerate it.
var (
	benchNow    = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	benchEntity = "sensor.living_room_power" // the busiest entity: a change a minute
)

func benchDB(b *testing.B) string {
	b.Helper()
	rows := int64(200_000)
	if env := os.Getenv("HAMCP_BENCH_ROWS"); env != "" {
		n, err := strconv.ParseInt(env, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("HAMCP_BENCH_ROWS=%q: want a positive row count such as 10000000", env)
		}
		rows = n
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("hamcp-recorder-bench-%d.db", rows))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	// Generate beside the final name and rename, so an interrupted run never
	// leaves a half-written file that later runs would trust.
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	begin := time.Now()
	st, err := simrec.Generate(context.Background(), tmp, simrec.GenerateOptions{
		Entities: simrec.SyntheticEntities(400), Days: 30, Rows: rows, Seed: 42, Now: benchNow,
	})
	if err != nil {
		os.Remove(tmp)
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %s: %d states, %.1f MB in %s", path, st.States, float64(st.Bytes)/1e6, time.Since(begin).Round(time.Second))
	return path
}

func reportSize(b *testing.B, path string) {
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "db-MB")
	}
}

// BenchmarkStateHistory: one entity over 24 h, every row in one page.
func BenchmarkStateHistory(b *testing.B) {
	path := benchDB(b)
	for _, bc := range []struct {
		name string
		opts []HistoryOption
	}{
		{"24h", nil},
		{"24h_attributes", []HistoryOption{WithAttributes}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			db, err := Open(Options{Path: path, MaxRows: maxMaxRows})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			var n int
			for b.Loop() {
				rows, total, err := db.StateHistory(context.Background(), benchEntity, benchNow.Add(-24*time.Hour), benchNow, maxMaxRows, 0, bc.opts...)
				if err != nil {
					b.Fatal(err)
				}
				if len(rows) != total || total == 0 {
					b.Fatalf("%d rows of %d", len(rows), total)
				}
				n = total
			}
			b.ReportMetric(float64(n), "rows/op")
			reportSize(b, path)
		})
	}
}

// inline puts literal values in for the ?s of our own statements (they
// hold no ? inside literals), so sqlite3 runs the very same SQL.
func inline(q string, args ...any) string {
	var out strings.Builder
	for _, part := range strings.SplitAfter(q, "?") {
		if strings.HasSuffix(part, "?") && len(args) > 0 {
			out.WriteString(strings.TrimSuffix(part, "?"))
			switch v := args[0].(type) {
			case float64:
				out.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			case string:
				out.WriteString("'" + strings.ReplaceAll(v, "'", "''") + "'")
			default:
				fmt.Fprint(&out, v)
			}
			args = args[1:]
			continue
		}
		out.WriteString(part)
	}
	return out.String()
}

// cliScript is StateHistory's work as one sqlite3 script: the metadata_id
// lookup, the count and the page, with the same SQL text.
func cliScript(b *testing.B, path string, attrs bool) string {
	db, err := Open(Options{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	res, err := db.Query(context.Background(), "SELECT metadata_id FROM states_meta WHERE entity_id = ?", []any{benchEntity}, 1, 0)
	if err != nil || len(res.Rows) != 1 {
		b.Fatalf("metadata_id of %s: %v", benchEntity, err)
	}
	meta := res.Rows[0][0]
	from, to := ts(benchNow.Add(-24*time.Hour)), ts(benchNow)
	q := historySQL(attrs, false)
	return inline("SELECT metadata_id FROM states_meta WHERE entity_id = ?;\n", benchEntity) +
		inline(q.count, meta, from, to) + ";\n" +
		inline(q.page, meta, from, to, maxMaxRows, 0) + ";\n"
}

// BenchmarkStateHistorySQLite3 runs the same statements through the sqlite3
// command-line tool: ns/op is a whole process per run (what a script pays);
// cli-query-ns/op is the statements alone inside one warm sqlite3 process
// (see cliEngineTime), the fair figure to hold StateHistory against.
func BenchmarkStateHistorySQLite3(b *testing.B) {
	const cli = "/usr/bin/sqlite3"
	if _, err := os.Stat(cli); err != nil {
		b.Skip("sqlite3 command-line tool not installed (CI installs it)")
	}
	path := benchDB(b)
	for _, bc := range []struct {
		name  string
		attrs bool
	}{{"24h", false}, {"24h_attributes", true}} {
		b.Run(bc.name, func(b *testing.B) {
			script := cliScript(b, path, bc.attrs)
			for b.Loop() {
				cmd := exec.Command(cli, "-readonly", path)
				cmd.Stdin = strings.NewReader(script)
				var out bytes.Buffer
				cmd.Stdout = &out
				if err := cmd.Run(); err != nil {
					b.Fatalf("sqlite3: %v", err)
				}
				if out.Len() == 0 {
					b.Fatal("sqlite3 printed nothing")
				}
			}
			b.ReportMetric(float64(cliEngineTime(b, cli, path, script)), "cli-query-ns/op")
			reportSize(b, path)
		})
	}
}

// cliEngineTime is what sqlite3 spends on one run of script once started
// and warm: a process running it 1+n times minus one running it once,
// divided by n, best of three. (.timer only has millisecond resolution.)
func cliEngineTime(b *testing.B, cli, path, script string) time.Duration {
	run := func(reps int) time.Duration {
		cmd := exec.Command(cli, "-readonly", path)
		cmd.Stdin = strings.NewReader(strings.Repeat(script, reps))
		cmd.Stdout = io.Discard
		begin := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("sqlite3: %v", err)
		}
		return time.Since(begin)
	}
	const n = 200
	best := time.Duration(1<<63 - 1)
	for range 3 {
		best = min(best, (run(1+n)-run(1))/n)
	}
	return best
}

// BenchmarkInfo: database_info must stay fast however big the file is.
func BenchmarkInfo(b *testing.B) {
	path := benchDB(b)
	db, err := Open(Options{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for b.Loop() {
		in, err := db.Info(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if in.Entities != 400 {
			b.Fatalf("%d entities, want 400", in.Entities)
		}
	}
	reportSize(b, path)
}
