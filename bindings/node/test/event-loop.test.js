'use strict'
// Synchronous methods never make the event loop wait for I/O: not for a page
// fetch in flight (an iterator's resume()), not for Redis (rateLimitState()).
const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const { monitorEventLoopDelay } = require('node:perf_hooks')
const { startEmulator, msSince } = require('./helpers.js')
const { Client, inFlightCalls } = require('..')

const USERS = '/consumer/api/v2/users'
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(what, check, timeoutMs) {
  const start = process.hrtime.bigint()
  while (!(await check())) {
    if (msSince(start) > timeoutMs) assert.fail(`${what}: not within ${timeoutMs} ms`)
    await sleep(5)
  }
}

/** How long `f()` kept the JS thread, in ms (a synchronous call blocks the loop for all of it). */
function blockedMs(f) {
  const start = process.hrtime.bigint()
  const value = f()
  return [msSince(start), value]
}

test('resume() while a page is being fetched does not wait for the fetch', async (t) => {
  const emu = await startEmulator(['--seed-users', '3'])
  t.after(() => emu.stop())
  const client = new Client(emu.options({ maxRetries: 0 }))
  const DELAY_MS = 1500
  const iterators = {
    users: [() => client.users({ pageSize: 2 }), (step) => step.value.username],
    userPages: [() => client.userPages({ pageSize: 2 }), (step) => step.value.data[0].username],
  }
  for (const [name, [make, firstName]] of Object.entries(iterators)) {
    await emu.admin('DELETE', '/journal')
    await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'delay', ms: DELAY_MS } })
    const it = make()
    const fetched = process.hrtime.bigint()
    const first = it.next()
    // The page's request has arrived: a pool thread is in the fetch, holding the iterator.
    await until('the page request arrives', async () => (await emu.arrivals('GET', USERS)) === 1, 2000)
    const [ms] = blockedMs(() => it.resume())
    console.log(`${name}: resume() during a ${DELAY_MS} ms page fetch blocked the event loop ${ms.toFixed(2)} ms`)
    assert.ok(ms < 50, `${name}: resume() blocked the event loop ${ms.toFixed(0)} ms`)
    const step = await first
    assert.ok(msSince(fetched) >= DELAY_MS - 50, 'the fetch was delayed as asked')
    assert.equal(step.done, false)
    assert.equal(firstName(step), 'seed-user-1')
    // A resume asked for before any error changes nothing: iteration goes on.
    const second = await it.next()
    assert.equal(second.done, false)
    await it.return()
  }
})

/**
 * A black-holed Redis: a loopback socket that accepts connections and never
 * answers (as a Redis behind a dead link or a stopped process would).
 */
async function blackHoleRedis(t) {
  const sockets = new Set()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  return `redis://127.0.0.1:${server.address().port}/0`
}

test('rateLimitState() with 16 calls stuck on a black-holed Redis answers at once', { timeout: 120000 }, async (t) => {
  const emu = await startEmulator(['--seed-users', '3'])
  t.after(() => emu.stop())
  const redisUrl = await blackHoleRedis(t)
  const client = new Client(
    emu.options({
      maxRetries: 0,
      rateLimit: {
        requests: 100,
        windowMs: 60000,
        redisUrl,
        onRedisError: 'fail_closed',
        redisConnectTimeoutMs: 1000,
        redisTimeoutMs: 1000,
        redisBreakerCooldownMs: 60000,
      },
    }),
  )
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  const calls = Array.from({ length: 16 }, () => client.listUsers({ limit: 1 }).then(() => 'sent', (error) => error.code))
  // Every call is now in the rate-limit gate, on its way to Redis.
  await sleep(200)
  const stateMs = []
  for (let i = 0; i < 5 && inFlightCalls() > 0; i++) {
    const [ms, state] = blockedMs(() => client.rateLimitState())
    stateMs.push(ms)
    assert.equal(state.backend, 'redis')
    await sleep(20)
  }
  const outcomes = await Promise.all(calls)
  histogram.disable()
  const maxStateMs = Math.max(...stateMs)
  const maxBlockMs = histogram.max / 1e6
  console.log(
    `rateLimitState() with 16 calls stuck on a black-holed Redis: longest of ${stateMs.length} calls ${maxStateMs.toFixed(2)} ms; ` +
      `event loop blocked at most ${maxBlockMs.toFixed(1)} ms`,
  )
  assert.ok(stateMs.length > 0, 'the calls were over before rateLimitState() could be called among them')
  assert.ok(outcomes.every((o) => o === 'ROOMCHAT_BUDGET_UNAVAILABLE'), JSON.stringify(outcomes))
  assert.equal(await emu.arrivals('GET', USERS), 0, 'fail_closed: nothing was sent')
  assert.ok(maxStateMs < 50, `rateLimitState() blocked the event loop ${maxStateMs.toFixed(0)} ms`)
  assert.ok(maxBlockMs < 250, `the event loop was blocked ${maxBlockMs.toFixed(0)} ms`)
})
