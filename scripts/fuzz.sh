#!/usr/bin/env bash
# Runs every cargo-fuzz (libFuzzer) target under fuzz/ for a given time each
# and prints, per target: executions, execs/s, corpus size, and findings.
#
#   bash scripts/fuzz.sh [seconds-per-target] [target...]     (default 600 s, every target)
#
# Needs a nightly toolchain (`rustup toolchain install nightly`) and cargo-fuzz
# (`cargo install cargo-fuzz`). Not part of the test run (it is long); what the
# targets found is kept as regression tests in core/tests/fuzz_regressions.rs
# and the emulator's unit tests, which the test run does run.
#
# Each target starts from the committed seeds (fuzz/seeds/<target>) and grows a
# working corpus in fuzz/corpus/<target> (not committed). A crash, leak or
# timeout is written to fuzz/artifacts/<target>/ and counted as a finding.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

echo "==> building ${#targets[@]} targets (nightly, release, debug assertions on)"
cargo +nightly fuzz build -O --debug-assertions "${targets[@]:0:1}" >/dev/null
for t in "${targets[@]}"; do
    cargo +nightly fuzz build -O --debug-assertions "$t" >/dev/null
done

printf '%-20s %8s %14s %10s %8s %9s\n' target seconds execs execs/s corpus findings
total_findings=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t" "seeds/$t"
    before=$(find "artifacts/$t" -type f | wc -l)
    log=$(mktemp)
    # -max_total_time bounds the run; a finding stops it early (and is kept).
    set +e
    cargo +nightly fuzz run -O --debug-assertions "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        >"$log" 2>&1
    status=$?
    set -e
    # A run that crashed at once prints no final stats: no match is not an error here.
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    took=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' | tail -1 || true)
    after=$(find "artifacts/$t" -type f | wc -l)
    findings=$((after - before))
    if [ "$status" -ne 0 ] && [ "$findings" -eq 0 ]; then
        echo "fuzzing $t failed (exit $status) without an artifact:" >&2
        tail -20 "$log" >&2
        findings=1
    fi
    total_findings=$((total_findings + findings))
    corpus=$(find "corpus/$t" -type f | wc -l)
    took=${took:-$seconds}
    execs=${execs:-0}
    printf '%-20s %8s %14s %10s %8s %9s\n' "$t" "$took" "$execs" "$((execs / (took > 0 ? took : 1)))" "$corpus" "$findings"
    if [ "$findings" -ne 0 ]; then
        grep -E 'ERROR|panicked|SUMMARY' "$log" | head -5 | sed 's/^/    /'
        find "artifacts/$t" -type f -newer "$log" | sed 's/^/    artifact: /'
    fi
    rm -f "$log"
done
echo "findings: $total_findings"
[ "$total_findings" -eq 0 ]
