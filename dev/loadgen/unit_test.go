package loadgen

import (
	"bufio"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHistogramQuantilesWithinBucketError(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		name string
		gen  func() time.Duration
	}{
		{"lognormal around 1ms", func() time.Duration { return time.Duration(math.Exp(r.NormFloat64()) * 1e6) }},
		{"uniform 0-300ns (exact buckets)", func() time.Duration { return time.Duration(r.IntN(300)) }},
		{"wide: 1µs to 100s", func() time.Duration { return time.Duration(math.Pow(10, 3+8*r.Float64())) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			var exact []time.Duration
			for range 20000 {
				d := tt.gen()
				h.Record(d)
				exact = append(exact, d)
			}
			slices.Sort(exact)
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
				want := exact[int(math.Ceil(q*float64(len(exact))))-1]
				got := h.Quantile(q)
				if got < want || float64(got-want) > float64(want)/subBuckets+1 {
					t.Errorf("q%.3f = %v, exact %v: more than 1/%d off", q, got, want, subBuckets)
				}
			}
			if h.Max() != exact[len(exact)-1] || h.Min() != exact[0] || h.Count() != uint64(len(exact)) {
				t.Errorf("min/max/count %v %v %d, want %v %v %d", h.Min(), h.Max(), h.Count(), exact[0], exact[len(exact)-1], len(exact))
			}
		})
	}
}

func TestHistogramMergeAndClamp(t *testing.T) {
	t.Parallel()
	var a, b, all Histogram
	for i := range 1000 {
		d := time.Duration(i) * time.Microsecond
		all.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	if a != all {
		t.Fatalf("merged histogram differs from the one fed everything")
	}
	var h Histogram
	h.Record(time.Hour) // beyond the range: clamped into the last bucket, max exact
	if h.Max() != time.Hour || h.Quantile(0.5) != time.Hour {
		t.Fatalf("clamped value: max %v p50 %v", h.Max(), h.Quantile(0.5))
	}
	var empty Histogram
	if empty.Quantile(0.99) != 0 || empty.Mean() != 0 {
		t.Fatal("empty histogram must report zeros")
	}
}

func TestParseCall(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in      string
		want    Call
		wantErr string
	}{
		{in: `ha_get_entity_details={"entity_id":"sun.sun"}`, want: Call{Name: "ha_get_entity_details", Weight: 1, Arguments: json.RawMessage(`{"entity_id":"sun.sun"}`)}},
		{in: `echo*3={"message":"a=b*c"}`, want: Call{Name: "echo", Weight: 3, Arguments: json.RawMessage(`{"message":"a=b*c"}`)}},
		{in: `get_tiny_image`, want: Call{Name: "get_tiny_image", Weight: 1}},
		{in: `=`, wantErr: "no tool name"},
		{in: `echo*0={}`, wantErr: "weight"},
		{in: `echo*x`, wantErr: "weight"},
		{in: `echo=[1]`, wantErr: "JSON object"},
		{in: `echo={"a":`, wantErr: "JSON object"},
		{in: `my tool={}`, wantErr: "spaces"},
	} {
		got, err := ParseCall(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--call") {
				t.Errorf("ParseCall(%q) error = %v, want one naming --call and %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.Name != tt.want.Name || got.Weight != tt.want.Weight || string(got.Arguments) != string(tt.want.Arguments) {
			t.Errorf("ParseCall(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseMix(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, wantErr string
		n           int
	}{
		{in: `[{"name":"echo","arguments":{"message":"hi"},"weight":3,"label":"e"},{"method":"tools/list"}]`, n: 2},
		{in: `[]`, wantErr: "empty"},
		{in: `{"name":"echo"}`, wantErr: "JSON array"},
		{in: `[{"nmae":"echo"}]`, wantErr: "unknown field"},
		{in: `[{"arguments":{}}]`, wantErr: `entry 1: "name"`},
		{in: `[{"name":"x","weight":-1}]`, wantErr: "weight"},
		{in: `[{"name":"x","arguments":"s"}]`, wantErr: `"arguments"`},
	} {
		calls, err := ParseMix([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMix(%s) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(calls) != tt.n || calls[1].Weight != 1 {
			t.Errorf("ParseMix(%s) = %+v, %v", tt.in, calls, err)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	t.Parallel()
	call := []Call{{Name: "x", Weight: 1}}
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: "grpc", Calls: call}, "--mode"},
		{Config{Mode: ModeSession, Calls: call}, "--url"},
		{Config{Mode: ModeSession, URL: "127.0.0.1:8099/mcp", Calls: call}, "http://"},
		{Config{Mode: ModeStdio, Calls: call}, "command line"},
		{Config{Mode: ModeStdio, Command: []string{"x"}, StdioProcesses: "pool", Calls: call}, "--stdio-processes"},
		{Config{Mode: ModeSessionless, URL: "http://h/mcp"}, "--call"},
		{Config{Mode: ModeSessionless, URL: "http://h/mcp", Calls: call, Concurrency: -1}, "-c"},
		{Config{Mode: ModeSessionless, URL: "http://h/mcp", Calls: call, Concurrency: 1, Headers: [][2]string{{"Bad Name", "v"}}}, "--header"},
	} {
		if err := tt.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %q", tt.cfg, err, tt.want)
		}
	}
	if _, err := ParseHeader("X-Test: a: b"); err != nil {
		t.Errorf("a header value may hold colons: %v", err)
	}
	if _, err := ParseHeader("no colon"); err == nil {
		t.Error("a header without a colon was accepted")
	}
}

func TestEncodeCall(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		call      Call
		version   string
		stateless bool
		want      string
	}{
		{"tools/call", Call{Name: "echo", Arguments: json.RawMessage(` { "message" : "hi" } `)}, DefaultProtocolVersion, true,
			`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`},
		{"no arguments", Call{Name: "t"}, DefaultProtocolVersion, false,
			`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"t"}}`},
		{"other method", Call{Method: "tools/list"}, DefaultProtocolVersion, false,
			`{"jsonrpc":"2.0","id":42,"method":"tools/list","params":{}}`},
		{"2026 stateless meta", Call{Name: "t", Arguments: json.RawMessage(`{}`)}, "2026-07-28", true,
			`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"hamcp-load","version":"1"}}}}`},
		{"2026 other method with params", Call{Method: "resources/read", Arguments: json.RawMessage(`{"uri":"x"}`)}, "2026-07-28", true,
			`{"jsonrpc":"2.0","id":42,"method":"resources/read","params":{"uri":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"hamcp-load","version":"1"}}}}`},
	} {
		e, err := encodeCall(tt.call, 0, tt.version, tt.stateless)
		if err != nil {
			t.Fatal(err)
		}
		got := string(e.build(nil, 42))
		if got != tt.want || !json.Valid([]byte(got)) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestScheduleInterleavesByWeight(t *testing.T) {
	t.Parallel()
	s := scheduleOf([]Call{{Weight: 3}, {Weight: 1}})
	if len(s) != 4 || s[0] != 0 || slices.Index(s, 1) < 1 {
		t.Fatalf("schedule %v", s)
	}
	n := 0
	for _, i := range s {
		if i == 0 {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("weight 3 entry appears %d times in %v", n, s)
	}
}

func TestSSEReader(t *testing.T) {
	t.Parallel()
	stream := ": comment\r\nevent: message\r\nid: 1\r\ndata:\r\n\r\n" + // a priming event with no data
		"data: {\"a\":\r\ndata: 1}\n\n" + // multi-line data
		"retry: 10\ndata:{\"b\":2}\n\n" +
		"data: " + strings.Repeat("x", 40000) + "\n\n" + // longer than the reader's buffer
		"data: last-without-blank-line"
	s := sseReader{lr: lineReader{br: bufio.NewReaderSize(nil, 16)}}
	s.reset(strings.NewReader(stream))
	var got []string
	for {
		d, err := s.next()
		if err != nil {
			break
		}
		got = append(got, string(d))
	}
	want := []string{"{\"a\":\n1}", `{"b":2}`, strings.Repeat("x", 40000), "last-without-blank-line"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, kind, msg string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"entity not found"}]}}`, KindToolError, "entity not found"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`, "jsonrpc_-32602", "unknown tool"},
		{`{"jsonrpc":"2.0","id":1}`, KindBadResponse, "neither"},
	} {
		var m message
		if err := json.Unmarshal([]byte(tt.raw), &m); err != nil {
			t.Fatal(err)
		}
		o := judge(&m, []byte(tt.raw))
		if o.kind != tt.kind || !strings.Contains(o.msg, tt.msg) {
			t.Errorf("judge(%s) = %q %q, want %q %q", tt.raw, o.kind, o.msg, tt.kind, tt.msg)
		}
	}
	if !idIs(json.RawMessage(" 7 "), 7) || idIs(json.RawMessage(`"7"`), 7) || idIs(nil, 0) {
		t.Error("idIs")
	}
}

