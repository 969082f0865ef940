#!/usr/bin/env bash
# The C/C++ package as its users meet it. First the install step
# (CMakeLists.txt: cargo's release build, reused when fresh) into a prefix;
# then, in a directory outside the repository, with cargo and rustc off PATH
# and an emptied environment: a CMake project that finds the package
# (find_package(roomchat CONFIG REQUIRED)) and links roomchat::roomchat from C
# and from C++ (the wrapper, roomchat.hpp) and roomchat::roomchat_static, and a
# Makefile that links with `pkg-config --libs roomchat` and, statically, with
# `pkg-config --static --libs roomchat`. Each program is the C/C++ guide's
# example (ffi/README.md), run against an emulator binary this script starts,
# and what it prints is shown. Ends with "c-clean-room: N passed, M failed".
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
package=$target/c-package
prefix=$package/prefix
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v make >/dev/null || need_apt+=(make)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
command -v c++ >/dev/null || need_apt+=(g++)
command -v readelf >/dev/null || need_apt+=(binutils)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

emulator=$target/debug/roomchat-emulator
if [ ! -x "$emulator" ]; then
  echo "building roomchat-emulator"
  cargo build --quiet --locked -p roomchat-emulator
fi

# ROOMCHAT_RELEASE_PACKAGES (set by scripts/test-all.sh): the packages the test
# command builds in release together. Built first (a no-op when fresh), cmake's
# `cargo rustc -p roomchat-ffi` must then reuse that build and compile the C
# library's own crate only: ffi/Cargo.toml names the features the others turn
# on so that it can.
if [ -n "${ROOMCHAT_RELEASE_PACKAGES:-}" ]; then
  # shellcheck disable=SC2086 # a list of -p options
  cargo build --quiet --release --locked $ROOMCHAT_RELEASE_PACKAGES
fi
echo "installing: cmake -S . -B $package/build && cmake --build && cmake --install --prefix $prefix"
cmake -S . -B "$package/build" -DCMAKE_BUILD_TYPE=Release >"$package.configure.log" 2>&1 ||
  { cat "$package.configure.log"; exit 1; }
cmake --build "$package/build" 2>&1 | tee "$package.build.log" | sed 's/^/  /'
if [ -n "${ROOMCHAT_RELEASE_PACKAGES:-}" ]; then
  again=$(sed -nE 's/^ *Compiling ([^ ]+) .*/\1/p' "$package.build.log" | grep -vx roomchat-ffi || true)
  if [ -n "$again" ]; then
    echo "cmake's build compiled again what the release build of $ROOMCHAT_RELEASE_PACKAGES had built: $(tr "\n" " " <<<"$again")" >&2
    echo "the features those packages turn on differ from roomchat-ffi's own: update the list in ffi/Cargo.toml (compare cargo tree -e normal,build -f '{p} [{f}]' of roomchat-ffi alone and of the set)" >&2
    exit 1
  fi
  echo "cmake's cargo build reused the release build of the workspace (compiled: roomchat-ffi only)"
fi
rm -rf "$prefix"
cmake --install "$package/build" --prefix "$prefix" >/dev/null
echo "installed in $prefix:"
(cd "$prefix" && find . \( -type f -o -type l \) | sort | while read -r file; do
  if [ -L "$file" ]; then
    echo "  ${file#./} -> $(readlink "$file")"
  else
    echo "  ${file#./}  $(stat -c %s "$file") bytes"
  fi
done)
echo "  soname: $(readelf -d "$prefix/lib/libroomchat.so" | sed -nE 's/.*\(SONAME\).*\[(.*)\]/\1/p')"

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAILED: $*" >&2; }

# The clean room: a directory outside the repository, an empty environment, and
# a PATH without the directories that hold cargo or rustc.
room=$(mktemp -d "${TMPDIR:-/tmp}/roomchat-clean-room.XXXXXX")
emulator_pid=
cleanup() {
  [ -n "$emulator_pid" ] && kill "$emulator_pid" 2>/dev/null || true
  rm -rf "$room"
}
trap cleanup EXIT
clean_path=$(tr ':' '\n' <<<"$PATH" | while read -r dir; do
  [ -n "$dir" ] && [ ! -e "$dir/cargo" ] && [ ! -e "$dir/rustc" ] && echo "$dir"
done | paste -sd: -)
if env -i PATH="$clean_path" bash -c 'command -v cargo || command -v rustc' >/dev/null; then
  # Only a system directory that cannot be left out holds them: shadow them
  # with stand-ins that fail, so that any use shows.
  mkdir -p "$room/no-rust"
  for tool in cargo rustc; do
    printf '#!/bin/sh\necho "%s is not available in the clean room" >&2\nexit 97\n' "$tool" >"$room/no-rust/$tool"
    chmod +x "$room/no-rust/$tool"
  done
  clean_path=$room/no-rust:$clean_path
  echo "the clean room: cargo and rustc shadowed by failing stand-ins"
