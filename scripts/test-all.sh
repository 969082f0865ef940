#!/usr/bin/env bash
# Runs every test of roomchat: the Rust workspace (emulator, core, C ABI crate,
# conformance vectors, doc tests), the header freshness check and the C/C++ suites
# under valgrind. Installs what a fresh machine lacks (Debian packages, the pinned
# cbindgen) on the way, so it is also what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
step() { printf '\n==> %s\n' "$*"; }

# rustfmt and clippy are rustup components; a toolchain without them (and no way
# to fetch them) skips these two checks rather than failing the run.
step "formatting (cargo fmt --check)"
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
else
  echo "rustfmt is not installed: skipped"
fi

step "lints (cargo clippy, warnings are errors)"
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets --locked -- -D warnings
else
  echo "clippy is not installed: skipped"
fi

step "docs (cargo doc, warnings are errors: every public item is documented)"
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps --workspace --locked

step "Rust tests (cargo test --workspace)"
cargo test --workspace --locked 2>&1 | tee "$log_dir/cargo.log"

step "the README's demo (cargo run --example quickstart)"
cargo run --quiet --locked --example quickstart >"$log_dir/quickstart.log"
grep -q "Rate-limit budget of this key" "$log_dir/quickstart.log"
echo "quickstart ran: $(wc -l <"$log_dir/quickstart.log") lines of output"

step "C ABI: header freshness, C99 and C++17 suites under valgrind, pkg-config, README example"
bash tests/c/run.sh 2>&1 | tee "$log_dir/c.log"

step "Node package: build, freshness of the generated loader, node --test, npm pack into a fresh project, tsc, short bench"
bash bindings/node/run-tests.sh

step "figures: the rate limiter under threads, seeding, and both benchmarks (printed, not asserted on time)"
cargo test --quiet --locked -p roomchat --test ratelimit -- --nocapture many_threads 2>&1 | grep -E '^rate limiter'
cargo test --quiet --locked -p roomchat-emulator --test service -- --nocapture seeding 2>&1 | grep -E '^seeding'
ROOMCHAT_BENCH_N=${ROOMCHAT_BENCH_N:-2000} cargo bench --quiet --locked -p roomchat --bench list_users
ROOMCHAT_BENCH_N=${ROOMCHAT_BENCH_N:-2000} cargo bench --quiet --locked -p roomchat-ffi --bench c_vs_core

# One closing line for the whole run: the sum of every suite's counts.
sum_field() { grep -E '^test result: ' "$log_dir/cargo.log" | sed -E "s/.* ([0-9]+) $1.*/\\1/" | awk '{s+=$1} END {print s+0}'; }
rust_passed=$(sum_field passed)
rust_failed=$(sum_field failed)
c_line=$(grep -E '^[A-Za-z+-]+: [0-9]+ passed, [0-9]+ failed' "$log_dir/c.log" | tail -n 1)
c_passed=$(sed -E 's/^[^:]+: ([0-9]+) passed.*/\1/' <<<"$c_line")
c_failed=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$c_line")
echo
echo "rust: ${rust_passed} passed, ${rust_failed} failed"
echo "c: ${c_passed} passed, ${c_failed} failed"
echo "total: $((rust_passed + c_passed)) passed, $((rust_failed + c_failed)) failed"
