#!/usr/bin/env bash
# Compares the peer benchmarks of an older revision (BEFORE) with the working
# tree's (AFTER) in one run, so that a change claimed to cost nothing at run time
# can be checked side by side on one machine:
#
#   bash scripts/bench/compare-revisions.sh BEFORE_REV        e.g. d7e0bd5
#
# 1. Checks BEFORE_REV out as a detached git worktree in a temporary folder
#    (removed at exit) and builds, in both trees, each into its own target dir
#    (AFTER: ${CARGO_TARGET_DIR:-target}; BEFORE: kept between runs under
#    AFTER's target, compare-revisions/<commit>, so only the first run builds it
#    all): the release emulator; the two Rust benches; the Python extension
#    (maturin build --release, installed into a venv of that target dir with the
#    peers pinned in AFTER's bindings/python/requirements-test.txt: requests,
#    httpx, urllib3, pycurl); the Node addon (npm ci, napi build --release
#    --platform; only the .node file is copied into bindings/node, nothing
#    tracked is rewritten). A failed build stops the run with its log's tail.
# 2. Runs each language's benchmark BEFORE, AFTER, BEFORE, AFTER, ...
#    (COMPARE_RUNS times each, the same N), each against its own tree's release emulator:
#      python  bindings/python/bench/bench.py      vs requests, httpx, urllib3, pycurl
#      node    bindings/node/bench/list-users.mjs  vs fetch, undici, http (1 and 16 in flight)
#      rust    cargo bench -p roomchat --bench list_users      vs the raw-socket floor, libcurl
#      c       cargo bench -p roomchat-ffi --bench c_vs_core   C API vs core
#    Every bench prints idle and loaded figures (scripts/bench/cpu-load.sh).
#    The measuring code is AFTER's on both sides: its bench files (and the
#    emulator's bench helpers, cpu-load) are copied over BEFORE's in the
#    temporary worktree, so only the library differs (an older revision's own
#    benches may lack the loaded round); COMPARE_OWN_BENCHES=1 keeps each tree's.
# 3. Prints one table per language: each figure (µs per call, ratios against the
#    peers; idle and loaded), BEFORE median | AFTER median | change %, the noise
#    (the larger spread, (max - min) / median, of either side's runs, at least
#    COMPARE_NOISE_FLOOR, 1 %), and a verdict: "within noise" when every
#    |change| is within its noise, else "moved" with the figures that did.
#
# Settings (environment): COMPARE_RUNS (5) runs per side; COMPARE_ONLY
# ("python node rust c") a subset; N per run: COMPARE_PY_CALLS (1000) and
# COMPARE_PY_ROUNDS (3) for bench.py, COMPARE_NODE_N (2000), COMPARE_RUST_N
# (4000), COMPARE_C_N (20000), each bench's loaded round its own fraction of it;
# COMPARE_LOGS=DIR keeps every run's output there.
# Time on 2 cores: the runs about 12 minutes; the builds a few more (the fresh
# BEFORE worktree recompiles the workspace's own crates each time), and the
# first build of BEFORE's target dir (its dependencies too) 10-20 minutes more.
# Needs git, cargo, python3 (with venv), node and npm, libcurl's headers.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
die() {
  echo "compare-revisions: $*" >&2
  exit 1
}
before_commit=$(git rev-parse --verify --quiet "$1^{commit}") || die "$1 is not a commit of this repository"
after_commit=$(git rev-parse HEAD)
before_short=$(git rev-parse --short "$before_commit")
after_short=$(git rev-parse --short "$after_commit")
[ -z "$(git status --porcelain --untracked-files=no)" ] || after_short="$after_short+changes"

runs=${COMPARE_RUNS:-5}
noise_floor=${COMPARE_NOISE_FLOOR:-1}
only=${COMPARE_ONLY:-python node rust c}
py_calls=${COMPARE_PY_CALLS:-1000}
py_rounds=${COMPARE_PY_ROUNDS:-3}
node_n=${COMPARE_NODE_N:-2000}
rust_n=${COMPARE_RUST_N:-4000}
c_n=${COMPARE_C_N:-20000}
for lang in $only; do
  case $lang in python | node | rust | c) ;; *) die "COMPARE_ONLY: unknown language $lang (python node rust c)" ;; esac
