#!/usr/bin/env bash
# The C ABI across the test network (issue 20): the proxy option, HTTPS_PROXY and
# NO_PROXY through tinyproxy, a wrong proxy password, a POST whose answer is late
# (a timeout, sent once), and the cold-start bench against libcurl. Run it inside
# the test network:
#   bash scripts/testnet.sh run -- bash tests/c/network.sh
# (testnet.sh needs the debug emulator: cargo build -p roomchat-emulator). Without
# the network (no ROOMCHAT_NET_BASE_URL) it says so in one line and exits 0.
set -euo pipefail
if [ -z "${ROOMCHAT_NET_BASE_URL:-}" ]; then
  echo "c-network: no test network (run through scripts/testnet.sh): skipped"
  exit 0
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
build=$target/c-tests
# The release library: the cold-start figures are a user's, not a debug build's.
lib=$target/release
mkdir -p "$build"

# libcurl: the admin calls over HTTPS and the bench's other side.
if ! pkg-config --exists libcurl 2>/dev/null; then
  echo "installing libcurl4-openssl-dev"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config libcurl4-openssl-dev >/dev/null
fi
# Features resolved as the test command's other release builds do (scripts/test-all.sh,
# release_set, ROOMCHAT_RELEASE_PACKAGES): one release build of core for them all.
# shellcheck disable=SC2086 # a list of -p options
cargo build --quiet --locked --release ${ROOMCHAT_RELEASE_PACKAGES:--p roomchat-ffi -p roomchat-cli -p roomchat -p roomchat-emulator}
cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g -I"$root/include" -DROOMCHAT_HARNESS_HTTPS \
  $(pkg-config --cflags libcurl) tests/c/test_network.c -L"$lib" -Wl,-rpath,"$lib" -lroomchat \
  $(pkg-config --libs libcurl) -o "$build/test_network"
"$build/test_network"
