#!/usr/bin/env bash
# The JVM package's native libraries: one jar (dev.roomchat:roomchat) carries libroomchat,
# the C ABI's shared library (a cdylib), of every platform the other packages ship, under
# dev/roomchat/native/<folder>/, where NativeLoader (bindings/jvm) looks: JNA's resource
# prefix, with -musl after it for musl.
#
#   jvm-natives.sh linux     the four Linux libraries into bindings/jvm/target/natives/<folder>/
#                            (the POM's resource folder): linux-x86-64 is this machine's release
#                            build (target/release, which the JVM's tests and benchmarks run
#                            against); linux-aarch64 (glibc 2.17), linux-x86-64-musl and
#                            linux-aarch64-musl built with cargo-zigbuild's zig in the zig folder
#                            the Go step's static libraries of those targets use (scripts/dist/env.sh,
#                            zig_env): they share every dependency build, roomchat-ffi alone
#                            compiles for each. Optimized unless CARGO_PROFILE_RELEASE_OPT_LEVEL
#                            says otherwise (the test command: 0, as for the Go step's).
#   jvm-natives.sh build RUST_TARGET [DIR]
#                            one platform's library into DIR/<folder>/ (default: the POM's folder;
#                            a relative DIR is the repository's):
#                            Linux with zig (gnu against glibc 2.17), macOS and Windows with cargo
#                            on a runner of the platform (the release workflow)
#   jvm-natives.sh check JAR [--host-x86-64] FOLDER...
#                            the jar holds exactly these folders' libraries, each listed; each
#                            Linux one's ELF: a shared object for the folder's machine, no
#                            interpreter, the C library it needs (gnu: libc.so.6 and no glibc
#                            symbol newer than 2.17, but for linux-x86-64 when --host-x86-64 says
#                            it is this machine's build; musl: libc.musl-<arch>.so.1), and
#                            roomchat_version exported; macOS and Windows ones by `file`
#   jvm-natives.sh run JAR   the C ABI's README example (tests/c/readme_example.c) linked against
#                            two of the jar's libraries and run against the emulator: linux-aarch64
#                            under qemu-aarch64-static (zig's glibc 2.17 program, Debian's arm64
#                            glibc as its root), linux-x86-64-musl under musl's own dynamic loader
#                            (Debian's musl package, unpacked under target/, never installed: a
#                            musl loader in /lib would be a musl machine's mark). linux-aarch64-musl
#                            is checked by `check` only: no arm64 musl loader is at hand.
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
cd "$root"
natives=$root/bindings/jvm/target/natives
work=$target/jvm-natives

folder_of() {
  case "$1" in
    x86_64-unknown-linux-gnu) echo linux-x86-64 ;;
    aarch64-unknown-linux-gnu) echo linux-aarch64 ;;
    x86_64-unknown-linux-musl) echo linux-x86-64-musl ;;
    aarch64-unknown-linux-musl) echo linux-aarch64-musl ;;
    x86_64-apple-darwin) echo darwin-x86-64 ;;
    aarch64-apple-darwin) echo darwin-aarch64 ;;
    x86_64-pc-windows-msvc) echo win32-x86-64 ;;
    *) echo "jvm-natives.sh: no JVM folder for $1" >&2; return 1 ;;
  esac
}

