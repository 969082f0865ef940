#!/usr/bin/env bash
# Soak (not part of the default test run): 1,000,000 list-users calls through
# core and then through the C API, each process printing its RSS and open file
# descriptors every 100,000 calls and a verdict (flat within 5%), against one
# release emulator (unthrottled, journal ring at its default size).
#
#   bash scripts/soak.sh [calls (1000000)] [threads (4)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
calls=${1:-1000000}
threads=${2:-4}
target=${CARGO_TARGET_DIR:-$root/target}

cargo build --quiet --locked --release -p roomchat-emulator -p roomchat-ffi
cargo build --quiet --locked --release -p roomchat --example soak
cc -std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Werror -Iinclude tests/c/soak.c \
  -L"$target/release" -lroomchat -pthread -o "$target/release/soak-c"

work=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; rm -rf "$work"' EXIT
mkfifo "$work/stdin"
"$target/release/roomchat-emulator" --port 0 --rate-limit 1000000000/1s --seed-users 50 \
  <"$work/stdin" >"$work/emulator.out" &
exec 3>"$work/stdin" # held open: the emulator stops when it closes
for _ in $(seq 100); do [ -s "$work/emulator.out" ] && break; sleep 0.1; done
line=$(head -n 1 "$work/emulator.out")
base_url=$(sed -E 's/.*"base_url": ?"([^"]+)".*/\1/' <<<"$line")
key=$(sed -E 's/.*"private_key": ?"([^"]+)".*/\1/' <<<"$line")

echo "soak: $calls calls, $threads threads, against $base_url"
ROOMCHAT_BASE_URL=$base_url ROOMCHAT_PRIVATE_KEY=$key SOAK_CALLS=$calls SOAK_THREADS=$threads \
  "$target/release/examples/soak"
LD_LIBRARY_PATH="$target/release" "$target/release/soak-c" "$base_url" "$key" "$calls" "$threads"
