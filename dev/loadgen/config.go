// Package loadgen drives an MCP server with a mix of requests from concurrent workers over
// Streamable HTTP (stateful sessions or sessionless single POSTs) or stdio, and reports
// throughput, latency percentiles, errors by kind and the server's memory. It is the engine of
// the hamcp-load command and knows nothing about hamcp: any MCP server can be measured.
//
// The client is hand-written JSON-RPC over net/http and pipes rather than the go-sdk client:
// client and server share the same cores during a run, and the SDK client allocates a
// decoder buffer per message, keeps a standalone SSE stream per session and turns HTTP statuses
// into opaque errors, so it would measure itself and could not count errors by kind. Here each
// request body is pre-encoded but for its id, connections are kept alive, response buffers are
// reused, and only id, error code and isError are decoded.
package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Modes of driving a server.
const (
	ModeSession     = "session"     // Streamable HTTP: initialize, then tools/call with Mcp-Session-Id
	ModeSessionless = "sessionless" // Streamable HTTP: each call a single POST, no session
	ModeStdio       = "stdio"       // newline-delimited JSON-RPC over a child process's stdin/stdout
)

// Stdio process layouts.
const (
	StdioShared    = "shared"     // one child process; all workers' calls in flight on its pipe
	StdioPerWorker = "per-worker" // one child process (one session) per worker
)

// DefaultProtocolVersion is what initialize asks for unless told otherwise.
const DefaultProtocolVersion = "2025-06-18"

// Call is one entry of the request mix.
type Call struct {
	// Label names the entry in the per-call breakdown; it defaults to Name.
	Label string `json:"label,omitempty"`
	// Method defaults to tools/call; with another method Params is sent as the params as-is.
	Method string `json:"method,omitempty"`
	// Name is the tool to call (tools/call only).
	Name string `json:"name,omitempty"`
	// Arguments is the tool's arguments object (tools/call) or the params (other methods).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Weight is the entry's share of the mix relative to the others (default 1).
	Weight int `json:"weight,omitempty"`
}

// ParseCall parses the --call flag's form: NAME[*WEIGHT][=JSON_ARGUMENTS], for example
// `ha_get_entity_details*3={"entity_id":"sun.sun"}` or `echo={"message":"hi"}`.
func ParseCall(s string) (Call, error) {
	spec, args, hasArgs := strings.Cut(s, "=")
	name, weight, hasWeight := strings.Cut(spec, "*")
	name = strings.TrimSpace(name)
	c := Call{Name: name, Weight: 1}
	if name == "" {
		return c, fmt.Errorf("--call %q: no tool name; write NAME[*WEIGHT][=JSON], e.g. --call 'echo={\"message\":\"hi\"}'", s)
	}
	if strings.ContainsAny(name, " \t\"{}") {
		return c, fmt.Errorf("--call %q: tool name %q has spaces, quotes or braces; write NAME[*WEIGHT][=JSON]", s, name)
	}
	if hasWeight {
		w, err := strconv.Atoi(strings.TrimSpace(weight))
		if err != nil || w < 1 {
			return c, fmt.Errorf("--call %q: weight %q must be a whole number ≥ 1", s, weight)
		}
		c.Weight = w
	}
	if hasArgs {
		args = strings.TrimSpace(args)
		if err := checkObject([]byte(args)); err != nil {
			return c, fmt.Errorf("--call %q: arguments %w", s, err)
		}
		c.Arguments = json.RawMessage(args)
	}
	return c, nil
}

func checkObject(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return fmt.Errorf("must be a JSON object such as {\"entity_id\":\"sun.sun\"}")
	}
	return nil
}

// LoadMix reads a mix file: a JSON array of Call objects.
func LoadMix(path string) ([]Call, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--mix: %w", err)
	}
	return ParseMix(b)
}

// ParseMix parses a mix file's content.
func ParseMix(b []byte) ([]Call, error) {
	var calls []Call
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&calls); err != nil {
		return nil, fmt.Errorf("--mix: want a JSON array of {\"name\", \"arguments\", \"weight\", \"label\", \"method\"}: %w", err)
	}
	if len(calls) == 0 {
		return nil, errors.New("--mix: the array is empty; give at least one call")
	}
	for i := range calls {
		c := &calls[i]
		if c.Weight == 0 {
			c.Weight = 1
		}
		if c.Weight < 0 {
			return nil, fmt.Errorf("--mix: entry %d: weight %d must be ≥ 1", i+1, c.Weight)
		}
		if (c.Method == "" || c.Method == "tools/call") && c.Name == "" {
			return nil, fmt.Errorf("--mix: entry %d: \"name\" (the tool) is missing", i+1)
		}
		if len(c.Arguments) > 0 {
			if err := checkObject(c.Arguments); err != nil {
				return nil, fmt.Errorf("--mix: entry %d: \"arguments\" %w", i+1, err)
			}
		}
	}
	return calls, nil
}

