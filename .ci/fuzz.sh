#!/usr/bin/env bash
# Runs every fuzz target for a few seconds so a regression in a guard or parser shows up in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${FUZZ_SECONDS:-3}"
for pkg in $(go list ./src/...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    printf '%-60s %s\n' "$pkg" "$target"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "${secs}s" "$pkg" >/tmp/hamcp-fuzz.log 2>&1 || { cat /tmp/hamcp-fuzz.log; exit 1; }
  done
done
