#!/usr/bin/env bash
# The OpenAPI description against the emulator, with independent tools:
#  1. validates docs/openapi.yaml and docs/emulator-admin-openapi.yaml
#     (openapi-spec-validator);
#  2. starts the emulator binary (debug build: schemathesis, not the emulator,
#     is the slow side) with an unthrottled rate limit, seeds a room, a
#     conversation and a bot for the documented examples, and runs schemathesis on the
#     service's document: examples, coverage, fuzzing and stateful phases, a
#     fixed seed, bounded in examples and in time; any failure fails the run;
#  3. checks that every request of tests/conformance/requests.json is valid by
#     the document (check_vectors.py).
# Installs its Python tools (tests/openapi/requirements.txt, pinned) into a venv
# under ${CARGO_TARGET_DIR:-target}/openapi-venv.
#
# Tunables: ROOMCHAT_EMULATOR_BIN (run against that emulator binary instead of
# building this one, e.g. an older build), OPENAPI_SEED (default 20240115), OPENAPI_MAX_EXAMPLES (default 300 per
# operation and phase), OPENAPI_TIMEOUT (default 240 s for schemathesis as a whole).
set -euo pipefail
cd "$(dirname "$0")/../.."

target_dir=${CARGO_TARGET_DIR:-target}
venv="$target_dir/openapi-venv"
seed=${OPENAPI_SEED:-20240115}
max_examples=${OPENAPI_MAX_EXAMPLES:-60}
time_bound=${OPENAPI_TIMEOUT:-420}

if ! cmp -s tests/openapi/requirements.txt "$venv/installed-requirements.txt"; then
  echo "installing the pinned OpenAPI tools into $venv"
  rm -rf "$venv"
  if ! python3 -m venv "$venv" 2>/dev/null; then
    # A Debian system Python keeps venv in a package of its own.
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    rm -rf "$venv"
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/openapi/requirements.txt
  cp tests/openapi/requirements.txt "$venv/installed-requirements.txt"
fi
py="$venv/bin/python"

echo "-- validating the documents (openapi-spec-validator)"
"$venv/bin/openapi-spec-validator" docs/openapi.yaml docs/emulator-admin-openapi.yaml

echo "-- the conformance vectors are valid requests by the document"
"$py" tests/openapi/check_vectors.py docs/openapi.yaml tests/conformance/requests.json

emulator_bin=${ROOMCHAT_EMULATOR_BIN:-}
if [ -z "$emulator_bin" ]; then
  cargo build --quiet --locked -p roomchat-emulator --bin roomchat-emulator
  emulator_bin="$target_dir/debug/roomchat-emulator"
fi
work=$(mktemp -d)
emulator_pid=
stop_emulator() {
  # Closing its stdin stops the emulator; wait for it so that nothing is left behind.
  exec 3>&- 2>/dev/null || true
  if [ -n "$emulator_pid" ]; then wait "$emulator_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap stop_emulator EXIT
mkfifo "$work/stdin"
# A rate limit no run can reach: schemathesis must not meet 429s it did not ask for.
"$emulator_bin" --rate-limit 1000000000/1s <"$work/stdin" >"$work/ready" &
emulator_pid=$!
exec 3>"$work/stdin"
for _ in $(seq 100); do
  [ -s "$work/ready" ] && break
  sleep 0.1
done
ready=$(head -n 1 "$work/ready")
if [ -z "$ready" ]; then
  echo "the emulator ($emulator_bin) did not print its ready line within 10 s" >&2
  exit 1
fi
field() { "$py" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$ready" "$1"; }
base_url=$(field base_url)
admin_url=$(field admin_url)
export ROOMCHAT_PRIVATE_KEY; ROOMCHAT_PRIVATE_KEY=$(field private_key)
export ROOMCHAT_PUBLIC_KEY; ROOMCHAT_PUBLIC_KEY=$(field public_key)
echo "-- emulator at $base_url"

# The room, conversation, bot, user and member of the document's examples, so
# that the examples phase meets real ones (channels and messages get ids of the
# emulator's: the stateful phase's links reach them).
"$py" - "$admin_url" "$base_url" <<'EOF'
import json, os, sys, urllib.request
admin, base = sys.argv[1], sys.argv[2]
key = os.environ["ROOMCHAT_PRIVATE_KEY"]
def post(path, body):
    request = urllib.request.Request(admin + path, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request) as response:
        assert response.status == 200, response.status
def rest(path, body):
    request = urllib.request.Request(base + path + "?auth=" + key, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request) as response:
        assert response.status == 200, response.status
post("/rooms", {"roomId": "bbNiVFoXm", "name": "General"})
# A history of 120 messages (some with a file), a channel with messages, a
# user the documented examples name (crm-42), a member of the room.
post("/messages", {"roomId": "bbNiVFoXm", "count": 120, "attachmentEvery": 10})
rest("/consumer/api/v1/user", {"username": "jon", "uniqueUserIdentifier": "crm-42"})
post("/members", {"roomId": "bbNiVFoXm", "uniqueUserIdentifier": "crm-42", "roleName": "moderator"})
post("/bots", {"_id": "64d1f0c2a9e8b7c6d5e4f3a2", "name": "helper", "webhookURL": "https://hooks.example/b"})
post("/conversations", {"roomId": "bbNiVFoXm", "conversationId": "c1", "messages": [
    {"messages": "hello", "user": {"username": "jon", "email": "jon@example.com"}, "created": "2024-01-15T15:21:44.293Z"},
    {"messages": "hi", "user": {"username": "ann"}}]})
EOF

echo "-- schemathesis (seed $seed, at most $max_examples examples per operation and phase, ${time_bound}s bound)"
started=$(date +%s)
status=0
rm -rf "$target_dir/openapi-report"
timeout "$time_bound" "$venv/bin/st" --config-file tests/openapi/schemathesis.toml run docs/openapi.yaml \
  --url "$base_url" \
  --phases examples,coverage,fuzzing,stateful \
  --seed "$seed" \
  --max-examples "$max_examples" \
  --workers 1 \
  --continue-on-failure \
  --generation-database none \
  --no-color \
  --report junit,ndjson --report-dir "$target_dir/openapi-report" || status=$?
elapsed=$(( $(date +%s) - started ))

# What schemathesis sent, as the emulator counted it: every REST request takes a
# journal sequence number (the journal's last entry carries the highest).
requests=$("$py" - "$admin_url" <<'EOF'
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/journal") as response:
    journal = json.load(response)
print(journal["entries"][-1]["seq"] if journal["entries"] else 0)
EOF
)
echo "schemathesis: $requests requests to the emulator's REST API in ${elapsed}s, exit status $status"
if [ "$status" -eq 124 ]; then
  echo "schemathesis did not finish within ${time_bound}s" >&2
fi
exit "$status"
