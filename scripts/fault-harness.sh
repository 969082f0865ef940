#!/usr/bin/env bash
# The randomized fault harness of `roomchat export` and `roomchat import users`
# (cli/tests/fault_harness) for longer than the test command runs it: before a release.
#
#   bash scripts/fault-harness.sh [minutes] [minutes-per-seed]     (default 10, and 5)
#
# Each round takes a seed from the clock and runs the harness (release build) with it for
# up to minutes-per-seed; a failure prints its seed, its case, what broke and the line that
# replays it. At the end: every seed run, the schedules run and the failures. Run as root
# (as CI is), it adds the full-disk schedules (a tmpfs in a mount namespace of their own);
# otherwise it says they were skipped. Not part of the test command (which runs the harness
# for a minute with seed 44).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=0
minutes=${1:-10}
per_seed=${2:-5}
# The release set of the test command (scripts/test-all.sh): one feature resolution, so the
# release build it made is the one used here.
read -r -a packages <<<"${ROOMCHAT_RELEASE_PACKAGES:--p roomchat -p roomchat-cli -p roomchat-ffi -p roomchat-emulator}"

echo "==> building the harness (release)"
cargo test --quiet --release --locked "${packages[@]}" --test fault_harness --no-run

log=$(mktemp)
trap 'rm -f "$log"' EXIT
deadline=$((SECONDS + minutes * 60))
seeds=()
failed_seeds=()
schedules=0
while [ "$SECONDS" -lt "$deadline" ]; do
  left=$((deadline - SECONDS))
  budget=$((per_seed * 60 < left ? per_seed * 60 : left))
  seed=$(date +%s%N)
  seeds+=("$seed")
  echo "==> seed $seed for ${budget} s"
  set +e
  ROOMCHAT_HARNESS_SEED=$seed ROOMCHAT_HARNESS_SECONDS=$budget \
    cargo test --quiet --release --locked "${packages[@]}" --test fault_harness -- --nocapture >"$log" 2>&1
  status=$?
  set -e
  grep -E '^fault harness|^  (->|replay)' "$log" || true
  ran=$(sed -nE 's/^fault harness: seed [0-9]+: ([0-9]+) schedules.*/\1/p' "$log" | tail -n 1)
  schedules=$((schedules + ${ran:-0}))
  if [ "$status" -ne 0 ]; then
    failed_seeds+=("$seed")
    # A failure of the harness itself (not a schedule's) shows in its own words.
    grep -q '^fault harness: seed ' "$log" || tail -n 40 "$log"
  fi
done
echo "fault harness: seeds run: ${seeds[*]}"
echo "fault harness: ${schedules} schedules, ${#failed_seeds[@]} seed(s) with failures${failed_seeds[*]:+: ${failed_seeds[*]}}"
[ "${#failed_seeds[@]}" -eq 0 ]
