package loadgen

import (
	"math"
	"time"
)

// Report is what a run prints, as JSON.
type Report struct {
	Label           string `json:"label,omitempty"`
	Target          string `json:"target"`
	Mode            string `json:"mode"`
	StdioProcesses  string `json:"stdio_processes,omitempty"`
	ProtocolVersion string `json:"protocol_version"`
	Concurrency     int    `json:"concurrency"`
	Started         string `json:"started"`
	Machine         struct {
		CPUs             int       `json:"cpus"`
		GOMAXPROCS       int       `json:"gomaxprocs"`
		LoadAverageStart []float64 `json:"load_average_start,omitempty"`
		LoadAverageEnd   []float64 `json:"load_average_end,omitempty"`
	} `json:"machine"`
	// SetupMS is how long opening every session (or starting every process) took.
	SetupMS     float64 `json:"setup_ms"`
	WarmupS     float64 `json:"warmup_s"`
	WarmupCalls uint64  `json:"warmup_calls"`
	// ElapsedS runs from the end of the warm-up to the last answer.
	ElapsedS  float64 `json:"elapsed_s"`
	Calls     uint64  `json:"calls"`
	OK        uint64  `json:"ok"`
	Errors    uint64  `json:"errors"`
	CallsPerS float64 `json:"calls_per_s"`
	OKPerS    float64 `json:"ok_per_s"`
	// LatencyMS covers successful calls: from just before the request is written to the
	// moment its answer has been read and decoded.
	LatencyMS    Latency           `json:"latency_ms"`
	Histogram    string            `json:"histogram"`
	ErrorsByKind map[string]uint64 `json:"errors_by_kind"`
	// ErrorSamples holds the first message seen of each kind.
	ErrorSamples map[string]string     `json:"error_samples,omitempty"`
	ByCall       map[string]CallReport `json:"by_call"`
	// Mean request and response sizes (bodies; for SSE, the stream's text).
	RequestBytes  float64 `json:"request_bytes_mean"`
	ResponseBytes float64 `json:"response_bytes_mean"`
	CPU           CPU     `json:"cpu"`
	RSS           *RSS    `json:"rss,omitempty"`
	// SSEStreamsLeftOpen counts answers whose event stream the server kept open beyond
	// --sse-linger; the client closed those connections.
	SSEStreamsLeftOpen int64 `json:"sse_streams_left_open,omitempty"`
	// StdioNonJSONLines counts lines on the server's stdout that were not JSON-RPC.
	StdioNonJSONLines int64 `json:"stdio_non_json_lines,omitempty"`
}

// Latency percentiles, in milliseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// CallReport is one mix entry's share of the run.
type CallReport struct {
	Calls         uint64            `json:"calls"`
	OK            uint64            `json:"ok"`
	Errors        uint64            `json:"errors"`
	CallsPerS     float64           `json:"calls_per_s"`
	LatencyMS     Latency           `json:"latency_ms"`
	ErrorsByKind  map[string]uint64 `json:"errors_by_kind,omitempty"`
	ResponseBytes float64           `json:"response_bytes_mean"`
}

// CPU is the CPU time spent during the measured part (after the warm-up).
type CPU struct {
	// ClientS is the load tool's own user+system time: what it took from the cores it shares
	// with the server.
	ClientS         float64 `json:"client_s"`
	ClientUSPerCall float64 `json:"client_us_per_call"`
	// ServerS is the server's (with descendants'), when its pid is known.
	ServerS         *float64 `json:"server_s,omitempty"`
	ServerUSPerCall *float64 `json:"server_us_per_call,omitempty"`
}

// RSS is the server's resident memory (with its descendants'), in KiB.
type RSS struct {
	PIDs []int `json:"pids"`
	// IdleKiB is sampled before the load starts (before sessions are opened over HTTP; after
	// the processes answered initialize over stdio).
	IdleKiB int64 `json:"idle_kib"`
	MinKiB  int64 `json:"min_kib"`
	MeanKiB int64 `json:"mean_kib"`
	MaxKiB  int64 `json:"max_kib"`
	// AfterKiB is sampled when the load ends, before sessions are closed.
	AfterKiB   int64  `json:"after_kib"`
	Samples    int    `json:"samples"`
	IntervalMS int64  `json:"interval_ms"`
	Error      string `json:"error,omitempty"`
}

const histogramNote = "log-linear histogram (HdrHistogram-style), 128 buckets per power of two: percentiles are the top of their bucket, at most 0.8 % high; min, mean and max exact"

func ms(d time.Duration) float64 { return round(float64(d)/1e6, 3) }

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func latencyOf(h *Histogram) Latency {
	return Latency{
		Min: ms(h.Min()), Mean: ms(h.Mean()), P50: ms(h.Quantile(0.5)), P90: ms(h.Quantile(0.9)),
		P99: ms(h.Quantile(0.99)), P999: ms(h.Quantile(0.999)), Max: ms(h.Max()),
	}
}
