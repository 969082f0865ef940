#!/usr/bin/env bash
# One version for every package, from one place: [workspace.package] version in
# the workspace Cargo.toml. Checks that every crate takes it (cargo metadata),
# that the Python package's is maturin's dynamic one (from the crate), that the
# npm packages and the loader napi generated carry it, that the artefacts built
# in this run (target/dist) are named for it, and that CHANGELOG.md has a section
# for it; and that each supported range is stated where users read it, the same
# as the manifests say (Rust MSRV, CPython, Node).
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
cd "$root"
version=$(workspace_version)
msrv=$(sed -nE '/^\[workspace.package\]/,/^\[/ s/^rust-version = "([^"]+)"/\1/p' Cargo.toml)
failures=0
checks=0
check() { # description, then a command that must succeed
  local what=$1
  shift
  checks=$((checks + 1))
  "$@" || { echo "MISMATCH: $what" >&2; failures=$((failures + 1)); }
}

check "workspace version $version is SemVer" grep -qE '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$' <<<"$version"

# Every crate of the workspace: the workspace version, and the MSRV where it says one.
crates=$(cargo metadata --no-deps --format-version 1 --locked | node -e '
  const meta = JSON.parse(require("fs").readFileSync(0, "utf8"))
  for (const p of meta.packages) console.log(p.name, p.version, p.rust_version || "-")')
while read -r name crate_version crate_msrv; do
  check "crate $name is $version" [ "$crate_version" = "$version" ]
  check "crate $name's rust-version ($crate_msrv) is the workspace's ($msrv)" [ "$crate_msrv" = "$msrv" ]
done <<<"$crates"

# Python: maturin takes the version from the crate (pyproject says it is dynamic, and gives none).
check "bindings/python/pyproject.toml: version is dynamic (maturin: the crate's)" \
  python3 -c 'import sys, tomllib; p = tomllib.load(open(sys.argv[1], "rb"))["project"]; sys.exit("version" in p or "version" not in p.get("dynamic", []))' \
  bindings/python/pyproject.toml

# The test kit (emulator/): its wheel's version is the crate's, its npm packages carry
# the version (and pin their platform packages to it), roomchat[testing] pins it.
check "emulator/python/pyproject.toml: version is dynamic (maturin: the crate's)" \
  python3 -c 'import sys, tomllib; p = tomllib.load(open(sys.argv[1], "rb"))["project"]; sys.exit("version" in p or "version" not in p.get("dynamic", []))' \
  emulator/python/pyproject.toml
check "roomchat[testing] pins roomchat-emulator==$version" \
  python3 -c 'import sys, tomllib; p = tomllib.load(open(sys.argv[1], "rb"))["project"]; sys.exit(p["optional-dependencies"]["testing"] != ["roomchat-emulator==" + sys.argv[2]])' \
  bindings/python/pyproject.toml "$version"
for manifest in emulator/npm/*/package.json; do
  check "$manifest is $version" [ "$(node -p "require(process.argv[1]).version" "$root/$manifest")" = "$version" ]
  check "$manifest: its optionalDependencies at $version" \
    node -e 'const p = require(process.argv[1]); process.exit(Object.values(p.optionalDependencies || {}).every((v) => v === process.argv[2]) ? 0 : 1)' "$root/$manifest" "$version"
done

# npm: the main package, each platform package, and the versions napi wrote into the loader.
json_field() { node -p "require(process.argv[1]).$2" "$root/$1"; }
check "bindings/node/package.json is $version" [ "$(json_field bindings/node/package.json version)" = "$version" ]
for manifest in bindings/node/npm/*/package.json; do
  platform=$(basename "$(dirname "$manifest")")
  check "$manifest is $version" [ "$(json_field "$manifest" version)" = "$version" ]
  check "$manifest is named roomchat-$platform" [ "$(json_field "$manifest" name)" = "roomchat-$platform" ]
  check "$manifest names its os and cpu (and libc on Linux)" \
    node -e 'const p = require(process.argv[1]); process.exit(p.os && p.cpu && (p.os[0] !== "linux" || p.libc) ? 0 : 1)' "$root/$manifest"
  check "$manifest: engines.node as the main package's" \
    [ "$(json_field "$manifest" engines.node)" = "$(json_field bindings/node/package.json engines.node)" ]
done
loader_versions=$(grep -oE "bindingPackageVersion !== '[^']+'" bindings/node/native.js | sort -u | grep -oE "'[^']+'" | tr -d "'")
check "bindings/node/native.js checks for $version (napi writes the version it was built at)" [ "$loader_versions" = "$version" ]

# The artefacts of this run, when there are some.
if [ -d "$dist/python" ]; then
  for artefact in "$dist"/python/*; do
    check "$(basename "$artefact") is $version" grep -q -- "^roomchat-${version}[-.]" <<<"$(basename "$artefact")"
  done
fi
if [ -d "$dist/npm" ]; then
  for tarball in "$dist"/npm/*.tgz; do
    manifest=$(tar -xOzf "$tarball" package/package.json)
    check "$(basename "$tarball") is $version" [ "$(node -p 'JSON.parse(process.argv[1]).version' "$manifest")" = "$version" ]
    optional=$(node -p 'Object.values(JSON.parse(process.argv[1]).optionalDependencies || {}).filter((v) => v !== process.argv[2]).length' "$manifest" "$version")
    check "$(basename "$tarball"): every optionalDependency at $version" [ "$optional" = 0 ]
    if [ "$(basename "$tarball")" = "roomchat-$version.tgz" ]; then
      check "$(basename "$tarball"): an optionalDependency on each of bindings/node/npm/*" [ \
        "$(node -p 'Object.keys(JSON.parse(process.argv[1]).optionalDependencies).sort().join(" ")' "$manifest")" = \
        "$(cd "$root/bindings/node/npm" && for p in *; do printf 'roomchat-%s ' "$p"; done | sed 's/ $//')" ]
    fi
  done
fi

# The Go module requires each platform module at the workspace version (the release
# tags them all v<version>: scripts/dist/go.sh assemble), and every module's floor is Go 1.23.
for dir in bindings/go/lib/*/; do
  platform=$(basename "$dir")
  check "bindings/go/go.mod requires lib/$platform at v$version" \
    grep -qE "^\s*github.com/roomchat/roomchat-go/lib/$platform v$version\$" bindings/go/go.mod
done
for gomod in bindings/go/go.mod bindings/go/lib/*/go.mod; do
  check "$gomod: go 1.23" grep -qx 'go 1.23' "$gomod"
done

# The JVM package: its POM's own version (the project's, not a parent's or a dependency's).
check "bindings/jvm/pom.xml is $version" \
  python3 -c 'import sys, xml.etree.ElementTree as ET; ns = {"m": "http://maven.apache.org/POM/4.0.0"}; r = ET.parse(sys.argv[1]).getroot(); v = r.find("m:version", ns); sys.exit(v is None or v.text != sys.argv[2])' \
  bindings/jvm/pom.xml "$version"

check "CHANGELOG.md has a section for $version" grep -qE "^## \[?$version\]?" CHANGELOG.md

# Each supported range, where each language's users read it, as the manifests say it.
python_floor=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["requires-python"])' bindings/python/pyproject.toml)
node_floor=$(json_field bindings/node/package.json engines.node)
check "requires-python is >=3.9" [ "$python_floor" = ">=3.9" ]
check "bindings/python/README.md states CPython >= 3.9" grep -q 'CPython ≥ 3.9' bindings/python/README.md
check "engines.node is >=18" [ "$node_floor" = ">=18" ]
check "bindings/node/README.md states Node >= 18" grep -q 'Node.js ≥ 18' bindings/node/README.md
check "core/README.md states the Rust MSRV $msrv" grep -q "Rust ≥ $msrv" core/README.md

[ "$failures" -eq 0 ] || { echo "versions: $failures of $checks checks failed" >&2; exit 1; }
echo "versions: $checks checks: every crate, the Python and npm packages (the test kit's too) and this run's artefacts are $version (Rust >= $msrv, CPython $python_floor, Node $node_floor)"