func TestProcParsers(t *testing.T) {
	t.Parallel()
	if n, err := parseVmRSS([]byte("Name:\tx\nVmPeak:\t 999 kB\nVmRSS:\t   12345 kB\n")); err != nil || n != 12345 {
		t.Errorf("parseVmRSS = %d, %v", n, err)
	}
	if _, err := parseVmRSS([]byte("Name:\tkthreadd\n")); err == nil {
		t.Error("a status without VmRSS was accepted")
	}
	stat := "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0"
	if s, err := parseStatCPU([]byte(stat)); err != nil || s != 3 {
		t.Errorf("parseStatCPU = %v, %v (want 3 s: 250+50 ticks)", s, err)
	}
	// The test process itself: a real /proc.
	if n, err := treeRSS([]int{os.Getpid()}); err != nil || n <= 0 {
		t.Errorf("treeRSS(self) = %d, %v", n, err)
	}
	if c := treeCPU([]int{os.Getpid()}); c < 0 {
		t.Errorf("treeCPU(self) = %v", c)
	}
	if la := loadAverage(); len(la) != 3 {
		t.Errorf("loadAverage = %v", la)
	}
}

func FuzzParseCall(f *testing.F) {
	for _, s := range []string{`echo={"m":"x"}`, `a*2`, `=`, `x*={}`, `x*9999999999999999999={}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCall(s)
		if err != nil {
			return
		}
		if c.Name == "" || c.Weight < 1 {
			t.Fatalf("accepted %q as %+v", s, c)
		}
		e, err := encodeCall(c, 0, DefaultProtocolVersion, false)
		if err != nil || !json.Valid(e.build(nil, 1)) {
			t.Fatalf("accepted %q but encodes invalid JSON: %v %s", s, err, e.build(nil, 1))
		}
	})
}

func FuzzSSEReader(f *testing.F) {
	f.Add("data: {}\n\n")
	f.Add(": c\r\ndata:x\r\ndata:y\r\n\r\nevent: e\n")
	f.Fuzz(func(t *testing.T, stream string) {
		s := sseReader{lr: lineReader{br: bufio.NewReaderSize(nil, 16)}}
		s.reset(strings.NewReader(stream))
		for range len(stream) + 1 {
			d, err := s.next()
			if err != nil {
				return
			}
			if len(d) > len(stream) {
				t.Fatalf("event data longer than the stream")
			}
		}
		t.Fatalf("more events than bytes")
	})
}
