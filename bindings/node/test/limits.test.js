'use strict'
// Durations and sizes agree with core's limits: every duration at most
// MAX_DURATION (10^9 s = 10^12 ms), a longer one a ROOMCHAT_CONFIGURATION error
// naming the option, a negative or non-finite one a ROOMCHAT_VALIDATION error
// naming it; never a panic, never a silent clamp. A huge maxResponseBytes works.
const test = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { startEmulator } = require('./helpers.js')
const { Client } = require('..')

const MAX_DURATION_MS = 1e12
const base = { privateKey: 'sk_test_limits', baseUrl: 'http://127.0.0.1:1' }
const redis = { requests: 10, windowMs: 1000, redisUrl: 'redis://127.0.0.1:1' }

/** Client options with duration option `name` (`rateLimit.x` for a rate-limit one) set to `ms`. */
const DURATIONS = {
  timeoutMs: (ms) => ({ timeoutMs: ms }),
  connectTimeoutMs: (ms) => ({ connectTimeoutMs: ms }),
  baseBackoffMs: (ms) => ({ baseBackoffMs: ms }),
  maxRetryWaitMs: (ms) => ({ maxRetryWaitMs: ms }),
  windowMs: (ms) => ({ rateLimit: { requests: 10, windowMs: ms } }),
  maxWaitMs: (ms) => ({ rateLimit: { requests: 10, windowMs: 1000, whenLimited: 'wait', maxWaitMs: ms } }),
  redisConnectTimeoutMs: (ms) => ({ rateLimit: { ...redis, redisConnectTimeoutMs: ms } }),
  redisTimeoutMs: (ms) => ({ rateLimit: { ...redis, redisTimeoutMs: ms } }),
  redisBreakerCooldownMs: (ms) => ({ rateLimit: { ...redis, redisBreakerCooldownMs: ms } }),
}

/** The error `new Client(options)` throws (fails the test when it builds). */
function buildError(options) {
  try {
    new Client(options)
  } catch (error) {
    return error
  }
  assert.fail(`built with ${JSON.stringify(options)}`)
}

test('a duration above 10^9 s is a configuration error naming the option', () => {
  for (const [name, options] of Object.entries(DURATIONS)) {
    for (const ms of [MAX_DURATION_MS + 1, 1e13, 1e16, 1e19, 1e300, Number.MAX_VALUE]) {
      const error = buildError({ ...base, ...options(ms) })
      assert.equal(error.code, 'ROOMCHAT_CONFIGURATION', `${name} = ${ms}: ${error.code} ${error.message}`)
      assert.ok(error.message.includes(name), `${name} = ${ms}: ${error.message}`)
      assert.ok(error.message.includes(String(MAX_DURATION_MS)), `${name} = ${ms}: ${error.message}`)
    }
  }
})

test('a negative or non-finite duration is a validation error naming the option', () => {
  for (const [name, options] of Object.entries(DURATIONS)) {
    for (const ms of [-1, -0.5, -1e300, NaN, Infinity, -Infinity]) {
      const error = buildError({ ...base, ...options(ms) })
      assert.equal(error.code, 'ROOMCHAT_VALIDATION', `${name} = ${ms}: ${error.code} ${error.message}`)
      assert.ok(error.message.includes(name), `${name} = ${ms}: ${error.message}`)
    }
  }
})

test('10^9 s exactly is accepted for every duration, and calls work with the longest settings', async (t) => {
  for (const [name, options] of Object.entries(DURATIONS)) {
    assert.doesNotThrow(() => new Client({ ...base, ...options(MAX_DURATION_MS) }), name)
  }
  const emu = await startEmulator(['--seed-users', '2'])
  t.after(() => emu.stop())
  // Each of these is added to the clock somewhere (deadlines, waits, windows): no overflow.
  const client = new Client(
    emu.options({
      timeoutMs: MAX_DURATION_MS,
      connectTimeoutMs: MAX_DURATION_MS,
      maxRetryWaitMs: MAX_DURATION_MS,
      rateLimit: { requests: 600, windowMs: MAX_DURATION_MS, whenLimited: 'wait', maxWaitMs: MAX_DURATION_MS },
    }),
  )
  const page = await client.listUsers()
  assert.equal(page.total, 2)
  const state = client.rateLimitState()
  // The window as counted: the one given plus core's allowance for clock jitter.
  assert.ok(state.windowMs >= MAX_DURATION_MS, JSON.stringify(state))
  assert.equal(state.used, 1)
})

test('maxResponseBytes: Number.MAX_SAFE_INTEGER reads every body; beyond it, a clear error', async (t) => {
  // A chunked answer (no Content-Length): the body is read against the cap + 1.
  const body = JSON.stringify({ items: Array.from({ length: 2000 }, (_, i) => `item-${i}`) })
  const server = http.createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' })
    for (let i = 0; i < body.length; i += 1000) response.write(body.slice(i, i + 1000))
    response.end()
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => server.close(resolve)))
  const baseUrl = `http://127.0.0.1:${server.address().port}`
  const client = new Client({ ...base, baseUrl, maxResponseBytes: Number.MAX_SAFE_INTEGER })
  const raw = await client.rawRequest({ method: 'GET', path: '/chunked', auth: 'none' })
  assert.equal(raw.status, 200)
  assert.equal(raw.body.items.length, 2000)
  assert.equal(raw.body.items[1999], 'item-1999')

  const emu = await startEmulator(['--seed-users', '3'])
  t.after(() => emu.stop())
  const page = await new Client(emu.options({ maxResponseBytes: Number.MAX_SAFE_INTEGER })).listUsers()
  assert.equal(page.data.length, 3)

  for (const bytes of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 2, 2 ** 64, Number.MAX_VALUE, Infinity, NaN, 2n ** 64n - 1n]) {
    const error = buildError({ ...base, maxResponseBytes: bytes })
    assert.equal(error.code, 'ROOMCHAT_VALIDATION', `${bytes}: ${error.code} ${error.message}`)
    assert.ok(error.message.includes('maxResponseBytes'), `${bytes}: ${error.message}`)
    assert.ok(!error.message.includes('18446744073709551615'), `${bytes}: names a maximum JS cannot give: ${error.message}`)
  }
})