done
wants() { [[ " $only " == *" $1 "* ]]; }

after_root=$root
after_target=$(mkdir -p "${CARGO_TARGET_DIR:-$root/target}" && cd "${CARGO_TARGET_DIR:-$root/target}" && pwd)
before_target=$after_target/compare-revisions/$before_commit
work=$(mktemp -d)
before_root=$work/before
cleanup() {
  git -C "$root" worktree remove --force "$before_root" >/dev/null 2>&1 || true
  git -C "$root" worktree prune >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
logs=${COMPARE_LOGS:-$work/logs}
mkdir -p "$logs" "$before_target"
logs=$(cd "$logs" && pwd)

started=$SECONDS
kept() { if [ -n "${COMPARE_LOGS:-}" ]; then echo ", all of it in $1"; fi; }
note() { printf '==> [%d:%02d] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$*"; }

git worktree add --quiet --detach "$before_root" "$before_commit"
note "BEFORE $before_short in $before_root (target $before_target); AFTER $after_short in $after_root (target $after_target)"

# AFTER's measuring code on both sides (see the header).
if [ "${COMPARE_OWN_BENCHES:-0}" != 1 ]; then
  for file in scripts/bench/cpu-load.sh emulator/src/bench.rs core/benches/list_users.rs ffi/benches/c_vs_core.rs \
    bindings/python/bench/bench.py bindings/python/bench/cpu_load.py \
    bindings/node/bench/list-users.mjs bindings/node/bench/cpu-load.mjs; do
    mkdir -p "$(dirname "$before_root/$file")"
    cp "$after_root/$file" "$before_root/$file"
  done
  # c_vs_core compiles the C ABI's sources by path; one BEFORE lacks (its
  # functions then lived in another of them) becomes an empty module.
  sed -nE 's|^#\[path = "\.\./src/([a-z_]+\.rs)"\]$|\1|p' "$after_root/ffi/benches/c_vs_core.rs" | while read -r module; do
    [ -e "$before_root/ffi/src/$module" ] || echo "// empty: this revision has no $module" >"$before_root/ffi/src/$module"
  done
  echo "the benches' measuring code is AFTER's on both sides (COMPARE_OWN_BENCHES=1 for each tree's own)"
fi

# ---- builds ----

# side (BEFORE/AFTER), what, then the command; its output goes to a log, shown on failure.
build_step() {
  local side=$1 what=$2 log
  shift 2
  log=$logs/build-$side-${what// /-}.log
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    die "the $side tree ($([ "$side" = BEFORE ] && echo "$before_short" || echo "$after_short")) failed to build: $what (its log's end above$(kept "$log"))"
  fi
}

requirement() { # the pinned line of a package in AFTER's requirements files
  grep -hiE "^$1==" "$after_root/bindings/python/requirements-$2.txt" | head -n 1
}
py_peers=()
for package in requests httpx urllib3 pycurl certifi charset-normalizer idna httpcore h11 anyio; do
  py_peers+=("$(requirement "$package" test)")
done
maturin_pin=$(requirement maturin build)

build_tree() { # side, tree root, target dir
  local side=$1 tree=$2 target=$3 venv=$3/compare-python-venv
  export CARGO_TARGET_DIR=$target
  if [ "$side" = BEFORE ]; then
    if [ -e "$target/release/roomchat-emulator" ]; then
      note "$side: its dependencies are built; the workspace's crates recompile (a few minutes)"
    else
      note "$side: first build of this revision (dependencies and workspace, release): 10-20 minutes on 2 cores"
    fi
  fi
  note "$side: release emulator"
  build_step "$side" "release emulator" bash -c "cd '$tree' && cargo build --locked --release -p roomchat-emulator"
  if wants rust; then
    note "$side: cargo bench --no-run -p roomchat --bench list_users"
    build_step "$side" "rust bench" bash -c "cd '$tree' && cargo bench --locked --no-run -p roomchat --bench list_users"
  fi
  if wants c; then
    note "$side: cargo bench --no-run -p roomchat-ffi --bench c_vs_core"
    build_step "$side" "c bench" bash -c "cd '$tree' && cargo bench --locked --no-run -p roomchat-ffi --bench c_vs_core"
  fi
  if wants python; then
    note "$side: Python extension (maturin build --release) into $venv"
    [ -x "$venv/bin/python" ] || build_step "$side" "python venv" python3 -m venv "$venv"
    build_step "$side" "python peers" "$venv/bin/pip" install --quiet --disable-pip-version-check "$maturin_pin" "${py_peers[@]}"
    rm -rf "$target/compare-wheel"
    build_step "$side" "python extension" bash -c "cd '$tree' && '$venv/bin/maturin' build --release --locked \
      --manifest-path bindings/python/Cargo.toml --interpreter '$venv/bin/python' --compatibility linux \
      --auditwheel skip --out '$target/compare-wheel'"
    build_step "$side" "python install" bash -c "'$venv/bin/pip' install --quiet --disable-pip-version-check \
      --force-reinstall --no-deps '$target'/compare-wheel/roomchat-*.whl"
  fi
  if wants node; then
    note "$side: Node addon (npm ci, napi build --release --platform)"
    build_step "$side" "npm ci" bash -c "cd '$tree/bindings/node' && npm ci --no-audit --no-fund --loglevel=error"
    # Built into a scratch folder: napi also writes native.js and typings there, not over the tree's.
    rm -rf "$target/compare-napi"
    build_step "$side" "node addon" bash -c "cd '$tree/bindings/node' && npx --no-install napi build --platform --release \
      --target-dir '$target' --output-dir '$target/compare-napi' --js native.js --dts native.d.ts \
      && cp '$target'/compare-napi/*.node ."
  fi
  unset CARGO_TARGET_DIR
}

build_tree BEFORE "$before_root" "$before_target"
build_tree AFTER "$after_root" "$after_target"
note "both trees built"

# ---- runs, BEFORE and AFTER alternately ----

run_bench() { # lang, side, run number
  local lang=$1 side=$2 i=$3 tree target log
  if [ "$side" = BEFORE ]; then tree=$before_root target=$before_target; else tree=$after_root target=$after_target; fi
  log=$logs/$lang-$side-$i.log
  local status=0
  case $lang in
    python)
      (cd "$tree/bindings/python/bench" && CARGO_TARGET_DIR=$target "$target/compare-python-venv/bin/python" bench.py \
        --calls "$py_calls" --rounds "$py_rounds" --emulator "$target/release/roomchat-emulator") >"$log" 2>&1 || status=$?
      ;;
    node)
      (cd "$tree/bindings/node" && CARGO_TARGET_DIR=$target ROOMCHAT_BENCH_N=$node_n \
        ROOMCHAT_EMULATOR="$target/release/roomchat-emulator" node bench/list-users.mjs) >"$log" 2>&1 || status=$?
      ;;
    rust)
      (cd "$tree" && CARGO_TARGET_DIR=$target ROOMCHAT_BENCH_N=$rust_n \
        cargo bench --quiet --locked -p roomchat --bench list_users) >"$log" 2>&1 || status=$?
      ;;
    c)
      (cd "$tree" && CARGO_TARGET_DIR=$target ROOMCHAT_BENCH_N=$c_n \
        cargo bench --quiet --locked -p roomchat-ffi --bench c_vs_core) >"$log" 2>&1 || status=$?
      ;;
  esac
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$log" >&2
    die "the $lang bench of $side failed (exit $status; its log's end above$(kept "$log"))"
  fi
}

