#!/usr/bin/env bash
# Clean room, npm: with no cargo or rustc on PATH, a fresh Node project installs
# `roomchat` BY NAME from a local npm registry (verdaccio, with this run's main
# and Linux platform packages published to it); npm picks the platform package
# itself. Then: require() and import, `tsc --noEmit --strict` on a TypeScript
# file, the Quickstart of the README that npm shows (read from the installed
# package) against the emulator binary, the `roomchat` command (npx, and
# npm install -g; check_roomchat_command in env.sh), and the error a missing
# platform package gives.
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
# shellcheck source=scripts/dist/registries.sh
source "$(dirname "$0")/registries.sh"
TYPESCRIPT_VERSION=5.9.3
TYPES_NODE_VERSION=20.19.43
work=$(mktemp -d)
trap 'stop_registries; rm -rf "$work"' EXIT
version=$(workspace_version)

start_verdaccio

export PATH
PATH=$(path_without_rust)
if command -v cargo || command -v rustc; then echo "cargo or rustc is still on PATH" >&2; exit 1; fi
echo "PATH has no cargo and no rustc"

project=$work/project
mkdir -p "$project"
cd "$project"
npm init -y >/dev/null
# This project's registry is the local one, as a user's .npmrc would name a company registry.
printf 'registry=%s\n' "$npm_url" >.npmrc
npm install --no-audit --no-fund --loglevel=error --cache "$work/npm-cache" \
  roomchat "typescript@$TYPESCRIPT_VERSION" "@types/node@$TYPES_NODE_VERSION"
installed=$(ls -d node_modules/roomchat* | sed 's|node_modules/||' | tr '\n' ' ')
echo "installed from $npm_url: $installed"
[ "$(node -p 'require("roomchat/package.json").version')" = "$version" ]
# Exactly the package for this machine, not the others.
[ "$installed" = "roomchat roomchat-linux-x64-gnu " ]

start_emulator "$target/debug/roomchat-emulator" 3
node -e '
  const { Client, RoomchatError, errorCodes } = require("roomchat")
  const client = Client.fromEnv()
  client.listUsers({ limit: 2 }).then((page) => {
    if (page.total !== 3 || !(new RoomchatError("x") instanceof Error) || errorCodes.rate_limited !== "ROOMCHAT_RATE_LIMITED") process.exit(1)
    console.log(`require("roomchat"): ok, ${page.total} users, addon ${require.resolve("roomchat-linux-x64-gnu")}`)
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
import { Client, RoomchatError, AbortError, wire, type User, type CreatedUser, type ErrorCode, type TokenUser } from 'roomchat'
import type { Acknowledged, Bot, BotAnswer, UpdateBotParams, WithResponse } from 'roomchat'

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
  // The generated operations (operations.d.ts): records, params, withResponse overloads.
  const ejected: Acknowledged = await client.ejectAllUsers('r1', { signal: controller.signal })
  const changes: UpdateBotParams = { name: 'helper', trigger: 'mention', messageHistoryLimit: 20 }
  const answer: BotAnswer = await client.updateBot('64d1f0c2a9e8b7c6d5e4f3a2', changes, { timeoutMs: 5000 })
  const bot: Bot | undefined = answer.bot
  const seen: WithResponse<BotAnswer> = await client.withOptions({ maxRetries: 0 }).updateBot('b1', undefined, { withResponse: true })
  names.push(String(ejected.success), bot?.id ?? '', bot?.webhookURL ?? '', String(bot?.extra.__v), String(seen.response.status))
  wire.buildRequest('update_bot', { botId: 'b1', enabled: false })
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

# The README's Quickstart, as npm shows it (the installed package's README.md).
node -e '
  const readme = require("fs").readFileSync("node_modules/roomchat/README.md", "utf8")
  const quickstart = readme.split("\n## Quickstart")[1]
  process.stdout.write(/```js\n([\s\S]*?)```/.exec(quickstart)[1])
' >readme.mjs
node readme.mjs | tee readme.log
# The `roomchat` command (package.json's bin: the addon runs the Rust command line): npx in
# the project, and npm install -g (into a prefix of its own) from the same registry (a global
# install reads no project .npmrc: --registry).
[ "$(npx --no-install roomchat --version)" = "roomchat $version" ]
[ "$(npx --no-install roomchat list-users --limit 1 --output json | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).total')" -gt 0 ]
echo "npx roomchat: --version and list-users ran"
npm install -g --prefix "$work/global" --registry "$npm_url" --no-audit --no-fund --loglevel=error --cache "$work/npm-cache" roomchat
[ "$(PATH=$work/global/bin:$PATH command -v roomchat)" = "$work/global/bin/roomchat" ]
check_roomchat_command "$version" "$work/global/bin/roomchat"
stop_emulator
grep -qE '^sign Ann in at .*/bbNiVFoXm\?accessToken=' readme.log
grep -qx '4 users; the first is seed-user-1' readme.log
grep -qx 'already deactivated (400 user not found)' readme.log
grep -qx "eve's token signs in eve" readme.log
grep -qx 'after invalidation: invalid accessToken' readme.log

# A machine whose platform package is not installed (npm left out linux-arm64-gnu
# here, as it does on x64): the error names the platform and the package.
node -e '
  Object.defineProperty(process, "arch", { value: "arm64" })
  try {
    require("roomchat")
    process.exit(1)
  } catch (error) {
    console.log(`as if on arm64: ${error.code}: ${error.message}`)
    if (error.code !== "ERR_ROOMCHAT_NATIVE_ADDON" || !error.message.includes("linux-arm64-gnu is not installed: the package roomchat-linux-arm64-gnu is missing")) process.exit(1)
  }
'
node -e '
  Object.defineProperty(process, "arch", { value: "riscv64" })
  try {
    require("roomchat")
    process.exit(1)
  } catch (error) {
    console.log(`as if on riscv64: ${error.code}: ${error.message}`)
    if (!/^roomchat has no native addon for this platform \(linux-riscv64-gnu, Node v[0-9.]+\): prebuilt addons exist for .*\blinux-x64-gnu\b.*\bwin32-x64-msvc\b/.test(error.message)) process.exit(1)
  }
'
echo "clean room (npm): roomchat $version and roomchat-linux-x64-gnu installed by name from the registry, no Rust on PATH; require, import, tsc --strict and the README's Quickstart ran: $(wc -l <readme.log) lines; the roomchat command ran (npx, npm install -g)"
