#!/usr/bin/env bash
# cargo through cargo-zigbuild: the same command, with zig as C compiler and
# linker, and a glibc floor for gnu targets (ROOMCHAT_GLIBC, default 2.17).
# For the C package's CMake project, which runs `cargo rustc ... --target T`:
#   cmake ... -DROOMCHAT_RUST_TARGET=T -DCARGO_EXECUTABLE=scripts/dist/zig-cargo.sh
# (zig and cargo-zigbuild from bindings/python/requirements-build.txt on PATH).
set -euo pipefail
subcommand=$1
shift
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) args+=("$@"); break ;;
    --target)
      target=$2
      [[ $target == *-gnu ]] && target=$target.${ROOMCHAT_GLIBC:-2.17}
      args+=(--target "$target")
      shift 2
      continue ;;
  esac
  args+=("$1")
  shift
done
[ "$subcommand" = build ] && subcommand=zigbuild
exec cargo-zigbuild "$subcommand" "${args[@]}"
