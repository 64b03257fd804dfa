package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/loadgen"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/dev/testkit/loadlevel"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/permission"
)

// The load and soak tests run only when HAMCP_LOAD says so (short: CI's version,
// under a minute; full: 10 minutes of soak) — `bash .ci/load.sh` runs them. They are not part of
// the README's test command, with or without CI=true: they measure, they need the cores to
// themselves, and they take minutes.

// cachedReadMix is the read mix of the load tests: all three answered from the state mirror.
var cachedReadMix = []loadgen.Call{
	{Name: "ha_get_entity_details", Arguments: json.RawMessage(`{"entity_id":"sun.sun"}`)},
	{Name: "ha_get_states", Arguments: json.RawMessage(`{"domain":"light"}`)},
	{Name: "ha_search_entities", Arguments: json.RawMessage(`{"query":"kitchen"}`)},
}

// loadClients is how the load tests present many sessions: hamcp caps sessions per client IP
// (64) and per credential (32), as it should, so 200 sessions come from several clients, each
// with its own Home Assistant token and its own address behind a trusted proxy (loopback here;
// the add-on's ingress in production), the way many assistants in a home would.
type loadClient struct {
	token string
	xff   string
}

func startLoadDemo(t *testing.T) *env {
	t.Helper()
	return startDemo(t, func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} })
}

func loadClients(t *testing.T, e *env, n int) []loadClient {
	t.Helper()
	out := make([]loadClient, n)
	for i := range out {
		tok, err := e.d.Home.NewAdminToken()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = loadClient{token: tok, xff: fmt.Sprintf("192.0.2.%d", i+1)}
	}
	return out
}

// runClients runs one loadgen run per client at once, each with cfg's shape, and returns the
// reports in client order.
func runClients(ctx context.Context, t *testing.T, e *env, clients []loadClient, cfg loadgen.Config) []*loadgen.Report {
	t.Helper()
	reps := make([]*loadgen.Report, len(clients))
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			cc := cfg
			cc.URL, cc.Token = e.url+"/mcp", c.token
			cc.Headers = [][2]string{{"X-Forwarded-For", c.xff}}
			cc.Label = fmt.Sprintf("%s client %d", cfg.Mode, i+1)
			reps[i], errs[i] = loadgen.Run(ctx, cc)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i+1, err)
		}
	}
	return reps
}

func requireNoErrors(t *testing.T, reps []*loadgen.Report) (calls, errors uint64) {
	t.Helper()
	for _, r := range reps {
		calls, errors = calls+r.Calls, errors+r.Errors
		if r.Errors != 0 {
			t.Errorf("%s: %d errors of %d calls: %v %v", r.Label, r.Errors, r.Calls, r.ErrorsByKind, r.ErrorSamples)
		}
	}
	return calls, errors
}

// eventuallyZero waits until count is 0: sessions end (and release what they hold) on
// goroutines of their own once DELETE has been answered.
func eventuallyZero(t *testing.T, what string, count func() int) {
	t.Helper()
	testkit.EventuallyNoError(t, what+" after every session closed", func() error {
		if n := count(); n != 0 {
			return fmt.Errorf("%d left", n)
		}
		return nil
	})
}

const probeEvent = "hamcp_load_probe" // an event type nobody else follows

