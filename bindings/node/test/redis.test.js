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

// The redis-server to start (REDIS_SERVER, else the one on PATH), or null when
// there is none: the test run installs one; a bare machine skips, as the
// Python tests do.
function findRedisServer() {
  if (process.env.REDIS_SERVER) return process.env.REDIS_SERVER
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || null
  } catch {
    return null
  }
}
const REDIS_SERVER = findRedisServer()

// A redis-server on a free port, up and answering; rejects (never hangs) when
// it cannot start.
async function startRedis() {
  const port = await freePort()
  const child = spawn(REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', PASSWORD],
    { stdio: 'ignore' })
  let failure = null
  child.once('error', (e) => { failure = e })
  // 'exit' does not come when the spawn itself failed ('error' does).
  const exited = new Promise((resolve) => { child.once('exit', resolve); child.once('error', resolve) })
  const redis = {
    url: `redis://:${PASSWORD}@127.0.0.1:${port}/0`,
    async kill() { child.kill('SIGKILL'); await exited },
  }
  for (let i = 0; i < 200; i++) {
    if (failure) throw new Error(`redis-server did not start: ${failure.message}`)
    const up = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (up) return redis
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await redis.kill()
  throw new Error(`redis-server did not answer on port ${port} within 4 s`)
}

const rateLimit = (redis, extra = {}) => ({
  requests: 100, windowMs: 60000, redisUrl: redis.url,
  redisConnectTimeoutMs: 200, redisTimeoutMs: 200, redisBreakerCooldownMs: 300, ...extra,
})

// A bare machine skips; the test run (CI set) never does: there a missing server fails.
const skip = !process.env.CI && REDIS_SERVER === null && 'redis-server is not installed'

test('two processes count in one budget kept in Redis', { skip }, async (t) => {
  const emu = await startEmulator(['--seed-users', '3'])
  t.after(() => emu.stop())
  const redis = await startRedis()
  t.after(() => redis.kill())
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
  // rateLimitState() does no I/O: it shows what this process's last round trip
  // learned, so one more call brings in the other process's 2 starts.
  await client.listUsers({ limit: 1 })
  const state = client.rateLimitState()
  assert.equal(state.backend, 'redis')
  assert.equal(state.degraded, false)
  assert.equal(state.used, 6)
  assert.equal(state.limit, 98)
})

test('Redis dying: local_fallback goes on degraded, fail_closed rejects at once; no password shown', { skip }, async (t) => {
  const emu = await startEmulator(['--seed-users', '3'])
  t.after(() => emu.stop())
  const redis = await startRedis()
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
