#!/usr/bin/env bash
# The Go package's benchmark (main.go here): roomchat's ListUsers beside net/http
# with encoding/json into the same structs, one call at a time and 16 goroutines
# at once, idle and loaded, and the first answer of a fresh process beside
# net/http's. Figures, not a test: nothing is asserted on time.
#
#   bash bindings/go/bench/run.sh
#
# ROOMCHAT_BENCH_N, ROOMCHAT_BENCH_N_LOADED, ROOMCHAT_BENCH_STARTS, ROOMCHAT_EMULATOR:
# see main.go. It links core's release static library (target/release/libroomchat.a:
# cargo build --release -p roomchat-ffi), copied into the platform module when that
# one is older, and runs against the release emulator. Go's caches under target/go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
export GOMODCACHE=${GOMODCACHE:-$target/go/mod} GOCACHE=${GOCACHE:-$target/go/cache}
export GOFLAGS=-modcacherw GOTOOLCHAIN=local
export ROOMCHAT_EMULATOR=${ROOMCHAT_EMULATOR:-$target/release/roomchat-emulator}
lib=$root/bindings/go/lib/linux-amd64/libroomchat.a
if [ ! -f "$lib" ] || [ "$target/release/libroomchat.a" -nt "$lib" ]; then
  cp -p "$target/release/libroomchat.a" "$lib"
fi
mkdir -p "$target/go/bench"
cd "$here"
go build -o "$target/go/bench/roomchat-go-bench" .
"$target/go/bench/roomchat-go-bench"
