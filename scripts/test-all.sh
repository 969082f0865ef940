#!/usr/bin/env bash
# Runs every test of roomchat: fmt, clippy and docs; the Rust workspace (emulator,
# core, C ABI crate, conformance vectors, Redis budget, doc tests), its endpoint
# and fault tests again over TLS, the tests across the test network (a namespaced
# host, tinyproxy); the README's demo; the header freshness check and the C/C++
# suites under valgrind; the Node package; the OpenAPI document and schemathesis;
# the Python package (release wheel in a fresh venv, pytest); the installed C/C++
# package in a clean room; OpenTelemetry end to end through a real Collector (Rust,
# Node, Python, Go, the JVM); the Windows check (clippy for x86_64-pc-windows-gnu); the
# release artefacts (scripts/dist/: wheels, sdist and npm packages as released, the
# version check, the MSRV, clean-room installs by name from local registries with
# no Rust on PATH, the arm64 ones run under qemu-user, actionlint); the Go module
# (go test -race, its Linux platform modules linked and run, go get by name from a
# file:// module proxy in a clean room: scripts/dist/go.sh); then, last, on a
# machine with nothing else running, the benchmarks, the stress test, roomchat
# export's figures and the other figures.
#
# Three phases, so that two CPUs are used while much of the run waits (25 ms round
# trips, Redis failovers, valgrind, npm and pip): (1) the tests, while the release
# artefacts for the other platforms, the Windows clippy and the MSRV check build in
# the background, niced (scripts/background-builds.sh); (2) once those are reported,
# the steps that install them; (3) the benchmarks and figures, alone.
# Installs what a fresh machine lacks (Debian packages, the pinned cbindgen,
# maturin, the napi CLI, the mingw-w64 compiler and the Windows rustup target) on
# the way, so it is also what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# No incremental compilation: the run builds each debug crate once, and incremental's
# bookkeeping cost the workspace's test build 26% more CPU (cargo test --no-run:
# 204 s against 258 s, cold).
export CARGO_INCREMENTAL=0
log_dir=$(mktemp -d)
background_pid=
# A run that stops early stops its background builds too (their own process group).
# A failed run prints the end of the failed step's log, when it wrote one: many steps
# print only a few lines of it (grep), which would hide the failure's message.
on_exit() {
  local status=$? newest
  [ -z "$background_pid" ] || kill -- "-$background_pid" 2>/dev/null || true
  [ -z "${topologies_pid:-}" ] || kill "$topologies_pid" 2>/dev/null || true
  [ -z "${disk_sampler_pid:-}" ] || kill "$disk_sampler_pid" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    newest=$(find "$log_dir" -maxdepth 1 -name '*.log' -newer "$log_dir/step-started" -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-)
    if [ -n "$newest" ]; then
      printf '\n==> the run failed (exit %d); the end of the step log %s:\n' "$status" "${newest##*/}"
      tail -n 150 "$newest"
    fi
  fi
  rm -rf "$log_dir"
}
trap on_exit EXIT
# Each step's header shows the run's time so far (minutes:seconds) and the CPU time its
# commands have used so far (user + system, every process waited for), so a slow step,
# and whether it computes or waits, shows in CI's log.
step() {
  local cpu
  touch "$log_dir/step-started"
  times >"$log_dir/times" # in this shell: a subshell's `times` would not count this shell's children
  cpu=$(awk -f scripts/times-cpu.awk "$log_dir/times")
  printf '\n==> [%d:%02d, cpu %d:%02d, disk %s GB free] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) $((cpu / 60)) $((cpu % 60)) "$(disk_free_gb)" "$*"
}
# Free space where the run writes (target/, the venvs, the caches): a full disk fails a
# build with "No space left on device" minutes in (CI once did, at 10 min), so the
# headers show it, a sampler keeps its lowest, and the run warns at its start when the
# machine has less than a cold run takes (measured: see disk_needed_gb).
disk_free_gb() { df -Pk . 2>/dev/null | awk 'NR == 2 { printf "%.1f", $4 / 1048576 }' || true; }
# What a cold run writes at its peak: 10.2 GB measured (`disk: ...` at the end of the run;
# 16.5 GB in a run beside other builds of the same checkout;
# target/, the venvs, node_modules, the Go and zig caches) on a machine whose rustup targets,
# cargo registry and npm and pip caches were already filled; a fresh machine fills those
# too (a few GB more).
disk_needed_gb=14
disk_at_start=$(disk_free_gb)
(
  lowest=$disk_at_start
  while kill -0 $$ 2>/dev/null; do
    now=$(disk_free_gb)
    lowest=$(awk -v a="$lowest" -v b="$now" 'BEGIN { print (b < a ? b : a) }')
    echo "$lowest" >"$log_dir/disk-lowest.tmp" && mv "$log_dir/disk-lowest.tmp" "$log_dir/disk-lowest"
    sleep 5
  done
) </dev/null >/dev/null 2>&1 &
disk_sampler_pid=$!
if awk -v free="$disk_at_start" -v need="$disk_needed_gb" 'BEGIN { exit !(free < need) }'; then
  echo "warning: $disk_at_start GB free here, and a cold run writes about $disk_needed_gb GB: it may fail with \"No space left on device\"" >&2
fi
# The release steps (scripts/dist/): each one's time, printed at the end, and how many passed.
dist_times=()
dist_passed=0
# The release builds on this machine (the benches, the stress test, the export's figures,
# the C library over the test network, the release emulator the Node and Python
# benchmarks run against) resolve features over these four packages at once, so that
# core and its dependencies are built once in release, not once for each package's own
# feature set (four builds before: the emulator's alone built rustls, ring and serde_json
# a second time). The scripts it calls build the same set (ROOMCHAT_RELEASE_PACKAGES).
release_set=(-p roomchat -p roomchat-cli -p roomchat-ffi -p roomchat-emulator)
export ROOMCHAT_RELEASE_PACKAGES="${release_set[*]}"
# The same for debug builds: the scripts build the whole workspace (what `cargo test
# --workspace` resolved), not their own few packages, each of which resolved other
# features and built the dependencies again (`-p roomchat-ffi -p roomchat-emulator`:
# 75 s of CPU; `-p roomchat-cli -p roomchat-emulator`, in the benchmarks' phase: 45 s).
export ROOMCHAT_DEBUG_PACKAGES=--workspace
timed() { # name, then the command
  local name=$1 started
  shift
  started=$(date +%s)
  "$@"
  dist_times+=("$name: $(($(date +%s) - started)) s")
  dist_passed=$((dist_passed + 1))
}

