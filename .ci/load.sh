#!/usr/bin/env bash
# Load and soak tests: 200 concurrent Streamable HTTP sessions × 50 cached reads with zero
# errors, and what those sessions held (sessions, grants, Home Assistant event subscriptions) gone
# after they disconnect; then steady load with goroutines, live heap and RSS sampled every second
# and no growth trend. HAMCP_LOAD=full (the default here) soaks for 10 minutes; CI runs
# HAMCP_LOAD=short (20 s of soak, under a minute in all). HAMCP_SOAK_DURATION=5m overrides the soak.
# No -race: the race detector's cost would be what is measured.
set -euo pipefail
cd "$(dirname "$0")/.."
export HAMCP_LOAD="${HAMCP_LOAD:-full}"
timeout=5m
[ "$HAMCP_LOAD" = full ] && timeout=30m
# The figures are the LOAD and SOAK lines of the -v output.
go test -count=1 -timeout "$timeout" -run 'TestLoadSessions|TestSoak' -v ./dev/demo
