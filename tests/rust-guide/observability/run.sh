#!/usr/bin/env bash
# The core README's Observability example, run as a user copies it (issue 51, item 7a):
# its code block becomes src/main.rs verbatim, its Cargo.toml lines must be this crate's
# dependencies (roomchat and roomchat-emulator from this repository by path), and the
# program, built --locked (offline once its crates were fetched) in target/rust-guide/,
# must print the three spans in one trace and the traceparent the request carried.
# Its Cargo.lock holds the workspace's versions: after a change of core's or the
# emulator's dependencies, refresh it with `cp Cargo.lock tests/rust-guide/observability/
# && (cd tests/rust-guide/observability && cargo tree -q >/dev/null)` (keeps the
# workspace's versions, drops what the example does not use).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mkdir -p "$here/src"
python3 - "$root/core/README.md" "$here/Cargo.toml" "$here/src/main.rs" <<'PY'
import re, sys, tomllib
readme, manifest, main = sys.argv[1:]
text = open(readme, encoding="utf-8").read()
section = text.split("\n## Observability\n", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"^```([^\n]*)\n(.*?)^```$", section, re.S | re.M)
toml_blocks = [body for info, body in blocks if info == "toml"]
programs = [body for info, body in blocks if info.startswith("rust") and "fn main()" in body]
assert len(programs) == 1, f"one whole program in the Observability section, found {len(programs)}"
program = programs[0]
assert not re.search(r"^\s*# ", program, re.M), "the example hides lines (# ) a user would copy"
assert "#[cfg(" not in program, "the example depends on a cfg of the user's crate"
guide = tomllib.loads("\n".join(b for b in toml_blocks if "opentelemetry_sdk" in b))
crate = tomllib.loads(open(manifest, encoding="utf-8").read())["dependencies"]
def plain(spec):
    spec = {"version": spec} if isinstance(spec, str) else dict(spec)
    spec.pop("path", None)
    return spec
assert sorted(guide) == sorted(crate), f"the guide names {sorted(guide)}, the test crate {sorted(crate)}"
for name, spec in guide.items():
    assert plain(spec) == plain(crate[name]), f"{name}: the guide says {spec}, the test crate {crate[name]}"
    assert ("path" in crate[name]) == name.startswith("roomchat"), f"{name}: only roomchat's crates by path"
open(main, "w", encoding="utf-8").write(program)
print(f"the README's example: {len(program.splitlines())} lines to src/main.rs; its {len(guide)} Cargo.toml lines checked")
PY
cd "$here"
out=$(CARGO_TARGET_DIR="$root/target/rust-guide" cargo run --quiet --locked)
printf '%s\n' "$out" >"$root/target/rust-guide/observability.out"
python3 - "$root/target/rust-guide/observability.out" <<'PY'
import re, sys
out = open(sys.argv[1], encoding="utf-8").read()
# The stdout exporter prints each span when it ends: innermost first.
def fields(name):
    return re.findall(rf"^\s*{name}\s*: (.*)$", out, re.M)
names = fields("Name")
spans = [n for n in names if n in ("GET /consumer/api/v2/users", "roomchat list_users", "nightly user report")]
assert spans == ["GET /consumer/api/v2/users", "roomchat list_users", "nightly user report"], out
assert fields("Kind")[:3] == ["Client", "Internal", "Internal"], fields("Kind")
trace_ids = fields("TraceId")
assert len(trace_ids) == 3 and len(set(trace_ids)) == 1, f"one trace: {trace_ids}"
span_ids, parents = fields("SpanId"), fields("ParentSpanId")
assert parents[0] == span_ids[1] and parents[1] == span_ids[2], (span_ids, parents)
assert "url.template: /consumer/api/v2/users" in out or re.search(r"url\.template.*?/consumer/api/v2/users", out), out
sent = re.search(r'^sent traceparent: Some\("00-([0-9a-f]{32})-([0-9a-f]{16})-01"\)$', out, re.M)
assert sent, out
assert sent.group(1) == trace_ids[0] and sent.group(2) == span_ids[0], "the traceparent is the attempt span's"
print(f"the README's example ran: {', '.join(spans)} in trace {trace_ids[0]}; the request's traceparent is the attempt's")
PY