# Debian packages a fresh machine lacks: libcurl's headers (the benchmark's
# libcurl side links the system libcurl), valgrind and pkg-config (the C suites),
# redis-server (the shared rate budget's tests start their own on free ports;
# its redis-cli makes clusters, and it runs the sentinels: `redis-server --sentinel`
# is what Debian's redis-sentinel package runs).
step "system packages"
need_apt=()
pkg-config --exists libcurl 2>/dev/null || need_apt+=(libcurl4-openssl-dev)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
command -v valgrind >/dev/null || need_apt+=(valgrind)
command -v redis-server >/dev/null || need_apt+=(redis-server)
# The test network (scripts/testnet.sh): network namespaces and a CONNECT proxy.
command -v ip >/dev/null || need_apt+=(iproute2)
command -v tinyproxy >/dev/null || need_apt+=(tinyproxy-bin)
# roomchat import: the result file's rename and folder fsync as strace sees them (cli/tests/import.rs).
command -v strace >/dev/null || need_apt+=(strace)
# roomchat export as a person sees it (cli/tests/export_ui.sh): a terminal and a browser.
command -v tmux >/dev/null || need_apt+=(tmux)
command -v chromium >/dev/null || need_apt+=(chromium)
command -v curl >/dev/null || need_apt+=(curl)
# Certificates for redis-server over TLS.
command -v openssl >/dev/null || need_apt+=(openssl)
# libabigail's abidw/abidiff: the C ABI check against the last release (tests/abi/).
command -v abidiff >/dev/null || need_apt+=(abigail-tools)
# The JVM package's build (scripts/dist/jvm.sh; the JDKs 17 and 25 come with the machine).
command -v mvn >/dev/null || need_apt+=(maven)
# What later scripts would install on their own (each checks again when run alone),
# here so that nothing runs apt-get while the background builds run (dpkg's lock):
# the Windows check's C compiler, qemu-user and debootstrap (arm64), cmake and g++
# (the C/C++ clean rooms), shellcheck (actionlint), python3-venv (OpenAPI).
command -v x86_64-w64-mingw32-gcc >/dev/null || need_apt+=(gcc-mingw-w64-x86-64)
command -v qemu-aarch64-static >/dev/null || need_apt+=(qemu-user-static)
command -v debootstrap >/dev/null || need_apt+=(debootstrap)
command -v cmake >/dev/null || need_apt+=(cmake)
command -v make >/dev/null || need_apt+=(make)
command -v c++ >/dev/null || need_apt+=(g++)
command -v readelf >/dev/null || need_apt+=(binutils)
command -v shellcheck >/dev/null || need_apt+=(shellcheck)
python3 -c 'import ensurepip' 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
else
  echo "all present"
fi

# rustfmt and clippy are rustup components; a toolchain without them (and no way
# to fetch them) skips these two checks rather than failing the run.
step "formatting (cargo fmt --check)"
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
else
  echo "rustfmt is not installed: skipped"
fi

step "generated files: each is what api/operations.toml makes (cargo xtask codegen --check)"
cargo xtask codegen --check
cargo xtask layers # each crate's modules in layers: no import circle (xtask/src/layers.rs)

step "build tools and toolchains, then the background builds start (scripts/background-builds.sh, at the lowest priority: this machine's addon and wheel, the aarch64 and musl ones and the sdist, the emulator's static packages, the Windows clippy, the MSRV check, the OpenTelemetry Collector, OpenAPI's schemathesis, actionlint)"
# Installed here, before anything runs beside: the rustup targets and the MSRV
# toolchain, the pinned build tools (maturin, zig, cargo-zigbuild: scripts/dist/env.sh),
# bindings/node's npm packages (napi; the Node step must not reinstall them while
# the background builds use them).
bash -c 'source scripts/dist/env.sh && build_tools'
for rust_target in x86_64-pc-windows-gnu aarch64-unknown-linux-musl; do
  rustup target list --installed | grep -qx "$rust_target" || rustup target add "$rust_target"
done
bash scripts/dist/msrv.sh install
(cd bindings/node && npm ci --no-audit --no-fund --loglevel=error)
background_dir=$log_dir/background
mkdir -p "$background_dir"
# In the order the foreground needs them: the host's addon (Node step), its wheel (Python
# step), then what only the later steps use.
# Two lanes (see background-builds.sh): the artefacts the steps below install, in the
# order they need them; beside them, what only the last wait needs. The OpenTelemetry
# Collector (Go, ~270 s of CPU cold) first in the second lane: that lane only waits for
# the debug emulator until the Rust tests' step built it, and the first lane (the
# addon, the wheels: the critical path) keeps its place.
background_first_lane=(node-addon wheel-host wheels-cross npm-addons emulator-packages)
background_second_lane=(otel-collector openapi windows msrv actionlint sdist-cleanroom)
background_jobs=("${background_first_lane[@]}" "${background_second_lane[@]}")
# Counted as release steps when reported (as the release steps before them were).
background_dist_jobs=" wheel-host wheels-cross npm-addons msrv actionlint sdist-cleanroom "
setsid nice -n 19 bash scripts/background-builds.sh "$background_dir" "${background_first_lane[@]}" -- "${background_second_lane[@]}" </dev/null >/dev/null 2>&1 &
background_pid=$!
echo "background builds: ${background_jobs[*]} (pid $background_pid)"
# Waits for a background job, prints its output and its cost, and fails the run if it failed.
background_report() {
  local job=$1 state status seconds cpu
  printf -- '--> background job %s\n' "$job"
  until [ -f "$background_dir/$job.done" ]; do
    state=$(sed -E 's/.*\) ([A-Za-z]).*/\1/' "/proc/$background_pid/stat" 2>/dev/null || true)
    case $state in '' | Z*) echo "the background builds stopped before $job ended" >&2; exit 1 ;; esac
    sleep 1
  done
  read -r status seconds cpu <"$background_dir/$job.done"
  cat "$background_dir/$job.log"
  echo "(background job $job: exit $status, $seconds s, cpu $cpu s)"
  [ "$status" -eq 0 ] || { echo "the background job $job failed" >&2; exit 1; }
  dist_times+=("$job (background): $seconds s")
  [[ $background_dist_jobs != *" $job "* ]] || dist_passed=$((dist_passed + 1))
  touch "$background_dir/$job.reported"
}

