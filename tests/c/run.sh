#!/usr/bin/env bash
# The C ABI's checks, in one command: header freshness (pinned cbindgen), the ABI
# against the last release's (tests/abi/check.sh, abidiff) and that check's mutation
# test (tests/abi/mutations.py), the C99 suite, the observer callback's suite (test_observer.c), the generated operations' C99 suites (test_operations.c, test_api.c), the C++17
# smoke test and the C++ wrapper's suite (tests/cpp/)
# against the emulator binary under valgrind, the C99 suite once more over TLS
# (ROOMCHAT_TEST_TLS=1) and the TLS tests, the pkg-config template, and the C
# guide's (ffi/README.md) C and C++ examples. Installs what is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
build=$target/c-tests
mkdir -p "$build"
CBINDGEN_VERSION=0.29.4

need_apt=()
command -v valgrind >/dev/null || need_apt+=(valgrind)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
command -v c++ >/dev/null || need_apt+=(g++)
command -v abidiff >/dev/null || need_apt+=(abigail-tools)
# libcurl: the harness's admin calls to an emulator serving HTTPS.
pkg-config --exists libcurl 2>/dev/null || need_apt+=(libcurl4-openssl-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! cbindgen --version 2>/dev/null | grep -q "$CBINDGEN_VERSION"; then
  echo "installing cbindgen $CBINDGEN_VERSION"
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked --quiet
fi

echo "building roomchat-ffi and roomchat-emulator"
# ROOMCHAT_DEBUG_PACKAGES: what scripts/test-all.sh builds in debug at once (the workspace).
# shellcheck disable=SC2086 # a list of options
cargo build --quiet --locked ${ROOMCHAT_DEBUG_PACKAGES:--p roomchat-ffi -p roomchat-emulator}
lib=$target/debug
emulator=$lib/roomchat-emulator

echo "checking include/roomchat.h is what cbindgen $CBINDGEN_VERSION generates"
cbindgen --quiet --config ffi/cbindgen.toml --crate roomchat-ffi --output "$build/roomchat.h"
if ! diff -u include/roomchat.h "$build/roomchat.h"; then
  echo "include/roomchat.h is stale: regenerate it with" >&2
  echo "  cbindgen --config ffi/cbindgen.toml --crate roomchat-ffi --output include/roomchat.h" >&2
  exit 1
fi

# The C ABI keeps its promise: what a program built against the last release's header
# and library calls is still there with the same prototype (additions are fine).
echo "checking the C ABI against the last release's (tests/abi/check.sh, libabigail's abidiff)"
abi_started=$EPOCHREALTIME
bash tests/abi/check.sh "$lib/libroomchat.so" "$build/abi"
awk -v from="$abi_started" -v to="$EPOCHREALTIME" 'BEGIN { printf "the ABI check took %.1f s\n", to - from }'
# The check's own test: each kind of break, made in a scratch copy of the header and of the
# library (a shim compiled from that header), must fail it; an unchanged copy and additions pass.
echo "checking that the ABI check fails each kind of break (tests/abi/mutations.py)"
python3 tests/abi/mutations.py "$build/abi-mutations"

# The installed roomchat.pc comes from the same template (CMakeLists.txt, see
# tests/c/clean-room.sh); this one points at the source tree and the debug build.
echo "generating and checking the pkg-config file"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
mkdir -p "$build/pkgconfig"
sed -e "s|@PC_PREFIX@|$root|" -e "s|@PC_LIBDIR@|$lib|" -e "s|@PC_INCLUDEDIR@|$root/include|" \
  -e "s|@VERSION@|$version|" -e "s|@URL@|https://github.com/roomchat/roomchat|" \
  -e "s|@LIBS_PRIVATE@|-lpthread -ldl -lm|" ffi/roomchat.pc.in >"$build/pkgconfig/roomchat.pc"
export PKG_CONFIG_PATH=$build/pkgconfig
test "$(pkg-config --modversion roomchat)" = "$version"
cflags=$(pkg-config --cflags roomchat)
libs="$(pkg-config --libs roomchat) -Wl,-rpath,$lib"
# Suites that talk to an emulator serving HTTPS reach its admin API through libcurl.
https_harness="-DROOMCHAT_HARNESS_HTTPS $(pkg-config --cflags libcurl)"
curl_libs=$(pkg-config --libs libcurl)

echo "compiling the C99 suites (shared library), the C++17 smoke test (static library), the C++ wrapper's suite and the README examples"
cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $cflags $https_harness tests/c/test_roomchat.c $libs \
  $curl_libs -pthread -o "$build/test_roomchat"
cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $cflags $https_harness tests/c/test_tls.c $libs \
  $curl_libs -o "$build/test_tls"
cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $cflags tests/c/test_options.c $libs \
  -o "$build/test_options"
cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $cflags tests/c/test_cancel.c $libs -pthread \
  -o "$build/test_cancel"
cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $cflags tests/c/test_operations.c $libs \
  -o "$build/test_operations"
cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $cflags tests/c/test_generic.c $libs \
  -o "$build/test_generic"
cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $cflags tests/c/test_api.c $libs -o "$build/test_api"
c++ -std=c++17 -Wall -Wextra -Werror -g $cflags tests/c/smoke.cpp "$lib/libroomchat.a" -lpthread -ldl -lm \
  -o "$build/smoke"
cc -std=c99 -Wall -Wextra -Werror $cflags tests/c/readme_example.c $libs -o "$build/readme_example"
# The observer callback's suite, and the guide's Observability example it runs as printed.
cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $cflags tests/c/test_observer.c $libs \
  -o "$build/test_observer"
cc -std=c99 -Wall -Wextra -Werror $cflags tests/c/readme_observability.c $libs -o "$build/readme_observability"
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -g $cflags -Itests/c tests/cpp/test_wrapper.cpp $libs -pthread \
  -o "$build/test_wrapper"
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror $cflags tests/cpp/readme_example.cpp $libs -o "$build/readme_example_cpp"
# The wrapper is compiled into its users' code: it stays quiet under their strictest warnings.
c++ -std=c++17 -fsyntax-only -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Wold-style-cast \
  -Wnon-virtual-dtor -Wcast-qual -Wuseless-cast -Wzero-as-null-pointer-constant -Werror $cflags -x c++ include/roomchat.hpp
cc -std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -g $cflags tests/c/test_fork.c $libs -pthread \
  -o "$build/test_fork"
cc -std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -g $cflags tests/c/test_redis.c $libs \
  -o "$build/test_redis"
cc -std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -g $cflags tests/c/test_release.c $libs \
  -o "$build/test_release"
# The C/C++ guide shows the examples verbatim, so they cannot drift apart.
python3 - "$root/ffi/README.md" "$root/tests/c/readme_example.c" "$root/tests/cpp/readme_example.cpp" \
  "$root/tests/c/readme_export.c" "$root/tests/c/readme_observability.c" <<'PY'
import sys
readme = open(sys.argv[1]).read()
for path in sys.argv[2:]:
    if open(path).read().strip() not in readme:
        sys.exit(f"ffi/README.md does not contain {path} verbatim")
PY

passed=0
failed=0
# Runs one suite (`under` is `valgrind`, with its default leak kinds, or `native`) and adds its result line,
# `<label>: N passed, M failed`, to the totals; a missing line or a non-zero exit
# (99 under valgrind: it found errors or leaks) counts as one more failure.
# SUITE_LOG_SUFFIX (optional) keeps a second run's log beside the first's.
suite() {
  local under=$1 name=$2 label=$3
  shift 3
  local log=$build/$name${SUITE_LOG_SUFFIX:-}.log
  echo "running $name $([ "$under" = native ] && echo natively || echo "under $under")"
  set +e
  if [ "$under" = valgrind ]; then
    # valgrind's own leak kinds: "possibly lost" is an error too (a program
    # that frees all it got leaves nothing behind, issue 37; over TLS too).
    valgrind --quiet --leak-check=full --error-exitcode=99 \
      --suppressions="$root/tests/c/valgrind-tls.supp" \
      "$build/$name" "$@" | tee "$log"
  else
    LD_LIBRARY_PATH="$lib" "$build/$name" "$@" | tee "$log"
  fi
  local status=${PIPESTATUS[0]}
  set -e
  local line
  line=$(grep -E "^$label: [0-9]+ passed, [0-9]+ failed\$" "$log" | tail -n 1 || true)
  if [ -z "$line" ]; then
    failed=$((failed + 1))
    echo "$name printed no result line (exit $status)" >&2
    return
  fi
  passed=$((passed + $(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$line")))
  failed=$((failed + $(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")))
  if [ "$status" -ne 0 ]; then
    echo "$name exited $status (99: valgrind found errors or leaks)" >&2
    failed=$((failed + 1))
  fi
}
ROOMCHAT_TEST_TLS= suite valgrind test_roomchat '[A-Za-z+]+' "$emulator"
# The TLS pass: the same C99 suite against `roomchat-emulator --tls`, every
# client trusting its CA. Never skipped (CI included).
echo "the TLS pass: test_roomchat once more, over HTTPS (ROOMCHAT_TEST_TLS=1)"
tls_started=$EPOCHREALTIME
SUITE_LOG_SUFFIX=-tls ROOMCHAT_TEST_TLS=1 suite valgrind test_roomchat 'C over TLS' "$emulator"
tls_passed=$EPOCHREALTIME
# The TLS tests: trust options and certificate failures, against emulators with
# their own CAs (one expired, one for localhost only).
suite valgrind test_tls tls "$emulator"
awk -v from="$tls_started" -v pass="$tls_passed" -v to="$EPOCHREALTIME" 'BEGIN {
  printf "over TLS, under valgrind: test_roomchat took %.1f s, test_tls %.1f s\n", pass - from, to - pass }'
suite valgrind smoke '[A-Za-z+]+' "$emulator"
suite valgrind test_wrapper cpp "$emulator"
# Per-call options, the answer beside the result, the log callback and ROOMCHAT_LOG.
suite valgrind test_options options "$emulator"
suite valgrind test_cancel cancel "$emulator"
# The observer callback, extra headers and trace context (issue 45), and the guide's example.
suite valgrind test_observer observer "$emulator" "$build/readme_observability"
# The generated operations (ffi/src/generated.rs): records, params handles, limits, NULLs.
suite valgrind test_operations operations "$emulator"
# Calls and pages by an operation's name, and the pure layer (what Go and the JVM stand on).
suite valgrind test_generic generic "$emulator"
# The whole documented API (issue 29): one test per operation, the iterators and the
# webinar story, against one emulator; once, not in the TLS or network passes.
suite valgrind test_api api "$emulator"
# Forking while threads call, and the Redis-shared budget (a real redis-server):
# natively, not under valgrind (which serializes the threads and makes
# deadline-bound fork loops and Redis timeouts meaningless).
suite native test_fork fork "$emulator"
# Clients on ten Redis URLs and in-process ones, all freed: nothing left behind
# under valgrind's defaults, "possibly lost" included (links, pooled connections
# and budgets go with their last client).
suite valgrind test_release release "$emulator" "$(command -v redis-server || echo redis-server)"
# With a Redis Cluster (no replicas) and a Sentinel set-up, started by the one harness
# every language's tests use, stopped when this script ends whatever happens.
topologies=$(mktemp -d)
stop_topologies() {
  bash tests/redis/topology.sh stop "$topologies/cluster" >/dev/null 2>&1 || true
  bash tests/redis/topology.sh stop "$topologies/sentinel" >/dev/null 2>&1 || true
  rm -rf "$topologies"
}
trap stop_topologies EXIT
echo "starting a Redis Cluster and a Sentinel set-up (tests/redis/topology.sh)"
topology_password=c-topology-password-31
cluster_url=$(bash tests/redis/topology.sh cluster "$topologies/cluster" --replicas 0 --password "$topology_password" | tail -n 1)
sentinel_url=$(bash tests/redis/topology.sh sentinel "$topologies/sentinel" --password "$topology_password" | tail -n 1)
suite native test_redis redis "$emulator" "$(command -v redis-server || echo redis-server)" "$cluster_url" "$sentinel_url"
echo "c-abi: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