# The library of RUST_TARGET into DIR/<folder>/.
build() {
  local rust_target=$1 dir=${2:-$natives} folder started built static
  folder=$(folder_of "$rust_target")
  started=$(date +%s.%N)
  mkdir -p "$dir/$folder" "$work"
  rustup target list --installed | grep -qx "$rust_target" || rustup target add "$rust_target"
  case "$rust_target" in
    *-linux-gnu)
      build_tools
      (zig_env "$rust_target.2.17" && cargo rustc --quiet --release --locked -p roomchat-ffi --lib --crate-type cdylib \
        --target "$rust_target" --target-dir "$zig_target_dir")
      built=$zig_target_dir/$rust_target/release/libroomchat.so
      ;;
    *-linux-musl)
      build_tools
      # A shared library on musl needs the dynamic C runtime (-crt-static), which cargo
      # accepts for a cdylib only from RUSTFLAGS; but RUSTFLAGS are part of every
      # dependency's build, and the Go step's static libraries of the same target are
      # built without: the dependencies would all compile twice. So cargo builds the
      # static library, as the Go step does, and rustc is asked for the cdylib too, with
      # -crt-static, in roomchat-ffi's own invocation: only the final link takes the C
      # runtime from it (libc's and std's #[link(cfg(target_feature = "crt-static"))]).
      # rustc writes it beside the static library in deps/, under the same file hash
      # (cargo rebuilds both whenever these arguments were not the last build's).
      (zig_env "$rust_target" && cargo rustc --quiet --release --locked -p roomchat-ffi --lib --crate-type staticlib \
        --target "$rust_target" --target-dir "$zig_target_dir" -- -C target-feature=-crt-static --crate-type cdylib)
      static=$(find "$zig_target_dir/$rust_target/release/deps" -maxdepth 1 -name 'libroomchat-*.a' \
        -samefile "$zig_target_dir/$rust_target/release/libroomchat.a")
      built=${static%.a}.so
      if [ -z "$static" ] || [ ! -f "$built" ]; then echo "jvm-natives.sh: rustc wrote no libroomchat-*.so for $rust_target" >&2; exit 1; fi
      ;;
    *-apple-darwin)
      cargo rustc --quiet --release --locked -p roomchat-ffi --lib --crate-type cdylib --target "$rust_target"
      built=$target/$rust_target/release/libroomchat.dylib
      ;;
    *-windows-msvc)
      cargo rustc --quiet --release --locked -p roomchat-ffi --lib --crate-type cdylib --target "$rust_target"
      built=$target/$rust_target/release/roomchat.dll
      ;;
  esac
  local out
  out=$dir/$folder/$(basename "$built")
  [[ $rust_target == *-linux-musl ]] && out=$dir/$folder/libroomchat.so
  cp "$built" "$out"
  if [[ $rust_target == *-linux-musl ]]; then
    # zig links it against `libc.so`; musl's loader takes any libc.* name for itself, and
    # Alpine names its libc libc.musl-<arch>.so.1, as the musllinux wheel does (python.sh).
    patchelf --replace-needed libc.so "libc.musl-${rust_target%%-*}.so.1" "$out"
  fi
  echo "jvm native $folder: $rust_target, $(stat -c %s "$out" 2>/dev/null || wc -c <"$out") bytes ($(elapsed "$started") s)"
}

linux() {
  local library=$target/release/libroomchat.so rust_target
  [ -f "$library" ] || { echo "jvm-natives.sh: $library is missing (cargo build --release -p roomchat-ffi)" >&2; exit 1; }
  rm -rf "$natives"
  mkdir -p "$natives/linux-x86-64"
  cp "$library" "$natives/linux-x86-64/"
  echo "jvm native linux-x86-64: this machine's release build, $(stat -c %s "$library") bytes"
  for rust_target in aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
    build "$rust_target"
  done
}

