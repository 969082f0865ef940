#!/usr/bin/env bash
# The C ABI check (tests/c/run.sh runs it): the current include/roomchat.h and
# libroomchat.so against the last release's (the baseline of tests/abi/, written by
# baseline.sh), with libabigail's abidiff. Additions pass; a function removed, a
# prototype or an enum value changed fails, under the same soname. Also: the library
# exports every function the header declares. tests/abi/mutations.py proves that each kind
# of break fails it.
#
# usage: check.sh <libroomchat.so> [<build dir> [<include dir>]]   (exit 0: compatible)
#   <include dir>: where roomchat.h is (default: include/ of this checkout)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
lib=$1
build=${2:-$(mktemp -d)}
headers=${3:-include}
header=$headers/roomchat.h
mkdir -p "$build"
read -r version _ <tests/abi/release
baseline_header=tests/abi/roomchat-$version.abi
baseline_lib=tests/abi/libroomchat-$version.abi

# A raised soname is a new ABI: the baseline is then that release's (baseline.sh).
soversion=$(sed -n 's/^set(ROOMCHAT_SOVERSION \([0-9]*\))$/\1/p' CMakeLists.txt)
if [ "$soversion" != "$(cat tests/abi/soversion)" ]; then
  echo "abi: ROOMCHAT_SOVERSION is $soversion, the baseline's ($version) $(cat tests/abi/soversion):" >&2
  echo "  after releasing under the new soname, run: bash tests/abi/baseline.sh <release commit> <version>" >&2
  exit 1
fi

failed=0
# abidiff's exit status: 0 compatible; bit 4 a change, bit 8 an incompatible one, 1 or 2 an
# error of its own. --no-added-syms: an added function or enum value is no change.
diff_abi() {
  local what=$1 report=$2
  shift 2
  set +e
  abidiff --no-added-syms "$@" >"$report" 2>&1
  local status=$?
  set -e
  if [ "$status" -ne 0 ]; then
    echo "abi: $what differs from $version's (abidiff exit $status):" >&2
    cat "$report" >&2
    failed=1
  else
    echo "abi: $what: compatible with $version ($(head -n 1 "$report"))"
  fi
}

# The header's ABI: the probe holds nothing but what roomchat.h declares, so every type in
# its debug info is one a prototype or an enum of the header uses. No --headers-dir2 (nor
# --drop-private-types): they hide every change to a type defined outside the header,
# <stdint.h>'s uint32_t and uint64_t among them, so a parameter going from uint32_t to
# uint64_t or int32_t would pass.
python3 tests/abi/probe.py "$header" "$build/abi-probe.c" >/dev/null
cc -std=c99 -g -O0 -shared -fPIC -w -I"$headers" "$build/abi-probe.c" -o "$build/libroomchat-abi-probe.so"
diff_abi "$header" "$build/abi-header.txt" "$baseline_header" "$build/libroomchat-abi-probe.so"

objcopy --strip-debug "$lib" "$build/libroomchat-symbols.so"
diff_abi "$(basename "$lib")'s exported symbols" "$build/abi-library.txt" \
  "$baseline_lib" "$build/libroomchat-symbols.so"

# What the header declares, the library defines.
nm -D --defined-only "$lib" | awk '{ print $3 }' | sort -u >"$build/abi-exported.txt"
grep -oE '\broomchat_[a-z0-9_]+\(' "$build/abi-probe.c" | tr -d '(' | sort -u >"$build/abi-declared.txt"
missing=$(comm -23 "$build/abi-declared.txt" "$build/abi-exported.txt")
if [ -n "$missing" ]; then
  echo "abi: $header declares functions $(basename "$lib") does not export:" >&2
  echo "$missing" >&2
  failed=1
fi
[ "$failed" -eq 0 ]