step "lints (cargo clippy, warnings are errors)"
if cargo clippy --version >/dev/null 2>&1; then
  # The tests outside `cargo test`'s default set (test = false) are not among --all-targets,
  # nor linted when named beside it (cargo then checks --all-targets' set alone): named in a
  # run of their own.
  cargo clippy --workspace --all-targets --locked -- -D warnings
  cargo clippy --workspace --test redis_topologies --test stress --test network --test fault_harness --locked -- -D warnings
  # The feature `tracing` is on in no package of the workspace: its code (core's library
  # and its test) is linted here. --workspace keeps the features of the run above, so
  # only the crates over core are checked again, not every dependency (12 s of CPU
  # against 49 s for `-p roomchat`, whose features differ: libc, serde_core, http).
  cargo clippy --workspace --lib --test tracing --features roomchat/tracing --locked -- -D warnings
  # So is the feature `opentelemetry` (its library code, test and benchmark), and the
  # end-to-end test through the collector (tests/otel/rust: its feature `collector`).
  cargo clippy --workspace --lib --test opentelemetry --test collector --bench observability \
    --features roomchat/opentelemetry,roomchat-otel-collector-test/collector --locked -- -D warnings
else
  echo "clippy is not installed: skipped"
fi

step "docs (cargo doc, warnings are errors: every public item is documented)"
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps --workspace --locked

step "Rust tests (cargo test --workspace)"
cargo test --workspace --locked 2>&1 | tee "$log_dir/cargo.log"
# The debug emulator the background's OpenAPI job runs against, the C library and the
# CLI: built now, the workspace at once (ROOMCHAT_DEBUG_PACKAGES).
# shellcheck disable=SC2086 # a list of options
cargo build --quiet --locked $ROOMCHAT_DEBUG_PACKAGES
touch "$background_dir/debug-emulator"

step "Rust tests over TLS (ROOMCHAT_TEST_TLS=1: every emulator serves HTTPS with a CA of its own)"
# --workspace (the tests named are core's) keeps the features of the run above: its test
# binaries are run again, not built again for core's own feature set. So do the later
# debug steps that name core's tests.
ROOMCHAT_TEST_TLS=1 cargo test --locked --workspace --test endpoints --test retries --test errors \
  --test pagination --test hooks --test transport --test holds --test limits --test tokens --test options 2>&1 | tee -a "$log_dir/cargo.log" | grep -E '^test result'

step "Rust: the cargo feature tracing (a span per call and per attempt, named as OpenTelemetry's conventions say; the key redacted)"
cargo test --locked --workspace --features roomchat/tracing --test tracing 2>&1 | tee -a "$log_dir/cargo.log" | grep -E '^test result'

step "Rust: the cargo feature opentelemetry (spans, metrics and trace context against the SDK's in-memory exporters)"
cargo test --locked --workspace --features roomchat/opentelemetry --test opentelemetry 2>&1 | tee -a "$log_dir/cargo.log" | grep -E '^test result'
# The unit tests of the feature's module (the no-op providers' fast path).
cargo test --locked -p roomchat --features opentelemetry --lib send::otel 2>&1 | tee -a "$log_dir/cargo.log" | grep -E '^test result'
cargo test --locked --workspace --features roomchat/opentelemetry --doc ReadmeDoctests 2>&1 | tee -a "$log_dir/cargo.log" | grep -E '^test result'

step "Rust: the core README's Observability example as a user copies it (a crate of its own: the code block as src/main.rs, the guide's Cargo.toml lines; built --locked in target/rust-guide, run against the emulator: its three spans printed)"
bash tests/rust-guide/observability/run.sh

