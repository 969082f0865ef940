# Sourced by the scripts in scripts/dist/: where things are, and the pinned tools.
# shellcheck shell=bash
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
# The release artefacts: dist/python (wheels, sdist), dist/npm (tarballs).
# shellcheck disable=SC2034 # dist and cache are for the scripts that source this file
dist=$target/dist
# Downloads and the arm64 root, kept between runs (and between checkouts).
# shellcheck disable=SC2034
cache=${ROOMCHAT_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/roomchat-ci}
export PIP_DISABLE_PIP_VERSION_CHECK=1 NPM_CONFIG_UPDATE_NOTIFIER=false

# The build tools venv (bindings/python/requirements-build.txt: maturin, ziglang,
# cargo-zigbuild, auditwheel), shared with bindings/python/run-tests.sh, put
# first on PATH: `zig` is `python -m ziglang` there, and napi's --cross-compile
# finds this cargo-zigbuild (the same version maturin embeds, so both write the
# same zig wrappers and share one build of the dependencies).
build_tools() {
  local tools=$target/python-venv
  [ -x "$tools/bin/python" ] || "${PYTHON:-python3}" -m venv "$tools"
  "$tools/bin/pip" install --quiet -r "$root/bindings/python/requirements-build.txt"
  export PATH="$tools/bin:$PATH"
  # The Rust standard libraries of the targets built from this machine.
  local installed missing=() rust_target
  installed=$(rustup target list --installed)
  for rust_target in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl; do
    grep -qx "$rust_target" <<<"$installed" || missing+=("$rust_target")
  done
  if [ ${#missing[@]} -gt 0 ]; then rustup target add "${missing[@]}"; fi
}

# The workspace version (Cargo.toml's [workspace.package]): every package's.
workspace_version() {
  sed -nE '/^\[workspace.package\]/,/^\[/ s/^version = "([^"]+)"/\1/p' "$root/Cargo.toml"
}

# PATH without any folder holding cargo or rustc: the clean rooms' users have no Rust.
path_without_rust() {
  local dir out=
  local IFS=:
  for dir in $PATH; do
    [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ] && continue
    out=${out:+$out:}$dir
  done
  printf '%s\n' "$out"
}

# A port no one listens on now (the servers here take one and print nothing useful).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until http://127.0.0.1:$1$2 answers (at most $3 seconds, default 60).
wait_http() {
  local i
  for ((i = 0; i < ${3:-60} * 10; i++)); do
    curl -fsS -o /dev/null "http://127.0.0.1:$1$2" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing answered on http://127.0.0.1:$1$2" >&2
  return 1
}

# Starts the emulator binary ($1) seeded with $2 users, under the runner given
# after them if any (qemu-aarch64-static, say); sets emu_pid, and
# ROOMCHAT_BASE_URL, ROOMCHAT_CHAT_URL, ROOMCHAT_PRIVATE_KEY and ROOMCHAT_PUBLIC_KEY
# from its first line (waited for at most 60 s). It stops when its stdin closes: stop_emulator.
start_emulator() {
  local binary=$1 users=$2 ready
  shift 2
  coproc EMU { "$@" "$binary" --port 0 --seed-users "$users"; }
  emu_pid=$EMU_PID
  emu_in=${EMU[1]}
  read -r -t 60 ready <&"${EMU[0]}" || { echo "the emulator $binary printed no ready line" >&2; return 1; }
  { read -r ROOMCHAT_BASE_URL && read -r ROOMCHAT_CHAT_URL && read -r ROOMCHAT_PRIVATE_KEY && read -r ROOMCHAT_PUBLIC_KEY; } < <(
    python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(*(r[k] for k in ("base_url", "chat_url", "private_key", "public_key")), sep="\n")' "$ready")
  export ROOMCHAT_BASE_URL ROOMCHAT_CHAT_URL ROOMCHAT_PRIVATE_KEY ROOMCHAT_PUBLIC_KEY
}
stop_emulator() {
  exec {emu_in}>&-
  wait "$emu_pid" 2>/dev/null || true
}

# Seconds since $1 (a `date +%s.%N`), one decimal.
elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }
