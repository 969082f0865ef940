'use strict'
// Debug output: NODE_DEBUG=roomchat (util.debuglog) or an injected logger,
// one line per attempt and per retry or rate-limit wait, as core renders them.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { startEmulator } = require('./helpers.js')
const { Client } = require('..')

const USERS = '/consumer/api/v2/users'

function run(script, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

test('NODE_DEBUG=roomchat prints one line per attempt, retry and rate-limit wait, never the key', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 503, body: '' } })
  const script = `
    const { Client } = require(${JSON.stringify(path.resolve(__dirname, '..'))})
    const client = new Client({ ...${JSON.stringify(emu.options())}, baseBackoffMs: 5,
      rateLimit: { requests: 2, windowMs: 300 } })
    ;(async () => {
      await client.listUsers({ limit: 5 })   // 503, retry, 200
      await client.listUsers({ limit: 6 })   // waits for the budget (2 starts per 315 ms, both spent)
      console.log('ok')
    })()
  `
  const quiet = await run(script, { NODE_DEBUG: '' })
  assert.equal(quiet.code, 0, quiet.stderr)
  assert.equal(quiet.stderr, '')
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 503, body: '' } })
  const loud = await run(script, { NODE_DEBUG: 'roomchat' })
  assert.equal(loud.code, 0, loud.stderr)
  assert.equal(loud.stdout.trim(), 'ok')
  const lines = loud.stderr.trim().split('\n')
  assert.ok(lines.every((line) => /^ROOMCHAT \d+: /.test(line)), loud.stderr)
  const text = lines.map((line) => line.replace(/^ROOMCHAT \d+: /, ''))
  const attempts = text.filter((l) => /^GET \/consumer\/api\/v2\/users\?auth=REDACTED&limit=\d -> \d+ \(attempt \d, [\d.]+ ms\)$/.test(l))
  const retries = text.filter((l) => l.startsWith('retrying GET /consumer/api/v2/users?auth=REDACTED&limit=5 in '))
  const waits = text.filter((l) => l.startsWith('waiting ') && l.includes('for the rate-limit budget of this key'))
  assert.equal(attempts.length, 3, loud.stderr)
  assert.match(attempts[0], /-> 503 \(attempt 1,/)
  assert.match(attempts[1], /-> 200 \(attempt 2,/)
  assert.equal(retries.length, 1, loud.stderr)
  assert.ok(waits.length >= 1, loud.stderr)
  assert.equal(text.length, attempts.length + retries.length + waits.length, loud.stderr)
  assert.ok(!loud.stderr.includes(emu.privateKey))
})

test('an injected logger gets debug lines for attempts and warn lines for retries, in order', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const got = []
  const client = new Client(
    emu.options({
      baseBackoffMs: 5,
      logger: { debug: (line) => got.push(['debug', line]), warn: (line) => got.push(['warn', line]) },
    }),
  )
  await emu.fault({ method: 'POST', path: '/consumer/api/v1/user', times: 1, action: { kind: 'respond', status: 429, body: '', headers: { 'Retry-After': '0' } } })
  await client.createUser({ username: 'jon' })
  // The lines of a call come before its result (one channel, in order).
  assert.deepEqual(
    got.map(([level, line]) => [level, line.replace(/[\d.]+ (ms|s)\b/g, 'T')]),
    [
      ['debug', 'POST /consumer/api/v1/user?auth=REDACTED -> 429 (attempt 1, T)'],
      ['warn', 'retrying POST /consumer/api/v1/user?auth=REDACTED in T after rate_limited (HTTP 429) (attempt 1 failed)'],
      ['debug', 'POST /consumer/api/v1/user?auth=REDACTED -> 200 (attempt 2, T)'],
    ],
  )
  // warn only: attempts are not even built
  const warnings = []
  const quiet = new Client(emu.options({ logger: { warn: (line) => warnings.push(line) } }))
  await quiet.listUsers()
  assert.deepEqual(warnings, [])
})
