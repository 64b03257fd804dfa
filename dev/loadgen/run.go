package loadgen

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// conn is one worker's way to the server.
type conn interface {
	call(ctx context.Context, body []byte, id int64) outcome
}

// labelStats is one worker's tally for one mix entry.
type labelStats struct {
	hist     Histogram
	calls    uint64
	ok       uint64
	kinds    map[string]uint64
	samples  map[string]string
	bytesIn  uint64
	bytesOut uint64
}

func (s *labelStats) add(o outcome, d time.Duration, out int) {
	s.calls++
	s.bytesIn += uint64(o.in)
	s.bytesOut += uint64(out)
	if o.kind == "" {
		s.ok++
		s.hist.Record(d)
		return
	}
	if s.kinds == nil {
		s.kinds, s.samples = map[string]uint64{}, map[string]string{}
	}
	s.kinds[o.kind]++
	if _, ok := s.samples[o.kind]; !ok {
		s.samples[o.kind] = o.msg
	}
}

func (s *labelStats) merge(o *labelStats) {
	s.hist.Merge(&o.hist)
	s.calls += o.calls
	s.ok += o.ok
	s.bytesIn += o.bytesIn
	s.bytesOut += o.bytesOut
	for k, v := range o.kinds {
		if s.kinds == nil {
			s.kinds, s.samples = map[string]uint64{}, map[string]string{}
		}
		s.kinds[k] += v
		if _, ok := s.samples[k]; !ok {
			s.samples[k] = o.samples[k]
		}
	}
}

