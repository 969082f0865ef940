#!/usr/bin/env bash
# The Go module (bindings/go: github.com/roomchat/roomchat-go) and its platform
# modules (bindings/go/lib/<platform>: libroomchat.a, core's static library, with the
# #cgo LDFLAGS that link it), as duckdb-go-bindings ships: the static libraries are
# never committed; this script puts them in place, assembles the modules as a module
# proxy serves them, and installs them by name in a clean room.
#
#   go.sh dev          this machine's (linux-amd64) release static library into
#                      bindings/go/lib/linux-amd64/, from the release build of the
#                      test command's package set (ROOMCHAT_RELEASE_PACKAGES): nothing
#                      compiles twice. Then `go test ./...` works in bindings/go.
#   go.sh test         go vet ./... and go test -race ./... in bindings/go (the
#                      workspace go.work: the platform modules from lib/), against the
#                      emulator ROOMCHAT_EMULATOR names (default target/debug's, else
#                      target/release's)
#   go.sh cross        the static libraries of linux-arm64 (glibc 2.17), linux-amd64-musl
#                      and linux-arm64-musl, built as the wheels and addons of those
#                      targets are (cargo-zigbuild's zig, $target/zig, scripts/dist/env.sh
#                      zig_env: their dependency builds are shared), checked against each
#                      lib.go's LDFLAGS (rustc --print native-static-libs); then a program
#                      of the module built for each with zig as cgo's C compiler and run
#                      against the emulator: arm64 glibc under qemu-user, the musl ones
#                      linked static (arm64 under qemu-user too)
#   go.sh lib PLATFORM the static library of one platform (any of the seven: the release
#                      workflow builds each on a runner of its platform), optimized unless
#                      CARGO_PROFILE_RELEASE_OPT_LEVEL says otherwise, checked against lib.go
#   go.sh example PLATFORM
#                      the README's example built for PLATFORM and run against the emulator
#   go.sh assemble VERSION OUT
#                      the main module and each platform module that has its library, as
#                      zips in a file:// GOPROXY layout (scripts/dist/goproxy: golang.org/x/mod/zip);
#                      a platform module without its library gets its go.mod only
#   go.sh cleanroom [OUT]
#                      a fresh module (target/go/cleanroom) gets github.com/roomchat/roomchat-go
#                      by name from that proxy (no replace, no workspace, no Rust on PATH),
#                      builds the README's quickstart as printed and runs it against the
#                      emulator; the binary needs no roomchat library at run time; a second,
#                      offline build (GOPROXY=off); and CGO_ENABLED=0 fails with one message
#   go.sh two-rust-libs
#                      a program that links roomchat and another Rust static library
#   go.sh all          dev, test, cross (unoptimized), assemble (target/go/proxy), cleanroom,
#                      two-rust-libs: the test command's step
#
# Go's caches live under target/go (GOMODCACHE, GOCACHE, GOPATH); GOTOOLCHAIN=local.
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
cd "$root"
go_dir=$root/bindings/go
module=github.com/roomchat/roomchat-go
gotarget=$target/go
export GOMODCACHE=${GOMODCACHE:-$gotarget/mod} GOCACHE=${GOCACHE:-$gotarget/cache} GOPATH=${GOPATH_ROOMCHAT:-$gotarget/path}
export GOTOOLCHAIN=local GOFLAGS='' GOENV=off
command -v go >/dev/null || { echo "go.sh: no go on PATH (Go 1.23 or newer)" >&2; exit 1; }

# Go platform name, Rust target, zig/cargo-zigbuild target (- : cargo alone), GOARCH, build tags
platforms=(
  "linux-amd64 x86_64-unknown-linux-gnu x86_64-unknown-linux-gnu.2.17 amd64 -"
  "linux-arm64 aarch64-unknown-linux-gnu aarch64-unknown-linux-gnu.2.17 arm64 -"
  "linux-amd64-musl x86_64-unknown-linux-musl x86_64-unknown-linux-musl amd64 roomchat_musl"
  "linux-arm64-musl aarch64-unknown-linux-musl aarch64-unknown-linux-musl arm64 roomchat_musl"
  "darwin-amd64 x86_64-apple-darwin - amd64 -"
  "darwin-arm64 aarch64-apple-darwin - arm64 -"
  "windows-amd64 x86_64-pc-windows-gnu - amd64 -"
)

