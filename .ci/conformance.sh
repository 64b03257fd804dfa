#!/usr/bin/env bash
# Runs the official MCP conformance suite against `hamcp demo --no-auth --conformance` (the demo
# with the suite's fixture toolset): every server scenario the suite lists, for two releases.
#   - 0.1.16 (npm latest, the 2025 protocol versions): every scenario must pass.
#   - the newest 0.2.x pre-release (installed by .ci/run as "conformance-next"), its 2026-07-28
#     scenarios: the ones docs/conformance.md lists as passing must pass (a regression fails CI);
#     the others run and are reported (docs/conformance.md says why each one fails).
# Usage: .ci/conformance.sh NODE22
set -euo pipefail
cd "$(dirname "$0")/.."
NODE22="${1:?path to node 22}"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; rm -rf "$work"' EXIT
go build -o "$work/hamcp" ./src/cmd/hamcp
port=$((20000 + RANDOM % 20000))
# --tool-mode all: the suite calls its fixture tools directly, so they must be listed (the demo's hub
# tools would otherwise put the default auto mode into search). --rate-limit 0: the suite sends
# faster than 100 requests a minute, and opens a session per scenario without ending it; in the
# demo it also lifts the session caps (64 per client IP), which the two releases' scenarios
# together, or a second run, would reach.
"$work/hamcp" demo --no-auth --conformance --tool-mode all --listen "127.0.0.1:$port" --info-file "$work/info.json" --rate-limit 0 >"$work/demo.log" 2>&1 &
pid=$!
for _ in $(seq 1 150); do [ -s "$work/info.json" ] && break; sleep 0.2; done
[ -s "$work/info.json" ] || { echo "demo did not start"; cat "$work/demo.log"; exit 1; }
# dns-rebinding-protection needs a localhost URL.
url="http://localhost:$port/mcp"

suite_bin() { # the package's bin script
  "$NODE22" -e "const p=require('./.ci/node_modules/$1/package.json');const b=typeof p.bin==='string'?p.bin:Object.values(p.bin)[0];console.log('.ci/node_modules/$1/'+b)"
}
# server scenarios of a release, optionally only those tagged with a spec version
scenarios() {
  "$NODE22" "$1" list --server | sed -n 's/^  - \([^ ]*\) \[\(.*\)\]$/\1 \2/p' | while read -r name versions; do
    if [ -z "${2:-}" ] || [[ ",$versions," == *",$2,"* ]]; then echo "$name"; fi
  done
}
run() { # bin scenario [extra args] -> 0 when every check passed
  local bin=$1 scenario=$2; shift 2
  "$NODE22" "$bin" server --url "$url" --scenario "$scenario" "$@" >"$work/$scenario.log" 2>&1
}

failed=0
stable=$(suite_bin @modelcontextprotocol/conformance)
echo "-- conformance $("$NODE22" -p "require('./.ci/node_modules/@modelcontextprotocol/conformance/package.json').version"): every server scenario"
n=0
for s in $(scenarios "$stable"); do
  n=$((n + 1))
  if run "$stable" "$s"; then echo "PASS $s"; else echo "FAIL $s"; cat "$work/$s.log"; failed=1; fi
done
echo "($n scenarios)"

if [ -d .ci/node_modules/conformance-next ]; then
  next=$(suite_bin conformance-next)
  echo "-- conformance $("$NODE22" -p "require('./.ci/node_modules/conformance-next/package.json').version"): 2026-07-28 scenarios"
  # The scenarios docs/conformance.md records as passing (lines "| `name` | pass |").
  expected=$(sed -n 's/^| `\([^`]*\)` | pass .*/\1/p' docs/conformance.md)
  for s in $(scenarios "$next" 2026-07-28); do
    if run "$next" "$s" --spec-version 2026-07-28; then
      echo "PASS $s"
      grep -qx "$s" <<<"$expected" || echo "     (passes now: record it in docs/conformance.md)"
    elif grep -qx "$s" <<<"$expected"; then
      echo "FAIL $s (regression: docs/conformance.md lists it as passing)"; cat "$work/$s.log"; failed=1
    else
      echo "fail $s (known, see docs/conformance.md)"
    fi
  done
fi

if [ "$failed" != 0 ]; then
  echo "--- demo log"; tail -50 "$work/demo.log"; exit 1
fi
