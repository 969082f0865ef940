'use strict'
// The rate budget shared through a real redis-server (rateLimit.redisUrl): two
// processes counting in one budget, the state naming the backend, Redis dying
// under local_fallback (calls go on, degraded) and under fail_closed (a typed
// error, quickly), and the password in no output.
const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const { spawn, execFileSync } = require('node:child_process')
const { Client, RoomchatError } = require('..')
const { startEmulator } = require('./helpers')

const PASSWORD = 'node-redis-test-password-7'

async function freePort() {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function startRedis() {
  const port = await freePort()
  const child = spawn(process.env.REDIS_SERVER || 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', PASSWORD],
    { stdio: 'ignore' })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  for (let i = 0; i < 200; i++) {
    const up = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (up) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return {
    url: `redis://:${PASSWORD}@127.0.0.1:${port}/0`,
    async kill() { child.kill('SIGKILL'); await exited },
  }
}

const rateLimit = (redis, extra = {}) => ({
  requests: 100, windowMs: 60000, redisUrl: redis.url,
  redisConnectTimeoutMs: 200, redisTimeoutMs: 200, redisBreakerCooldownMs: 300, ...extra,
})

test('two processes count in one budget kept in Redis', async (t) => {
  const emu = await startEmulator(['--seed-users', '3'])
  const redis = await startRedis()
  t.after(async () => { await redis.kill(); await emu.stop() })
  const client = new Client(emu.options({ rateLimit: rateLimit(redis, { onRedisError: 'fail_closed' }) }))
  for (let i = 0; i < 3; i++) await client.listUsers({ limit: 1 })
  // Another Node process, same key, same Redis: its 2 calls count in this budget.
  const script = `
    const { Client } = require(${JSON.stringify(require.resolve('..'))})
    const options = JSON.parse(process.argv[1])
    const client = new Client(options)
    ;(async () => { for (let i = 0; i < 2; i++) await client.listUsers({ limit: 1 }) })()
      .then(() => process.exit(0), (e) => { console.error(e); process.exit(1) })`
  execFileSync(process.execPath, ['-e', script, JSON.stringify(emu.options({ rateLimit: rateLimit(redis, { onRedisError: 'fail_closed' }) }))], { stdio: 'inherit', timeout: 30000 })
  const state = client.rateLimitState()
  assert.equal(state.backend, 'redis')
  assert.equal(state.degraded, false)
  assert.equal(state.used, 5)
  assert.equal(state.limit, 98)
})

test('Redis dying: local_fallback goes on degraded, fail_closed rejects at once; no password shown', async (t) => {
  const emu = await startEmulator(['--seed-users', '3'])
  const redis = await startRedis()
  t.after(() => emu.stop())
  const fallback = new Client(emu.options({ maxRetries: 0, rateLimit: rateLimit(redis, { onRedisError: 'local_fallback', redisKeyPrefix: 'node-fallback' }) }))
  const closed = new Client(emu.options({ maxRetries: 0, rateLimit: rateLimit(redis, { onRedisError: 'fail_closed', redisKeyPrefix: 'node-closed' }) }))
  await fallback.listUsers({ limit: 1 })
  await closed.listUsers({ limit: 1 })
  await redis.kill()
  const started = process.hrtime.bigint()
  const page = await fallback.listUsers({ limit: 1 })
  assert.equal(page.data.length, 1)
  assert.equal(fallback.rateLimitState().degraded, true)
  await assert.rejects(closed.listUsers({ limit: 1 }), (error) => {
    assert.ok(error instanceof RoomchatError)
    assert.equal(error.code, 'ROOMCHAT_BUDGET_UNAVAILABLE')
    for (const text of [error.message, error.stack, String(error), JSON.stringify(error)]) {
      assert.ok(!text.includes(PASSWORD), text)
    }
    return true
  })
  const tookMs = Number(process.hrtime.bigint() - started) / 1e6
  assert.ok(tookMs < 2000, `${tookMs} ms with Redis dead`)
})

test('Redis options are checked', () => {
  const options = { privateKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:1' }
  assert.throws(() => new Client({ ...options, rateLimit: { requests: 10, windowMs: 1000, onRedisError: 'fail_closed' } }),
    (error) => error.code === 'ROOMCHAT_VALIDATION' && /redisUrl/.test(error.message))
  assert.throws(() => new Client({ ...options, rateLimit: { requests: 10, windowMs: 1000, redisUrl: 'redis://127.0.0.1:1', onRedisError: 'sometimes' } }),
    (error) => error.code === 'ROOMCHAT_VALIDATION')
})
