#!/usr/bin/env bash
# The Python release artefacts, each built once, into ${CARGO_TARGET_DIR:-target}/dist/python:
#   abi3 wheels (CPython >= 3.9) for manylinux2014 x86_64 and aarch64 and
#   musllinux_1_2 x86_64, built by maturin with zig as C compiler and linker,
#   each checked with `auditwheel show` (it must report the intended tag), and
#   the sdist (its build is checked by scripts/dist/cleanroom-sdist.sh).
# `python.sh host` builds only the manylinux2014 x86_64 wheel (what
# bindings/python/run-tests.sh tests); `python.sh cross` the others and the sdist
# (scripts/test-all.sh builds them in the background, beside the steps that wait).
# Each run replaces only the files it builds.
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
cd "$root"
build_tools
out=$dist/python
manifest=bindings/python/Cargo.toml

# rust target, --compatibility, the platform tag auditwheel must report
wheels=(
  "x86_64-unknown-linux-gnu manylinux2014 manylinux_2_17_x86_64"
  "aarch64-unknown-linux-gnu manylinux2014 manylinux_2_17_aarch64"
  "x86_64-unknown-linux-musl musllinux_1_2 musllinux_1_2_x86_64"
)
case "${1:-all}" in
  all) ;;
  host) wheels=("${wheels[0]}") ;;
  cross) wheels=("${wheels[@]:1}") ;;
  *) echo "usage: python.sh [all|host|cross]" >&2; exit 2 ;;
esac

mkdir -p "$out"
for spec in "${wheels[@]}"; do
  read -r rust_target compatibility tag <<<"$spec"
  started=$(date +%s.%N)
  rm -rf "${out:?}/$tag" "$out"/roomchat-*-"$tag".whl "$out"/roomchat-*."$tag".whl
  zig_target=$rust_target
  [[ $rust_target == *-gnu ]] && zig_target=$rust_target.2.17
  # The addon of this target was built in $zig_target_dir with the same environment:
  # its dependencies are reused (see env.sh).
  (zig_env "$zig_target" && maturin build --quiet --release --locked --zig --target "$rust_target" \
    --compatibility "$compatibility" --manifest-path "$manifest" --target-dir "$zig_target_dir" --out "$out/$tag")
  wheel=$(ls "$out/$tag"/roomchat-*.whl)
  if [[ $rust_target == *-musl ]]; then
    # zig links a musl library against `libc.so`; musl's loader takes any
    # `libc.*` name for itself, but the musllinux policy (PEP 656) names it as
    # Alpine and the musllinux images do: libc.musl-<arch>.so.1.
    unpacked=$out/$tag/unpacked
    python -m wheel unpack --dest "$unpacked" "$wheel" >/dev/null
    for library in "$unpacked"/*/roomchat/*.so; do
      patchelf --replace-needed libc.so "libc.musl-${rust_target%%-*}.so.1" "$library"
    done
    rm "$wheel"
    python -m wheel pack --dest-dir "$out/$tag" "$unpacked"/* >/dev/null
    rm -rf "$unpacked"
    wheel=$(ls "$out/$tag"/roomchat-*.whl)
  fi
  report=$(auditwheel show --json "$wheel")
  found=$(python -c 'import json, sys; print(json.loads(sys.argv[1])["overall_tag"])' "$report" 2>/dev/null || true)
  if [ "$found" != "$tag" ]; then
    auditwheel show "$wheel" >&2 || true
    echo "auditwheel show: $(basename "$wheel") is $found, not $tag" >&2
    exit 1
  fi
  mv "$wheel" "$out/"
  rmdir "$out/$tag"
  printf 'wheel %s: %s bytes, auditwheel show: %s (%s s)\n' \
    "$(basename "$wheel")" "$(stat -c %s "$out/$(basename "$wheel")")" "$found" "$(elapsed "$started")"
done

if [ "${1:-all}" != host ]; then
  rm -f "$out"/roomchat-*.tar.gz
  maturin sdist --manifest-path "$manifest" --out "$out" >/dev/null
  sdist=$(ls "$out"/roomchat-*.tar.gz)
  printf 'sdist %s: %s bytes\n' "$(basename "$sdist")" "$(stat -c %s "$sdist")"
fi
