#!/usr/bin/env bash
# Clean room, pip: with no cargo or rustc on PATH, a fresh venv installs
# `roomchat` BY NAME from a local package index (pypiserver serving this run's
# wheels and sdist), and runs the Quickstart of the README that PyPI shows (read
# from the installed package's own metadata) against the emulator binary.
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
# shellcheck source=scripts/dist/registries.sh
source "$(dirname "$0")/registries.sh"
work=$(mktemp -d)
trap 'stop_registries; rm -rf "$work"' EXIT
version=$(workspace_version)

start_pypiserver

export PATH
PATH=$(path_without_rust)
if command -v cargo || command -v rustc; then echo "cargo or rustc is still on PATH" >&2; exit 1; fi
echo "PATH has no cargo and no rustc"

"${PYTHON:-python3}" -m venv "$work/venv"
"$work/venv/bin/pip" install --no-cache-dir --index-url "$pypi_url" roomchat 2>&1 | tee "$work/pip.log" | grep -E '^ *(Downloading|Successfully)' | sed -E 's/^ +//; s|http://127.0.0.1:[0-9]+/packages/||'
# The wheel, not the sdist: there is no Rust here to build one.
grep -qE "Downloading .*roomchat-$version-cp39-abi3-manylinux_2_17_x86_64[^ ]*\.whl|Downloading .*roomchat-$version-cp39-abi3-manylinux2014_x86_64[^ ]*\.whl" "$work/pip.log"

cd "$work"
venv_python=$work/venv/bin/python
"$venv_python" - "$version" <<'PY'
import importlib.metadata as metadata, sys
import roomchat
assert roomchat.__version__ == sys.argv[1], roomchat.__version__
meta = metadata.metadata("roomchat")
print(f"import roomchat: {roomchat.__version__} from {roomchat.__file__}")
print(f"Requires-Python: {meta['Requires-Python']}; README as PyPI shows it: {meta['Description-Content-Type']}, {len(meta.get_payload())} characters")
PY

# The description renders as PyPI renders it (readme_renderer, from the pypiserver venv).
"$venv_python" -c 'import importlib.metadata as m; print(m.metadata("roomchat").get_payload())' >"$work/description.md"
"$target/dist-venv/bin/python" -m readme_renderer -f md -o "$work/description.html" "$work/description.md"
grep -q '<h2 id="user-content-quickstart">Quickstart' "$work/description.html"
echo "the description renders for PyPI: $(grep -c '<h2 ' "$work/description.html") sections, $(stat -c %s "$work/description.html") bytes of HTML"

# The README's Quickstart, from the installed metadata (what PyPI renders).
"$venv_python" - >"$work/readme_example.py" <<'PY'
import importlib.metadata as metadata, re
readme = metadata.metadata("roomchat").get_payload()
quickstart = readme.split("\n## Quickstart", 1)[1]
print(re.search(r"```python\n(.*?)```", quickstart, re.S).group(1), end="")
PY
start_emulator "$target/debug/roomchat-emulator" 2
"$venv_python" "$work/readme_example.py" | tee "$work/readme.log"
# The `roomchat` command pip put on the venv's PATH (console script: the extension module runs the Rust command line).
[ "$(PATH=$work/venv/bin:$PATH command -v roomchat)" = "$work/venv/bin/roomchat" ]
check_roomchat_command "$version" "$work/venv/bin/roomchat"
stop_emulator
grep -qE '^sign Ann in at http://127\.0\.0\.1:[0-9]+/.*bbNiVFoXm\?accessToken=' "$work/readme.log"
grep -qx 'ann True' "$work/readme.log"
grep -qx 'no such user: 400 user not found' "$work/readme.log"
grep -qx "eve's token signs in eve" "$work/readme.log"
grep -qx 'after invalidation: invalid accessToken' "$work/readme.log"
grep -qx '4 users' "$work/readme.log"
echo "clean room (pip): roomchat $version installed by name from the index, no Rust on PATH; the README's Quickstart ran: $(wc -l <"$work/readme.log") lines; the roomchat command ran"
