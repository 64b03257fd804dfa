#!/usr/bin/env bash
# Static checks: go.mod/go.sum tidy, gofmt, staticcheck and govulncheck. The tools are pinned and installed
# with `go install` (the Go module proxy) into $HOME/go/bin.
#
# govulncheck's database: vuln.go.dev when it answers; else the same OSV entries from the
# golang.org/x/vulndb module, fetched through the module proxy (HAMCP_VULNDB=<dir or file:// URL>
# points at a local copy instead); if neither can be reached the step is skipped with a message.
# A vulnerability reached from hamcp's code fails the step unless it is in `accepted` below or in
# HAMCP_VULNCHECK_ACCEPT (space-separated IDs, for a stopgap while a fix is on its way).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
log() { printf '\n== %s\n' "$*"; }

STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2 # staticcheck 2026.2.2, supports Go 1.26
GOVULNCHECK=golang.org/x/vuln/cmd/govulncheck@v1.9.0

# Advisories that match hamcp's dependencies but not its use of them. govulncheck has no ignore
# list of its own; these are still printed on every run. Keep each with the reason it does not apply.
accepted=(
  # echo v4 (no fix; the advisory names only v5 symbols): the default IP extractor trusts a spoofed
  # X-Forwarded-For. hamcp always sets Echo.IPExtractor (httpserver.ipExtractor: X-Forwarded-For is
  # believed only from configured trusted proxies), so RealIP never takes that path.
  GO-2026-6872
  # echo v4 (no fix): the Proxy, Static, Secure and MethodOverride middleware, Context.Scheme and
  # JSONP. hamcp uses only the BodyLimit and Recover middleware and none of those.
  GO-2026-6875
)

# install <module/cmd@version>: go install unless $HOME/go/bin already has that version.
install() {
  local pkg=${1%@*} ver=${1##*@} bin
  bin="$HOME/go/bin/$(basename "$pkg")"
  if [ -x "$bin" ] && go version -m "$bin" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]].*[[:space:]]$ver([[:space:]]|$)"; then
    return
  fi
  GOFLAGS='' GOBIN="$HOME/go/bin" go install "$1"
}

log "go mod tidy -diff"
go mod tidy -diff

log "gofmt -l"
unformatted=$(gofmt -l src)
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted (run gofmt -w on them):"
  echo "$unformatted"
  exit 1
fi

log "staticcheck ($STATICCHECK)"
install "$STATICCHECK"
staticcheck ./...

log "govulncheck ($GOVULNCHECK)"
install "$GOVULNCHECK"
vulndb="${HAMCP_VULNDB:-}"
why=""
if [ -z "$vulndb" ]; then
  if curl -fsS --max-time 5 -o /dev/null https://vuln.go.dev/index/db.json.gz 2>/tmp/hamcp-vulndb.$$; then
    vulndb=https://vuln.go.dev
  else
    why="vuln.go.dev: $(head -c 200 /tmp/hamcp-vulndb.$$)"
    # The OSV files of golang.org/x/vulndb are the data vuln.go.dev serves; govulncheck reads a
    # directory of them directly. Downloaded outside the repository so go.mod/go.sum stay untouched.
    if meta=$(cd /tmp && GOFLAGS='' go mod download -json golang.org/x/vulndb@"${HAMCP_VULNDB_VERSION:-latest}" 2>&1); then
      dir=$(printf '%s' "$meta" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
      ver=$(printf '%s' "$meta" | sed -n 's/^[[:space:]]*"Version": "\(.*\)",\{0,1\}$/\1/p')
      if [ -n "$dir" ] && [ -d "$dir/data/osv" ]; then
        vulndb="file://$dir/data/osv"
        echo "vuln.go.dev unreachable; using golang.org/x/vulndb@$ver from the module proxy"
      else
        why="$why; golang.org/x/vulndb@$ver has no data/osv"
      fi
    else
      err=$(printf '%s' "$meta" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p')
      why="$why; golang.org/x/vulndb: $(printf '%s' "${err:-$meta}" | tail -n 1 | head -c 200)"
    fi
  fi
  rm -f /tmp/hamcp-vulndb.$$
fi
case "$vulndb" in
'') ;;
http://* | https://* | file://*) ;;
*) vulndb="file://$(cd "$vulndb" && pwd)" ;;
esac
if [ -z "$vulndb" ]; then
  echo "govulncheck skipped: vulnerability database unreachable ($why)"
  exit 0
fi

rc=0
out=$(govulncheck -db "$vulndb" ./... 2>&1) || rc=$?
case $rc in
0) echo "no known vulnerabilities reached from hamcp's code" ;;
3)
  mapfile -t found < <(printf '%s\n' "$out" | sed -n 's/^Vulnerability #[0-9]*: \(GO-[0-9]*-[0-9]*\).*/\1/p' | sort -u)
  read -ra extra <<<"${HAMCP_VULNCHECK_ACCEPT:-}"
  left=()
  for id in "${found[@]}"; do
    if printf '%s\n' "${accepted[@]}" | grep -qx "$id"; then
      echo "accepted (see .ci/lint.sh): $id"
    elif printf '%s\n' "${extra[@]}" | grep -qx "$id"; then
      echo "accepted for now (HAMCP_VULNCHECK_ACCEPT): $id"
    else
      left+=("$id")
    fi
  done
  if ((${#left[@]})); then
    # Without the call traces (hundreds of lines); run the same command for them.
    printf '%s\n' "$out" | grep -vE '^ +#[0-9]+: |Example traces found'
    echo "(traces: govulncheck -db $vulndb ./...)"
    echo "govulncheck: ${#left[@]} vulnerabilities reached from hamcp's code: ${left[*]}" >&2
    exit 1
  fi
  ;;
*)
  printf '%s\n' "$out" | tail -n 20
  if printf '%s\n' "$out" | grep -q 'fetching vulnerabilities'; then
    echo "govulncheck skipped: vulnerability database unreachable ($vulndb)"
    exit 0
  fi
  echo "govulncheck failed (exit $rc)" >&2
  exit 1
  ;;
esac
