#!/usr/bin/env bash
# Installs the programs hamcp's tests drive, when they are missing: Chromium, the OpenSSH client,
# sqlite3 and shellcheck from Debian's packages, and under .ci/node_modules Node 22, the MCP
# TypeScript SDK and the official conformance suite from npm. Idempotent; used by .ci/run and by
# the README's test command (.ci/test.sh) on a machine that lacks them.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v ssh >/dev/null || need+=(openssh-client)
command -v sqlite3 >/dev/null || need+=(sqlite3)
command -v chromium >/dev/null || need+=(chromium)
# The add-on's scripts (dev/packaging). hadolint has no Debian package, and npm's "hadolint" only
# wraps a binary it does not ship, so dev/packaging checks the Dockerfile itself.
command -v shellcheck >/dev/null || need+=(shellcheck)
if ((${#need[@]})); then
  echo "installing from Debian: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Another install (unattended-upgrades, a second CI job) may hold dpkg's lock: wait for it (up
  # to 10 minutes) instead of failing at once.
  if command -v fuser >/dev/null && fuser /var/lib/dpkg/lock-frontend >/dev/null 2>&1; then
    echo "waiting for another package install to finish (dpkg lock held)"
  fi
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null
fi

tools=.ci/node_modules
# conformance-next: the newest 0.2.x pre-release (2026-07-28 scenarios), beside 0.1.16 under an alias.
npm_pkgs=(node@22 @modelcontextprotocol/conformance@0.1.16
  conformance-next@npm:@modelcontextprotocol/conformance@0.2.0-alpha.12 @modelcontextprotocol/sdk@1.32.2)
if [ ! -x "$tools/.bin/node" ] || [ ! -d "$tools/@modelcontextprotocol/conformance" ] ||
  [ ! -d "$tools/conformance-next" ] || [ ! -d "$tools/@modelcontextprotocol/sdk" ]; then
  echo "installing from npm into .ci/node_modules: ${npm_pkgs[*]}"
  npm install --prefix .ci --no-audit --no-fund --loglevel=error "${npm_pkgs[@]}" >/dev/null
fi