else
  echo "the clean room: $room, cargo and rustc not on PATH"
fi
in_room() { (cd "$room" && env -i PATH="$clean_path" HOME="$room" LANG=C.UTF-8 "$@"); }

cp tests/c/readme_example.c "$room/app.c"
cp tests/cpp/readme_example.cpp "$room/app.cpp"
cat >"$room/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(roomchat_clean_room LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(roomchat $version CONFIG REQUIRED)
message(STATUS "found roomchat \${roomchat_VERSION} in \${roomchat_DIR}")
add_executable(app_c app.c)
target_link_libraries(app_c PRIVATE roomchat::roomchat)
add_executable(app_cpp app.cpp)
target_link_libraries(app_cpp PRIVATE roomchat::roomchat)
add_executable(app_cpp_static app.cpp)
target_link_libraries(app_cpp_static PRIVATE roomchat::roomchat_static)
# The installed package's CTest function: the README example with an emulator of its own.
enable_testing()
roomchat_add_emulator_test(NAME readme_c COMMAND app_c EMULATOR "$emulator" EMULATOR_ARGS --seed-users 3)
set_tests_properties(readme_c PROPERTIES PASS_REGULAR_EXPRESSION "3 users")
EOF
cat >"$room/Makefile" <<'EOF'
CFLAGS = -std=c99 -Wall -Wextra -Werror $(shell pkg-config --cflags roomchat)

all: app_pc app_pc_static

app_pc: app.c
	$(CC) $(CFLAGS) app.c $(shell pkg-config --libs roomchat) -o $@

# Where both libraries are installed, -lroomchat picks the shared one:
# -l:libroomchat.a asks for the archive, with the system libraries of Libs.private.
app_pc_static: app.c
	$(CC) $(CFLAGS) app.c $(subst -lroomchat,-l:libroomchat.a,$(shell pkg-config --static --libs roomchat)) -o $@
EOF

# Runs one program of the clean room against a fresh emulator (3 seeded users)
# and prints what it printed; `expect` is a pattern its output must match.
run_app() {
  local label=$1 expect=$2
  shift 2
  local announce base_url key output status
  coproc EMULATOR { exec "$emulator" --seed-users 3; }
  emulator_pid=$EMULATOR_PID
  read -r announce <&"${EMULATOR[0]}"
  base_url=$(sed -E 's/.*"base_url": *"([^"]+)".*/\1/' <<<"$announce")
  key=$(sed -E 's/.*"private_key": *"([^"]+)".*/\1/' <<<"$announce")
  set +e
  output=$(in_room env ROOMCHAT_BASE_URL="$base_url" ROOMCHAT_PRIVATE_KEY="$key" "$@" 2>&1)
  status=$?
  set -e
  # Closing its stdin stops the emulator.
  eval "exec ${EMULATOR[1]}>&-"
  wait "$emulator_pid" || true
  emulator_pid=
  echo "$label printed:"
  sed 's/^/  | /' <<<"$output"
  if [ "$status" -eq 0 ] && grep -qE "$expect" <<<"$output"; then
    pass "$label"
  else
    fail "$label (exit $status)"
  fi
}

# needed <binary> <pattern>: whether the binary's NEEDED entries match.
needed() { readelf -d "$1" | grep -E '\(NEEDED\)' | grep -qE "$2"; }

echo
echo "CMake: find_package(roomchat $version CONFIG REQUIRED), C, C++ and the static target"
if in_room cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$room/cmake.log" 2>&1 &&
  in_room cmake --build build >>"$room/cmake.log" 2>&1; then
  grep -E 'found roomchat' "$room/cmake.log" | sed 's/^/  /'
  pass "cmake configure and build (find_package, roomchat::roomchat, roomchat::roomchat_static)"
else
  cat "$room/cmake.log"
  fail "cmake configure and build"
fi
if [ -x "$room/build/app_c" ]; then
  needed "$room/build/app_c" 'libroomchat\.so\.0\]' && pass "app_c needs libroomchat.so.0 (the soname)" ||
    fail "app_c does not need libroomchat.so.0"
  run_app "app_c (C, roomchat::roomchat)" '^3 users$' ./build/app_c
