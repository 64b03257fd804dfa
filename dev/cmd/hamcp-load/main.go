// Command hamcp-load measures an MCP server: it drives it with a mix of tool calls from
// concurrent clients over Streamable HTTP (sessions or sessionless single POSTs) or stdio, and
// prints throughput, latency percentiles, errors by kind and the server's memory as JSON.
// It works against any MCP server, so hamcp and a peer can be measured the same way.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hamcp/hamcp/dev/loadgen"
)

const usageHead = `hamcp-load drives an MCP server with tool calls and reports throughput, latency and errors as JSON.

Usage:
  hamcp-load --url URL [--mode session|sessionless] --call SPEC [flags]
  hamcp-load --mode stdio --call SPEC [flags] -- COMMAND [ARGS...]

Modes:
  session      Streamable HTTP, one stateful session per client: initialize and
               notifications/initialized, then tools/call with Mcp-Session-Id and
               MCP-Protocol-Version; JSON and SSE (text/event-stream) answers are both
               read. Sessions are ended with DELETE at the end. Setup is not measured.
  sessionless  Streamable HTTP, each call one POST without a session (hamcp's single-POST
               form; with --protocol-version 2026-07-28 or later, MCP's stateless requests
               with the version in _meta).
  stdio        Starts COMMAND (no shell) and speaks newline-delimited JSON-RPC on its
               stdin/stdout. --stdio-processes shared (default) starts one process, one
               session, and keeps up to -c calls in flight on it (answers matched by id),
               as a desktop client with parallel tool calls would; per-worker starts one
               process per client. The processes' RSS and CPU are sampled automatically.

Calls (--call, repeatable): NAME[*WEIGHT][=JSON_ARGUMENTS]
  --call 'ha_get_entity_details={"entity_id":"sun.sun"}'
  --call 'echo*3={"message":"hi"}'        three times as often as weight-1 entries
  Or --mix FILE, a JSON array: [{"name":"echo","arguments":{"message":"hi"},"weight":3,
  "label":"echo-short"}, {"method":"tools/list","label":"list"}] ("method" defaults to
  tools/call; for another method "arguments" is sent as its params).
  Entries are interleaved by weight; each client starts at a different point of the cycle.

Measurement:
  -c clients run calls back to back (closed loop). After --warmup (not counted), the run
  lasts -d or until -n calls have started, whichever comes first (-d 10s if neither).
  Latency is per successful call, from writing the request to having read its answer;
  percentiles come from a log-linear histogram (128 buckets per power of two, at most
  0.8 % high, fixed memory); min, mean and max are exact. Errors are counted by kind:
  http_STATUS, jsonrpc_CODE, tool_error (result.isError), transport, timeout,
  bad_response; the first message of each kind is kept. cpu.client_s is the load tool's
  own CPU time, to show it is not the bottleneck; with --pid (or in stdio mode) the
  server's CPU time and RSS (VmRSS from /proc, with its child processes, every
  --rss-interval) are reported too.

Flags:
`

const usageTail = `
Exit status: 0 when the run completed (failed calls are in the report unless
--fail-on-error), 1 when it could not start or --fail-on-error saw errors, 2 for bad flags.

Example (hamcp's demo, started with: hamcp demo --no-auth --rate-limit 0):
  hamcp-load --url http://127.0.0.1:8099/mcp -c 8 -d 10s --pid $(pgrep -n hamcp) \
    --call 'ha_get_entity_details={"entity_id":"sun.sun"}'
  hamcp-load --mode stdio -c 8 -n 5000 --call 'ha_get_entity_details={"entity_id":"sun.sun"}' \
    -- hamcp stdio --demo
`

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ", ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, opts, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "hamcp-load:", err)
		fmt.Fprintln(stderr, "Run hamcp-load --help for the flags.")
		return 2
	}
	if opts.stdioStderr {
		cfg.Stderr = stderr
	}
	rep, err := loadgen.Run(ctx, *cfg)
	if err != nil {
		fmt.Fprintln(stderr, "hamcp-load:", err)
		return 1
	}
	var b []byte
	if opts.compact {
		b, _ = json.Marshal(rep)
	} else {
		b, _ = json.MarshalIndent(rep, "", "  ")
	}
	b = append(b, '\n')
	if opts.out != "" {
		if err := os.WriteFile(opts.out, b, 0o644); err != nil {
			fmt.Fprintln(stderr, "hamcp-load: --out:", err)
			return 1
		}
	} else {
		stdout.Write(b)
	}
	if opts.failOnError && rep.Errors > 0 {
		fmt.Fprintf(stderr, "hamcp-load: %d of %d calls failed: %v\n", rep.Errors, rep.Calls, rep.ErrorsByKind)
		return 1
	}
	return 0
}

type options struct {
	out         string
	compact     bool
	failOnError bool
	stdioStderr bool
}