// Run drives the server as cfg says and reports. An error means the run could not start (bad
// configuration, a session or process that would not initialize); failed calls during the
// run are counted in the report instead.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	labels, encs, err := encodeMix(&cfg)
	if err != nil {
		return nil, err
	}
	schedule := scheduleOf(cfg.Calls)

	rep := &Report{Label: cfg.Label, Mode: cfg.Mode, Concurrency: cfg.Concurrency, Started: time.Now().UTC().Format(time.RFC3339)}
	rep.Machine.CPUs, rep.Machine.GOMAXPROCS = runtime.NumCPU(), runtime.GOMAXPROCS(0)
	rep.Machine.LoadAverageStart = loadAverage()
	rep.Histogram = histogramNote

	var serverPIDs []int
	if cfg.PID > 0 {
		serverPIDs = []int{cfg.PID}
	}
	var idle int64
	var idleErr error
	if len(serverPIDs) > 0 {
		idle, idleErr = treeRSS(serverPIDs)
	}

	// Setup: every worker's session or process, in parallel.
	setupStart := time.Now()
	conns := make([]conn, cfg.Concurrency)
	var closers []func()
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()
	var procs []*stdioProc
	var shared *httpShared
	switch cfg.Mode {
	case ModeSession, ModeSessionless:
		rep.Target = cfg.URL
		if shared, err = newHTTPShared(&cfg); err != nil {
			return nil, err
		}
		closers = append(closers, shared.close)
		hc := make([]*httpConn, cfg.Concurrency)
		for i := range hc {
			hc[i] = newHTTPConn(shared)
			conns[i] = hc[i]
		}
		if cfg.Mode == ModeSessionless {
			rep.ProtocolVersion = cfg.ProtocolVersion
			for _, c := range hc {
				c.hdr.Set("Mcp-Protocol-Version", cfg.ProtocolVersion)
			}
			break
		}
		versions := make([]string, len(hc))
		err := parallel(len(hc), func(i int) error {
			v, err := hc[i].open(ctx, cfg.ProtocolVersion)
			versions[i] = v
			return err
		})
		closers = append(closers, func() {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			parallel(len(hc), func(i int) error { hc[i].closeSession(cctx); return nil })
		})
		if err != nil {
			return nil, fmt.Errorf("opening %d sessions at %s: %w", len(hc), cfg.URL, err)
		}
		rep.ProtocolVersion = versions[0]
	case ModeStdio:
		rep.Target = "stdio: " + strings.Join(cfg.Command, " ")
		rep.StdioProcesses = cfg.StdioProcesses
		n := 1
		if cfg.StdioProcesses == StdioPerWorker {
			n = cfg.Concurrency
		}
		procs = make([]*stdioProc, n)
		versions := make([]string, n)
		var mu sync.Mutex
		err := parallel(n, func(i int) error {
			p, err := startStdio(cfg.Command, cfg.Env, cfg.Stderr)
			if err != nil {
				return err
			}
			mu.Lock()
			procs[i] = p
			closers = append(closers, p.stop)
			mu.Unlock()
			versions[i], err = p.initialize(ctx, cfg.ProtocolVersion, cfg.Timeout)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("starting %q: %w", strings.Join(cfg.Command, " "), err)
		}
		rep.ProtocolVersion = versions[0]
		for i := range conns {
			conns[i] = &stdioConn{p: procs[i%n], ch: make(chan outcome, 1), timeout: cfg.Timeout}
		}
		for _, p := range procs {
			serverPIDs = append(serverPIDs, p.pid())
		}
		if cfg.PID == 0 {
			idle, idleErr = treeRSS(serverPIDs)
		}
	}
	rep.SetupMS = ms(time.Since(setupStart))

	var sampler *rssSampler
	if len(serverPIDs) > 0 {
		sampler = startRSSSampler(serverPIDs, cfg.RSSInterval)
	}

	// The run: warm-up, then the measured part.
	start := time.Now()
	measureFrom := start.Add(cfg.Warmup)
	var deadline time.Time
	if cfg.Duration > 0 {
		deadline = measureFrom.Add(cfg.Duration)
	}
	var claimed, warmups atomic.Uint64
	var cpuOnce sync.Once
	var clientCPU0, serverCPU0 float64
	markStart := func() {
		cpuOnce.Do(func() {
			clientCPU0 = selfCPU()
			if len(serverPIDs) > 0 {
				serverCPU0 = treeCPU(serverPIDs)
			}
		})
	}
	if cfg.Warmup == 0 {
		markStart()
	}
	stats := make([][]labelStats, cfg.Concurrency)
	lastAt := make([]time.Time, cfg.Concurrency)
	var wg sync.WaitGroup
	for w := range cfg.Concurrency {
		stats[w] = make([]labelStats, len(labels))
		wg.Go(func() {
			var buf []byte
			pos := w % len(schedule)
			for seq := int64(0); ; seq++ {
				if ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				measured := !t0.Before(measureFrom)
				if measured {
					markStart()
					if !deadline.IsZero() && !t0.Before(deadline) {
						return
					}
					if cfg.Count > 0 && claimed.Add(1) > uint64(cfg.Count) {
						return
					}
				}
				e := &encs[schedule[pos]]
				pos++
				if pos == len(schedule) {
					pos = 0
				}
				id := seq*int64(cfg.Concurrency) + int64(w) + 1
				buf = e.build(buf, id)
				o := conns[w].call(ctx, buf, id)
				if !measured {
					warmups.Add(1)
					continue
				}
				if ctx.Err() != nil && o.kind != "" {
					return // interrupted: the call did not fail, the run was stopped
				}
				stats[w][e.label].add(o, o.at.Sub(t0), len(buf))
				lastAt[w] = o.at
			}
		})
	}
	wg.Wait()
	end := measureFrom
	for _, t := range lastAt {
		if t.After(end) {
			end = t
		}
	}
	markStart()
	clientCPU := selfCPU() - clientCPU0
	var serverCPU float64
	if len(serverPIDs) > 0 {
		serverCPU = treeCPU(serverPIDs) - serverCPU0
	}
	if sampler != nil {
		sampler.sample(serverPIDs)
		sampler.finish()
	}
	rep.Machine.LoadAverageEnd = loadAverage()

	// The tally.
	elapsed := end.Sub(measureFrom).Seconds()
	rep.WarmupS, rep.WarmupCalls, rep.ElapsedS = cfg.Warmup.Seconds(), warmups.Load(), round(elapsed, 3)
	all := labelStats{}
	perLabel := make([]labelStats, len(labels))
	for w := range stats {
		for l := range stats[w] {
			perLabel[l].merge(&stats[w][l])
		}
	}
	rep.ByCall = map[string]CallReport{}
	for l, name := range labels {
		s := &perLabel[l]
		all.merge(s)
		cr := CallReport{Calls: s.calls, OK: s.ok, Errors: s.calls - s.ok, LatencyMS: latencyOf(&s.hist), ErrorsByKind: s.kinds}
		if elapsed > 0 {
			cr.CallsPerS = round(float64(s.calls)/elapsed, 1)
		}
		if s.calls > 0 {
			cr.ResponseBytes = round(float64(s.bytesIn)/float64(s.calls), 1)
		}
		rep.ByCall[name] = cr
	}
	rep.Calls, rep.OK, rep.Errors = all.calls, all.ok, all.calls-all.ok
	rep.ErrorsByKind, rep.ErrorSamples = all.kinds, all.samples
	if rep.ErrorsByKind == nil {
		rep.ErrorsByKind = map[string]uint64{}
	}
	if elapsed > 0 {
		rep.CallsPerS = round(float64(all.calls)/elapsed, 1)
		rep.OKPerS = round(float64(all.ok)/elapsed, 1)
	}
	rep.LatencyMS = latencyOf(&all.hist)
	if all.calls > 0 {
		rep.RequestBytes = round(float64(all.bytesOut)/float64(all.calls), 1)
		rep.ResponseBytes = round(float64(all.bytesIn)/float64(all.calls), 1)
		rep.CPU.ClientUSPerCall = round(clientCPU*1e6/float64(all.calls), 1)
	}
	rep.CPU.ClientS = round(clientCPU, 3)
	if len(serverPIDs) > 0 {
		s := round(serverCPU, 3)
		rep.CPU.ServerS = &s
		if all.calls > 0 {
			u := round(serverCPU*1e6/float64(all.calls), 1)
			rep.CPU.ServerUSPerCall = &u
		}
	}
	if sampler != nil {
		r := &RSS{PIDs: serverPIDs, IdleKiB: idle, MinKiB: sampler.min, MaxKiB: sampler.max, AfterKiB: sampler.cur,
			Samples: sampler.n, IntervalMS: cfg.RSSInterval.Milliseconds()}
		if sampler.n > 0 {
			r.MeanKiB = sampler.sum / int64(sampler.n)
		}
		if idleErr != nil {
			r.Error = "idle sample: " + idleErr.Error()
		} else if sampler.lastErr != nil {
			r.Error = sampler.lastErr.Error()
		}
		rep.RSS = r
	}
	if shared != nil {
		rep.SSEStreamsLeftOpen = shared.lingered.Load()
	}
	for _, p := range procs {
		rep.StdioNonJSONLines += p.nonJSON.Load()
	}
	return rep, nil
}

