#!/usr/bin/env bash
# The Rust MSRV is what the workspace's `rust-version` says: the published crates
# (roomchat, with its redis feature, and roomchat-emulator) are checked with
# exactly that toolchain (rustup installs it the first time, minimal profile).
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
cd "$root"
msrv=$(sed -nE '/^\[workspace.package\]/,/^\[/ s/^rust-version = "([^"]+)"/\1/p' Cargo.toml)
rustup toolchain list | grep -q "^$msrv" || rustup toolchain install "$msrv" --profile minimal >/dev/null
# `msrv.sh install`: the toolchain only (scripts/test-all.sh, before its background builds).
[ "${1:-}" = install ] && exit 0
cargo "+$msrv" check --quiet --locked -p roomchat --features redis -p roomchat-emulator --target-dir "$target/msrv"
echo "msrv: roomchat and roomchat-emulator build with Rust $msrv ($(rustc "+$msrv" --version)), the workspace's rust-version"