for lang in python node rust c; do
  wants "$lang" || continue
  for i in $(seq "$runs"); do
    for side in BEFORE AFTER; do
      note "$lang: $side run $i of $runs"
      run_bench "$lang" "$side" "$i"
    done
  done
done

# ---- tables ----

echo
echo "BEFORE = $before_short, AFTER = $after_short; medians of $runs runs each, alternating; run time $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s"
echo "N: python $py_calls calls x $py_rounds rounds (loaded: half), node $node_n, rust $rust_n, c $c_n (loaded: the benches' own fraction)"
python3 - "$logs" "$runs" "$only" "$noise_floor" <<'PY'
import re, statistics, sys
from pathlib import Path

logs, runs, only, floor = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(), float(sys.argv[4])
NUM = r"([0-9]+(?:\.[0-9]+)?)"


def loaded_or_idle(text):
    return "loaded" if "loaded" in text else "idle"


def parse_python(text):
    # bench.py: "single thread, idle (N calls per round)" / "8 threads (...), loaded (2 busy processes) (...)",
    # then rows: name, µs/call, calls/s, "N.NNx faster" (other / roomchat) for the peers.
    out, section = {}, None
    for line in text.splitlines():
        m = re.match(r"^(single thread|\d+ threads)\b.*?(idle|loaded)", line)
        if m:
            section = f"{'1 thread' if m.group(1) == 'single thread' else m.group(1)}, {m.group(2)}"
            continue
        m = re.match(r"^  (\S.*?)\s+" + NUM + r"\s+" + NUM + r"(?:\s+" + NUM + r"x faster)?\s*$", line)
        if m and section:
            name, us, faster = m.group(1), float(m.group(2)), m.group(4)
            if name == "roomchat.Client":
                out[f"{section}: roomchat µs/call"] = us
            elif faster:  # requests.Session -> requests, pycurl (reused handle) + json -> pycurl
                out[f"{section}: roomchat vs {re.split(r'[ .]', name)[0]} (x faster)"] = float(faster)
        m = re.match(r"^roomchat per call: " + NUM + r" µs for list_users alone; reading 50 usernames " + NUM
                     + r" µs; decoding .*? " + NUM + r" µs$", line)
        if m:
            out["idle: list_users alone µs"] = float(m.group(1))
            out["idle: decode without I/O µs"] = float(m.group(3))
    return out


