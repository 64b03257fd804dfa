#!/usr/bin/env bash
# The README's test command: every package with the race detector.
#
# Some tests drive real programs: Chromium (OAuth and permission pages), the OpenSSH client
# (stdio over SSH), sqlite3 (the recorder database's schema), shellcheck (the add-on's scripts)
# and Node with the MCP TypeScript SDK (completion and OAuth with the official client). A test that silently skips its program proves
# nothing, so this command is as strict as CI: a missing program is installed (.ci/setup.sh, when
# running as root with apt-get, as on a fresh CI machine) or fails with what to install;
# HAMCP_ALLOW_SKIP=1 runs anyway and lists what is skipped instead.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
have() { for c in "$@"; do command -v "$c" >/dev/null && return 0; done; return 1; }
have chromium chromium-browser google-chrome || missing+=("Chromium (browser tests)        apt-get install chromium")
have ssh || missing+=("OpenSSH client (SSH tests)     apt-get install openssh-client")
have sqlite3 || missing+=("sqlite3 (recorder schema tests) apt-get install sqlite3")
have shellcheck || missing+=("shellcheck (add-on scripts)     apt-get install shellcheck")
if ! { [ -x .ci/node_modules/.bin/node ] || have node; } || [ ! -d .ci/node_modules/@modelcontextprotocol/sdk ]; then
  missing+=("Node + MCP TypeScript SDK       npm install --prefix .ci node@22 @modelcontextprotocol/sdk  (or bash .ci/run)")
fi

# On a machine where we may install (root with apt-get), install what is missing, so this command
# works on a fresh machine; elsewhere say what to install.
if ((${#missing[@]})) && [ "${HAMCP_ALLOW_SKIP:-0}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing the programs the tests drive:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  bash .ci/setup.sh
  missing=()
fi

if ((${#missing[@]})); then
  if [ "${HAMCP_ALLOW_SKIP:-0}" = 1 ]; then
    echo "HAMCP_ALLOW_SKIP=1: the tests that need these are SKIPPED:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    export CI=false
  else
    echo "The tests need programs this machine lacks:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    echo "Install them (bash .ci/run installs everything), or run HAMCP_ALLOW_SKIP=1 bash .ci/test.sh to skip those tests." >&2
    exit 1
  fi
else
  export CI="${CI:-true}"
fi
# The go.mod toolchain, as .ci/run uses: a machine with an older Go fetches it.
export GOTOOLCHAIN=auto
go test -race -count=1 -timeout 12m ./...
