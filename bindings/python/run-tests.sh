#!/usr/bin/env bash
# The Python package's checks, in one command: takes the release wheel (manylinux2014
# x86_64, scripts/dist/python.sh), installs it into a FRESH venv, runs the pytest suite against the installed package
# (never the source folder; it also runs the README's Python example against the
# emulator), the endpoint and fault tests a second time over TLS (ROOMCHAT_TEST_TLS=1),
# `python -m mypy.stubtest roomchat`, `mypy --strict` on the typed examples
# (the README's among them), and a short run of
# the benchmark (printed figures). Installs what it needs (pinned) into venvs under
# ${CARGO_TARGET_DIR:-target}.
# ROOMCHAT_PY_PART=tests runs all but the benchmark, =bench only the benchmark (in the
# venv a tests run made: scripts/test-all.sh runs the benchmarks last, on a machine
# with nothing else running).
set -euo pipefail
part=${ROOMCHAT_PY_PART:-all}
case $part in all | tests | bench) ;; *) echo "ROOMCHAT_PY_PART: all, tests or bench, not $part" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
python=${PYTHON:-python3}
venv=$target/python-test-venv    # made anew each run: the wheel and the test tools only
export PIP_DISABLE_PIP_VERSION_CHECK=1

if [ "$part" != bench ]; then
echo "==> emulator binaries (debug for the tests, release for the benchmark)"
# ROOMCHAT_DEBUG_PACKAGES: scripts/test-all.sh's debug build (the workspace).
# shellcheck disable=SC2086 # a list of options
cargo build --quiet --locked ${ROOMCHAT_DEBUG_PACKAGES:--p roomchat-emulator}
# ROOMCHAT_RELEASE_PACKAGES: the packages scripts/test-all.sh builds in release together
# (one feature resolution for all its release builds).
# shellcheck disable=SC2086 # a list of -p options
cargo build --quiet --locked --release ${ROOMCHAT_RELEASE_PACKAGES:--p roomchat-emulator}

# The wheel under test is the one released: manylinux2014 x86_64 (zig, glibc 2.17).
# scripts/test-all.sh has built it with the others (scripts/dist/python.sh) and
# names it in ROOMCHAT_PYTHON_WHEEL; on its own, this script builds just that one.
if [ -n "${ROOMCHAT_PYTHON_WHEEL:-}" ]; then
  wheel=$ROOMCHAT_PYTHON_WHEEL
  echo "==> the release wheel built by scripts/dist/python.sh: $(basename "$wheel")"
else
  echo "==> the release wheel (scripts/dist/python.sh host)"
  bash "$root/scripts/dist/python.sh" host
  wheel=$(ls "$target"/dist/python/roomchat-*-manylinux*_x86_64.whl)
fi

echo "==> fresh venv ($venv) with the wheel"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet -r "$here/requirements-test.txt" "$wheel"
installed=$(cd / && "$venv/bin/python" -c 'import roomchat, os; print(os.path.dirname(roomchat.__file__))')
case "$installed" in
  "$venv"/*) echo "roomchat imports from $installed" ;;
  *) echo "roomchat imports from $installed, not from the fresh venv" >&2; exit 1 ;;
esac

echo "==> pytest (against the installed package)"
export ROOMCHAT_EMULATOR=$target/debug/roomchat-emulator
export ROOMCHAT_EMULATOR_RELEASE=$target/release/roomchat-emulator
# In CI the Redis tests must run, not skip (the test command installs redis-server).
if [ -n "${CI:-}" ]; then export ROOMCHAT_REQUIRE_REDIS=1; fi
# Run from the tests folder: the source folder python/ is never on sys.path.
(cd "$here/tests" && "$venv/bin/python" -m pytest -p no:cacheprovider -q -ra --timeout=300 -s .)

# The second pass: the endpoint and fault tests again, against an emulator serving HTTPS
# (--tls) whose CA every client trusts. Always run (CI included): nothing here skips it,
# and conftest fails the run if the emulator did not come up on https.
# ROOMCHAT_PY_TLS_FILES narrows it: the test command (scripts/test-all.sh) runs
# test_client, test_async and test_faults over TLS across the test network
# anyway, so it asks this pass for the rest only.
tls_files=${ROOMCHAT_PY_TLS_FILES:-test_client.py test_async.py test_faults.py test_tokens.py}
echo "==> pytest over TLS (ROOMCHAT_TEST_TLS=1): $tls_files against an https:// emulator"
tls_started=$(date +%s.%N)
# shellcheck disable=SC2086 # a list of test files
(cd "$here/tests" && ROOMCHAT_TEST_TLS=1 "$venv/bin/python" -m pytest -p no:cacheprovider -q -ra --timeout=300 -s \
  $tls_files)
echo "the TLS pass ran over HTTPS in $(awk -v s="$tls_started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"

echo "==> stubtest and mypy --strict"
mypy_dir=$target/python-mypy
mkdir -p "$mypy_dir"
(cd "$mypy_dir" && "$venv/bin/python" -m mypy.stubtest roomchat --mypy-config-file /dev/null)
(cd "$mypy_dir" && "$venv/bin/python" -m mypy --strict --no-incremental \
  "$here/examples/typed_usage.py" "$here/examples/readme_example.py" "$here/examples/webinar.py" \
  "$here/examples/observability.py")
# The test kit (roomchat.testing and its pytest plugin) and the README's tests of a user's code.
(cd "$mypy_dir" && "$venv/bin/python" -m mypy --strict --no-incremental -p roomchat.testing)
(cd "$mypy_dir" && "$venv/bin/python" -m mypy --strict --no-incremental "$here/examples/test_user_signup.py" \
  "$here/examples/test_trace_context.py")

fi

if [ "$part" != tests ]; then
echo "==> benchmark, short run (figures, not a test)"
"$venv/bin/python" "$here/bench/bench.py" --calls "${ROOMCHAT_PY_BENCH_CALLS:-300}" --rounds 3 \
  --emulator "$target/release/roomchat-emulator"
fi
