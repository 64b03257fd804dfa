// Package perf holds measurements of the shipped `hamcp serve` binary as a separate process: its
// start to a healthy /mcp/health, its resident memory idle, under load and with 1,000 open
// Streamable HTTP sessions, and how the garbage collector's settings trade memory for throughput.
// The measurements are tests that run only when HAMCP_LOAD is set (bash
// .ci/perf-serve.sh); docs/performance.md records their figures.
package perf
