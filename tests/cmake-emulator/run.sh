#!/usr/bin/env bash
# roomchat_add_emulator_test (cmake/roomchatEmulatorTest.cmake) as a user's CMake
# project meets it: configure this folder against the repository's cmake/
# module and the build tree's library, build, `ctest -j4`; then check that the
# four tests run side by side had four emulators, that nothing is left behind
# (no emulator process, port, or temporary file), and that an emulator whose
# launcher is killed (SIGKILL, as a CTest timeout does) stops by itself.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
build=$target/cmake-emulator
if ! command -v cmake >/dev/null; then
  echo "installing cmake"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake >/dev/null
fi

cargo build --quiet --locked -p roomchat-ffi -p roomchat-emulator
emulator=${ROOMCHAT_EMULATOR:-$target/debug/roomchat-emulator}
leftovers() { find "${TMPDIR:-/tmp}" -maxdepth 1 \( -name 'roomchat-emulator-ca-*' -o -name 'roomchat-emulator-test.*' \) | sort; }
ours() { pgrep -f "^$emulator --port 0 --ignore-stdin" || true; }
before_files=$(leftovers)
before_procs=$(ours)

rm -rf "$build"
cmake -S "$here" -B "$build" -DROOMCHAT_CMAKE_DIR="$root/cmake" -DROOMCHAT_INCLUDE_DIR="$root/include" \
  -DROOMCHAT_LIBRARY="$target/debug/libroomchat.so" -DROOMCHAT_EMULATOR="$emulator" >/dev/null
cmake --build "$build" >/dev/null
(cd "$build" && ctest -j4 --output-on-failure) | tee "$build/ctest.log"
ctest_line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$build/ctest.log")
ctest_failed=$(sed -E 's/.* ([0-9]+) tests failed out of.*/\1/' <<<"$ctest_line")
ctest_total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$ctest_line")
passed=$((ctest_total - ctest_failed))
failed=$ctest_failed

check() { # description, then a command that must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; passed=$((passed + 1)); else echo "FAILED: $what" >&2; failed=$((failed + 1)); fi
}
distinct_urls() { [ "$(sort -u "$build/seen.txt" | wc -l)" -eq 4 ] && [ "$(wc -l <"$build/seen.txt")" -eq 4 ]; }
check "the four tests run side by side had four emulators" distinct_urls
all_refused() {
  local url
  while read -r url; do
    ! (exec 3<>"/dev/tcp/127.0.0.1/${url##*:}") 2>/dev/null || return 1
  done <"$build/seen.txt"
}
check "their ports are closed" all_refused
check "no emulator process is left" [ "$(ours)" = "$before_procs" ]
check "no temporary file is left (fifo folder, CA file)" [ "$(leftovers)" = "$before_files" ]

# A killed launcher (a CTest timeout): its emulator sees its parent die and stops.
sh "$root/cmake/roomchat-emulator-launch.sh" "$emulator" 1 --tls sleep 30 &
launcher=$!
emulator_pid='' command_pid=
# Up to 30 s: a debug emulator making its TLS certificates on a busy machine is slow to start.
for _ in $(seq 600); do
  emulator_pid=$(pgrep -P "$launcher" -x roomchat-emulat || true)
  command_pid=$(pgrep -P "$launcher" -x sleep || true)
  [ -n "$emulator_pid" ] && [ -n "$command_pid" ] && break
  sleep 0.05
done
kill -KILL "$launcher"
wait "$launcher" 2>/dev/null || true
gone() {
  local _
  [ -n "$1" ] || return 1 # never seen started
  for _ in $(seq 200); do
    [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null || return 0
    sleep 0.05
  done
  return 1
}
check "the emulator of a killed launcher stops by itself" gone "$emulator_pid"
kill "$command_pid" 2>/dev/null || true
check "and leaves no file behind" [ "$(leftovers)" = "$before_files" ]

readme_holds_example() {
  python3 - "$root/ffi/README.md" "$here/test_user_signup.c" <<'PY'
import sys
doc, example = (open(p).read() for p in sys.argv[1:])
sys.exit(example.strip() not in doc)
PY
}
check "ffi/README.md holds tests/cmake-emulator/test_user_signup.c verbatim" readme_holds_example

echo "cmake-emulator: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
