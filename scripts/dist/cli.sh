#!/usr/bin/env bash
# The command line's release artefacts: `roomchat` (crate roomchat-cli) as ONE
# STATIC executable per Linux architecture (Rust's musl targets, zig as C
# compiler and linker through cargo-zigbuild, as for the wheels and addons), so
# that the same file runs on any Linux, glibc or musl, with nothing installed.
#
#   cli.sh [RUST_TARGET...]   (default: x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
#
# Each is checked static (no program interpreter, no shared library) and of its
# machine; the x86_64 one runs `roomchat --version` here, and the checks of
# check_roomchat_command (env.sh) against the emulator if it is built. Into
# ${CARGO_TARGET_DIR:-target}/dist/cli: roomchat-cli-<version>-<target>.tar.gz
# (roomchat, README.md, CHANGELOG.md) and its .sha256. The release workflow
# (.github/workflows/release.yml, job cli) builds the same for macOS and Windows.
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
cd "$root"
build_tools
out=$dist/cli
version=$(workspace_version)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)

installed=$(rustup target list --installed)
for rust_target in "${targets[@]}"; do
  grep -qx "$rust_target" <<<"$installed" || rustup target add "$rust_target"
done

rm -rf "$out"
mkdir -p "$out"
for rust_target in "${targets[@]}"; do
  case $rust_target in
    x86_64-*) elf=X86-64 ;;
    aarch64-*) elf=AArch64 ;;
    *) echo "cli.sh: no Linux machine for $rust_target" >&2; exit 2 ;;
  esac
  started=$(date +%s.%N)
  cargo-zigbuild build --quiet --release --locked -p roomchat-cli --target "$rust_target"
  binary=$target/$rust_target/release/roomchat
  # Static: no program interpreter, no shared library (readelf is in binutils).
  if readelf -l "$binary" | grep -q INTERP || readelf -d "$binary" | grep -q NEEDED; then
    echo "$binary is not a static executable" >&2
    readelf -ld "$binary" >&2
    exit 1
  fi
  readelf -h "$binary" | grep -q "Machine:.*$elf" || { echo "$binary is not $elf" >&2; exit 1; }
  ran=
  if [ "$elf" = X86-64 ] && [ "$(uname -m)" = x86_64 ]; then
    [ "$("$binary" --version)" = "roomchat $version" ] || { echo "$binary --version: not roomchat $version" >&2; exit 1; }
    ran=", --version: roomchat $version"
    # Against the emulator when there is one (the test command builds it first; the release workflow has none).
    if [ -x "$target/debug/roomchat-emulator" ]; then
      start_emulator "$target/debug/roomchat-emulator" 3
      check_roomchat_command "$version" "$binary"
      stop_emulator
    fi
  fi
  name=roomchat-cli-$version-$rust_target
  stage=$(mktemp -d)
  mkdir "$stage/$name"
  cp "$binary" "$stage/$name/roomchat"
  cp cli/README.md CHANGELOG.md "$stage/$name/"
  tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
  rm -rf "$stage"
  (cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
  printf 'cli %s.tar.gz: %s bytes (roomchat: %s bytes, static %s%s) (%s s)\n' "$name" "$(stat -c %s "$out/$name.tar.gz")" \
    "$(stat -c %s "$binary")" "$elf" "$ran" "$(elapsed "$started")"
done