func parseArgs(args []string, stderr io.Writer) (*loadgen.Config, *options, error) {
	fs := flag.NewFlagSet("hamcp-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &loadgen.Config{}
	opts := &options{}
	var calls, headers, env multi
	var mix, tokenFile string
	fs.StringVar(&cfg.URL, "url", "", "the server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8099/mcp (session and sessionless modes)")
	fs.StringVar(&cfg.Mode, "mode", loadgen.ModeSession, "session, sessionless or stdio")
	fs.StringVar(&cfg.StdioProcesses, "stdio-processes", loadgen.StdioShared, "stdio mode: shared (one process for all clients) or per-worker (one process per client)")
	fs.Var(&calls, "call", "a call of the mix, NAME[*WEIGHT][=JSON_ARGUMENTS] (repeatable)")
	fs.StringVar(&mix, "mix", "", "a JSON file with the mix: [{\"name\", \"arguments\", \"weight\", \"label\", \"method\"}, …]")
	fs.IntVar(&cfg.Concurrency, "c", 1, "concurrent clients (sessions, connections or in-flight stdio calls)")
	fs.IntVar(&cfg.Concurrency, "concurrency", 1, "same as -c")
	fs.DurationVar(&cfg.Duration, "d", 0, "how long to measure, e.g. 10s (default 10s unless -n is given)")
	fs.DurationVar(&cfg.Duration, "duration", 0, "same as -d")
	fs.IntVar(&cfg.Count, "n", 0, "measure this many calls in all (with -d too: whichever ends first)")
	fs.IntVar(&cfg.Count, "count", 0, "same as -n")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "run the load this long first, uncounted (0 to skip)")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "give up on a call after this long (counted as a timeout error)")
	fs.StringVar(&cfg.Token, "token", "", "bearer token, sent as Authorization: Bearer TOKEN (visible in ps: prefer --token-file or $HAMCP_LOAD_TOKEN)")
	fs.StringVar(&tokenFile, "token-file", "", "read the bearer token from this file")
	fs.Var(&env, "env", "stdio mode: add NAME=value to the server's environment, e.g. --env GOGC=400 (repeatable)")
	fs.Var(&headers, "header", "an extra request header, 'Name: value' (repeatable; HTTP modes)")
	fs.StringVar(&cfg.ProtocolVersion, "protocol-version", loadgen.DefaultProtocolVersion, "MCP protocol version to ask for in initialize (or to send, sessionless)")
	fs.IntVar(&cfg.PID, "pid", 0, "the server's process id: sample its RSS and CPU time (Linux /proc)")
	fs.DurationVar(&cfg.RSSInterval, "rss-interval", 200*time.Millisecond, "how often to sample the server's RSS")
	fs.DurationVar(&cfg.SSELinger, "sse-linger", time.Second, "after an SSE answer, wait this long for the server to end the stream before dropping the connection")
	fs.StringVar(&cfg.Label, "label", "", "free text copied into the report")
	fs.StringVar(&opts.out, "out", "", "write the JSON report to this file instead of stdout")
	fs.BoolVar(&opts.compact, "compact", false, "print the report on one line")
	fs.BoolVar(&opts.failOnError, "fail-on-error", false, "exit 1 if any measured call failed")
	fs.BoolVar(&opts.stdioStderr, "stdio-stderr", false, "stdio mode: pass the server's stderr through (otherwise only its tail is kept, for errors)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHead)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), usageTail)
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	cfg.Command = fs.Args()
	if cfg.Mode != loadgen.ModeStdio && len(cfg.Command) > 0 {
		return nil, nil, fmt.Errorf("unexpected arguments %q: a server command line is only for --mode stdio (after --)", cfg.Command)
	}
	for _, c := range calls {
		call, err := loadgen.ParseCall(c)
		if err != nil {
			return nil, nil, err
		}
		cfg.Calls = append(cfg.Calls, call)
	}
	if mix != "" {
		more, err := loadgen.LoadMix(mix)
		if err != nil {
			return nil, nil, err
		}
		cfg.Calls = append(cfg.Calls, more...)
	}
	cfg.Env = env
	for _, h := range headers {
		kv, err := loadgen.ParseHeader(h)
		if err != nil {
			return nil, nil, err
		}
		cfg.Headers = append(cfg.Headers, kv)
	}
	if tokenFile != "" {
		if cfg.Token != "" {
			return nil, nil, errors.New("--token and --token-file: give one")
		}
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--token-file: %w", err)
		}
		cfg.Token = strings.TrimSpace(string(b))
	}
	if cfg.Token == "" {
		cfg.Token = os.Getenv("HAMCP_LOAD_TOKEN")
	}
	if cfg.RSSInterval <= 0 {
		return nil, nil, fmt.Errorf("--rss-interval %v: must be positive", cfg.RSSInterval)
	}
	if cfg.SSELinger <= 0 {
		return nil, nil, fmt.Errorf("--sse-linger %v: must be positive", cfg.SSELinger)
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	return cfg, opts, nil
}
