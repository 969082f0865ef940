#!/usr/bin/env bash
# Soak test of the emulator's memory (not part of scripts/test-all.sh: it takes
# about a minute of both cores). Builds the release emulator binary and the soak
# example, sends REQUESTS (default 1,000,000) users-listing requests over
# CONNECTIONS (default 4) keep-alive connections, and prints the emulator's RSS
# at start, after a 20,000-request warm-up and at every 100,000, then a verdict
# line; exits non-zero when the final RSS is more than 10% above the warm-up's.
#
#   bash scripts/soak-emulator.sh [REQUESTS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --release --locked -p roomchat-emulator --bin roomchat-emulator --example soak
target_dir=${CARGO_TARGET_DIR:-target}
exec "$target_dir/release/examples/soak" "$target_dir/release/roomchat-emulator" "${1:-1000000}" "${2:-4}"
