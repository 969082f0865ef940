#!/usr/bin/env bash
# The Node package's checks, in one command (scripts/test-all.sh runs it):
#   npm ci; npm run build (release addon); the generated native.js/native.d.ts
#   are what napi generates (forced to regenerate); node --test against the
#   emulator; the endpoint, fault and network-option tests again over TLS
#   (ROOMCHAT_TEST_TLS=1: emulators with --tls, clients given the CA); npm pack -> install into a brand-new project outside the repo ->
#   require(), import, `tsc --noEmit --strict` on a TypeScript file, and the
#   README's Node example; a short benchmark run that prints figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
TYPESCRIPT_VERSION=5.9.3
TYPES_NODE_VERSION=20.19.43
cd "$here"

step() { printf '\n--> %s\n' "$*"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "emulator binaries (debug for the tests, release for the benchmark)"
(cd "$root" && cargo build --quiet --locked -p roomchat-emulator && cargo build --quiet --locked --release -p roomchat-emulator)

step "npm ci"
npm ci --no-audit --no-fund --loglevel=error

step "npm run build (release addon) and the freshness of the generated native.js / native.d.ts"
cp native.js native.d.ts "$work/"
# napi only writes the typings while the crate compiles: make sure it does.
touch src/lib.rs
npm run --silent build
for generated in native.js native.d.ts; do
  if ! diff -u "$work/$generated" "$generated"; then
    echo "bindings/node/$generated was stale: it has been regenerated above; commit it" >&2
    exit 1
  fi
done
echo "native.js and native.d.ts are what napi generates"

step "node --test (against the emulator)"
node --test --test-reporter=spec test/*.test.js 2>&1 | tee "$work/node-test.log"
passed=$(sed -nE 's/^ℹ pass ([0-9]+)$/\1/p' "$work/node-test.log" | tail -n 1)
failed=$(sed -nE 's/^ℹ fail ([0-9]+)$/\1/p' "$work/node-test.log" | tail -n 1)

# The second pass: the endpoint, fault and network-option tests again, every
# emulator serving HTTPS (--tls) and every client trusting its CA (helpers.js).
# Always run, CI or not: nothing here can skip it.
tls_files=(test/client.test.js test/errors.test.js test/network-options.test.js test/tokens.test.js)
step "node --test over TLS (ROOMCHAT_TEST_TLS=1): ${tls_files[*]}"
tls_start=$(date +%s.%N)
ROOMCHAT_TEST_TLS=1 node --test --test-reporter=spec "${tls_files[@]}" 2>&1 | tee "$work/node-test-tls.log"
tls_seconds=$(python3 -c 'import sys,time; print(f"{time.time() - float(sys.argv[1]):.1f}")' "$tls_start")
tls_passed=$(sed -nE 's/^ℹ pass ([0-9]+)$/\1/p' "$work/node-test-tls.log" | tail -n 1)
tls_failed=$(sed -nE 's/^ℹ fail ([0-9]+)$/\1/p' "$work/node-test-tls.log" | tail -n 1)
echo "over TLS (https:// emulators, the CA given as ca): ${tls_passed:-0} passed, ${tls_failed:-1} failed in ${tls_seconds} s"
[ "${tls_passed:-0}" -gt 0 ] || tls_failed=1
passed=$(( ${passed:-0} + ${tls_passed:-0} ))
failed=$(( ${failed:-1} + ${tls_failed:-1} ))

step "the README's Node example is examples/readme.mjs, verbatim"
python3 - "$root/README.md" "$here/examples/readme.mjs" <<'PY'
import sys
readme, example = (open(p).read() for p in sys.argv[1:])
if example.strip() not in readme:
    sys.exit("README.md does not contain bindings/node/examples/readme.mjs verbatim")
PY

step "npm pack, then a brand-new project outside the repo installs the tarball"
tarball=$(npm pack --silent --pack-destination "$work" | tail -n 1)
project=$work/project
mkdir -p "$project"
cd "$project"
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error "$work/$tarball" "typescript@$TYPESCRIPT_VERSION" "@types/node@$TYPES_NODE_VERSION"
emulator="$target/debug/roomchat-emulator"
# An emulator for the installed copy's checks; it stops when this shell closes its stdin (fd 3).
coproc EMU { "$emulator" --port 0 --seed-users 3; }
# Kept now: bash unsets EMU_PID as soon as the coprocess ends.
emu_pid=$EMU_PID
read -r ready <&"${EMU[0]}"
export ROOMCHAT_BASE_URL=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["base_url"])' "$ready")
export ROOMCHAT_CHAT_URL=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["chat_url"])' "$ready")
export ROOMCHAT_PRIVATE_KEY=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["private_key"])' "$ready")
export ROOMCHAT_PUBLIC_KEY=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["public_key"])' "$ready")

node -e '
  const { Client, RoomchatError, errorCodes } = require("roomchat")
  const client = Client.fromEnv()
  client.listUsers({ limit: 2 }).then((page) => {
    if (page.total !== 3 || !(new RoomchatError("x") instanceof Error) || errorCodes.rate_limited !== "ROOMCHAT_RATE_LIMITED") process.exit(1)
    console.log("require(\"roomchat\"): ok")
  })
'
cat >esm.mjs <<'JS'
import { Client, RoomchatError, wire } from 'roomchat'
import roomchat from 'roomchat'
const client = Client.fromEnv()
const page = await client.listUsers({ limit: 2 })
if (page.data.length !== 2 || roomchat.Client !== Client || typeof wire.buildRequest !== 'function') process.exit(1)
try {
  await client.deactivateUser({})
} catch (error) {
  if (!(error instanceof RoomchatError) || !(error instanceof TypeError)) process.exit(1)
}
console.log('import { Client } from "roomchat": ok')
JS
node esm.mjs

cat >usage.ts <<'TS'
import { Client, RoomchatError, AbortError, wire, type User, type UserPage, type CreatedUser, type ErrorCode, type TokenUser, type WithResponse } from 'roomchat'

async function main(): Promise<void> {
  const client = new Client({
    privateKey: process.env.ROOMCHAT_PRIVATE_KEY ?? '',
    baseUrl: process.env.ROOMCHAT_BASE_URL ?? '',
    rateLimit: { requests: 600, windowMs: 60_000, whenLimited: 'fail' },
    logger: console,
  })
  const controller = new AbortController()
  const page = await client.listUsers({ limit: 50 }, { signal: controller.signal })
  const names: string[] = page.data.map((u: User) => u.username ?? '?')
  const view: Client = client.withOptions({ timeoutMs: 5_000, maxRetries: 0 })
  const answered: WithResponse<UserPage> = await view.listUsers({ limit: 5 }, { withResponse: true, signal: controller.signal })
  const plain: UserPage = await view.listUsers(undefined, { maxRetries: 1, timeoutMs: 2_000 })
  const requestId: string | undefined = answered.response.requestId
  console.log(answered.data.total, plain.total, requestId, answered.response.status, answered.response.headers['date'], answered.response.attempts)
  const created: CreatedUser = await client.createUser({ username: 'ann', isModerator: true, chatRoom: 'r1' })
  const record: TokenUser = await client.validateAccessToken(created.accessToken)
  const issued: Date | undefined = record.iat
  await client.deactivateUser({ userId: created.userId })
  const back = await client.reactivateUser({ uniqueUserIdentifier: 'crm-1' })
  const done = await client.invalidateAccessToken(created.accessToken)
  names.push(record.id, String(issued?.getTime()), String(back.success && done.success))
  for await (const user of client.users({ pageSize: 100 })) names.push(user.id ?? '')
  for await (const p of client.userPages()) names.push(String(p.total))
  const url: string = client.signInUrl('r1', created.accessToken)
  const state = client.rateLimitState()
  const request = wire.buildRequest('list_users', { limit: 5 }, { baseUrl: 'https://api.example.com' })
  console.log(names.length, url.length, state.remaining, request.url, (await client.listChatRooms()) as unknown[])
  try {
    await client.rawRequest({ method: 'GET', path: '/consumer/api/v1/validate', auth: 'public' })
  } catch (error) {
    if (error instanceof RoomchatError) {
      const code: ErrorCode = error.code
      console.log(code, error.status, error.retryAfterMs, error.eventId, error.path)
    } else if (error instanceof AbortError) {
      console.log(error.cause)
    }
  }
}
void main()
TS
npx tsc --noEmit --strict --target es2022 --module nodenext --moduleResolution nodenext usage.ts
echo "tsc --noEmit --strict usage.ts: ok"

cp "$here/examples/readme.mjs" readme.mjs
node readme.mjs >readme.log
grep -q "already deactivated" readme.log
grep -q "after invalidation: invalid accessToken" readme.log
echo "the README example ran from the installed package: $(wc -l <readme.log) lines"
exec {EMU[1]}>&-
wait "$emu_pid" 2>/dev/null || true
cd "$here"

step "benchmark, short run (figures, not asserted)"
ROOMCHAT_BENCH_N=${ROOMCHAT_NODE_BENCH_N:-300} ROOMCHAT_EMULATOR="$target/release/roomchat-emulator" node bench/list-users.mjs

echo
echo "node: ${passed:-0} passed, ${failed:-1} failed"
[ "${failed:-1}" -eq 0 ] && [ "${passed:-0}" -gt 0 ]