def parse_node(text):
    # list-users.mjs: "one call at a time, idle (N calls ...)", a table whose last column is roomchat × (calls/s ratio).
    out, section = {}, None
    for line in text.splitlines():
        m = re.match(r"^(one call at a time|\d+ calls in flight), (idle|loaded)", line)
        if m:
            section = f"{'1 at a time' if m.group(1).startswith('one') else m.group(1).split()[0] + ' in flight'}, {m.group(2)}"
            continue
        # The first six columns (µs/call, calls/s, loop p99, loop µs/call, GC, roomchat ×); later ones ignored.
        m = re.match(r"^(\S+)\s+" + r"\s+".join([NUM] * 6) + r"(?:\s+[0-9.]+)*\s*$", line)
        if m and section:
            name = m.group(1)
            if name == "roomchat":
                out[f"{section}: roomchat µs/call"] = float(m.group(2))
                out[f"{section}: roomchat event-loop µs/call"] = float(m.group(5))
            else:
                out[f"{section}: roomchat × {name} (calls/s)"] = float(m.group(7))
    return out


def parse_rust(text):
    # list_users: a table per label (users, client, floor, libcurl, client/floor, client/libcurl), then throughput.
    out, section, throughput = {}, None, False
    for line in text.splitlines():
        if line.startswith("list_users against the embedded emulator"):
            section, throughput = loaded_or_idle(line), False
            continue
        if line.startswith("throughput at"):
            section, throughput = loaded_or_idle(line), True
            continue
        if section is None:
            continue
        m = re.match(r"^\s+(\d+)\s+" + r"\s+".join([NUM] * 5) + r"\s*$", line)
        if m and not throughput:
            size = m.group(1)
            out[f"{section}: client µs/call, {size} users"] = float(m.group(2))
            out[f"{section}: client/floor, {size} users"] = float(m.group(5))
            out[f"{section}: client/libcurl, {size} users"] = float(m.group(6))
        m = re.match(r"^\s+client\s+" + NUM + r"\s+" + NUM + r"\s+" + NUM + r"\s*$", line)
        if m and throughput:
            out[f"{section}: client calls/s, 1 thread"] = float(m.group(1))
            out[f"{section}: client calls/s, 8 threads"] = float(m.group(2))
    return out


