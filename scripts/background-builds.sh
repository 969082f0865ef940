#!/usr/bin/env bash
# The test command's background builds: this machine's Node addon and wheel, the
# release artefacts for the other platforms (the aarch64 and musl wheels and addons,
# the sdist, the emulator's static packages), the Windows clippy, the MSRV check, the
# OpenTelemetry Collector the end-to-end tests send to, and the checks that only
# compute (OpenAPI's schemathesis, actionlint). None of it has a
# time to keep or a benchmark to print, and the steps that use what it builds wait for
# it. scripts/test-all.sh starts this script at its beginning, at the lowest priority,
# so that it uses the CPU the foreground's steps leave idle while they wait (25 ms round
# trips, Redis failovers, valgrind's single thread, npm and pip) and yields it whenever
# they compute. No benchmark runs while it does.
#
#   background-builds.sh DIR JOB... [-- JOB...]
#
# runs the JOBs one after another (those after `--` in a second lane, beside the first); each one's output goes to DIR/JOB.log and, when
# it ends, DIR/JOB.done holds "EXIT_STATUS SECONDS CPU_SECONDS". A job that needs the
# foreground's debug emulator (OpenAPI) waits for DIR/debug-emulator, which
# test-all.sh writes once its workspace tests built it. A failed job does not stop the next one:
# test-all.sh reports each job where it needs it and fails the run on a failed one.
# Every job is a script the test command or the release steps also run alone.
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
# (a lane's subshell counts its own children: its jobs). Each lane its own file.
cpu_so_far() {
  local file="$dir/.times.$BASHPID" # this shell's (inside $(...) BASHPID is another's)
  times >"$file"
  CPU=$(awk -f scripts/times-cpu.awk "$file")
}

target=${CARGO_TARGET_DIR:-$root/target}
# Waits for a marker the foreground writes (at most an hour: the run's own bound).
await() {
  local i
  for ((i = 0; i < 3600; i++)); do
    [ -f "$dir/$1" ] && return 0
    sleep 1
  done
  echo "background-builds.sh: $1 never came"
  return 1
}

# The other platforms' wheels and addons are checks of their packaging (the tags, the
# glibc floor, what they link, the installs by name, arm64 run under qemu-user), not what
# is published (the release workflow builds those, optimized): built here without
# LLVM's optimizations, the release profile otherwise (no debug assertions, no overflow
# checks). The aarch64 wheel from nothing: 181 s of CPU against 440 s optimized (opt-level
# 1: 376 s), the bulk of these builds, which the run's last phase waits for. So are the
# emulator's static packages (the x64 one from nothing: 140 s of CPU against 223 s
# optimized; its startup to a first answer is a process start either way: 3.7 ms median
# against 7.9 for this machine's optimized emulator, from Python): the test kit checks
# their packaging and the READMEs' tests from them, and labels its startup figure so.
# This machine's addon and wheel stay optimized: the benchmarks measure them.
unoptimized=(env CARGO_PROFILE_RELEASE_OPT_LEVEL=0)

run_lane() {
  for job in "$@"; do
    needs=
    case $job in
      # This machine's addon, as released, and the freshness of the generated loader
      # (bindings/node/run-tests.sh's first part); then the wheel, sharing its build.
      node-addon) command=(env ROOMCHAT_NODE_PART=addon ROOMCHAT_NODE_MODULES_READY=1 bash bindings/node/run-tests.sh) ;;
      wheel-host) command=(bash scripts/dist/python.sh host) ;;
      # The manylinux2014 aarch64 and musllinux_1_2 x86_64 wheels, and the sdist.
      wheels-cross) command=("${unoptimized[@]}" bash scripts/dist/python.sh cross) ;;
      # The linux-x64-musl and linux-arm64-gnu addons (each shares its target's
      # dependency build with the wheel above: scripts/dist/env.sh, zig_env).
      npm-addons) command=("${unoptimized[@]}" bash scripts/dist/node.sh build x86_64-unknown-linux-musl aarch64-unknown-linux-gnu) ;;
      # The test kit's static emulator, x64 and arm64, in wheels and npm packages.
      emulator-packages) command=("${unoptimized[@]}" bash scripts/package-emulator.sh) ;;
      windows) command=(bash scripts/windows-check.sh) ;;
      msrv) command=(bash scripts/dist/msrv.sh) ;;
      # Checks that compute and keep no time: schemathesis's bound raised, since the
      # foreground comes first.
      openapi)
        needs=debug-emulator
        command=(env ROOMCHAT_EMULATOR_BIN="$target/debug/roomchat-emulator" OPENAPI_TIMEOUT=1800 bash tests/openapi/run.sh)
        ;;
      actionlint) command=(bash scripts/dist/actionlint.sh) ;;
      # The OpenTelemetry Collector of the end-to-end tests, from the pinned Go modules
      # (minutes of CPU cold; target/otel-collector/ keeps its caches).
      otel-collector) command=(bash scripts/otel-collector.sh build) ;;
      # The sdist built and installed with Rust in a fresh venv (a debug build in the run's
      # target folder, reusing what the foreground compiled), once the first lane made it.
      sdist-cleanroom)
        needs=wheels-cross.done
        command=(bash scripts/dist/cleanroom-sdist.sh)
        ;;
      *) echo "background-builds.sh: no job $job" >"$dir/$job.log"; echo "2 0 0" >"$dir/$job.done"; continue ;;
    esac
    started=$SECONDS
    cpu_so_far
    cpu_before=$CPU
    : >"$dir/$job.log"
    if [ -z "$needs" ] || await "$needs" >>"$dir/$job.log" 2>&1; then
      "${command[@]}" </dev/null >>"$dir/$job.log" 2>&1
      status=$?
    else
      status=1
    fi
    cpu_so_far
    # Written aside and renamed: the foreground reads a whole line or none.
    echo "$status $((SECONDS - started)) $((CPU - cpu_before))" >"$dir/$job.tmp"
    mv "$dir/$job.tmp" "$dir/$job.done"
  done
}

# Two lanes: the jobs before `--` one after another, and those after it one after another
# beside them. The second lane's OpenAPI waits for the foreground's debug emulator and
# then mostly runs Python on one CPU: beside the first lane's builds it fills CPU they
# leave idle (a link, a crate compiling alone), instead of adding its minutes to the end
# of one chain that the run's last phase waits for. The collector's Go build goes before
# it, in the minutes that lane would otherwise spend waiting for that emulator.
first=()
second=()
lane=first
for arg in "$@"; do
  if [ "$arg" = -- ]; then
    lane=second
  elif [ "$lane" = first ]; then
    first+=("$arg")
  else
    second+=("$arg")
  fi
done
[ ${#second[@]} -eq 0 ] || run_lane "${second[@]}" &
run_lane "${first[@]}"
wait
