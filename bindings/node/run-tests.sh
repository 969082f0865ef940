#!/usr/bin/env bash
# The Node package's checks, in one command (scripts/test-all.sh runs it):
#   npm ci; the release addon for this machine, as published (scripts/dist/node.sh
#   build: zig, glibc 2.17); the generated native.js/native.d.ts are what napi
#   generates (forced to regenerate); node --test against the emulator; the
#   endpoint, fault and network-option tests again over TLS (ROOMCHAT_TEST_TLS=1:
#   emulators with --tls, clients given the CA); the README's Quickstart is
#   examples/readme.mjs; a short benchmark run that prints figures (one call at
#   a time: roomchat's µs per call beside undici's, idle and loaded, each client
#   in a process of its own); the peer benchmark, short (bench/peer.mjs); what
#   OpenTelemetry costs a call (bench/opentelemetry.mjs, short); the export
#   benchmark, the README's RSS promise asserted. The packed
#   packages, installed by name from a registry: scripts/dist/cleanroom-npm.sh.
# ROOMCHAT_NODE_PART runs one part: =addon the release addon and the freshness check
# (scripts/test-all.sh builds it in the background), =tests the tests (with the addon
# built), =bench the two benchmarks (after a tests run: test-all.sh runs them last, on
# a machine with nothing else running); unset, all three. ROOMCHAT_NODE_MODULES_READY=1:
# test-all.sh has run `npm ci` already, and background builds use node_modules (napi),
# so this script must not rerun it.
set -euo pipefail
part=${ROOMCHAT_NODE_PART:-all}
case $part in all | addon | tests | bench) ;; *) echo "ROOMCHAT_NODE_PART: addon, tests or bench, not $part" >&2; exit 2 ;; esac
in_part() { [ "$part" = all ] || [ "$part" = "$1" ]; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cd "$here"

step() { printf '\n--> %s\n' "$*"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

passed=0 failed=0
if in_part addon; then
if [ "${ROOMCHAT_NODE_MODULES_READY:-}" = 1 ]; then
  step "npm ci: done by the test command before its background builds began"
else
  step "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

step "the release addon for this machine (scripts/dist/node.sh build: zig, glibc 2.17 floor) and the freshness of the generated native.js / native.d.ts"
cp native.js native.d.ts "$work/"
# napi only writes the typings while the crate compiles: make sure it does.
touch src/lib.rs
bash "$root/scripts/dist/node.sh" build "$(rustc -vV | sed -n 's/^host: //p')"
for generated in native.js native.d.ts; do
  if ! diff -u "$work/$generated" "$generated"; then
    echo "bindings/node/$generated was stale: it has been regenerated above; commit it" >&2
    exit 1
  fi
done
echo "native.js and native.d.ts are what napi generates"
[ "$part" != addon ] || exit 0
fi

if in_part tests; then
step "emulator binaries (debug for the tests, release for the benchmark)"
# ROOMCHAT_RELEASE_PACKAGES: the packages scripts/test-all.sh builds in release together
# (one feature resolution for all its release builds).
# ROOMCHAT_DEBUG_PACKAGES: the same for its debug build (the workspace).
# shellcheck disable=SC2086 # a list of -p options
(cd "$root" && cargo build --quiet --locked ${ROOMCHAT_DEBUG_PACKAGES:--p roomchat-emulator} &&
  cargo build --quiet --locked --release ${ROOMCHAT_RELEASE_PACKAGES:--p roomchat-emulator})

step "node --test (against the emulator)"
node --test --test-reporter=spec test/*.test.js 2>&1 | tee "$work/node-test.log"
passed=$(sed -nE 's/^ℹ pass ([0-9]+)$/\1/p' "$work/node-test.log" | tail -n 1)
failed=$(sed -nE 's/^ℹ fail ([0-9]+)$/\1/p' "$work/node-test.log" | tail -n 1)

# The second pass: the endpoint, fault and network-option tests again, every
# emulator serving HTTPS (--tls) and every client trusting its CA (helpers.js).
# Always run, CI or not: nothing here can skip it.
# ROOMCHAT_NODE_TLS_FILES (space-separated) names fewer: scripts/test-all.sh runs
# client.test.js and errors.test.js over TLS across its test network instead.
read -r -a tls_files <<<"${ROOMCHAT_NODE_TLS_FILES:-test/client.test.js test/errors.test.js test/network-options.test.js test/tokens.test.js test/generated-ops.test.js}"
step "node --test over TLS (ROOMCHAT_TEST_TLS=1): ${tls_files[*]}"
tls_start=$(date +%s.%N)
ROOMCHAT_TEST_TLS=1 node --test --test-reporter=spec "${tls_files[@]}" 2>&1 | tee "$work/node-test-tls.log"
tls_seconds=$(python3 -c 'import sys,time; print(f"{time.time() - float(sys.argv[1]):.1f}")' "$tls_start")
tls_passed=$(sed -nE 's/^ℹ pass ([0-9]+)$/\1/p' "$work/node-test-tls.log" | tail -n 1)
tls_failed=$(sed -nE 's/^ℹ fail ([0-9]+)$/\1/p' "$work/node-test-tls.log" | tail -n 1)
echo "over TLS (https:// emulators, the CA given as ca): ${tls_passed:-0} passed, ${tls_failed:-1} failed in ${tls_seconds} s"
[ "${tls_passed:-0}" -gt 0 ] || tls_failed=1
passed=$(( ${passed:-0} + ${tls_passed:-0} ))
failed=$(( ${failed:-1} + ${tls_failed:-1} ))

step "the package README's Quickstart is examples/readme.mjs, verbatim"
python3 - "$here/README.md" "$here/examples/readme.mjs" <<'PY'
import sys
readme, example = (open(p).read() for p in sys.argv[1:])
if example.strip() not in readme:
    sys.exit("bindings/node/README.md does not contain bindings/node/examples/readme.mjs verbatim")
PY
fi

if in_part bench; then

step "benchmark, short run (figures, not asserted)"
ROOMCHAT_BENCH_N=${ROOMCHAT_NODE_BENCH_N:-300} ROOMCHAT_EMULATOR="$target/release/roomchat-emulator" node bench/list-users.mjs

step "peer benchmark, short run (figures, not asserted): one call at a time, roomchat, roomchat with its pool spinning 100 µs, undici.request and fetch, each in a process of its own warmed by 3000 calls, idle and loaded"
ROOMCHAT_BENCH_ROUNDS=${ROOMCHAT_NODE_PEER_ROUNDS:-3} ROOMCHAT_BENCH_N=${ROOMCHAT_NODE_BENCH_N:-300} ROOMCHAT_BENCH_MODES=1 \
  ROOMCHAT_EMULATOR="$target/release/roomchat-emulator" node bench/peer.mjs

step "OpenTelemetry's cost, short run (figures, not asserted): no @opentelemetry/api, the API without an SDK, the SDK; undici with and without its instrumentation"
ROOMCHAT_BENCH_N=${ROOMCHAT_NODE_OTEL_BENCH_N:-300} ROOMCHAT_BENCH_N_LOADED=${ROOMCHAT_NODE_OTEL_BENCH_N:-300} \
  ROOMCHAT_EMULATOR="$target/release/roomchat-emulator" node bench/opentelemetry.mjs

# The README's export figures (messages/s, and the RSS within 10 MiB of where
# it started, asserted: a test of the README's promise, counted as one).
step "export benchmark: 100,000 messages through iterRoomMessages (figures; the README's RSS promise asserted)"
if ROOMCHAT_BENCH_ASSERT_RSS=1 ROOMCHAT_EMULATOR="$target/release/roomchat-emulator" node bench/export-messages.mjs; then
  passed=$(( passed + 1 ))
else
  failed=$(( failed + 1 ))
fi
fi

echo
echo "node: ${passed:-0} passed, ${failed:-1} failed ($part)"
[ "${failed:-1}" -eq 0 ] && [ "${passed:-0}" -gt 0 ]
