#!/usr/bin/env bash
# Builds the emulator's packages for Python and Node into ${CARGO_TARGET_DIR:-target}/dist/emulator:
#   python/roomchat_emulator-<v>-py3-none-manylinux_2_17_<arch>.manylinux2014_<arch>.musllinux_1_1_<arch>.whl
#       (maturin `bin` bindings: the executable only, installed into the environment's bin/)
#   npm/roomchat-emulator-<v>.tgz                      (the JS entry: binaryPath(), the bin shim)
#   npm/roomchat-emulator-linux-{x64,arm64}-<v>.tgz    (the executable, os/cpu-gated optionalDependencies)
# One STATIC executable per architecture (Rust's musl targets, zig as the linker for
# both), so the same file serves glibc and musl hosts: the wheel carries both the
# manylinux and the musllinux tags, and the npm packages no libc field.
#
# Usage: scripts/package-emulator.sh [x64|arm64]...   (default: both)
# Idempotent: cargo reuses its builds (target/<triple>/release), and the packages
# are made anew each run. Installs what it needs: the Rust musl targets (rustup)
# and a venv with the pinned maturin, ziglang and wheel (emulator/python/requirements-build.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
out=$target/dist/emulator
tools=$target/emulator-package-venv
export PIP_DISABLE_PIP_VERSION_CHECK=1

version=$(sed -nE '/^\[workspace.package\]/,/^\[/ s/^version = "([^"]+)"/\1/p' Cargo.toml)
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(x64 arm64)

# Every manifest names the workspace version: a mismatch is a release bug, not something to paper over.
mismatch=0
for manifest in emulator/npm/*/package.json; do
  found=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' "$manifest")
  if [ "$found" != "$version" ]; then echo "$manifest is $found, the workspace $version" >&2; mismatch=1; fi
done
for pin in $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(d.get("optionalDependencies", {}).values()))' emulator/npm/roomchat-emulator/package.json); do
  [ "$pin" = "$version" ] || { echo "roomchat-emulator's optionalDependencies pin $pin, the workspace $version" >&2; mismatch=1; }
done
grep -q "\"roomchat-emulator==$version\"" bindings/python/pyproject.toml ||
  { echo "bindings/python/pyproject.toml's testing extra does not pin roomchat-emulator==$version" >&2; mismatch=1; }
[ "$mismatch" -eq 0 ]

echo "==> tools ($tools): maturin, zig, wheel; Rust musl targets"
[ -x "$tools/bin/python" ] || python3 -m venv "$tools"
"$tools/bin/pip" install --quiet -r emulator/python/requirements-build.txt
export PATH="$tools/bin:$PATH"

rm -rf "$out"
mkdir -p "$out/python" "$out/npm"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

for arch in "${arches[@]}"; do
  case $arch in
    x64) triple=x86_64-unknown-linux-musl machine=x86_64 elf=X86-64 ;;
    arm64) triple=aarch64-unknown-linux-musl machine=aarch64 elf=AArch64 ;;
    *) echo "unknown architecture $arch (x64 or arm64)" >&2; exit 2 ;;
  esac
  if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$triple"; then
    rustup target add "$triple"
  fi

  echo "==> $arch: the static executable and its wheel (maturin --zig --target $triple)"
  started=$(date +%s)
  (cd emulator/python && maturin build --quiet --release --locked --zig --target "$triple" --out "$stage/wheel-$arch")
  binary=$target/$triple/release/roomchat-emulator
  # Static: no program interpreter, no shared library (readelf is in binutils).
  if readelf -l "$binary" | grep -q INTERP || readelf -d "$binary" | grep -q NEEDED; then
    echo "$binary is not a static executable" >&2
    readelf -ld "$binary" >&2
    exit 1
  fi
  readelf -h "$binary" | grep -q "Machine:.*$elf" || { echo "$binary is not $elf" >&2; exit 1; }

  # One wheel for glibc and musl hosts: the executable needs neither.
  built=$(ls "$stage/wheel-$arch"/roomchat_emulator-*.whl)
  tags="manylinux_2_17_$machine.manylinux2014_$machine.musllinux_1_1_$machine"
  wheel tags --remove --platform-tag "$tags" "$built" >/dev/null
  wheel=$(ls "$stage/wheel-$arch"/roomchat_emulator-*.whl)
  mv "$wheel" "$out/python/"
  echo "wheel $(basename "$wheel"): $(stat -c %s "$out/python/$(basename "$wheel")") bytes ($(( $(date +%s) - started )) s)"

  echo "==> $arch: npm package roomchat-emulator-linux-$arch"
  package=$stage/npm-linux-$arch
  mkdir -p "$package/bin"
  cp "emulator/npm/linux-$arch/package.json" "emulator/npm/linux-$arch/README.md" "$package/"
  cp "$binary" "$package/bin/roomchat-emulator"
  chmod 755 "$package/bin/roomchat-emulator"
  tarball=$(cd "$package" && npm pack --silent --pack-destination "$out/npm" | tail -n 1)
  echo "npm $tarball: $(stat -c %s "$out/npm/$tarball") bytes"
done

echo "==> npm package roomchat-emulator (the JS entry)"
cp -r emulator/npm/roomchat-emulator "$stage/npm-main"
tarball=$(cd "$stage/npm-main" && npm pack --silent --pack-destination "$out/npm" | tail -n 1)
echo "npm $tarball: $(stat -c %s "$out/npm/$tarball") bytes"

echo "==> $out"
(cd "$out" && ls -1 python/* npm/*)