check() {
  local jar=$1 host_x64=0 folder entries expected=() unpacked machine needed newest file kind
  shift
  [ "${1:-}" = --host-x86-64 ] && { host_x64=1; shift; }
  [ -f "$jar" ] || { echo "jvm-natives.sh: no jar $jar" >&2; exit 1; }
  for folder in "$@"; do
    case "$folder" in
      win32-*) file=roomchat.dll ;;
      darwin-*) file=libroomchat.dylib ;;
      *) file=libroomchat.so ;;
    esac
    expected+=("dev/roomchat/native/$folder/$file")
  done
  entries=$(unzip -Z1 "$jar" | grep '^dev/roomchat/native/.*[^/]$' | sort)
  if [ "$entries" != "$(printf '%s\n' "${expected[@]}" | sort)" ]; then
    printf 'jvm-natives.sh: %s holds\n%s\nnot\n%s\n' "$jar" "$entries" "$(printf '%s\n' "${expected[@]}" | sort)" >&2
    exit 1
  fi
  echo "the jar's natives ($(basename "$jar")):"
  unzip -l "$jar" 'dev/roomchat/native/*' | grep 'dev/roomchat/native/.*[^/]$' | awk '{ printf "  %10d  %s\n", $1, $4 }'
  unpacked=$work/check
  rm -rf "$unpacked"
  mkdir -p "$unpacked"
  unzip -q "$jar" 'dev/roomchat/native/*' -d "$unpacked"
  for folder in "$@"; do
    file=$(ls "$unpacked/dev/roomchat/native/$folder/"*)
    case "$folder" in
      linux-*)
        machine=$(readelf -h "$file" | sed -nE 's/^ *Machine: *//p')
        case "$folder" in
          linux-x86-64*) [ "$machine" = "Advanced Micro Devices X86-64" ] ;;
          linux-aarch64*) [ "$machine" = AArch64 ] ;;
        esac || { echo "jvm-natives.sh: $folder's library is for $machine" >&2; exit 1; }
        readelf -h "$file" | grep -qE 'Type: *DYN' || { echo "jvm-natives.sh: $folder's library is not a shared object" >&2; exit 1; }
        if readelf -l "$file" | grep -q 'Requesting program interpreter'; then
          echo "jvm-natives.sh: $folder's library names an interpreter" >&2
          exit 1
        fi
        needed=$(readelf -d "$file" | sed -nE 's/.*Shared library: \[([^]]+)\].*/\1/p' | paste -sd ' ')
        nm -D --defined-only "$file" | grep -q ' T roomchat_version$' || { echo "jvm-natives.sh: $folder's library does not export roomchat_version" >&2; exit 1; }
        if [[ $folder == *-musl ]]; then
          local arch=x86_64
          [[ $folder == linux-aarch64* ]] && arch=aarch64
          if [[ " $needed " != *" libc.musl-$arch.so.1 "* ]] || [[ " $needed " == *" libc.so.6 "* ]]; then
            echo "jvm-natives.sh: $folder's library needs '$needed', not musl's libc.musl-$arch.so.1" >&2
            exit 1
          fi
          echo "  $folder: ELF $machine, shared, no interpreter, needs $needed"
        else
          [[ " $needed " == *" libc.so.6 "* ]] || { echo "jvm-natives.sh: $folder's library needs '$needed', not glibc" >&2; exit 1; }
          newest=$(objdump -T "$file" | grep -oE 'GLIBC_[0-9]+(\.[0-9]+)*' | sort -uV | tail -n 1)
          if [ "$folder" = linux-x86-64 ] && [ "$host_x64" = 1 ]; then
            echo "  $folder: ELF $machine, shared, no interpreter, needs $needed; newest glibc symbol $newest (this machine's build)"
          elif [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -n 1)" = GLIBC_2.17 ]; then
            echo "  $folder: ELF $machine, shared, no interpreter, needs $needed; newest glibc symbol $newest (floor 2.17)"
          else
            echo "jvm-natives.sh: $folder's library needs $newest: newer than the glibc 2.17 floor" >&2
            exit 1
          fi
        fi
        ;;
      darwin-*)
        local want=x86_64
        [ "$folder" = darwin-aarch64 ] && want=arm64
        kind=$(file -b "$file")
        [[ $kind == "Mach-O 64-bit"*"shared library"*" $want"* ]] || { echo "jvm-natives.sh: $folder's library is $kind" >&2; exit 1; }
        echo "  $folder: $kind"
        ;;
      win32-*)
        # file 5.44 says "PE32+ executable (DLL) (GUI) x86-64, for MS Windows", 5.45
        # "PE32+ executable for MS Windows 6.00 (DLL), x86-64, 7 sections".
        kind=$(file -b "$file")
        [[ $kind == "PE32+ executable"*"(DLL)"*"x86-64"* ]] || { echo "jvm-natives.sh: $folder's library is $kind" >&2; exit 1; }
        echo "  $folder: $kind"
        ;;
    esac
  done
}