step "Rust: the shared budget on Redis Cluster and Sentinel (real servers resharded and failing over under 4 processes x 4 threads: tests/redis/topology.sh): built now, run beside the next steps (C ABI, Node), reported after the Node tests"
# Its 2.5 min are mostly waits for failovers (~30 s of CPU): run beside the steps that
# follow, not before them. The test binary runs by itself (cargo's build lock stays free
# for the next steps' builds), from core/ as cargo test would. One test at a time: they
# fork (core/tests/redis_topologies.rs, one_test_at_a_time).
topologies_bin=$(cargo test --locked --workspace --test redis_topologies --no-run --message-format=json 2>"$log_dir/topologies-build.log" \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "redis_topologies" and m.get("executable"):
        print(m["executable"])') || { cat "$log_dir/topologies-build.log"; exit 1; }
[ -x "$topologies_bin" ] || { cat "$log_dir/topologies-build.log"; echo "no redis_topologies test binary" >&2; exit 1; }
(cd core && exec "$topologies_bin" --nocapture --test-threads=1) >"$log_dir/topologies.log" 2>&1 &
topologies_pid=$!
echo "redis topologies: running beside the next steps (pid $topologies_pid)"
# Waits for it; prints its figures, or its failure and fails the run.
topologies_report() {
  local status=0
  wait "$topologies_pid" || status=$?
  topologies_pid=
  if [ "$status" -ne 0 ]; then
    # With --nocapture a failed assertion is a "panicked" line among the figures.
    grep -E -A3 "panicked|^redis budget" "$log_dir/topologies.log"
    sed -n '/^failures:/,$p' "$log_dir/topologies.log"
    echo "the Redis topologies' tests failed (exit $status)" >&2
    exit 1
  fi
  grep -E '^(redis budget|test result)' "$log_dir/topologies.log"
  grep -E '^test result' "$log_dir/topologies.log" >>"$log_dir/cargo.log"
}

step "across the test network: a namespaced host over TLS with ~25 ms round trips, through tinyproxy (scripts/testnet.sh)"
# testnet.sh runs the debug emulator, built with the workspace in the Rust tests' step.
bash scripts/testnet.sh run -- cargo test --locked --workspace --test network -- --nocapture 2>&1 \
  | tee "$log_dir/network.log" | grep -E '^(testnet|network|test result)'
grep -q '^test result: ok. 1 passed' "$log_dir/network.log"
grep -E '^test result' "$log_dir/network.log" >>"$log_dir/cargo.log"

step "the README's demo (cargo run --example quickstart)"
cargo run --quiet --locked --example quickstart >"$log_dir/quickstart.log"
grep -q "Rate-limit budget of this key" "$log_dir/quickstart.log"
echo "quickstart ran: $(wc -l <"$log_dir/quickstart.log") lines of output"

step "C ABI: header freshness, the ABI against 0.1.0 (abidiff), C99 and C++17 suites (the C++ wrapper's among them) under valgrind, pkg-config, the C/C++ guide's examples"
bash tests/c/run.sh 2>&1 | tee "$log_dir/c.log"

step "Node package: the release addon (zig, glibc 2.17) and the freshness of the generated loader (built in the background), node --test (plain and TLS); its benchmarks run last"
background_report node-addon
# Its TLS pass leaves out client.test.js and errors.test.js: they run over TLS across the
# test network below (the same tests, over TLS, with latency), as Python's do.
ROOMCHAT_NODE_TLS_FILES="test/network-options.test.js test/tokens.test.js test/generated-ops.test.js" \
  ROOMCHAT_NODE_PART=tests ROOMCHAT_NODE_MODULES_READY=1 bash bindings/node/run-tests.sh 2>&1 | tee "$log_dir/node.log"

step "Rust: the shared budget on Redis Cluster and Sentinel, run beside the steps above: its figures"
topologies_report

step "C across the test network: the proxy option, HTTPS_PROXY and NO_PROXY via tinyproxy, a wrong proxy password, a late POST answer sent once (scripts/testnet.sh; the cold-start bench runs last)"
bash scripts/testnet.sh run -- env ROOMCHAT_C_NETWORK_PART=tests bash tests/c/network.sh 2>&1 | tee "$log_dir/c-net.log" | grep -E '^(testnet|c network|c-network)'
grep -qE '^c-network: [0-9]+ passed, 0 failed$' "$log_dir/c-net.log"

step "Node across the test network: tinyproxy, NO_PROXY, a lost POST answer (scripts/testnet.sh)"
bash scripts/testnet.sh run -- node --test --test-reporter=spec bindings/node/test/network.test.js 2>&1 | tee "$log_dir/node-net.log" | grep -E '^(testnet|ℹ (pass|fail|skipped))'
grep -q '^ℹ pass 1$' "$log_dir/node-net.log"

step "Node endpoint and fault tests across the test network, over TLS (ROOMCHAT_TEST_NET=1: the namespaced emulator, reset per test)"
bash scripts/testnet.sh run -- env ROOMCHAT_TEST_NET=1 node --test --test-concurrency=1 --test-reporter=spec \
  bindings/node/test/client.test.js bindings/node/test/errors.test.js 2>&1 | tee "$log_dir/node-net-suite.log" | grep -E '^(testnet|ℹ (pass|fail|skipped))'
grep -qE '^ℹ fail 0$' "$log_dir/node-net-suite.log"

# The static roomchat executables (scripts/dist/cli.sh: a whole release build of their own,
# ~4 min cold) are built and checked by the release workflow, not here: the command itself is
# tested from the wheel and the npm packages in the clean rooms below (the same entry point).
step "the manylinux2014 x86_64 wheel (maturin + zig; it shares the Node addon's build), auditwheel show asserts its tag (scripts/dist/python.sh host, built in the background)"
background_report wheel-host

step "Python package: the manylinux2014 x86_64 wheel in a fresh venv, pytest, stubtest, mypy --strict; its benchmark runs last"
# Its TLS pass takes test_tokens only: test_client, test_async and test_faults run over
# TLS in the test-network step below (the same tests, over TLS, with latency).
ROOMCHAT_PYTHON_WHEEL=$(ls "${CARGO_TARGET_DIR:-$PWD/target}"/dist/python/roomchat-*-manylinux*_x86_64.whl) \
  ROOMCHAT_PY_PART=tests ROOMCHAT_PY_TLS_FILES=test_tokens.py bash bindings/python/run-tests.sh 2>&1 | tee "$log_dir/python.log"

step "Python across the test network: tinyproxy, NO_PROXY, a lost POST answer (scripts/testnet.sh)"
(cd bindings/python/tests && bash ../../../scripts/testnet.sh run -- "${CARGO_TARGET_DIR:-$PWD/../../../target}/python-test-venv/bin/python" \
  -m pytest -p no:cacheprovider -q -rfE test_network_path.py) 2>&1 | tee "$log_dir/python-net.log" | grep -E '^testnet|^(FAILED|ERROR) |passed|failed|skipped'
grep -qE '^1 passed' "$log_dir/python-net.log" || { tail -n 120 "$log_dir/python-net.log"; exit 1; }

step "Python endpoint and fault tests across the test network, over TLS (ROOMCHAT_TEST_NET=1: the namespaced emulator)"
(cd bindings/python/tests && bash ../../../scripts/testnet.sh run -- env ROOMCHAT_TEST_NET=1 \
  "${CARGO_TARGET_DIR:-$PWD/../../../target}/python-test-venv/bin/python" -m pytest -p no:cacheprovider -q -rfE \
  test_client.py test_async.py test_faults.py) 2>&1 | tee "$log_dir/python-net-suite.log" | grep -E '^testnet|^roomchat:|^(FAILED|ERROR) |passed|failed'
# A failure shows its traceback (the log is gone when the run ends).
grep -qE '^[0-9]+ passed in' "$log_dir/python-net-suite.log" || { tail -n 120 "$log_dir/python-net-suite.log"; exit 1; }

step "C/C++ package in a clean room: cmake --install, then find_package and pkg-config projects outside the repository, without cargo on PATH, run against the emulator (tests/c/clean-room.sh)"
bash tests/c/clean-room.sh 2>&1 | tee "$log_dir/c-clean-room.log"
grep -qE '^c-clean-room: [0-9]+ passed, 0 failed$' "$log_dir/c-clean-room.log"

step "release builds for the last phase (the benchmarks, the stress test, roomchat export): compiled now, beside the background builds"
# The fault harness runs before the wait for the cross builds, while the background's cargo
# may hold the release build directory's lock (cargo waited 100 s for it): its executable
# is run itself, found in what cargo reports now.
cargo test --quiet --release --locked "${release_set[@]}" --test stress --test export --test fault_harness --no-run \
  --message-format=json >"$log_dir/release-tests.json"
fault_harness_bin=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message["target"]["name"] == "fault_harness" and message.get("executable"):
        print(message["executable"])
' "$log_dir/release-tests.json")
[ -x "$fault_harness_bin" ] || { echo "cargo named no fault_harness executable" >&2; exit 1; }
cargo bench --quiet --locked --no-run "${release_set[@]}" --bench network --bench list_users --bench decode --bench compression --bench c_vs_core
cargo bench --quiet --locked --no-run "${release_set[@]}" --features roomchat/redis --bench budget
echo "built: the stress, export and fault-harness tests, the benches network, list_users, decode, compression, c_vs_core and budget"

step "OpenTelemetry end to end: each language's OTLP exporter sends to a real OpenTelemetry Collector (scripts/otel-collector.sh, built in the background from the pinned Go modules), and what it wrote is asserted: spans, parentage, attributes, a retry, metrics, no secret"
# Here, before the steps that wait for the background's cross builds: the Rust test's
# exporter (opentelemetry-otlp, prost) compiles in time the foreground would spend waiting.
# Nothing skips: a collector that did not build fails the run (background_report), and
# each test fails without one. Each prints one line: what the collector received.
background_report otel-collector
debug_emulator=${CARGO_TARGET_DIR:-$PWD/target}/debug/roomchat-emulator
python_test_venv=${CARGO_TARGET_DIR:-$PWD/target}/python-test-venv
cargo test --locked --workspace --features roomchat/opentelemetry,roomchat-otel-collector-test/collector --test collector -- --nocapture 2>&1 \
  | tee "$log_dir/otel-e2e-rust.log" | grep -E '^(otel e2e|test result)'
grep -q '^test result: ok. 1 passed' "$log_dir/otel-e2e-rust.log"
grep -E '^test result' "$log_dir/otel-e2e-rust.log" >>"$log_dir/cargo.log"
node --test --test-reporter=spec bindings/node/test/otel-collector.e2e.js 2>&1 | tee "$log_dir/otel-e2e-node.log" | grep -E '^(otel e2e|ℹ (pass|fail))'
grep -q '^ℹ pass 1$' "$log_dir/otel-e2e-node.log"
# Python's, from the test venv the Python step made (its requirements pin the exporter).
(cd bindings/python/tests && ROOMCHAT_EMULATOR="$debug_emulator" "$python_test_venv/bin/python" \
  -m pytest -p no:cacheprovider -q -s otel_collector_e2e.py) 2>&1 | tee "$log_dir/otel-e2e-python.log" | grep -E '^otel e2e|passed|failed'
grep -qE '^1 passed' "$log_dir/otel-e2e-python.log"
# Go's (tests/otel/go: a module of its own, so that otel-go's OTLP exporters are no
# requirement of the package), over core's release static library in the platform
# module's folder. ROOMCHAT_OTELCOL_GO_E2E=1 runs it (without it, and without CI, it skips).
cp "${CARGO_TARGET_DIR:-$PWD/target}/release/libroomchat.a" bindings/go/lib/linux-amd64/
(cd tests/otel/go && ROOMCHAT_OTELCOL_GO_E2E=1 ROOMCHAT_EMULATOR="$debug_emulator" GOWORK=off GOTOOLCHAIN=local \
  GOMODCACHE="${CARGO_TARGET_DIR:-$PWD/../../../target}/go/mod" GOCACHE="${CARGO_TARGET_DIR:-$PWD/../../../target}/go/cache" \
  GOFLAGS=-modcacherw go test -count=1 -v ./...) 2>&1 | tee "$log_dir/otel-e2e-go.log" | grep -E '^(otel e2e|ok|FAIL|--- )'
grep -qE '^--- PASS: TestSpansAndMetricsReachARealCollector' "$log_dir/otel-e2e-go.log"

# Here, before the wait for the cross builds: neither keeps a time, and the last phase, which
# must run alone, is shorter by their minute and a half.
step "roomchat export and import under the randomized fault harness (release, seed 44, 50 s: kill -9 at random instants, deletions, posts, 429s, 5xx, cut-off and slow answers, a full disk, concurrent runs; scripts/fault-harness.sh runs it longer)"
# A failing schedule prints its seed, its case and the line that replays it.
(cd cli && ROOMCHAT_HARNESS_SEED=44 ROOMCHAT_HARNESS_SECONDS=50 "$fault_harness_bin" --nocapture) 2>&1 \
  | tee "$log_dir/fault-harness.log" | grep -E '^fault harness|^  (->|replay)|^test result'
grep -q '^test result: ok' "$log_dir/fault-harness.log"

step "roomchat export as a person sees it: the progress bar in tmux, the HTML transcript in Chromium (cli/tests/export_ui.sh)"
ROOMCHAT_DEBUG_BUILT=1 bash cli/tests/export_ui.sh 2>&1 | tee "$log_dir/cli-export-ui.log" | grep -E '^(screenshots|the transcript|export_ui)'
grep -q '^export_ui: OK' "$log_dir/cli-export-ui.log"

step "the other platforms' wheels and addons, and the sdist (built in the background, unoptimized: scripts/dist/python.sh cross, scripts/dist/node.sh build)"
background_report wheels-cross
background_report npm-addons

step "npm packages: every package packed, the three addons in theirs (scripts/dist/node.sh pack)"
timed "npm packs" bash scripts/dist/node.sh pack

step "test kit: the emulator's wheels and npm packages (static Linux x64/arm64, built unoptimized in the background) installed by name from pypiserver and verdaccio as users would, the READMEs' tests of a user's code from them (pytest and pytest-xdist, node --test, Jest, Vitest, CTest via roomchat_add_emulator_test), arm64 under qemu"
background_report emulator-packages
ROOMCHAT_EMULATOR_PACKAGES_READY=1 ROOMCHAT_EMULATOR_PACKAGES_UNOPTIMIZED=1 bash scripts/testkit-packages.sh 2>&1 | tee "$log_dir/testkit.log"

step "versions: one version for every package and artefact, the CHANGELOG, the supported ranges (scripts/dist/versions.sh)"
timed "versions" bash scripts/dist/versions.sh

step "clean room, pip: a fresh venv installs roomchat by name from pypiserver, no Rust on PATH, runs the README's Quickstart"
timed "clean room pip" bash scripts/dist/cleanroom-pip.sh

step "clean room, npm: a fresh project installs roomchat by name from verdaccio, no Rust on PATH: require, import, tsc --strict, the README's Quickstart"
timed "clean room npm" bash scripts/dist/cleanroom-npm.sh

step "JVM package: the Linux natives (x86-64 and aarch64, glibc and musl; the three cross ones with zig, unoptimized, sharing the Go step's dependency builds) into the jar, built and tested on Java 17 and 25 (JUnit 5 against the emulator), published to target/m2, its natives checked (readelf) and two run by the C README example (aarch64 under qemu-user, musl under musl's loader), then fresh Maven projects naming only dev.roomchat:roomchat run the README's Java and Kotlin tests (scripts/dist/jvm.sh)"
cargo build --quiet --release --locked "${release_set[@]}" # libroomchat.so and the emulator, linked from the builds above
# Cold, this step compiles the dependencies of the arm64 and musl targets that the Go step
# below then reuses (same zig folder, environment and features: Go's static libraries then
# compile roomchat-ffi alone); its own share is roomchat-ffi's cdylib per target (48 s for
# the three at a load of 20 on 2 cores), the natives' check and run (~15 s).
jvm_package() { # a function, so that timed's counts stay in this shell (a pipe would run it in a subshell)
  bash scripts/dist/jvm.sh 2>&1 | tee "$log_dir/jvm.log"
}
timed "JVM package" jvm_package
# The JVM's OpenTelemetry end to end (tests/otel/README.md), over the classes jvm.sh just built
# (so not in the step above, which runs before them): OtelCollectorE2E, through
# opentelemetry-exporter-otlp (OTLP/HTTP protobuf) to the collector built in the background.
(cd bindings/jvm && ROOMCHAT_EMULATOR="${CARGO_TARGET_DIR:-$PWD/../../target}/release/roomchat-emulator" \
  mvn -B -q -Dstyle.color=never -Dmaven.repo.local="${CARGO_TARGET_DIR:-$PWD/../../target}/m2" \
  -Dtest=OtelCollectorE2E org.apache.maven.plugins:maven-surefire-plugin:3.5.4:test) 2>&1 \
  | tee "$log_dir/otel-e2e-jvm.log" | grep -E '^otel e2e'
grep -q '^otel e2e jvm: ' "$log_dir/otel-e2e-jvm.log"

step "clean room, sdist: it builds and installs with Rust in a fresh venv (built in the background once the sdist was made: scripts/dist/cleanroom-sdist.sh)"
background_report sdist-cleanroom

step "clean room, linux-arm64: the aarch64 wheel and the arm64 addon, installed by name, run under qemu-user against the emulator"
timed "clean room arm64 (qemu-user)" bash scripts/dist/cleanroom-arm64.sh

# After the arm64 clean room: the cross builds' zig folder is free (the background's wheels
# and addons are done) and the arm64 root that qemu-user runs the arm64 program in exists.
# Cold (empty target/go, the wheels built): 241 s of CPU, most of it the three unoptimized
# static libraries (they share about half their units with the wheels: ffi/Cargo.toml's
# features, which match the host's release set, are not the wheels').
step "Go module (bindings/go, scripts/dist/go.sh all): this machine's static library from the release build above into its platform module, go vet, go test -race; the linux-arm64 and both musl libraries (zig, unoptimized as the other platforms' wheels) each linked into the README's example and run against the emulator (arm64 under qemu-user, musl static); the modules assembled as a file:// module proxy, go get by name in a clean room, the example built offline and run, CGO_ENABLED=0 refused with one message; another Rust static library in the same program"
go_module() { # a function, so that timed's counts stay in this shell (a pipe would run it in a subshell)
  ROOMCHAT_EMULATOR="${CARGO_TARGET_DIR:-$PWD/target}/debug/roomchat-emulator" bash scripts/dist/go.sh all 2>&1 | tee "$log_dir/go.log"
}
timed "go module" go_module

step "the rest of the background builds, which must end before the benchmarks: OpenAPI (docs/openapi.yaml validated, the conformance vectors checked against it, schemathesis against the emulator), the Windows clippy (warnings are errors), the MSRV, actionlint"
for job in "${background_jobs[@]}"; do # each one not reported in its step already
  [ -f "$background_dir/$job.reported" ] || background_report "$job"
done
wait "$background_pid"
background_pid=

step "benchmarks across the test network: Rust, C (cold start vs libcurl), Node (vs fetch and undici), Python (vs requests, httpx, urllib3): figures, not asserted on time"
# Against the release emulator: the debug one took most of the minute that the Node and
# Python benchmarks spent on the 100,000-message conversation (serializing and gzipping
# 23 MB per call), not the clients measured.
release_emulator=${CARGO_TARGET_DIR:-$PWD/target}/release/roomchat-emulator
ROOMCHAT_EMULATOR=$release_emulator bash scripts/testnet.sh run -- env ROOMCHAT_BENCH_N="${ROOMCHAT_BENCH_N_NETWORK:-30}" \
  cargo bench --quiet --locked "${release_set[@]}" --bench network 2>&1 | tee "$log_dir/network-bench.log" | grep -E '^(testnet|network)'
grep -q '^network: cold start' "$log_dir/network-bench.log"
ROOMCHAT_EMULATOR=$release_emulator bash scripts/testnet.sh run -- env ROOMCHAT_C_NETWORK_PART=bench bash tests/c/network.sh 2>&1 | tee "$log_dir/c-net-bench.log" | grep -E '^(testnet|c network|c-network)'
grep -qE '^c-network: [0-9]+ passed, 0 failed$' "$log_dir/c-net-bench.log"
ROOMCHAT_BENCH_N=${ROOMCHAT_BENCH_N_NETWORK:-30} ROOMCHAT_EMULATOR=$release_emulator bash scripts/testnet.sh run -- node bindings/node/bench/network.mjs 2>&1 \
  | tee "$log_dir/node-net-bench.log" | grep -E '^(testnet|node network)'
grep -q '^node network: verdict' "$log_dir/node-net-bench.log"

ROOMCHAT_EMULATOR=$release_emulator bash scripts/testnet.sh run -- env ROOMCHAT_BENCH_N="${ROOMCHAT_BENCH_N_NETWORK:-30}" \
  "${CARGO_TARGET_DIR:-$PWD/target}/python-test-venv/bin/python" bindings/python/bench/network.py 2>&1 \
  | tee "$log_dir/python-net-bench.log" | grep -E '^(testnet|python network)'
grep -q '^python network: verdict' "$log_dir/python-net-bench.log"

step "Node, Python, Go and JVM benchmarks: one call at a time beside undici / requests and httpx / net/http / HttpClient with Jackson, idle and loaded (Go: 16 goroutines too; the JVM: 16 platform threads and 1,000 virtual threads; both: the first answer of a fresh process); 100,000 messages through the iterators (the READMEs' RSS promises asserted)"
ROOMCHAT_NODE_PART=bench bash bindings/node/run-tests.sh 2>&1 | tee "$log_dir/node-bench.log"
ROOMCHAT_PY_PART=bench bash bindings/python/run-tests.sh 2>&1 | tee "$log_dir/python-bench.log"
ROOMCHAT_EMULATOR=$release_emulator bash bindings/go/bench/run.sh 2>&1 | tee "$log_dir/go-bench.log"
# The JVM package as scripts/dist/jvm.sh installed it in target/m2; about 40 s on the
# 2-core machine, most of it the 20 JVMs of the first-answer runs.
ROOMCHAT_BENCH_N=${ROOMCHAT_BENCH_N_JVM:-1000} ROOMCHAT_EMULATOR=$release_emulator bash bindings/jvm/bench/run.sh 2>&1 | tee "$log_dir/jvm-bench.log"
grep -q '^jvm: first answer, idle' "$log_dir/jvm-bench.log"

step "stress: 64 threads x 500 calls on one client under a binding budget (release)"
cargo test --release --locked "${release_set[@]}" --test stress -- --nocapture 2>&1 | tee "$log_dir/stress.log" | grep -E '^(stress|test result)'
grep -q '^test result: ok. 1 passed' "$log_dir/stress.log"

step "roomchat export (release): 100,000 messages in every format beside the SDK's iterator, peak RSS, killed half-way and run again (messages arriving too)"
cargo test --release --locked "${release_set[@]}" --test export -- --nocapture --test-threads=1 2>&1 | tee "$log_dir/cli-export.log" | grep -oE 'cli export: .*|^test result.*'
# A failure shows its assertion (the log is gone when the run ends).
grep -q '^test result: ok. 6 passed' "$log_dir/cli-export.log" || { grep -E -A4 'panicked' "$log_dir/cli-export.log"; exit 1; }
grep -q 'cli export: ' "$log_dir/cli-export.log"

step "figures: the rate limiter under threads, seeding, the shared budget on Redis, and the benchmarks (printed, not asserted on time)"
# The tests' figures, as the Rust tests' step printed them (to stderr, past the harness's
# capture: core/tests/common's and emulator/tests/common's `figure`), not run again here.
figures=$(grep -oE '(rate limiter: |seeding 100,000 users in process |threads made: |redis budget: ).*' "$log_dir/cargo.log")
for figure in 'rate limiter' 'seeding' 'threads made' 'redis budget'; do
  grep -q "^$figure" <<<"$figures" || { echo "the Rust tests' step printed no '$figure' figure" >&2; exit 1; }
done
grep -v '^redis budget' <<<"$figures"
ROOMCHAT_BENCH_N=${ROOMCHAT_BENCH_N:-2000} cargo bench --quiet --locked "${release_set[@]}" --bench list_users
cargo bench --quiet --locked "${release_set[@]}" --bench decode
ROOMCHAT_BENCH_N=${ROOMCHAT_BENCH_N_GZIP:-30} cargo bench --quiet --locked "${release_set[@]}" --bench compression
ROOMCHAT_BENCH_N=${ROOMCHAT_BENCH_N:-2000} cargo bench --quiet --locked "${release_set[@]}" --features roomchat/redis --bench budget
grep '^redis budget' <<<"$figures"
ROOMCHAT_BENCH_N=${ROOMCHAT_BENCH_N:-2000} cargo bench --quiet --locked "${release_set[@]}" --bench c_vs_core

# One closing line for the whole run: the sum of every suite's counts.
sum_field() { grep -E '^test result: ' "$log_dir/cargo.log" | sed -E "s/.* ([0-9]+) $1.*/\\1/" | awk '{s+=$1} END {print s+0}'; }
rust_passed=$(( $(sum_field passed) + 1 ))  # + the stress test, checked above
rust_failed=$(sum_field failed)
c_line=$(grep -E '^[A-Za-z+-]+: [0-9]+ passed, [0-9]+ failed' "$log_dir/c.log" | tail -n 1)
c_passed=$(sed -E 's/^[^:]+: ([0-9]+) passed.*/\1/' <<<"$c_line")
c_failed=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$c_line")
c_net_line=$(grep -E '^c-network: [0-9]+ passed' "$log_dir/c-net.log" | tail -n 1)
c_passed=$(( c_passed + $(sed -E 's/^c-network: ([0-9]+) passed.*/\1/' <<<"$c_net_line") ))
c_net_line=$(grep -E '^c-network: [0-9]+ passed' "$log_dir/c-net-bench.log" | tail -n 1)
c_passed=$(( c_passed + $(sed -E 's/^c-network: ([0-9]+) passed.*/\1/' <<<"$c_net_line") ))
c_clean_line=$(grep -E '^c-clean-room: [0-9]+ passed' "$log_dir/c-clean-room.log" | tail -n 1)
c_passed=$(( c_passed + $(sed -E 's/^c-clean-room: ([0-9]+) passed.*/\1/' <<<"$c_clean_line") ))
# Every pytest closing line of the Python script (its plain and TLS passes), then the network test.
py_lines=$(grep -hE '^[0-9]+ (passed|failed)|^=* ?[0-9]+ (passed|failed)' "$log_dir/python.log" "$log_dir/python-net-suite.log" || true)
py_sum() { awk -v word="$1" '{ for (i = 1; i < NF; i++) if ($(i + 1) ~ "^" word) s += $i } END { print s + 0 }' <<<"$py_lines"; }
py_passed=$(( $(py_sum passed) + 1 + 1 ))  # + the collector's e2e, checked above
py_failed=$(py_sum failed)
# The Node script's closing lines: its tests (plain and TLS passes), then its benchmarks'
# (the RSS promise); then the network tests.
node_line=$(grep -E '^node: [0-9]+ passed, [0-9]+ failed' "$log_dir/node.log" | tail -n 1)
node_bench_line=$(grep -E '^node: [0-9]+ passed, [0-9]+ failed' "$log_dir/node-bench.log" | tail -n 1)
node_net_passed=$(sed -nE 's/^ℹ pass ([0-9]+)$/\1/p' "$log_dir/node-net-suite.log" | tail -n 1)
node_passed=$(( $(sed -E 's/^node: ([0-9]+) passed.*/\1/' <<<"$node_line") + $(sed -E 's/^node: ([0-9]+) passed.*/\1/' <<<"$node_bench_line") + 1 + node_net_passed + 1 ))  # + the collector's e2e, checked above
node_failed=$(( $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$node_line") + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$node_bench_line") ))
go_line=$(grep -E '^go: [0-9]+ passed, [0-9]+ failed' "$log_dir/go.log" | tail -n 1)
go_passed=$(( $(sed -E 's/^go: ([0-9]+) passed.*/\1/' <<<"$go_line") + 1 ))  # + the collector's e2e, checked above
go_failed=$(sed -E 's/^go: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$go_line")
# The JVM script's lines: its suites on Java 17 and 25, then its clean rooms (Java, Kotlin).
jvm_lines=$(grep -E '^jvm[A-Za-z0-9-]*: [0-9]+ passed, [0-9]+ failed' "$log_dir/jvm.log" || true)
jvm_passed=$(awk '{ s += $2 } END { print s + 0 }' <<<"$jvm_lines")
jvm_failed=$(awk '{ s += $4 } END { print s + 0 }' <<<"$jvm_lines")
testkit_line=$(grep -E '^testkit-packages: [0-9]+ passed, [0-9]+ failed' "$log_dir/testkit.log" | tail -n 1)
testkit_passed=$(sed -E 's/^[^:]+: ([0-9]+) passed.*/\1/' <<<"$testkit_line")
testkit_failed=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$testkit_line")
echo
echo "release steps' times: $(IFS=';'; echo "${dist_times[*]}")"
echo "rust: ${rust_passed} passed, ${rust_failed} failed"
echo "c: ${c_passed} passed, ${c_failed} failed"
echo "node: ${node_passed} passed, ${node_failed} failed"
echo "python: ${py_passed} passed, ${py_failed} failed"
echo "go: ${go_passed} passed, ${go_failed} failed"
echo "jvm: ${jvm_passed} passed, ${jvm_failed} failed"
echo "testkit: ${testkit_passed} passed, ${testkit_failed} failed"
# The release steps: artefacts built and checked, version check, clean rooms, actionlint (a failure stops the run).
echo "dist: ${dist_passed} passed, 0 failed"
echo "total: $((rust_passed + c_passed + node_passed + py_passed + go_passed + jvm_passed + testkit_passed + dist_passed)) passed, $((rust_failed + c_failed + node_failed + py_failed + go_failed + jvm_failed + testkit_failed)) failed"
step "done"
echo "run time: $((SECONDS / 60)) min $((SECONDS % 60)) s"
disk_lowest=$(cat "$log_dir/disk-lowest" 2>/dev/null || disk_free_gb)
echo "disk: $disk_at_start GB free at the start, $disk_lowest GB at the lowest (sampled every 5 s): the run wrote up to $(awk -v a="$disk_at_start" -v b="$disk_lowest" 'BEGIN { printf "%.1f", a - b }') GB"
