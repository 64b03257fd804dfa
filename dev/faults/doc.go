// Package faults holds the fault tests: hamcp's real HTTP server on a loopback listener, its
// backends simulated over real sockets (package sim) and then made to fail the way they fail in a
// home — Home Assistant's WebSocket dropping, HA restarting, answering slowly or with 500s —
// while an MCP client calls tools. The tests assert what a user sees: calls end quickly with an
// error that names the cause, hamcp reconnects and resyncs, and what does not need the failed
// backend keeps working. It has no code of its own, only tests.
package faults
