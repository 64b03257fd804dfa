#!/usr/bin/env bash
# hamcp's security suite, the slower form: every attacker test (each reproduces a hole from
# docs/security.md as a model, another token or a hostile client would) run several times under the
# race detector to shake out timing-dependent passes, the flood tests at full size (without -race),
# and long fuzz runs of the guards an attacker's input reaches. The same attacker tests also run once
# in the README's test command; this script is for before a release or after touching a control.
#   SECURITY_COUNT   runs of each attacker test (default 3)
#   SECURITY_FUZZ    seconds per fuzz target (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
count="${SECURITY_COUNT:-3}"
fuzz="${SECURITY_FUZZ:-30}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# package → attacker tests (docs/security.md names each beside the control it checks)
attacks=(
  "./dev/demo TestAttackerReadsApprovalFromEventBus|TestOtherTokensCannotAnswer|TestAuditShowsOnlyTheSession|TestApprovalPageInBrowser|TestSessionHijackWithAnotherToken|TestGrantsEndWithTheConnection|TestModelCannotReachPastItsGrants|TestPermissionsThroughInputRequired"
  "./src/httpserver TestSessionBoundToCredential|TestLegacySSESessionBoundToCredential|TestSessionCaps|TestBatchCountsEveryMessage|TestSlowClientsAreDisconnected|TestConnectionCaps|TestProtocolErrorsAreJSONRPC|TestSimpleRequestsAreRefused"
  "./src/mcpserver TestConnectionKeysAreUniqueAndEndWithTheTransport"
  "./src/command TestWholeTreeEnds|TestTreeEndsWhenHamcpIsKilled|TestEnvironmentIsAllowListed"
  "./src/internal/nodump TestCommandCannotReadSecretsOfItsParent"
  "./src/tools/systools TestCommandGetsNoSecretTheUserDidNotGrant"
  "./src/tools/hatools TestModelAloneCannotRunCodeOrChangeTheSystem|TestConfirmTrueAloneCannotUnlockDisarmOpenOrRestart"
  "./src/recorder TestHostileQueriesStayBounded|TestHostileWriteStaysBounded"
  "./src/fsguard TestRestoreReportsWhereItWrote|TestHostile"
  "./src/oauth TestRegistrationFlood|TestAuthorizeFlood|TestCIMDNeverReachesPrivateAddresses|TestRefreshRechecksHomeAssistant|TestGrantLifetime|TestRefreshGrace|TestRefusedLoginsReturnToClient"
  "./src/permission TestOnlyTheUserApproves|TestByLink|TestURLElicitation"
  "./src/approval TestRefusals|TestExpiry|TestVisitsAreBounded"
  "./src/panel TestOnlyTheSupervisorAndLoopbackAreServed|TestForgedApprovalFromElsewhereIsRefused|TestPagesShowNoSecrets"
)
# the guards an attacker's bytes reach first
guards=(
  "./src/fsguard FuzzResolve"
  "./src/recorder FuzzClassify"
  "./src/privileged FuzzInConfig"
  "./src/sensitive FuzzCalls"
  "./src/toolkit FuzzDecodeArgs"
  "./src/toolkit FuzzOpenState"
  "./src/httpserver FuzzCountMessages"
  "./src/httpserver FuzzParseBody"
  "./src/permission FuzzByLink"
  "./src/oauth FuzzRedirectURI"
  "./src/oauth FuzzDialAddressCheck"
  "./src/panel FuzzTrustedPeer"
)

echo "== attacker tests, -race, $count runs each"
for a in "${attacks[@]}"; do
  pkg=${a%% *}; pattern=${a#* }
  printf '%-28s ' "$pkg"
  CI=true go test -race -count="$count" -run "^($pattern)\$" "$pkg" >"$log" 2>&1 || { echo FAIL; cat "$log"; exit 1; }
  grep -q '^ok' "$log" || { echo "FAIL (no test ran)"; cat "$log"; exit 1; }
  echo ok
done

echo "== floods at full size (no -race)"
CI=true go test -count=1 -run '^(TestRegistrationFlood|TestAuthorizeFlood).*' ./src/oauth

echo "== guards, ${fuzz}s each"
for g in "${guards[@]}"; do
  pkg=${g%% *}; target=${g#* }
  printf '%-28s %s\n' "$pkg" "$target"
  go test -run '^$' -fuzz "^$target\$" -fuzztime "${fuzz}s" "$pkg" >"$log" 2>&1 || { cat "$log"; exit 1; }
done
echo "security suite passed"