// Config is one run.
type Config struct {
	Mode string
	// URL is the Streamable HTTP endpoint (session and sessionless modes).
	URL string
	// Command is the server's command line (stdio mode): argv, no shell.
	Command []string
	// Env is added to the stdio command's environment (NAME=value), e.g. GOGC=400.
	Env []string
	// StdioProcesses is StdioShared (default) or StdioPerWorker.
	StdioProcesses string
	Calls          []Call
	Concurrency    int
	// Duration and Count bound the measured part; whichever is reached first ends it. Both
	// zero means 10 s.
	Duration time.Duration
	Count    int
	// Warmup runs the same load for this long before measuring; its calls are not counted.
	Warmup time.Duration
	// Timeout bounds each call (default 30 s).
	Timeout time.Duration
	// Token is sent as "Authorization: Bearer <Token>"; it never appears in the report.
	Token string
	// Headers are extra request headers (HTTP modes).
	Headers         [][2]string
	ProtocolVersion string
	// PID, if set, is a process whose RSS (with its descendants') is sampled over the run; in
	// stdio mode the children are always sampled.
	PID         int
	RSSInterval time.Duration
	// SSELinger is how long to keep reading an SSE response stream after the answer arrived,
	// waiting for the server to close it so the connection can be reused (default 1 s).
	SSELinger time.Duration
	// Label is copied into the report.
	Label string
	// Stderr receives the stdio children's stderr; nil discards it (its tail is kept for errors).
	Stderr interface{ Write([]byte) (int, error) }
}

func (c *Config) withDefaults() {
	if c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.Duration == 0 && c.Count == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if c.ProtocolVersion == "" {
		c.ProtocolVersion = DefaultProtocolVersion
	}
	if c.StdioProcesses == "" {
		c.StdioProcesses = StdioShared
	}
	if c.RSSInterval == 0 {
		c.RSSInterval = 200 * time.Millisecond
	}
	if c.SSELinger == 0 {
		c.SSELinger = time.Second
	}
	c.Calls = slices.Clone(c.Calls) // the caller's slice stays theirs (and safe to share between runs)
	for i := range c.Calls {
		if c.Calls[i].Weight == 0 {
			c.Calls[i].Weight = 1
		}
	}
}

// Validate reports the first problem with c, naming the flag to fix.
func (c *Config) Validate() error {
	switch c.Mode {
	case ModeSession, ModeSessionless:
		if c.URL == "" {
			return errors.New("--url: required in " + c.Mode + " mode (e.g. --url http://127.0.0.1:8099/mcp)")
		}
		if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
			return fmt.Errorf("--url %q: must start with http:// or https://", c.URL)
		}
		if len(c.Command) > 0 {
			return errors.New("a server command line is only for --mode stdio; over HTTP give --url")
		}
	case ModeStdio:
		if len(c.Command) == 0 {
			return errors.New("--mode stdio: give the server's command line after the flags, e.g. hamcp-load --mode stdio --call … -- hamcp stdio --demo")
		}
		if c.URL != "" {
			return errors.New("--url is for the HTTP modes; --mode stdio runs the command given after the flags")
		}
		if c.StdioProcesses != StdioShared && c.StdioProcesses != StdioPerWorker {
			return fmt.Errorf("--stdio-processes %q: must be %s or %s", c.StdioProcesses, StdioShared, StdioPerWorker)
		}
	default:
		return fmt.Errorf("--mode %q: must be %s, %s or %s", c.Mode, ModeSession, ModeSessionless, ModeStdio)
	}
	if len(c.Calls) == 0 {
		return errors.New("--call: give at least one call, e.g. --call 'ha_get_entity_details={\"entity_id\":\"sun.sun\"}', or --mix FILE")
	}
	total := 0
	for _, call := range c.Calls {
		total += call.Weight
	}
	if total > 100000 {
		return fmt.Errorf("--call weights add up to %d; keep the total at most 100000", total)
	}
	switch {
	case c.Concurrency < 1 || c.Concurrency > 10000:
		return fmt.Errorf("-c %d: concurrency must be between 1 and 10000", c.Concurrency)
	case c.Duration < 0:
		return fmt.Errorf("-d %v: duration must not be negative", c.Duration)
	case c.Count < 0:
		return fmt.Errorf("-n %d: count must not be negative", c.Count)
	case c.Warmup < 0:
		return fmt.Errorf("--warmup %v: must not be negative", c.Warmup)
	case c.Timeout < 0:
		return fmt.Errorf("--timeout %v: must not be negative", c.Timeout)
	case c.PID < 0:
		return fmt.Errorf("--pid %d: must be a process id", c.PID)
	}
	for _, e := range c.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("--env %q: write it as NAME=value", e)
		}
	}
	if len(c.Env) > 0 && c.Mode != ModeStdio {
		return errors.New("--env is for --mode stdio (the load tool starts the server only there)")
	}
	for _, h := range c.Headers {
		if h[0] == "" || strings.ContainsAny(h[0], " :\r\n") || strings.ContainsAny(h[1], "\r\n") {
			return fmt.Errorf("--header %q: write it as 'Name: value'", h[0]+": "+h[1])
		}
	}
	return nil
}

// ParseHeader parses the --header flag's "Name: value".
func ParseHeader(s string) ([2]string, error) {
	k, v, ok := strings.Cut(s, ":")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" || strings.ContainsAny(k, " \r\n") || strings.ContainsAny(v, "\r\n") {
		return [2]string{}, fmt.Errorf("--header %q: write it as 'Name: value'", s)
	}
	return [2]string{k, v}, nil
}