fi
if [ -x "$room/build/app_c" ]; then
  if in_room ctest --test-dir build --output-on-failure >"$room/ctest.log" 2>&1; then
    grep -E 'tests passed|Passed' "$room/ctest.log" | sed 's/^/  /'
    pass "ctest: roomchat_add_emulator_test from the installed package (the README example, an emulator per test)"
  else
    cat "$room/ctest.log"
    fail "ctest: roomchat_add_emulator_test"
  fi
fi
if [ -x "$room/build/app_cpp" ]; then
  run_app "app_cpp (C++ wrapper, roomchat::roomchat)" '^crm-43: user_not_found \(HTTP 400\)$' ./build/app_cpp
fi
if [ -x "$room/build/app_cpp_static" ]; then
  ! needed "$room/build/app_cpp_static" libroomchat && pass "app_cpp_static needs no libroomchat" ||
    fail "app_cpp_static needs libroomchat"
  run_app "app_cpp_static (C++ wrapper, roomchat::roomchat_static)" '^crm-43: user_not_found \(HTTP 400\)$' \
    ./build/app_cpp_static
fi
# roomchat::roomchat is the static library when ROOMCHAT_USE_STATIC_LIBS is set.
if in_room cmake -S . -B build-static -DCMAKE_PREFIX_PATH="$prefix" -DROOMCHAT_USE_STATIC_LIBS=ON >"$room/cmake-static.log" 2>&1 &&
  in_room cmake --build build-static --target app_c >>"$room/cmake-static.log" 2>&1 &&
  ! needed "$room/build-static/app_c" libroomchat; then
  pass "with ROOMCHAT_USE_STATIC_LIBS, roomchat::roomchat links the archive (app_c needs no libroomchat)"
else
  cat "$room/cmake-static.log"
  fail "ROOMCHAT_USE_STATIC_LIBS"
fi
# The version file refuses another minor release (0.x breaks on a minor release).
mkdir -p "$room/too-new"
printf 'cmake_minimum_required(VERSION 3.16)\nproject(too_new LANGUAGES C)\nfind_package(roomchat 99.0 CONFIG REQUIRED)\n' \
  >"$room/too-new/CMakeLists.txt"
if in_room cmake -S too-new -B build-too-new -DCMAKE_PREFIX_PATH="$prefix" >"$room/too-new.log" 2>&1; then
  fail "find_package(roomchat 99.0) was satisfied by $version"
else
  echo "  find_package(roomchat 99.0 CONFIG REQUIRED): $(grep -m1 -oE 'version: [0-9.]+' "$room/too-new.log" || echo refused)"
  pass "find_package(roomchat 99.0) is refused"
fi

echo
echo "pkg-config: a Makefile, shared and static"
pc_env=(PKG_CONFIG_PATH="$prefix/lib/pkgconfig")
echo "  pkg-config --modversion roomchat: $(in_room env "${pc_env[@]}" pkg-config --modversion roomchat)"
echo "  pkg-config --cflags --libs roomchat: $(in_room env "${pc_env[@]}" pkg-config --cflags --libs roomchat)"
echo "  pkg-config --static --cflags --libs roomchat: $(in_room env "${pc_env[@]}" pkg-config --static --cflags --libs roomchat)"
[ "$(in_room env "${pc_env[@]}" pkg-config --modversion roomchat)" = "$version" ] &&
  pass "pkg-config --modversion is $version" || fail "pkg-config --modversion is not $version"
if in_room env "${pc_env[@]}" make >"$room/make.log" 2>&1; then
  sed 's/^/  /' "$room/make.log"
  pass "make (pkg-config --libs, pkg-config --static --libs)"
  libdir=$(in_room env "${pc_env[@]}" pkg-config --variable=libdir roomchat)
  needed "$room/app_pc" 'libroomchat\.so\.0\]' && pass "app_pc needs libroomchat.so.0" ||
    fail "app_pc does not need libroomchat.so.0"
  run_app "app_pc (pkg-config, shared; LD_LIBRARY_PATH=libdir)" '^3 users$' \
    env LD_LIBRARY_PATH="$libdir" ./app_pc
  ! needed "$room/app_pc_static" libroomchat && pass "app_pc_static needs no libroomchat" ||
    fail "app_pc_static needs libroomchat"
  run_app "app_pc_static (pkg-config --static)" '^3 users$' ./app_pc_static
else
  cat "$room/make.log"
  fail "make"
fi

echo "c-clean-room: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
