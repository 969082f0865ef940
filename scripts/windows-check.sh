#!/usr/bin/env bash
# Windows: clippy (warnings are errors) of core, the C ABI crate and both
# bindings for x86_64-pc-windows-gnu, the target Debian's mingw-w64 can serve.
# Installs what it needs the first time (the mingw-w64 C compiler, which ring's
# build script calls even for a check, and the rustup target); later runs skip that.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target_triple=x86_64-pc-windows-gnu
target_dir=${CARGO_TARGET_DIR:-$root/target}

if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  echo "installing gcc-mingw-w64-x86-64"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc-mingw-w64-x86-64 >/dev/null
fi
if ! rustup target list --installed | grep -qx "$target_triple"; then
  echo "installing the rustup target $target_triple"
  rustup target add "$target_triple"
fi

# napi-build, for windows-gnu, looks for libnode.dll to link the addon against
# and fails when there is none. A check never links, so an empty stand-in file
# satisfies it (Node's own libnode.dll is not in any registry reachable here).
libnode=$target_dir/windows-check/libnode
mkdir -p "$libnode"
: >"$libnode/libnode.dll"

echo "cargo clippy --target $target_triple -p roomchat -p roomchat-ffi -p roomchat-python -p roomchat-node -p roomchat-cli -- -D warnings"
LIBNODE_PATH=$libnode cargo clippy --quiet --locked --target "$target_triple" \
  -p roomchat -p roomchat-ffi -p roomchat-python -p roomchat-node -p roomchat-cli -- -D warnings
echo "windows ($target_triple): core, ffi, bindings/python, bindings/node and cli check without warnings"