func TestLoadSessions(t *testing.T) {
	loadlevel.Of(t, "bash .ci/load.sh")
	e := startLoadDemo(t)
	model := e.d.Home.Model()
	listeners := func() int { return model.Listeners()[probeEvent] }
	if n := listeners(); n != 0 {
		t.Fatalf("%d listeners of %s before the test", n, probeEvent)
	}

	// Sessions that hold something beside the load: every one follows an event type on Home
	// Assistant, the first half also holds a file-access grant the user approved.
	const holders = 10
	holding := make([]*mcp.ClientSession, holders)
	read := map[string]any{"path": "/config/configuration.yaml"}
	for i := range holding {
		cs := e.client(t, nil)
		holding[i] = cs
		if res := callJSON(t, cs, "ha_subscribe_events", map[string]any{"event_type": probeEvent}, nil); res.IsError {
			t.Fatalf("subscribe: %s", text(res))
		}
		if i%2 == 1 {
			continue
		}
		te := asToolError(t, callJSON(t, cs, "ha_read_file", read, nil))
		reqID, _ := te.Details["request_id"].(string)
		if te.Error != "permission_required" || reqID == "" {
			t.Fatalf("first read: %+v", te)
		}
		if err := e.d.App.Permissions.Approve(context.Background(), reqID, permission.Approver{Via: permission.ViaPanel, UserID: "panel-user"}); err != nil {
			t.Fatal(err)
		}
		if res := callJSON(t, cs, "ha_read_file", read, nil); res.IsError {
			t.Fatalf("read after approval: %s", text(res))
		}
	}
	if n := listeners(); n != holders {
		t.Fatalf("%d Home Assistant listeners of %s after %d subscriptions", n, probeEvent, holders)
	}
	if n := len(e.d.App.Permissions.SessionGrants()); n != holders/2 {
		t.Fatalf("%d sessions hold grants, want %d", n, holders/2)
	}

	// 200 sessions × 50 calls: 8 clients of 25 sessions, 1,250 calls each.
	const sessions, perSession, nClients = 200, 50, 8
	clients := loadClients(t, e, nClients)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var peak int
	var stop = make(chan struct{})
	var watched sync.WaitGroup
	watched.Go(func() { // the open sessions, to show all 200 (+ the holders) were open at once
		for {
			peak = max(peak, e.d.App.Builder.OpenSessions())
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	start := time.Now()
	reps := runClients(ctx, t, e, clients, loadgen.Config{Mode: loadgen.ModeSession, Calls: cachedReadMix,
		Concurrency: sessions / nClients, Count: sessions / nClients * perSession, Timeout: 30 * time.Second})
	elapsed := time.Since(start)
	close(stop)
	watched.Wait()
	calls, errs := requireNoErrors(t, reps)
	if calls != sessions*perSession {
		t.Errorf("%d calls, want %d", calls, sessions*perSession)
	}
	var worstP99, worstMax, setup float64
	for _, r := range reps {
		worstP99, worstMax, setup = max(worstP99, r.LatencyMS.P99), max(worstMax, r.LatencyMS.Max), max(setup, r.SetupMS)
	}
	t.Logf("LOAD sessions=%d calls=%d errors=%d wall=%.2fs calls/s=%.0f setup_ms=%.0f p99_ms(worst client)=%.1f max_ms=%.1f peak_open_sessions=%d",
		sessions, calls, errs, elapsed.Seconds(), float64(calls)/elapsed.Seconds(), setup, worstP99, worstMax, peak)
	if peak < sessions+holders {
		t.Errorf("at most %d sessions were open at once, want %d (the load's and the holders')", peak, sessions+holders)
	}

	// Disconnect the holders (DELETE): everything they held goes with them.
	for _, cs := range holding {
		if err := cs.Close(); err != nil {
			t.Errorf("closing a session: %v", err)
		}
	}
	eventuallyZero(t, "open sessions", e.d.App.Builder.OpenSessions)
	eventuallyZero(t, "sessions holding grants", func() int { return len(e.d.App.Permissions.SessionGrants()) })
	eventuallyZero(t, "pending permission requests", func() int { return len(e.d.App.Permissions.Pending()) })
	eventuallyZero(t, "Home Assistant event subscriptions", listeners)
}

// sample is one second of the soak: the whole test process (server and load tool share it).
type sample struct {
	goroutines int
	heapKiB    int64 // HeapInuse right after a GC: the live heap
	rssKiB     int64
}

func selfRSSKiB(t *testing.T) int64 {
	n, err := loadgen.RSSKiB(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// slopePerS is the least-squares slope of ys sampled once a second.
func slopePerS(ys []float64) float64 {
	n := float64(len(ys))
	var sx, sy, sxx, sxy float64
	for i, y := range ys {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// growth judges one series for a trend: over the second half, the least-squares line must not
// rise by more than margin, and the last quarter's peak must not exceed the first quarter's by
// more than margin. Both, because a slope alone misses a late step and a peak alone misses a
// slow climb hidden under noise.
type growth struct {
	name   string
	unit   string
	margin float64
}

// check returns the series' figures for the log and what it found growing (nothing: nil).
func (g growth) check(ys []float64) (summary string, problems []string) {
	n := len(ys)
	half, q := ys[n/2:], max(n/4, 1)
	rise := slopePerS(half) * float64(len(half)-1)
	firstMax, lastMax := ys[0], ys[n-q]
	for _, y := range ys[:q] {
		firstMax = max(firstMax, y)
	}
	for _, y := range ys[n-q:] {
		lastMax = max(lastMax, y)
	}
	if rise > g.margin {
		problems = append(problems, fmt.Sprintf("%s grows: the second half's trend rises %.0f %s (bound %.0f)", g.name, rise, g.unit, g.margin))
	}
	if lastMax-firstMax > g.margin {
		problems = append(problems, fmt.Sprintf("%s grows: the last quarter's peak %.0f %s is %.0f above the first quarter's %.0f (bound %.0f)",
			g.name, lastMax, g.unit, lastMax-firstMax, firstMax, g.margin))
	}
	return fmt.Sprintf("%s first-quarter max %.0f, last-quarter max %.0f, second-half trend %+.0f %s", g.name, firstMax, lastMax, rise, g.unit), problems
}

// TestGrowthCheck shows the soak's trend check (it runs in the normal suite: no load) telling a
// noisy flat series from a slow climb and from a late step.
func TestGrowthCheck(t *testing.T) {
	t.Parallel()
	series := func(f func(i int) float64) []float64 {
		ys := make([]float64, 20)
		for i := range ys {
			ys[i] = f(i)
		}
		return ys
	}
	saw := func(i int) float64 { return 100 + float64(i%3*10) } // ±10 around a flat line
	g := growth{name: "goroutines", margin: 25}
	for _, c := range []struct {
		name  string
		ys    []float64
		grows bool
	}{
		{"flat with noise", series(saw), false},
		{"falling", series(func(i int) float64 { return 200 - 5*float64(i) }), false},
		{"slow climb under the noise", series(func(i int) float64 { return saw(i) + 4*float64(i) }), true},
		{"late step", series(func(i int) float64 { return saw(i) + float64(max(0, i-16)*20) }), true},
	} {
		if _, problems := g.check(c.ys); (len(problems) > 0) != c.grows {
			t.Errorf("%s: problems %q, want growth %v", c.name, problems, c.grows)
		}
	}
}

func TestSoak(t *testing.T) {
	lvl := loadlevel.Of(t, "bash .ci/load.sh")
	duration, warmup := 20*time.Second, 4*time.Second
	if lvl == "full" {
		duration, warmup = 10*time.Minute, 30*time.Second
	}
	if s := os.Getenv("HAMCP_SOAK_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 8*time.Second {
			t.Fatalf("HAMCP_SOAK_DURATION=%q: want a duration of at least 8s, e.g. 10m", s)
		}
		duration = d
	}
	e := startLoadDemo(t)
	clients := loadClients(t, e, 3)

	// Steady load in rounds of 2 s, so sessions keep opening and closing as they would under
	// assistants that come and go: two clients with 4 sessions each, one client of sessionless
	// POSTs with 2 workers.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var calls, rounds uint64
	var failures []string
	var loaders sync.WaitGroup
	end := time.Now().Add(warmup + duration)
	for i, c := range clients {
		mode, conc := loadgen.ModeSession, 4
		if i == len(clients)-1 {
			mode, conc = loadgen.ModeSessionless, 2
		}
		loaders.Go(func() {
			for time.Until(end) > 0 && ctx.Err() == nil {
				rep, err := loadgen.Run(ctx, loadgen.Config{Mode: mode, URL: e.url + "/mcp", Token: c.token,
					Headers: [][2]string{{"X-Forwarded-For", c.xff}}, Calls: cachedReadMix, Concurrency: conc,
					Duration: min(2*time.Second, max(time.Until(end), time.Millisecond)), Timeout: 30 * time.Second})
				mu.Lock()
				rounds++
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				default:
					calls += rep.Calls
					if rep.Errors != 0 {
						failures = append(failures, fmt.Sprintf("%s: %d errors %v %v", mode, rep.Errors, rep.ErrorsByKind, rep.ErrorSamples))
					}
				}
				mu.Unlock()
			}
		})
	}

	// One sample a second after the warm-up.
	time.Sleep(warmup)
	var samples []sample
	var ms runtime.MemStats
	tick := time.NewTicker(time.Second)
	for now := range tick.C {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		samples = append(samples, sample{goroutines: runtime.NumGoroutine(), heapKiB: int64(ms.HeapInuse >> 10), rssKiB: selfRSSKiB(t)})
		if !now.Before(end) {
			break
		}
	}
	tick.Stop()
	loaders.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if len(failures) > 5 {
		t.Fatalf("%d failed rounds", len(failures))
	}

	series := func(f func(sample) int64) []float64 {
		out := make([]float64, len(samples))
		for i, s := range samples {
			out[i] = float64(f(s))
		}
		return out
	}
	// Margins, from short and full runs on the 2-core machine (docs/performance.md): goroutines
	// move by ±30 with the calls in flight and the sessions of a round opening and closing; the
	// live heap after a GC by ±5 MB (the rounds' sessions and buffers come and go); RSS by ±7 MB
	// as the scavenger returns pages late. A short run opens about 4 sessions a second and makes
	// about 2,500 calls a second, so a goroutine leaked per session (60 more between the first
	// and the last quarter) or 350 bytes kept per call exceeds them; a full run, thirty times
	// longer, catches leaks about thirty times smaller.
	// The short run (CI, on a machine busy with other jobs) allows goroutines more room: their
	// count swings with the calls in flight (a -37 trend was seen under load), and a flaky CI
	// proves nothing; leaks per session are caught by TestLoadSessions and by the full run.
	goroutineMargin := 50.0
	if lvl == "short" {
		goroutineMargin = 80
	}
	var report []string
	for _, c := range []struct {
		g  growth
		ys []float64
	}{
		{growth{"goroutines", "", goroutineMargin}, series(func(s sample) int64 { return int64(s.goroutines) })},
		{growth{"live heap", "KiB", 8 << 10}, series(func(s sample) int64 { return s.heapKiB })},
		{growth{"RSS", "KiB", 16 << 10}, series(func(s sample) int64 { return s.rssKiB })},
	} {
		summary, problems := c.g.check(c.ys)
		report = append(report, summary)
		for _, p := range problems {
			t.Error(p)
		}
	}
	t.Logf("SOAK duration=%s samples=%d rounds=%d calls=%d calls/s=%.0f failed_rounds=%d open_sessions_after=%d",
		duration, len(samples), rounds, calls, float64(calls)/(duration+warmup).Seconds(), len(failures), e.d.App.Builder.OpenSessions())
	for _, r := range report {
		t.Log("SOAK " + r)
	}
	eventuallyZero(t, "open sessions", e.d.App.Builder.OpenSessions)
}
