#!/usr/bin/env bash
# Runs the official MCP conformance suite (0.1.16) against `hamcp demo --no-auth` for every
# scenario that applies to any server. Any failure fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE22="${1:?path to node 22}"
suite=".ci/node_modules/@modelcontextprotocol/conformance"
bin="$suite/$(node -e "const p=require('./$suite/package.json');const b=typeof p.bin==='string'?p.bin:Object.values(p.bin)[0];console.log(b)")"
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/hamcp" ./src/cmd/hamcp
port=$((20000 + RANDOM % 20000))
"$work/hamcp" demo --no-auth --listen "127.0.0.1:$port" --info-file "$work/info.json" --rate-limit 0 >"$work/demo.log" 2>&1 &
pid=$!
for _ in $(seq 1 150); do [ -s "$work/info.json" ] && break; sleep 0.2; done
[ -s "$work/info.json" ] || { echo "demo did not start"; cat "$work/demo.log"; exit 1; }
url="http://localhost:$port/mcp"
failed=0
for scenario in server-initialize ping logging-set-level tools-list resources-list prompts-list server-sse-multiple-streams dns-rebinding-protection; do
  if "$NODE22" "$bin" server --url "$url" --scenario "$scenario" >"$work/$scenario.log" 2>&1; then
    echo "PASS $scenario"
  else
    echo "FAIL $scenario"; cat "$work/$scenario.log"; failed=1
  fi
done
if [ "$failed" != 0 ]; then
  echo "--- demo log"; tail -50 "$work/demo.log"; exit 1
fi
