#!/usr/bin/env bash
# A busy CPU for a benchmark's loaded round, one implementation for every
# language's benchmarks (Rust, C, Python, Node start it as a child):
#
#   bash scripts/bench/cpu-load.sh [PROCESSES] [MAX_SECONDS]
#
# starts PROCESSES busy-loop processes (default: the number of cores, nproc)
# at the caller's priority, prints one line `cpu-load: N busy processes` once
# they run, and keeps them running until its standard input closes (or a line
# arrives), then kills them. The benchmark holds the pipe to its stdin: when
# the benchmark ends, fails or is killed, the pipe closes and the load stops.
# Bounded in time as well: each loop runs under `timeout MAX_SECONDS` (default
# 900), so a load can never outlive a stuck caller for long. Ctrl-C reaches the
# whole foreground process group, this script and its loops included.
#
# Why: a production server's CPUs are busy; a benchmark run only on an idle
# machine missed a 4-7x slowdown of one thread policy under load (issue 30).
set -u
processes=${1:-$(nproc)}
max_seconds=${2:-900}

pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

for _ in $(seq "$processes"); do
  # Its own stdin from /dev/null: only this script reads the caller's pipe.
  timeout "$max_seconds" bash -c 'while :; do :; done' </dev/null &
  pids+=($!)
done
echo "cpu-load: $processes busy processes"
# Until the caller closes the pipe (EOF), writes a line, or the bound passes.
read -r -t "$max_seconds" _ || true
