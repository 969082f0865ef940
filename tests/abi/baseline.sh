#!/usr/bin/env bash
# Regenerates the C ABI baseline of tests/abi/ from a release commit (default: 0.1.0's),
# which tests/abi/check.sh (the C step, tests/c/run.sh) compares the current header and
# library with:
#
#   roomchat-<version>.abi     the header's ABI: every function roomchat.h declares, with
#                              its C prototype, and every enum with its values, as libabigail's
#                              abidw reads them from the debug info of a probe compiled from
#                              the header (tests/abi/probe.py);
#   libroomchat-<version>.abi  the library's ABI as a C program links it: the symbols that
#                              libroomchat.so exports (abidw of the library without its Rust
#                              debug info, whose opaque handles' insides are no part of the C ABI);
#   soversion                  the release's ROOMCHAT_SOVERSION (CMakeLists.txt): the soname
#                              libroomchat.so.<soversion> the baseline holds for.
#
# Why committed files, not a build of the release in the test: building 0.1.0's library
# takes minutes of both cores (3 min 50 s here with the dependencies already compiled)
# and needs the release's history in the checkout (CI's clones are shallow); the files
# are small, reviewed like any other change, and this script makes them again from the
# release commit alone (`git archive`), byte for byte with the same abidw.
#
# Run it when a release raises the soname (then with that release's commit): the new
# release is then the baseline. usage: bash tests/abi/baseline.sh [<commit> <version>]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# 0.1.0: the last commit before the first [Unreleased] entry of CHANGELOG.md.
release=${1:-d7e0bd5bf2935e570379877bf0d0d8735cfef883}
version=${2:-0.1.0}
for tool in abidw objcopy cc python3; do
  command -v "$tool" >/dev/null || { echo "baseline.sh: $tool is missing (apt-get install abigail-tools binutils gcc python3)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
git archive "$release" | tar -x -C "$work/src"

echo "the header's ABI (roomchat.h of $version)"
python3 tests/abi/probe.py "$work/src/include/roomchat.h" "$work/probe.c"
cc -std=c99 -g -O0 -shared -fPIC -w -I"$work/src/include" "$work/probe.c" -o "$work/libroomchat-abi-probe.so"
# No option that filters types defined outside the header (--headers-dir,
# --drop-private-types): check.sh says why. (For 0.1.0 abidw writes the same file either way.)
abidw --no-corpus-path --no-comp-dir-path --short-locs \
  --out-file "tests/abi/roomchat-$version.abi" "$work/libroomchat-abi-probe.so"

echo "the library's ABI (libroomchat.so of $version, built from the release)"
# BASELINE_TARGET_DIR: a target directory to reuse (its dependencies compiled already).
target=${BASELINE_TARGET_DIR:-$work/target}
(cd "$work/src" && CARGO_TARGET_DIR="$target" cargo build --quiet --locked -p roomchat-ffi)
objcopy --strip-debug "$target/debug/libroomchat.so" "$work/libroomchat.so"
abidw --no-corpus-path --no-comp-dir-path --out-file "tests/abi/libroomchat-$version.abi" "$work/libroomchat.so"

sed -n 's/^set(ROOMCHAT_SOVERSION \([0-9]*\))$/\1/p' "$work/src/CMakeLists.txt" >tests/abi/soversion
echo "$version ($release)" >tests/abi/release
echo "wrote tests/abi/roomchat-$version.abi, tests/abi/libroomchat-$version.abi, soversion, release"