// encodeMix pre-encodes each mix entry and names the report's breakdown: entries with the same
// label share a line.
func encodeMix(cfg *Config) ([]string, []encoded, error) {
	var labels []string
	index := map[string]int{}
	encs := make([]encoded, len(cfg.Calls))
	stateless := cfg.Mode == ModeSessionless
	for i, c := range cfg.Calls {
		label := c.Label
		if label == "" {
			label = c.Name
			if c.Method != "" && c.Method != "tools/call" {
				label = c.Method
			}
		}
		l, ok := index[label]
		if !ok {
			l = len(labels)
			index[label] = l
			labels = append(labels, label)
		}
		e, err := encodeCall(c, l, cfg.ProtocolVersion, stateless)
		if err != nil {
			return nil, nil, fmt.Errorf("call %q: %w", label, err)
		}
		encs[i] = e
	}
	return labels, encs, nil
}

// scheduleOf spreads the entries by weight over one cycle, interleaved (smooth weighted round
// robin) so a short run still sees the mix's proportions. Workers start at different offsets.
func scheduleOf(calls []Call) []int {
	total := 0
	for _, c := range calls {
		total += c.Weight
	}
	cur := make([]int, len(calls))
	out := make([]int, 0, total)
	for range total {
		best := 0
		for i, c := range calls {
			cur[i] += c.Weight
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out = append(out, best)
	}
	return out
}

// parallel runs f(0..n-1) at once (at most 64 at a time) and returns the first error.
func parallel(n int, f func(int) error) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	errs := make([]error, n)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
