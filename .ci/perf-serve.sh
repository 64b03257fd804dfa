#!/usr/bin/env bash
# `hamcp serve` alone: the add-on's binary (addon/compile-hamcp.sh) started against the
# simulated Home Assistant, measured from outside as a user would: exec to a healthy /mcp/health,
# VmRSS idle, under 64 clients (sessionless and in sessions, the cached read), idle again after the
# load, and with 1,000 open Streamable HTTP sessions (without and with their GET streams, then with
# load on top). HAMCP_LOAD=full (the default here) compares the garbage collector settings of
# docs/performance.md, 10 s runs, about 11 minutes; HAMCP_LOAD=short measures hamcp's own defaults
# with 3 s runs (under a minute). HAMCP_PERF_SETTINGS='default;GOGC=200 GOMEMLIMIT=off' picks the
# settings. The figures are the table rows of the -v output. No -race: its cost would be measured.
set -euo pipefail
cd "$(dirname "$0")/.."
export HAMCP_LOAD="${HAMCP_LOAD:-full}"
go test -count=1 -timeout 30m -run TestServeMemoryAndStart -v ./dev/perf
