'use strict'
// The package README's Quickstart (examples/readme.mjs, shown verbatim in bindings/node/README.md) runs against the emulator.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { startEmulator } = require('./helpers.js')

test('the README example runs', async (t) => {
  const emu = await startEmulator(['--seed-users', '3'])
  t.after(() => emu.stop())
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(__dirname, '..', 'examples', 'readme.mjs')], {
    env: {
      ...process.env,
      ...emu.env,
      ROOMCHAT_PRIVATE_KEY: emu.privateKey,
      ROOMCHAT_BASE_URL: emu.baseUrl,
      ROOMCHAT_CHAT_URL: emu.chatUrl,
      ROOMCHAT_PUBLIC_KEY: emu.publicKey,
    },
  })
  const lines = stdout.trim().split('\n')
  assert.match(lines[0], new RegExp(`^sign Ann in at ${emu.chatUrl}/bbNiVFoXm\\?accessToken=`))
  assert.equal(lines[1], '4 users; the first is seed-user-1')
  assert.deepEqual(lines.slice(2, 6), ['  seed-user-1', '  seed-user-2', '  seed-user-3', '  ann'])
  assert.equal(lines[6], 'already deactivated (400 user not found)')
  assert.equal(lines[7], "eve's token signs in eve")
  assert.equal(lines[8], 'after invalidation: invalid accessToken')
  assert.equal(lines.length, 9)
  const [entry] = await emu.journal()
  assert.match(entry.user_agent, /my-backend\/1\.4$/)
})

// The README's Observability example (examples/observability.mjs, shown verbatim there) prints its spans.
test('the README Observability example runs and prints the call, its attempt and the application span', async (t) => {
  const readme = require('node:fs').readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8')
  const example = require('node:fs').readFileSync(path.join(__dirname, '..', 'examples', 'observability.mjs'), 'utf8')
  assert.ok(readme.includes(`\`\`\`js\n${example}\`\`\``), 'README.md does not show examples/observability.mjs verbatim')
  const emu = await startEmulator(['--seed-users', '3'])
  t.after(() => emu.stop())
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(__dirname, '..', 'examples', 'observability.mjs')], {
    env: { ...process.env, ...emu.env, ROOMCHAT_PRIVATE_KEY: emu.privateKey, ROOMCHAT_BASE_URL: emu.baseUrl },
  })
  // The console exporter prints each span as an object, when it ends: innermost first.
  const field = (name) => [...stdout.matchAll(new RegExp(`^  ${name}: (.*),$`, 'gm'))].map((m) => m[1])
  assert.deepEqual(field('name'), ["'GET /consumer/api/v2/users'", "'roomchat list_users'", "'nightly user report'"], stdout)
  assert.deepEqual(field('kind'), ['2', '0', '0'])
  const ids = field('id')
  const traceIds = field('traceId')
  assert.equal(new Set(traceIds).size, 1, 'one trace')
  assert.match(stdout, /'url\.template': '\/consumer\/api\/v2\/users'/)
  assert.match(stdout, /'http\.response\.status_code': 200/)
  assert.match(stdout, /'roomchat\.operation': 'list_users'/)
  assert.match(stdout, /'report\.users': 3/)
  // Parents: the attempt's is the call, the call's is the application's span.
  const parents = [...stdout.matchAll(/parentSpanContext: (?:\{[^}]*spanId: '([0-9a-f]{16})'[^}]*\}|undefined)/g)].map((m) => m[1] && `'${m[1]}'`)
  assert.deepEqual(parents, [ids[1], ids[2], undefined], stdout)
  const [entry] = await emu.journal()
  const sent = entry.headers.find(([name]) => name === 'traceparent')[1]
  assert.equal(sent, `00-${traceIds[0].slice(1, -1)}-${ids[0].slice(1, -1)}-01`, 'the request carried the attempt span’s context')
})