# musl's dynamic loader, from Debian's musl package, unpacked (not installed) under $work.
musl_loader() {
  local dir=$work/musl-amd64 loader
  loader=$(find "$dir" -path '*/x86_64-linux-musl/libc.so' 2>/dev/null | head -n 1)
  if [ -z "$loader" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && apt-get download musl >/dev/null 2>&1) || { apt-get update -qq && (cd "$dir" && apt-get download musl >/dev/null); }
    dpkg-deb -x "$dir"/musl_*.deb "$dir/root"
    loader=$(find "$dir" -path '*/x86_64-linux-musl/libc.so' | head -n 1)
  fi
  [ -n "$loader" ] || { echo "jvm-natives.sh: Debian's musl package has no x86_64-linux-musl/libc.so" >&2; return 1; }
  echo "$loader"
}

run() {
  local jar=$1 unpacked zig emulator started out
  started=$(date +%s.%N)
  build_tools
  zig=(python -m ziglang cc)
  unpacked=$work/run
  rm -rf "$unpacked"
  mkdir -p "$unpacked"
  unzip -q "$jar" 'dev/roomchat/native/linux-aarch64/*' 'dev/roomchat/native/linux-x86-64-musl/*' -d "$unpacked"
  local arm=$unpacked/dev/roomchat/native/linux-aarch64 musl=$unpacked/dev/roomchat/native/linux-x86-64-musl
  # The README's program, linked as a user's would be: against the library, found at run time.
  "${zig[@]}" -target aarch64-linux-gnu.2.17 -std=c99 -I include tests/c/readme_example.c -L "$arm" -lroomchat -o "$unpacked/example-aarch64"
  "${zig[@]}" -target x86_64-linux-musl -dynamic -std=c99 -I include tests/c/readme_example.c -L "$musl" -lroomchat -o "$unpacked/example-musl"
  command -v qemu-aarch64-static >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static >/dev/null
  }
  # Debian's arm64 glibc (libc6-arm64-cross, as go.sh's arm64 programs use when no arm64 root exists).
  if [ ! -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libc6-arm64-cross >/dev/null
  fi
  local loader
  loader=$(musl_loader)
  emulator=${ROOMCHAT_EMULATOR:-$target/release/roomchat-emulator}
  [ -x "$emulator" ] || { echo "jvm-natives.sh: no emulator $emulator" >&2; exit 1; }
  local name runner
  for name in aarch64 musl; do
    if [ "$name" = aarch64 ]; then
      runner=(qemu-aarch64-static -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$arm" "$unpacked/example-aarch64")
    else
      runner=("$loader" --library-path "$musl" "$unpacked/example-musl")
    fi
    start_emulator "$emulator" 3
    out=$unpacked/$name.log
    "${runner[@]}" >"$out" 2>&1 || { stop_emulator; cat "$out" >&2; echo "jvm-natives.sh: the $name program failed" >&2; exit 1; }
    stop_emulator
    grep -qE '^[0-9]+ users$' "$out" || { cat "$out" >&2; echo "jvm-natives.sh: the $name program listed no users" >&2; exit 1; }
    if grep -qF -e "$ROOMCHAT_PRIVATE_KEY" -e "$ROOMCHAT_PUBLIC_KEY" "$out"; then
      echo "jvm-natives.sh: the $name program printed a key" >&2
      exit 1
    fi
  done
  echo "jvm natives run: the C README example against the jar's linux-aarch64 library under qemu-aarch64-static ($(head -n 1 "$unpacked/aarch64.log")) and its linux-x86-64-musl one under musl's loader ($(head -n 1 "$unpacked/musl.log")), against the emulator ($(elapsed "$started") s)"
}

case "${1:-}" in
  linux) linux ;;
  build) [ $# -ge 2 ] || { echo "usage: jvm-natives.sh build RUST_TARGET [DIR]" >&2; exit 2; }; build "$2" "${3:-}" ;;
  check) [ $# -ge 3 ] || { echo "usage: jvm-natives.sh check JAR [--host-x86-64] FOLDER..." >&2; exit 2; }; shift; check "$@" ;;
  run) [ $# -eq 2 ] || { echo "usage: jvm-natives.sh run JAR" >&2; exit 2; }; run "$2" ;;
  *) echo "usage: jvm-natives.sh linux | build RUST_TARGET [DIR] | check JAR [--host-x86-64] FOLDER... | run JAR" >&2; exit 2 ;;
esac