def parse_c(text):
    # c_vs_core: "... , idle, x N calls:", "  C API ... us/call", "  core ... us/call", "  ratio C API/core: R median ...".
    out, section = {}, None
    for line in text.splitlines():
        if line.startswith("list_users against the embedded emulator"):
            section = loaded_or_idle(line)
            continue
        if section is None:
            continue
        m = re.match(r"^  (C API|core)\s+.*?total,\s+" + NUM + r" us/call", line)
        if m:
            out[f"{section}: {m.group(1)} µs/call"] = float(m.group(2))
        m = re.match(r"^  ratio C API/core: " + NUM + " median", line)
        if m:
            out[f"{section}: C API / core (median of rounds)"] = float(m.group(1))
    return out


TITLES = {
    "python": "Python: bench.py, roomchat.Client vs requests, httpx, urllib3, pycurl",
    "node": "Node: list-users.mjs, roomchat vs fetch, undici.request, http.request",
    "rust": "Rust: cargo bench list_users, client vs the raw-socket floor vs libcurl",
    "c": "C: cargo bench c_vs_core, the C API vs core",
}
def shown(value):
    """Calls/s without decimals, µs with one, ratios with three."""
    return f"{value:9.0f}" if abs(value) >= 1000 else f"{value:9.1f}" if abs(value) >= 10 else f"{value:9.3f}"


PARSERS = {"python": parse_python, "node": parse_node, "rust": parse_rust, "c": parse_c}
failed = False
for lang in ["python", "node", "rust", "c"]:
    if lang not in only:
        continue
    sides = {}
    for side in ("BEFORE", "AFTER"):
        sides[side] = [PARSERS[lang]((logs / f"{lang}-{side}-{i}.log").read_text()) for i in range(1, runs + 1)]
    names = list(dict.fromkeys(k for side in ("AFTER", "BEFORE") for run in sides[side] for k in run))
    print(f"\n{TITLES[lang]}")
    if not names:
        print("  no figures found in the output (format changed?): see the logs")
        failed = True
        continue
    width = max(len(n) for n in names)
    print(f"  {'figure':<{width}}  {'BEFORE':>9}  {'AFTER':>9}  {'change':>8}  {'noise':>7}")
    moved, missing = [], []
    for name in names:
        values = {side: [run[name] for run in sides[side] if name in run] for side in sides}
        if not values["BEFORE"] or not values["AFTER"]:
            missing.append(name)
            medians = {s: (shown(statistics.median(v)) if v else f"{'-':>9}") for s, v in values.items()}
            print(f"  {name:<{width}}  {medians['BEFORE']}  {medians['AFTER']}  {'-':>8}  {'-':>7}")
            continue
        before, after = statistics.median(values["BEFORE"]), statistics.median(values["AFTER"])
        change = (after - before) / before * 100 if before else 0.0
        spread = max([floor] + [(max(v) - min(v)) / statistics.median(v) * 100 if statistics.median(v) else 0.0
                                for v in values.values()])
        mark = "" if abs(change) <= spread else "  moved"
        if mark:
            moved.append(f"{name} {change:+.1f}%")
        print(f"  {name:<{width}}  {shown(before)}  {shown(after)}  {change:+7.1f}%  {spread:6.1f}%{mark}")
    verdict = "within noise" if not moved else "moved: " + "; ".join(moved)
    if missing:
        verdict += f" (figures on one side only: {len(missing)})"
    print(f"{lang} verdict: {verdict}")
sys.exit(1 if failed else 0)
PY
if [ -n "${COMPARE_LOGS:-}" ]; then echo "every run's output: $logs"; fi
