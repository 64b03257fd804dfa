//go:build linux

package perf_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/loadgen"
)

// TestServeConcurrency is the speed grid: the cached read at 1, 8 and 64 clients over HTTP
// sessions, sessionless POSTs and stdio, against the add-on's binary with hamcp's own collector
// settings and the simulated Home Assistant (in this process). HTTP runs go to one `hamcp serve`;
// stdio runs start `hamcp stdio` (one process, all calls in flight on its pipe). Skipped unless
// HAMCP_PERF_GRID is set: HAMCP_PERF_GRID=1 bash .ci/perf-serve.sh … or
// HAMCP_PERF_GRID=1 go test -count=1 -run TestServeConcurrency -v ./dev/perf (10 s a run).
func TestServeConcurrency(t *testing.T) {
	if os.Getenv("HAMCP_PERF_GRID") == "" {
		t.Skip("measurement: set HAMCP_PERF_GRID=1")
	}
	runFor := 10 * time.Second
	if d, err := time.ParseDuration(os.Getenv("HAMCP_PERF_GRID_RUN")); err == nil && d > 0 {
		runFor = d
	}
	bin := buildServe(t)
	ctx := t.Context()
	home, tokens := simHome(t, 3)
	t.Logf("machine: %s", machine())
	t.Log("| transport | clients | calls/s | p50 ms | p99 ms | server CPU µs/call | server RSS max MB |")
	t.Log("|---|---|---|---|---|---|---|")
	srv := startServe(t, bin, home, tokens[0], nil)
	defer srv.stop(t)
	base := loadgen.Config{URL: srv.url + "/mcp", Calls: []loadgen.Call{cachedRead}, Duration: runFor, Warmup: 2 * time.Second}
	for _, mode := range []string{loadgen.ModeSession, loadgen.ModeSessionless} {
		for _, c := range []int{1, 8, 64} {
			r := loadN(ctx, t, srv, base, mode, c, tokens[1:3], "198.51.100.7")
			t.Logf("| HTTP %s | %d | %.0f | %.2f | %.2f | %.0f | %.1f |", mode, c, r.perS, r.p50, r.p99, r.cpuUS, mb(r.rssMax))
		}
	}
	for _, c := range []int{1, 8, 64} {
		rep, err := loadgen.Run(ctx, loadgen.Config{Mode: loadgen.ModeStdio, Concurrency: c, Duration: runFor, Warmup: 2 * time.Second,
			Calls: []loadgen.Call{cachedRead}, Command: []string{bin, "stdio", "--ha-url", home.URL(), "--data-dir", t.TempDir(), "--log-level", "error"},
			Env: []string{"HAMCP_HA_TOKEN=" + tokens[0]}})
		if err != nil {
			t.Fatalf("stdio c=%d: %v", c, err)
		}
		if rep.Errors != 0 {
			t.Errorf("stdio c=%d: %d errors: %v", c, rep.Errors, rep.ErrorSamples)
		}
		rss, cpu := 0.0, 0.0
		if rep.RSS != nil {
			rss = float64(rep.RSS.MaxKiB) / 1024
		}
		if rep.CPU.ServerUSPerCall != nil {
			cpu = *rep.CPU.ServerUSPerCall
		}
		t.Logf("| stdio | %d | %.0f | %.2f | %.2f | %.0f | %.1f |", c, rep.CallsPerS, rep.LatencyMS.P50, rep.LatencyMS.P99, cpu, rss)
	}
}

func machine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	return fmt.Sprintf("load average %s", string(load[:min(len(load), 14)]))
}