# The LDFLAGS of a platform module's lib.go, less the library itself, as rustc's
# --print native-static-libs would write them (a library shipped beside it, ${SRCDIR}/libX.a, as -lX).
lib_ldflags() {
  sed -nE 's/^#cgo LDFLAGS: \$\{SRCDIR\}\/libroomchat\.a ?(.*)$/\1/p' "$go_dir/lib/$1/lib.go" | sed -E 's/\$\{SRCDIR\}\/lib([A-Za-z0-9_]+)\.a/-l\1/g'
}

# The emulator the tests and programs run against.
emulator_binary() {
  local candidate
  for candidate in "${ROOMCHAT_EMULATOR:-}" "$target/debug/roomchat-emulator" "$target/release/roomchat-emulator"; do
    [ -n "$candidate" ] && [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  echo "go.sh: no emulator: set ROOMCHAT_EMULATOR or cargo build -p roomchat-emulator" >&2
  return 1
}

# The program the clean room and the cross links build: the README's quickstart, the
# first ```go block after the line `<!-- go: quickstart -->`, exactly as printed.
example_source() {
  local readme=$go_dir/README.md
  if ! grep -q '^<!-- go: quickstart -->$' "$readme"; then
    echo "go.sh: $readme has no '<!-- go: quickstart -->' block" >&2
    return 1
  fi
  python3 - "$readme" <<'PY'
import re, sys
text = open(sys.argv[1]).read().split("\n<!-- go: quickstart -->\n", 1)[1]
print(re.search(r"```go\n(.*?)```", text, re.S).group(1), end="")
PY
}

dev() {
  local started
  started=$(date +%s.%N)
  [ "$(go env GOOS)/$(go env GOARCH)" = linux/amd64 ] || { echo "go.sh dev: this machine is not linux/amd64" >&2; exit 1; }
  # The test command's release package set (scripts/test-all.sh, release_set): the same
  # build as the benchmarks', so nothing compiles again for the library.
  # shellcheck disable=SC2086 # a list of options
  cargo build --quiet --release --locked ${ROOMCHAT_RELEASE_PACKAGES:--p roomchat -p roomchat-cli -p roomchat-ffi -p roomchat-emulator}
  cp "$target/release/libroomchat.a" "$go_dir/lib/linux-amd64/libroomchat.a"
  echo "go dev: $target/release/libroomchat.a ($(stat -c %s "$go_dir/lib/linux-amd64/libroomchat.a") bytes) -> bindings/go/lib/linux-amd64 ($(elapsed "$started") s)"
}

test_module() {
  local started emulator
  started=$(date +%s.%N)
  [ -f "$go_dir/lib/linux-amd64/libroomchat.a" ] || dev
  emulator=$(emulator_binary)
  # go.work (committed) resolves the platform modules from lib/: no -mod=mod here (the
  # go command refuses it in workspace mode).
  # -v for the count of tests and subtests passed (the test command's closing line);
  # ROOMCHAT_GO_SOAK=1: the 100,000 calls with RSS flat run too.
  local log=$gotarget/go-test.log code=0
  (cd "$go_dir" && go vet ./...)
  (cd "$go_dir" && ROOMCHAT_EMULATOR=$emulator ROOMCHAT_GO_SOAK=${ROOMCHAT_GO_SOAK:-1} go test -race -count=1 -v ./...) >"$log" 2>&1 || code=$?
  grep -E '^(ok|FAIL|---|panic)|^\s+[a-z_]+_test\.go:[0-9]+: .*(RSS|threads|peak)' "$log" | grep -vE '^\s*--- PASS' || true
  local passed failed
  passed=$(grep -cE '^\s*--- PASS' "$log" || true)
  failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
  if [ "$code" -ne 0 ]; then
    tail -n 80 "$log" >&2
    failed=$((failed > 0 ? failed : 1))
  fi
  echo "go: $passed passed, $failed failed (go vet and go test -race in bindings/go, emulator $emulator, $(elapsed "$started") s)"
  [ "$code" -eq 0 ]
}

# The module in DIR requires the main module, which a go.work takes from the repository
# with its platform modules.
use_repository_modules() {
  local d
  {
    printf 'go %s\n\nuse (\n\t.\n\t%s\n' "$(go env GOVERSION | sed 's/^go//')" "$go_dir"
    for d in "$go_dir"/lib/*/; do printf '\t%s\n' "${d%/}"; done
    printf ')\n'
    # Each module of the repository at the version required, from its folder: without
    # these the go command looks the required v0.1.0 up in the proxy anyway (once the
    # package requires modules beyond the workspace's, OpenTelemetry's).
    printf '\nreplace (\n\t%s v0.1.0 => %s\n' "$module" "$go_dir"
    for d in "$go_dir"/lib/*/; do d=${d%/}; printf '\t%s/lib/%s v0.1.0 => %s\n' "$module" "${d##*/}" "$d"; done
    printf ')\n'
  } >"$1/go.work"
  printf '\nrequire %s v0.1.0\n' "$module" >>"$1/go.mod"
}

# A module in DIR that builds main.go against the repository's modules (a go.work).
work_module() {
  local dir=$1
  rm -rf "$dir"
  mkdir -p "$dir"
  example_source >"$dir/main.go"
  (cd "$dir" && go mod init example.com/webinar >/dev/null 2>&1)
  use_repository_modules "$dir"
}

# The arm64 root the arm64 clean room made (scripts/dist/cleanroom-arm64.sh), for
# qemu-user's -L; else Debian's cross glibc for arm64 (libc6-arm64-cross).
arm64_sysroot() {
  local suite root
  suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  root=$cache/arm64-$suite-python3
  if [ -e "$root/lib/ld-linux-aarch64.so.1" ]; then echo "$root"; return; fi
  if [ ! -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ]; then
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libc6-arm64-cross >/dev/null
  fi
  echo /usr/aarch64-linux-gnu
}

# The static library of one platform into bindings/go/lib/NAME, checked against its
# lib.go's LDFLAGS (what rustc --print native-static-libs says it needs; cargo replays
# that note when nothing was rebuilt). Linux: cargo-zigbuild's zig as the C compiler, in
# the zig build folder of the target's wheel and addon with their environment (env.sh,
# zig_env), whose dependency builds it reuses where their features agree; the gnu ones
# against glibc 2.17. macOS and Windows (the release workflow, on a runner of the
# platform): cargo itself; Windows is x86_64-pc-windows-gnu, the mingw-w64 gcc that cgo
# uses there. The static library alone (crate type staticlib: not the cdylib).
build_lib() {
  local name=$1 spec rust_target zig_target goarch tags log printed expected built
  spec=$(platform_spec "$name")
  read -r name rust_target zig_target goarch tags <<<"$spec"
  log=$gotarget/lib-$name.log
  mkdir -p "$gotarget" "$go_dir/lib/$name"
  rustup target list --installed | grep -qx "$rust_target" || rustup target add "$rust_target"
  if [ "$zig_target" != - ]; then
    build_tools
    (zig_env "$zig_target" && cargo rustc --quiet --release --locked -p roomchat-ffi --lib --crate-type staticlib \
      --target "$rust_target" --target-dir "$zig_target_dir" -- --print native-static-libs) >"$log" 2>&1 ||
      { cat "$log" >&2; exit 1; }
    built=$zig_target_dir/$rust_target/release/libroomchat.a
  else
    cargo rustc --quiet --release --locked -p roomchat-ffi --lib --crate-type staticlib \
      --target "$rust_target" -- --print native-static-libs >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
    built=$target/$rust_target/release/libroomchat.a
  fi
  cp "$built" "$go_dir/lib/$name/libroomchat.a"
  # musl: Rust's std unwinds with LLVM's libunwind, which it leaves to the final link
  # (-lunwind) and musl systems lack: the module carries the one of Rust's target.
  if [[ $name == *-musl ]]; then
    cp "$(rustc --print sysroot)/lib/rustlib/$rust_target/lib/self-contained/libunwind.a" "$go_dir/lib/$name/libunwind.a"
  fi
  printed=$(sed -nE 's/.*native-static-libs: (.*)$/\1/p' "$log" | tail -n 1 | tr -d '\r')
  expected=$(lib_ldflags "$name")
  if [ "$printed" != "$expected" ]; then
    echo "go.sh: rustc says $rust_target's static library needs '$printed'; lib/$name/lib.go links '$expected'" >&2
    exit 1
  fi
  lib_note="libroomchat.a $(stat -c %s "$go_dir/lib/$name/libroomchat.a" 2>/dev/null || wc -c <"$go_dir/lib/$name/libroomchat.a") bytes, native libs as lib.go: $printed"
}

platform_spec() {
  local spec
  for spec in "${platforms[@]}"; do
    [ "${spec%% *}" = "$1" ] && { echo "$spec"; return; }
  done
  echo "go.sh: no platform $1 (${platforms[*]%% *})" >&2
  return 1
}

# The README's example (example_source) built for platform NAME against the repository's
# modules and run against the emulator: another Linux platform's with its target's zig
# (cargo-zigbuild's wrapper, which zig_env names) as cgo's C compiler and linker, the
# musl ones linked static, arm64 under qemu-user; this machine's own platform with the
# default C compiler.
run_example() {
  local name=$1 spec rust_target zig_target goarch tags program out cc='' emulator runner=() ldflags=() tagflags=() exe=''
  spec=$(platform_spec "$name")
  read -r name rust_target zig_target goarch tags <<<"$spec"
  program=$gotarget/example/$name
  work_module "$program"
  [ "$tags" = - ] || tagflags=(-tags "$tags")
  [ "$(go env GOOS)" = windows ] && exe=.exe
  out=$program/webinar$exe
  if [ "$zig_target" != - ] && [ "$name" != linux-amd64 ]; then
    build_tools
    cc=$(zig_env "$zig_target" >/dev/null && v=CC_${rust_target//-/_} && echo "${!v}")
    [[ $name == *-musl ]] && ldflags=(-ldflags "-linkmode external -extldflags -static")
  fi
  (cd "$program" && env CGO_ENABLED=1 GOOS="${name%%-*}" GOARCH="$goarch" ${cc:+"CC=$cc"} go build "${tagflags[@]}" "${ldflags[@]}" -o "$out" .) ||
    { echo "go.sh: the $name program did not build" >&2; exit 1; }
  if [[ $name == *-musl ]] && { readelf -l "$out" | grep -q INTERP || readelf -d "$out" | grep -q NEEDED; }; then
    echo "go.sh: $out is not static" >&2
    exit 1
  fi
  if [[ $name == *-arm64* ]] && [ "$(uname -m)" != aarch64 ] && [ "$(uname -m)" != arm64 ]; then
    command -v qemu-aarch64-static >/dev/null || {
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static >/dev/null
    }
    runner=(qemu-aarch64-static)
    [[ $name == *-musl ]] || runner+=(-L "$(arm64_sysroot)")
  fi
  emulator=$(emulator_binary)
  start_emulator "$emulator" 3
  "${runner[@]}" "$out" >"$program/run.log" 2>&1 || { stop_emulator; cat "$program/run.log" >&2; echo "go.sh: the $name program failed" >&2; exit 1; }
  stop_emulator
  check_example_output "$program/run.log"
  example_note="the example ($(file -b "$out" 2>/dev/null | cut -d, -f1-2)$(command -v readelf >/dev/null && { readelf -d "$out" | grep -q NEEDED && echo ', dynamic' || echo ', static'; })) ran${runner[0]:+ under ${runner[0]}} against the emulator"
}

cross() {
  local name started
  for name in linux-arm64 linux-amd64-musl linux-arm64-musl; do
    started=$(date +%s.%N)
    build_lib "$name"
    run_example "$name"
    echo "go cross $name: $lib_note; $example_note ($(elapsed "$started") s)"
  done
}

# What every run of the example must show: it talked to the emulator, and printed no key.
check_example_output() {
  if grep -qF -e "$ROOMCHAT_PRIVATE_KEY" -e "$ROOMCHAT_PUBLIC_KEY" "$1"; then
    echo "go.sh: the example printed a key" >&2
    exit 1
  fi
  [ -s "$1" ] || { echo "go.sh: the example printed nothing" >&2; exit 1; }
}

assemble() {
  local version=$1 out=$2 started name args=() stamp
  started=$(date +%s.%N)
  [[ $version == v* ]] || version=v$version
  stamp=$(git -C "$root" log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
  args=("$module=$go_dir")
  for dir in "$go_dir"/lib/*/; do
    name=$(basename "$dir")
    if [ -f "$dir/libroomchat.a" ]; then
      args+=("$module/lib/$name=${dir%/}")
    else
      # Its go.mod only: the requirement graph resolves, and no build for that platform can.
      args+=("mod:$module/lib/$name=${dir%/}")
    fi
  done
  rm -rf "$out"
  mkdir -p "$out"
  (cd "$root/scripts/dist/goproxy" && go build -o "$gotarget/bin/goproxy" .)
  "$gotarget/bin/goproxy" -out "$out" -version "$version" -time "$stamp" "${args[@]}"
  # The main module's zip: the header as a file, no go.work, no nested module.
  python3 - "$out/github.com/roomchat/roomchat-go/@v/$version.zip" "$module@$version" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
prefix = sys.argv[2] + "/"
assert all(n.startswith(prefix) for n in names), names
rel = [n[len(prefix):] for n in names]
assert "roomchat.h" in rel and "go.mod" in rel, rel
bad = [n for n in rel if n.startswith("lib/") or n in ("go.work", "go.work.sum") or n.endswith("_test.go") or "testdata/" in n]
assert not bad, bad
PY
  echo "go assemble: $version into $out ($(elapsed "$started") s)"
}

cleanroom() ( # a subshell: its environment is the user's
  local out=${1:-$gotarget/proxy} version dir started emulator log code lines
  started=$(date +%s.%N)
  version=v$(workspace_version)
  [ -f "$out/github.com/roomchat/roomchat-go/@v/$version.zip" ] || { echo "go.sh cleanroom: no $version in $out: go.sh assemble first" >&2; exit 1; }
  emulator=$(emulator_binary)
  dir=$gotarget/cleanroom
  rm -rf "$dir"
  mkdir -p "$dir/webinar"
  # A module cache of the clean room's own, without any roomchat module from an earlier
  # run (same version, other bytes); what else it holds is kept between runs.
  local modcache=$gotarget/cleanroom-mod
  if [ -d "$modcache" ]; then
    chmod -R u+w "$modcache/github.com/roomchat" "$modcache/cache/download/github.com/roomchat" 2>/dev/null || true
    rm -rf "$modcache/github.com/roomchat" "$modcache/cache/download/github.com/roomchat"
  fi
  # The user's machine: no Rust, no workspace, GOFLAGS=-mod=mod, the local proxy first.

  export PATH
  PATH=$(path_without_rust)
  if command -v cargo >/dev/null || command -v rustc >/dev/null; then echo "cargo or rustc is still on PATH" >&2; exit 1; fi
  # And a build cache of its own, emptied: the go command keys a module's compiled
  # packages by its version, so an earlier run's v0.1.0 (other bytes) would be linked.
  local buildcache=$gotarget/cleanroom-cache
  rm -rf "$buildcache"
  export GOWORK=off GOFLAGS=-mod=mod GOMODCACHE=$modcache GOCACHE=$buildcache GOPROXY="file://$out,https://proxy.golang.org" \
    GONOSUMDB="github.com/roomchat/*"
  (cd "$dir/webinar" && go mod init example.com/webinar >/dev/null 2>&1 && go get "$module@$version" 2>&1 | sed 's/^/  /')
  if grep -q replace "$dir/webinar/go.mod"; then echo "go.sh cleanroom: a replace directive" >&2; exit 1; fi
  example_source >"$dir/webinar/main.go"
  # Offline from here: everything the build needs came with go get.
  (cd "$dir/webinar" && GOPROXY=off go build -o webinar .)
  if ldd "$dir/webinar/webinar" | grep -i roomchat; then echo "go.sh cleanroom: the binary needs a roomchat library at run time" >&2; exit 1; fi
  start_emulator "$emulator" 3
  (cd "$dir/webinar" && ./webinar) >"$dir/run.log" 2>&1 || { stop_emulator; cat "$dir/run.log" >&2; echo "go.sh cleanroom: the example failed" >&2; exit 1; }
  stop_emulator
  check_example_output "$dir/run.log"
  # Without cgo: the build fails, with one message, that says what to do.
  code=0
  (cd "$dir/webinar" && GOPROXY=off CGO_ENABLED=0 go build -o webinar-nocgo .) >"$dir/nocgo.log" 2>&1 || code=$?
  lines=$(grep -cE '\.go:[0-9]+:[0-9]+: ' "$dir/nocgo.log" || true)
  if [ "$code" -eq 0 ] || [ "$lines" -ne 1 ] || ! grep -q 'roomchat_needs_cgo__build_with_CGO_ENABLED_1' "$dir/nocgo.log"; then
    echo "go.sh cleanroom: CGO_ENABLED=0 go build: exit $code, $lines error lines, not the one message:" >&2
    cat "$dir/nocgo.log" >&2
    exit 1
  fi
  printf 'go clean room: go get %s@%s by name from file://%s (go.mod: %s), the README example built offline (%s bytes, needs %s), ran against the emulator (%s lines); CGO_ENABLED=0: %s (%s s)\n' \
    "$module" "$version" "$out" "$(grep -c 'github.com/roomchat' "$dir/webinar/go.mod") roomchat requirements, no replace" \
    "$(stat -c %s "$dir/webinar/webinar")" "$(readelf -d "$dir/webinar/webinar" | sed -nE 's/.*Shared library: \[([^]]+)\].*/\1/p' | paste -sd ' ')" \
    "$(wc -l <"$dir/run.log")" "$(grep -oE '[^ ]+\.go:[0-9]+:[0-9]+: .*' "$dir/nocgo.log")" "$(elapsed "$started")"
)

# Another Rust static library in the same program: each Rust staticlib carries its own
# copy of the Rust standard library, and the copies define some of the same unmangled
# symbols. A tiny crate (other_add, other_greeting: std's allocator, a String, a panic
# caught) built as a staticlib under target/go, linked beside roomchat by a program that
# calls both; first as is, then with what the README tells such a user to add.
two_rust_libs() {
  local started dir crate program code toolchain answers=()
  started=$(date +%s.%N)
  [ -f "$go_dir/lib/linux-amd64/libroomchat.a" ] || dev
  dir=$gotarget/two-rust-libs
  crate=$dir/other
  rm -rf "$dir/program"
  mkdir -p "$crate/src" "$dir/program"
  cat >"$crate/Cargo.toml" <<'TOML'
[package]
name = "other"
version = "0.1.0"
edition = "2021"

[lib]
crate-type = ["staticlib"]

[workspace]
TOML
  cat >"$crate/src/lib.rs" <<'RUST'
//! Another Rust library a Go program links: std's allocator, formatting, a caught panic.
use std::ffi::{c_char, CString};

#[no_mangle]
pub extern "C" fn other_add(a: i32, b: i32) -> i32 {
    let caught = std::panic::catch_unwind(|| if a < 0 { panic!("negative") } else { a });
    caught.unwrap_or(0) + b
}

#[no_mangle]
pub extern "C" fn other_greeting(n: u32) -> *mut c_char {
    let words: Vec<String> = (0..n).map(|i| format!("hello {i}")).collect();
    CString::new(words.join(", ")).unwrap().into_raw()
}

#[no_mangle]
pub extern "C" fn other_free(s: *mut c_char) {
    if !s.is_null() {
        drop(unsafe { CString::from_raw(s) });
    }
}
RUST
  cat >"$dir/program/other.go" <<'GO'
package main

/*
#cgo LDFLAGS: ${SRCDIR}/libother.a
#include <stdint.h>
#include <stdlib.h>
int32_t other_add(int32_t a, int32_t b);
char *other_greeting(uint32_t n);
void other_free(char *s);
*/
import "C"

import "fmt"

func otherLibrary() string {
	greeting := C.other_greeting(3)
	defer C.other_free(greeting)
	return fmt.Sprintf("other_add(2, 3) = %d, other_add(-1, 3) = %d (a panic caught), other_greeting(3) = %q",
		C.other_add(2, 3), C.other_add(-1, 3), C.GoString(greeting))
}
GO
  # The example's main(), with the other library's line printed first.
  example_source | python3 -c 'import re, sys; s = sys.stdin.read(); print(re.sub(r"func main\(\) \{", "func main() {\n\tfmt.Println(otherLibrary())", s, count=1), end="")' >"$dir/program/main.go"
  grep -q '"fmt"' "$dir/program/main.go" || sed -i '0,/^import (/s//import (\n\t"fmt"/' "$dir/program/main.go"
  (cd "$dir/program" && go mod init example.com/tworust >/dev/null 2>&1)
  use_repository_modules "$dir/program"
  emulator=$(emulator_binary)
  # The other library from this toolchain, and from the MSRV's if installed (another
  # Rust release: its std's symbols are not this one's).
  for toolchain in "" "$(sed -nE 's/^rust-version = "([^"]+)"/\1/p' "$root/Cargo.toml")"; do
    if [ -n "$toolchain" ] && ! rustup toolchain list | grep -q "^$toolchain"; then continue; fi
    (cd "$crate" && cargo ${toolchain:++$toolchain} build --quiet --release --target-dir "$dir/target-${toolchain:-stable}")
    cp "$dir/target-${toolchain:-stable}/release/libother.a" "$dir/program/libother.a"
    code=0
    sed -i 's| -Wl,--allow-multiple-definition$||' "$dir/program/other.go"
    (cd "$dir/program" && go build -o tworust .) >"$dir/plain-${toolchain:-stable}.log" 2>&1 || code=$?
    local plain
    if [ "$code" -eq 0 ]; then
      plain="links as is"
    else
      plain="fails as is: $(grep -oE 'multiple definition of `[^'"'"']+' "$dir/plain-${toolchain:-stable}.log" | sed 's/multiple definition of `//' | sort -u | head -n 4 | paste -sd ' ') ..."
      grep -q 'multiple definition' "$dir/plain-${toolchain:-stable}.log" || { cat "$dir/plain-${toolchain:-stable}.log" >&2; echo "go.sh two-rust-libs: the plain link failed for another reason" >&2; exit 1; }
    fi
    # The README's answer: let the linker keep the first definition of each, by a line in
    # the user's package that links the other library.
    # shellcheck disable=SC2016 # cgo's ${SRCDIR}, not the shell's
    sed 's|^#cgo LDFLAGS: ${SRCDIR}/libother.a$|#cgo LDFLAGS: ${SRCDIR}/libother.a -Wl,--allow-multiple-definition|' \
      "$dir/program/other.go" >"$dir/program/other.go.new"
    mv "$dir/program/other.go.new" "$dir/program/other.go"
    grep -q -- '--allow-multiple-definition' "$dir/program/other.go"
    (cd "$dir/program" && go build -o tworust .)
    start_emulator "$emulator" 3
    (cd "$dir/program" && ./tworust) >"$dir/run.log" 2>&1 || { stop_emulator; cat "$dir/run.log" >&2; echo "go.sh two-rust-libs: the program failed" >&2; exit 1; }
    stop_emulator
    grep -q 'other_add(2, 3) = 5, other_add(-1, 3) = 3 (a panic caught), other_greeting(3) = "hello 0, hello 1, hello 2"' "$dir/run.log" ||
      { cat "$dir/run.log" >&2; echo "go.sh two-rust-libs: the other library's answers are wrong" >&2; exit 1; }
    check_example_output "$dir/run.log"
    answers+=("other library from rustc $(rustc ${toolchain:++$toolchain} -V | cut -d' ' -f2): $plain; with #cgo LDFLAGS: -Wl,--allow-multiple-definition both ran")
  done
  echo "go two-rust-libs: $(printf '%s; ' "${answers[@]}")($(elapsed "$started") s)"
}

case "${1:-}" in
  dev) dev ;;
  test) test_module ;;
  cross) cross ;;
  lib) [ $# -eq 2 ] || { echo "usage: go.sh lib PLATFORM" >&2; exit 2; }; build_lib "$2"; echo "go lib $2: $lib_note" ;;
  example) [ $# -eq 2 ] || { echo "usage: go.sh example PLATFORM" >&2; exit 2; }; run_example "$2"; echo "go example $2: $example_note" ;;
  assemble) [ $# -eq 3 ] || { echo "usage: go.sh assemble VERSION OUT" >&2; exit 2; }; assemble "$2" "$3" ;;
  cleanroom) cleanroom "${2:-}" ;;
  two-rust-libs) two_rust_libs ;;
  all)
    dev
    test_module
    # The other platforms' libraries unoptimized, as the test command builds their wheels
    # and addons (scripts/background-builds.sh): their packaging and linking is what is
    # checked here; the release workflow builds them optimized (go.sh lib).
    (export CARGO_PROFILE_RELEASE_OPT_LEVEL=0 && cross)
    assemble "v$(workspace_version)" "$gotarget/proxy"
    cleanroom "$gotarget/proxy"
    two_rust_libs
    ;;
  *) echo "usage: go.sh dev | test | cross | lib PLATFORM | example PLATFORM | assemble VERSION OUT | cleanroom [OUT] | two-rust-libs | all" >&2; exit 2 ;;
esac
