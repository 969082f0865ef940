#!/usr/bin/env bash
# The test command's background builds: the release artefacts for the other
# platforms (the aarch64 and musl wheels and addons, the sdist, the emulator's
# static packages), the Windows clippy and the MSRV check. All of it is compiling,
# with nothing to wait on, and none of it is needed before the steps that install
# those artefacts. scripts/test-all.sh starts this script at its beginning, under
# `nice -n 19`, so that it uses the CPU the foreground's steps leave idle while they
# wait (25 ms round trips, Redis failovers, valgrind's single thread, npm and pip)
# and yields it whenever they compute. No benchmark runs while it does.
#
#   background-builds.sh DIR JOB...
#
# runs the JOBs one after another; each one's output goes to DIR/JOB.log and, when
# it ends, DIR/JOB.done holds "EXIT_STATUS SECONDS CPU_SECONDS". A failed job does
# not stop the next one: test-all.sh reports each job where it needs it and fails
# the run on a failed one. Every job is a script the release steps also run alone.
set -uo pipefail
# test-all.sh starts this in a session of its own (setsid: one process group to stop),
# and Linux gives each session an autogroup that competes with the others as an equal
# whatever the nice values inside it: at nice 0 the background builds took half the
# CPUs from the foreground (its clippy ran twice as long). The autogroup's own nice
# value is what yields them.
echo 19 >/proc/self/autogroup 2>/dev/null || true
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
dir=$1
shift

# User + system CPU seconds of the jobs waited for so far, in CPU: `times` in this shell
# (in a subshell it would count the subshell's children only).
cpu_so_far() {
  times >"$dir/.times"
  CPU=$(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$dir/.times")
}

for job in "$@"; do
  case $job in
    # The manylinux2014 aarch64 and musllinux_1_2 x86_64 wheels, and the sdist.
    wheels-cross) command=(bash scripts/dist/python.sh cross) ;;
    # The linux-x64-musl and linux-arm64-gnu addons (each shares its target's
    # dependency build with the wheel above: scripts/dist/env.sh, zig_env).
    npm-addons) command=(bash scripts/dist/node.sh build x86_64-unknown-linux-musl aarch64-unknown-linux-gnu) ;;
    # The test kit's static emulator, x64 and arm64, in wheels and npm packages.
    emulator-packages) command=(bash scripts/package-emulator.sh) ;;
    windows) command=(bash scripts/windows-check.sh) ;;
    msrv) command=(bash scripts/dist/msrv.sh) ;;
    *) echo "background-builds.sh: no job $job" >"$dir/$job.log"; echo "2 0 0" >"$dir/$job.done"; continue ;;
  esac
  started=$SECONDS
  cpu_so_far
  cpu_before=$CPU
  "${command[@]}" </dev/null >"$dir/$job.log" 2>&1
  status=$?
  cpu_so_far
  # Written aside and renamed: the foreground reads a whole line or none.
  echo "$status $((SECONDS - started)) $((CPU - cpu_before))" >"$dir/$job.tmp"
  mv "$dir/$job.tmp" "$dir/$job.done"
done
