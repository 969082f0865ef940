#!/usr/bin/env bash
# The npm release artefacts, napi-rs's layout: the main package `roomchat`
# (JavaScript, types, the generated loader) with optionalDependencies on one
# package per platform (bindings/node/npm/<platform>/: the addon, and os, cpu
# and libc fields, so npm installs only the one that fits).
#
#   node.sh build [RUST_TARGET...]   builds the Linux addons (default: all three)
#       with napi --cross-compile (cargo-zigbuild, zig from the build tools),
#       the gnu ones against glibc 2.17 (checked: the newest GLIBC_ symbol
#       version they use, objdump -T), into bindings/node/npm/<platform>/
#   node.sh pack                     packs the main package (optionalDependencies
#       on every platform package the release workflow builds, at the workspace
#       version) and the Linux platform packages into ${CARGO_TARGET_DIR:-target}/dist/npm
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
node_dir=$root/bindings/node
cd "$node_dir"

# The platform name napi gives a Rust target (the npm/<platform>/ folder and the addon's middle name).
platform_of() {
  case "$1" in
    x86_64-unknown-linux-gnu) echo linux-x64-gnu ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    aarch64-unknown-linux-gnu) echo linux-arm64-gnu ;;
    *) echo "node.sh: no Linux platform package for $1" >&2; return 1 ;;
  esac
}

build() {
  build_tools
  [ -d node_modules/@napi-rs/cli ] || npm ci --no-audit --no-fund --loglevel=error
  local targets=("$@") rust_target platform zig_target addon started newest host out_dir
  [ ${#targets[@]} -gt 0 ] || targets=(x86_64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-gnu)
  host=$(rustc -vV | sed -n 's/^host: //p')
  for rust_target in "${targets[@]}"; do
    platform=$(platform_of "$rust_target")
    zig_target=$rust_target
    # cargo-zigbuild reads a glibc version after the triple: the oldest glibc the addon needs.
    [[ $rust_target == *-gnu ]] && zig_target=$rust_target.2.17
    # The host's addon, native.js and native.d.ts go into bindings/node (the tests load
    # them; run-tests.sh checks that the generated two are the committed ones); another
    # target's into a folder of its own, so that building it (the test command does, in
    # the background) never rewrites a file the tests are reading.
    out_dir=$node_dir
    [ "$rust_target" = "$host" ] || out_dir=$target/napi-out/$platform
    mkdir -p "$out_dir"
    started=$(date +%s.%N)
    # $zig_target_dir: the wheel of the same target shares this build (env.sh, zig_env).
    (zig_env "$zig_target" && npx --loglevel=error napi build --platform --release --cross-compile --target "$zig_target" \
      --target-dir "$zig_target_dir" --output-dir "$out_dir" --js native.js --dts native.d.ts >/dev/null)
    addon=$out_dir/roomchat.$platform.node
    if [[ $rust_target == *-gnu ]]; then
      newest=$(objdump -T "$addon" | grep -oE 'GLIBC_[0-9]+(\.[0-9]+)*' | sort -uV | tail -n 1)
      if [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -n 1)" != GLIBC_2.17 ]; then
        echo "$addon needs $newest: newer than the glibc 2.17 floor" >&2
        exit 1
      fi
      floor="glibc floor ok: newest symbol version $newest"
    else
      floor="musl: $(readelf -d "$addon" | grep -oE 'Shared library: \[[^]]+\]' | tr '\n' ' ')"
    fi
    cp "$addon" "npm/$platform/"
    printf 'addon %s: %s bytes, %s (%s s)\n' "$(basename "$addon")" "$(stat -c %s "$addon")" "$floor" "$(elapsed "$started")"
  done
}

pack() {
  local out=$dist/npm stage version platform tarball
  version=$(workspace_version)
  rm -rf "$out"
  mkdir -p "$out"
  # The main package, staged with its optionalDependencies (what napi's
  # pre-publish writes): not in the committed package.json, whose lockfile
  # cannot hold packages that are not published yet.
  stage=$(mktemp -d)
  # --parents: bin/roomchat.js stays in bin/, where package.json's "bin" names it.
  # shellcheck disable=SC2046 # one word per file package.json lists
  cp --parents package.json $(node -p 'require("./package.json").files.join(" ")') "$stage/"
  node - "$stage/package.json" "$version" npm/*/package.json <<'JS'
const fs = require('node:fs')
const [file, version, ...platforms] = process.argv.slice(2)
const pkg = JSON.parse(fs.readFileSync(file, 'utf8'))
pkg.optionalDependencies = Object.fromEntries(
  platforms.map((p) => JSON.parse(fs.readFileSync(p, 'utf8')).name).map((name) => [name, version]),
)
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n')
JS
  tarball=$(cd "$out" && npm pack --silent "$stage" | tail -n 1)
  printf 'npm %s: %s bytes (optionalDependencies: %s)\n' "$tarball" "$(stat -c %s "$out/$tarball")" \
    "$(node -p 'Object.entries(require(process.argv[1]).optionalDependencies).map(([n, v]) => `${n}@${v}`).join(", ")' "$stage/package.json")"
  rm -rf "$stage"
  for platform in linux-x64-gnu linux-x64-musl linux-arm64-gnu; do
    [ -f "npm/$platform/roomchat.$platform.node" ] || { echo "npm/$platform has no addon: node.sh build first" >&2; exit 1; }
    tarball=$(cd "$out" && npm pack --silent "$node_dir/npm/$platform" | tail -n 1)
    printf 'npm %s: %s bytes (%s)\n' "$tarball" "$(stat -c %s "$out/$tarball")" \
      "$(node -p 'const p = require(process.argv[1]); [p.os, p.cpu, p.libc].filter(Boolean).join(" ")' "$node_dir/npm/$platform/package.json")"
  done
}

case "${1:-}" in
  build) shift; build "$@" ;;
  pack) pack ;;
  *) echo "usage: node.sh build [RUST_TARGET...] | node.sh pack" >&2; exit 2 ;;
esac
