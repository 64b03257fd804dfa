package loadgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/demo"
	"github.com/hamcp/hamcp/dev/loadgen"
	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/app"
	"github.com/hamcp/hamcp/src/config"
)

// stdioChildEnv makes the test binary run as `hamcp stdio --demo` would: the real demo home and
// the real stdio server, without building the hamcp binary first.
const stdioChildEnv = "LOADGEN_TEST_STDIO_DEMO"

func TestMain(m *testing.M) {
	if os.Getenv(stdioChildEnv) == "1" {
		os.Exit(serveStdioDemo())
	}
	os.Exit(m.Run())
}

func demoConfig() (*config.Config, error) {
	cfg, err := config.Load(config.Sources{NoOptionsFile: true, Env: func(string) string { return "" }})
	if err != nil {
		return nil, err
	}
	cfg.RateLimit = 0
	return cfg, nil
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func serveStdioDemo() int {
	ctx := context.Background()
	cfg, err := demoConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	d, err := demo.Start(ctx, cfg, sim.Options{HistoryDays: -1}, quiet())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer d.Close()
	d.App.WaitReady(ctx, 5*time.Second)
	if err := d.App.ServeStdio(ctx, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// One demo (simulated home + hamcp over HTTP, with its bearer token) for the package.
var (
	demoOnce sync.Once
	demoURL  string
	demoTok  string
	demoErr  error
)

func httpDemo(t *testing.T) (string, string) {
	t.Helper()
	demoOnce.Do(func() {
		cfg, err := demoConfig()
		if err != nil {
			demoErr = err
			return
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			demoErr = err
			return
		}
		cfg.ExternalURL = "http://" + ln.Addr().String()
		ctx := context.Background()
		d, err := demo.Start(ctx, cfg, sim.Options{HistoryDays: -1}, quiet())
		if err != nil {
			demoErr = err
			return
		}
		d.App.WaitReady(ctx, 10*time.Second)
		// Left running until the test binary exits: it is shared by the package's tests.
		go d.App.ServeHTTP(ctx, ln, app.Options{})
		demoURL, demoTok = "http://"+ln.Addr().String()+"/mcp", d.Info.Token
	})
	if demoErr != nil {
		t.Fatalf("starting the demo: %v", demoErr)
	}
	return demoURL, demoTok
}

var cachedRead = loadgen.Call{Name: "ha_get_entity_details", Arguments: json.RawMessage(`{"entity_id":"sun.sun"}`)}

func TestRunAgainstHamcpDemo(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		cfg  func(url, token string) loadgen.Config
	}{
		{"session", func(url, token string) loadgen.Config {
			return loadgen.Config{Mode: loadgen.ModeSession, URL: url, Token: token, PID: os.Getpid()}
		}},
		{"sessionless", func(url, token string) loadgen.Config {
			return loadgen.Config{Mode: loadgen.ModeSessionless, URL: url, Token: token, Headers: [][2]string{{"X-Load-Test", "1"}}}
		}},
		{"stdio shared", func(string, string) loadgen.Config {
			return loadgen.Config{Mode: loadgen.ModeStdio, Command: []string{self, "-test.run=^$"}}
		}},
		{"stdio per-worker", func(string, string) loadgen.Config {
			return loadgen.Config{Mode: loadgen.ModeStdio, StdioProcesses: loadgen.StdioPerWorker, Command: []string{self, "-test.run=^$"}}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var url, token string
			if !strings.HasPrefix(tt.name, "stdio") {
				url, token = httpDemo(t)
			}
			cfg := tt.cfg(url, token)
			if cfg.Mode == loadgen.ModeStdio {
				cfg.Env = []string{stdioChildEnv + "=1"}
			}
			cfg.Calls = []loadgen.Call{cachedRead, {Name: "ha_get_states", Arguments: json.RawMessage(`{"domain":"light","limit":2}`), Weight: 1}}
			cfg.Concurrency, cfg.Count = 8, 200
			if cfg.StdioProcesses == loadgen.StdioPerWorker {
				cfg.Concurrency = 2 // two demo homes
			}
			rep, err := loadgen.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Calls != 200 || rep.OK != 200 || rep.Errors != 0 || len(rep.ErrorsByKind) != 0 {
				t.Fatalf("calls %d ok %d errors %v %v", rep.Calls, rep.OK, rep.ErrorsByKind, rep.ErrorSamples)
			}
			l := rep.LatencyMS
			if rep.CallsPerS <= 0 || l.Min <= 0 || l.Min > l.P50 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.Max || l.Max > 5000 {
				t.Fatalf("implausible throughput/latency: %v calls/s %+v", rep.CallsPerS, l)
			}
			for _, name := range []string{"ha_get_entity_details", "ha_get_states"} {
				if c := rep.ByCall[name]; c.OK < 50 || c.ResponseBytes < 100 {
					t.Errorf("%s: %+v", name, c)
				}
			}
			if rep.ByCall["ha_get_entity_details"].OK+rep.ByCall["ha_get_states"].OK != 200 {
				t.Errorf("per-call breakdown does not add up: %+v", rep.ByCall)
			}
			if rep.ProtocolVersion == "" || rep.CPU.ClientS <= 0 {
				t.Errorf("protocol version %q, client cpu %v", rep.ProtocolVersion, rep.CPU.ClientS)
			}
			if rep.Mode == loadgen.ModeStdio || cfg.PID != 0 {
				if rep.RSS == nil || rep.RSS.IdleKiB < 1000 || rep.RSS.MaxKiB < rep.RSS.MinKiB || rep.RSS.Samples < 1 || rep.CPU.ServerS == nil {
					t.Errorf("server RSS/CPU not sampled: %+v %+v", rep.RSS, rep.CPU)
				}
				if rep.Mode == loadgen.ModeStdio && len(rep.RSS.PIDs) != map[string]int{loadgen.StdioShared: 1, loadgen.StdioPerWorker: 2}[rep.StdioProcesses] {
					t.Errorf("sampled pids %v", rep.RSS.PIDs)
				}
			}
		})
	}
}

func TestRunCountsAuthFailuresFromHamcp(t *testing.T) {
	t.Parallel()
	url, _ := httpDemo(t)
	rep, err := loadgen.Run(context.Background(), loadgen.Config{Mode: loadgen.ModeSessionless, URL: url, Token: "not-the-token",
		Calls: []loadgen.Call{cachedRead}, Concurrency: 2, Count: 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 20 || rep.ErrorsByKind["http_401"] != 20 {
		t.Fatalf("want 20 × http_401, got %v %v", rep.ErrorsByKind, rep.ErrorSamples)
	}
	// A session that cannot even be opened is a setup error, not a report.
	if _, err := loadgen.Run(context.Background(), loadgen.Config{Mode: loadgen.ModeSession, URL: url, Token: "not-the-token",
		Calls: []loadgen.Call{cachedRead}, Count: 1}); err == nil || !strings.Contains(err.Error(), "http_401") {
		t.Fatalf("opening a session with a bad token: %v", err)
	}
}

// faultyServer answers like an MCP server whose calls fail in every way the report tells apart.
// With sse it answers requests as event streams (a notification first), as stateful servers do.
func faultyServer(t *testing.T, sse bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		answer := func(result string) {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, req.ID, result)
			if !sse {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, msg)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\nevent: message\ndata: %s\n\n", msg)
		}
		if req.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "s1")
			answer(`"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"faulty","version":"1"}}`)
			return
		}
		if r.Header.Get("Mcp-Session-Id") != "s1" && sse {
			http.Error(w, "no session", http.StatusNotFound)
			return
		}
		switch req.Params.Name {
		case "ok":
			answer(`"result":{"content":[{"type":"text","text":"fine"}]}`)
		case "fail500":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "rpc":
			answer(`"error":{"code":-32602,"message":"invalid params"}`)
		case "iserr":
			answer(`"result":{"isError":true,"content":[{"type":"text","text":"tool failed"}]}`)
		case "hangup":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "wrongid":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":"nope","result":{}}`)
		case "slow":
			// Answer only after the client gave up, so the call is a timeout however loaded the
			// machine is; the other kinds get the whole client timeout to fail their own way.
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			answer(`"result":{"content":[]}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func TestRunCountsErrorsByKind(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"ok": "", "fail500": "http_500", "rpc": "jsonrpc_-32602", "iserr": loadgen.KindToolError,
		"hangup": loadgen.KindTransport, "wrongid": loadgen.KindBadResponse, "slow": loadgen.KindTimeout,
	}
	var calls []loadgen.Call
	for name := range want {
		calls = append(calls, loadgen.Call{Name: name})
	}
	for _, mode := range []string{loadgen.ModeSession, loadgen.ModeSessionless} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			rep, err := loadgen.Run(context.Background(), loadgen.Config{Mode: mode, URL: faultyServer(t, mode == loadgen.ModeSession),
				Calls: calls, Concurrency: 4, Count: 70, Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Calls != 70 {
				t.Fatalf("calls %d", rep.Calls)
			}
			var sum uint64
			for name, kind := range want {
				c := rep.ByCall[name]
				if c.Calls == 0 {
					t.Errorf("%s never called", name)
					continue
				}
				if kind == "" {
					if c.Errors != 0 || c.OK != c.Calls {
						t.Errorf("%s: %+v", name, c)
					}
					continue
				}
				if c.OK != 0 || c.ErrorsByKind[kind] != c.Calls {
					t.Errorf("%s: want every call counted as %s, got %+v", name, kind, c)
				}
				if rep.ErrorSamples[kind] == "" {
					t.Errorf("no sample message for %s", kind)
				}
				sum += c.Calls
			}
			if rep.Errors != sum || rep.OK != rep.Calls-sum {
				t.Errorf("totals %d ok %d errors, kinds %v", rep.OK, rep.Errors, rep.ErrorsByKind)
			}
			if !strings.Contains(rep.ErrorSamples["tool_error"], "tool failed") || !strings.Contains(rep.ErrorSamples["http_500"], "boom") {
				t.Errorf("samples %v", rep.ErrorSamples)
			}
			if mode == loadgen.ModeSession && rep.ProtocolVersion != "2025-03-26" {
				t.Errorf("negotiated version %q", rep.ProtocolVersion)
			}
		})
	}
}

func TestStdioServerThatDiesIsReportedWithItsStderr(t *testing.T) {
	t.Parallel()
	_, err := loadgen.Run(context.Background(), loadgen.Config{Mode: loadgen.ModeStdio, Command: []string{"sh", "-c", "echo 'config missing' >&2; exit 3"},
		Calls: []loadgen.Call{{Name: "x"}}, Count: 1, Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "config missing") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("want the child's stderr and exit status in the error, got %v", err)
	}
}

func TestDurationBoundsTheRun(t *testing.T) {
	t.Parallel()
	start := time.Now()
	rep, err := loadgen.Run(context.Background(), loadgen.Config{Mode: loadgen.ModeSessionless, URL: faultyServer(t, false),
		Calls: []loadgen.Call{{Name: "ok"}}, Concurrency: 2, Duration: 200 * time.Millisecond, Warmup: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The lower bounds are the configuration's; the upper ones only tell a run that ended from
	// one that ignored its duration (and would run until the test's timeout), since a busy
	// machine may take seconds to end the calls in flight.
	if took := time.Since(start); took < 300*time.Millisecond || took > testkit.Patience {
		t.Errorf("run took %v for 100 ms warm-up + 200 ms", took)
	}
	if rep.WarmupCalls == 0 || rep.Calls == 0 || rep.ElapsedS < 0.2 || rep.ElapsedS > testkit.Patience.Seconds() || rep.Errors != 0 {
		t.Errorf("warm-up %d calls, measured %d in %vs, errors %v", rep.WarmupCalls, rep.Calls, rep.ElapsedS, rep.ErrorsByKind)
	}
}
