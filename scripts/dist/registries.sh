# Sourced by the clean rooms: a local Python package index and a local npm
# registry on free loopback ports, serving this run's artefacts
# (${CARGO_TARGET_DIR:-target}/dist, made by python.sh and node.sh). Each server
# stops when the sourcing script exits (stop_registries).
# shellcheck shell=bash
# shellcheck disable=SC2154 # root, target, dist and cache come from env.sh, sourced first

registry_pids=()
registry_dirs=()
stop_registries() {
  local pid
  for pid in "${registry_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${registry_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "${registry_dirs[@]}"
}

# pypiserver (scripts/dist/requirements.txt) serving dist/python and the folders
# given (the test kit's emulator wheels, say): sets pypi_url (its /simple/).
start_pypiserver() {
  local venv=$target/dist-venv port folder served=()
  [ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/pip" install --quiet -r "$root/scripts/dist/requirements.txt"
  ls "$dist"/python/roomchat-*.whl >/dev/null || { echo "no wheels in $dist/python: run scripts/dist/python.sh" >&2; return 1; }
  port=$(free_port)
  "$venv/bin/pypi-server" run --host 127.0.0.1 --port "$port" --disable-fallback --log-stream none \
    "$dist/python" "$@" >/dev/null 2>&1 &
  registry_pids+=($!)
  wait_http "$port" /simple/
  pypi_url=http://127.0.0.1:$port/simple/
  for folder in "$dist/python" "$@"; do served+=("$folder"/*); done
  echo "pypiserver on $pypi_url serving ${served[*]##*/}"
}

# verdaccio (scripts/dist/verdaccio: pinned by its lockfile, installed once into
# the cache) with the packages of dist/npm, and of the folders given, published
# to it: sets npm_url.
# roomchat and roomchat-* come only from it; anything else (typescript, say) it
# fetches from the npm registry this machine is set up with.
start_verdaccio() {
  local lock_hash install work port token tarball folder version mains=() published=()
  lock_hash=$(cat "$root/scripts/dist/verdaccio/package.json" "$root/scripts/dist/verdaccio/package-lock.json" | sha256sum | cut -c1-16)
  install=$cache/verdaccio-$lock_hash
  if [ ! -x "$install/node_modules/.bin/verdaccio" ]; then
    rm -rf "$install"
    mkdir -p "$install"
    cp "$root/scripts/dist/verdaccio/package.json" "$root/scripts/dist/verdaccio/package-lock.json" "$install/"
    (cd "$install" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  work=$(mktemp -d)
  registry_dirs+=("$work")
  port=$(free_port)
  cat >"$work/config.yaml" <<YAML
storage: $work/storage
auth:
  htpasswd:
    file: $work/htpasswd
    max_users: 1
uplinks:
  upstream:
    url: $(npm config get registry)
packages:
  'roomchat':
    access: \$all
    publish: \$authenticated
  'roomchat-*':
    access: \$all
    publish: \$authenticated
  '**':
    access: \$all
    proxy: upstream
log: { type: stdout, format: pretty, level: warn }
YAML
  "$install/node_modules/.bin/verdaccio" --config "$work/config.yaml" --listen "127.0.0.1:$port" >"$work/verdaccio.log" 2>&1 &
  registry_pids+=($!)
  wait_http "$port" /-/ping
  npm_url=http://127.0.0.1:$port/
  # A user for publishing (the registry's own htpasswd, made here): its token goes in an npmrc of this run.
  token=$(curl -fsS -X PUT -H 'content-type: application/json' \
    -d '{"name": "roomchat-ci", "password": "roomchat-ci-password"}' \
    "${npm_url}-/user/org.couchdb.user:roomchat-ci" | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).token')
  printf '//127.0.0.1:%s/:_authToken=%s\n' "$port" "$token" >"$work/npmrc"
  ls "$dist"/npm/*.tgz >/dev/null || { echo "no npm tarballs in $dist/npm: run scripts/dist/node.sh" >&2; return 1; }
  # The platform packages first, then the main ones (roomchat-<version>.tgz,
  # roomchat-emulator-<version>.tgz) that name them.
  version=$(workspace_version)
  for folder in "$dist/npm" "$@"; do
    for tarball in "$folder"/*.tgz; do
      case ${tarball##*/} in
        roomchat-"$version".tgz | roomchat-emulator-"$version".tgz) mains+=("$tarball") ;;
        *) npm publish --userconfig "$work/npmrc" --registry "$npm_url" --loglevel=error "$tarball" >/dev/null ;;
      esac
      published+=("${tarball##*/}")
    done
  done
  for tarball in "${mains[@]}"; do
    npm publish --userconfig "$work/npmrc" --registry "$npm_url" --loglevel=error "$tarball" >/dev/null
  done
  echo "verdaccio on $npm_url: published ${published[*]}"
}
