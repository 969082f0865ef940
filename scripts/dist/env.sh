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
# finds this cargo-zigbuild (the same version maturin embeds).
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

# The addons and the wheels of one target share one build of their dependencies
# (core, the command line, rustls, ring, clap...: most of each build), in
# $zig_target_dir. Cargo reuses a build only when its environment matches, and
# cargo-zigbuild names its zig wrappers (the C compiler and linker cargo is given)
# after the program that writes them: napi's cargo-zigbuild and the one maturin
# embeds write the same wrappers under two paths, and each build started over.
# Both take the compiler and linker from the environment when it names them, so
# zig_env exports, for one target, what cargo-zigbuild would set (captured by
# running it over a stand-in cargo that writes its environment down) and both
# builds see the same paths. The features both enable are alike too (see
# bindings/python/Cargo.toml).
# shellcheck disable=SC2034
zig_target_dir=$target/zig
zig_env() { # the target as cargo-zigbuild takes it (x86_64-unknown-linux-gnu.2.17)
  # Files of this process only (the test command builds two targets at once): the
  # captured environment, and the stand-in written aside and renamed into place.
  # ($BASHPID read once: in a redirection of `cat` it would be cat's own.)
  local me=$BASHPID
  local capture=$target/zig-env/$1.$me.env stand_in=$target/zig-env/bin
  mkdir -p "$stand_in"
  cat >"$stand_in/cargo.$me" <<'SH'
#!/usr/bin/env bash
if [ "$1" = metadata ]; then exec "$ROOMCHAT_REAL_CARGO" "$@"; fi
env >"$ROOMCHAT_ZIG_ENV"
SH
  chmod +x "$stand_in/cargo.$me"
  mv -f "$stand_in/cargo.$me" "$stand_in/cargo"
  ROOMCHAT_REAL_CARGO=$(command -v cargo) ROOMCHAT_ZIG_ENV=$capture PATH="$stand_in:$PATH" \
    cargo-zigbuild build --release --target "$1" --manifest-path "$root/bindings/node/Cargo.toml" >/dev/null
  local line
  while IFS= read -r line; do
    export "${line?}"
  done < <(grep -E '^(CC|CXX|AR|RANLIB|CMAKE_TOOLCHAIN_FILE)_[a-z0-9_]+=|^CARGO_TARGET_[A-Z0-9_]+_LINKER=|^CARGO_ZIGBUILD_[A-Za-z0-9_]+=|^CARGO_TARGET_APPLIES_TO_HOST=' "$capture")
  grep -q '_LINKER=' "$capture" || { echo "zig_env: cargo-zigbuild named no linker for $1" >&2; return 1; }
  rm -f "$capture"
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

# The `roomchat` command a package put on PATH, run as "$@" after the version
# it must report, against the emulator start_emulator started: --version; a
# listing streamed whole (--all: as many lines as the first page's total); a
# room made, three messages posted and listed (and exported, once `roomchat
# export` exists: cli/src/export); a
# value out of its limits (exit 2, nothing sent); no key in any output
# (--dry-run's included); and Ctrl-C while a call waits on a service that
# never answers (SIGINT to the process group, as a terminal sends it): a plain
# call ends at once, killed by SIGINT as the native binary is, and --all exits
# 130 naming where to resume. Prints one line.
check_roomchat_command() {
  local version=$1 out total lines code
  shift
  out=$(mktemp -d)
  [ "$("$@" --version)" = "roomchat $version" ] || { echo "roomchat --version: not roomchat $version" >&2; return 1; }
  "$@" list-users --limit 1 --output json >"$out/page.json"
  total=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total"])' "$out/page.json")
  "$@" list-users --all --page-size 2 >"$out/all.jsonl"
  lines=$(wc -l <"$out/all.jsonl")
  if [ "$lines" -ne "$total" ] || [ "$total" -le 2 ]; then
    echo "roomchat list-users --all: $lines lines, total $total" >&2
    return 1
  fi
  code=0
  "$@" list-users --limit 100000 >"$out/limit.out" 2>"$out/limit.err" || code=$?
  [ "$code" -eq 2 ] || { echo "roomchat list-users --limit 100000: exit $code, not 2" >&2; cat "$out/limit.err" >&2; return 1; }
  # A room's history through the command: a room, three messages, the room's messages streamed (--all).
  room=$("$@" create-chat-room --name "Clean room" --output json)
  room=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["roomId"])' "$room")
  for n in 1 2 3; do "$@" send-room-message "$room" --system-message --message "message $n" >/dev/null; done
  "$@" room-messages "$room" --all >"$out/messages.jsonl"
  [ "$(grep -c '"message [123]"' "$out/messages.jsonl")" -eq 3 ] || { echo "roomchat room-messages --all: not the 3 messages" >&2; cat "$out/messages.jsonl" >&2; return 1; }
  # roomchat export, once the command line has it (cli/src/export): the same three messages.
  exported=
  if "$@" export --help | grep -q -- '--output-path'; then
    "$@" export "$room" --quiet -o "$out/export.jsonl"
    [ "$(grep -c '"message [123]"' "$out/export.jsonl")" -eq 3 ] || { echo "roomchat export: not the 3 messages" >&2; cat "$out/export.jsonl" >&2; return 1; }
    exported=", export (3 messages)"
  fi
  "$@" --dry-run list-users --limit 3 >"$out/dry.out" 2>&1
  grep -q 'curl' "$out/dry.out" || { echo "roomchat --dry-run printed no curl command" >&2; return 1; }
  if grep -rqF -e "$ROOMCHAT_PRIVATE_KEY" -e "$ROOMCHAT_PUBLIC_KEY" "$out"; then
    echo "roomchat printed a key" >&2
    return 1
  fi
  # A service that accepts connections and never answers.
  python3 - "$@" <<'PY' >"$out/sigint.log"
import os, signal, socket, subprocess, sys, time
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(16)
env = dict(os.environ, ROOMCHAT_BASE_URL=f"http://127.0.0.1:{server.getsockname()[1]}")
# npx got the SIGINT too, and npm exits by raising it again once its child has ended.
npx = os.path.basename(sys.argv[1]) == "npx"
for extra, expect in (([], -signal.SIGINT), (["--all"], -signal.SIGINT if npx else 130)):
    command = sys.argv[1:] + ["list-users", "--timeout", "60", "--max-retries", "0"] + extra
    # A process group of its own, signalled whole: what Ctrl-C in a terminal does (npx's child gets it too).
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    server.settimeout(30)
    held = server.accept()[0]  # the call is in flight
    time.sleep(0.3)
    sent = time.monotonic()
    os.killpg(child.pid, signal.SIGINT)
    try:
        _, err = child.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()
        sys.exit(f"{' '.join(extra) or 'a call'}: still running 10 s after SIGINT")
    took = time.monotonic() - sent
    if child.returncode != expect or (extra and b"--skip 0" not in err):
        sys.exit(f"{' '.join(extra) or 'a call'}: exit {child.returncode}, not {expect}: {err.decode()}")
    print(f"{'--all' if extra else 'a call'}: exit {child.returncode} {took:.2f} s after SIGINT")
    held.close()
PY
  echo "roomchat command ($*): --version, list-users --all ($lines lines), a room's 3 messages sent and listed$exported, a limit refused (exit 2), --dry-run, no key printed; Ctrl-C: $(paste -sd ';' "$out/sigint.log")"
  rm -rf "$out"
}
