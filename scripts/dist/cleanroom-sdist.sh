#!/usr/bin/env bash
# The sdist builds with Rust: a fresh venv (cargo on PATH this time) with the
# pinned maturin builds and installs this run's sdist, unpacked,
# (${CARGO_TARGET_DIR:-target}/dist/python/roomchat-*.tar.gz) from its own
# sources, then the installed package calls the emulator binary.
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(workspace_version)
sdist=$(ls "$dist"/python/roomchat-"$version".tar.gz)
command -v cargo >/dev/null

"${PYTHON:-python3}" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$(grep -E '^maturin==' "$root/bindings/python/requirements-build.txt")"
# Built where no workspace is around it: only what the sdist holds (its crates
# compile from the unpacked sources). A debug build in the run's target folder:
# the dependencies the test run already compiled are reused, so the check costs
# seconds, not a second release build of everything (the release wheels are
# python.sh's). Unpacked here with the files dated now (--touch): the sdist
# dates them all alike and long ago, so cargo would take an earlier run's build
# of the sdist's own crates (the same relative paths) as fresh, stale code and all.
started=$(date +%s.%N)
mkdir "$work/src"
tar -xzf "$sdist" -C "$work/src" --touch
if ! (cd "$work" && PATH="$work/venv/bin:$PATH" CARGO_TARGET_DIR=$target MATURIN_PEP517_ARGS="--profile dev" \
  "$work/venv/bin/pip" install --no-build-isolation --no-index "$work/src/roomchat-$version") >"$work/pip.log" 2>&1; then
  tail -n 40 "$work/pip.log" >&2
  exit 1
fi
echo "pip built and installed $(basename "$sdist") in $(elapsed "$started") s: $(tail -n 1 "$work/pip.log")"
"$work/venv/bin/pip" show --files roomchat | grep -E '^(Name|Version)|_native'

start_emulator "$target/debug/roomchat-emulator" 4
(cd "$work" && "$work/venv/bin/python" - "$version" <<'PY'
import sys
import roomchat
assert roomchat.__version__ == sys.argv[1]
with roomchat.Client.from_env() as client:
    page = client.list_users(limit=2)
assert page.total == 4 and len(page.data) == 2, page
print(f"from the sdist: roomchat {roomchat.__version__}, list_users -> {page.total} users")
PY
)
stop_emulator
echo "sdist: $(basename "$sdist") built and installed with Rust in a fresh venv; it calls the emulator"
