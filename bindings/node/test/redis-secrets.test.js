'use strict'
// A Redis password, in every form the redis crate parses (user-info, and the
// `pass=` / `password=` query of a unix-socket URL), appears in no output of
// the package: util.inspect of the client, the rate-limit state, errors (a
// fail_closed client with an unreachable Redis), the logger's lines and
// NODE_DEBUG=roomchat's. Needs no redis-server: Redis is unreachable on purpose.
const test = require('node:test')
const assert = require('node:assert/strict')
const os = require('node:os')
const path = require('node:path')
const util = require('node:util')
const { spawnSync } = require('node:child_process')
const { startEmulator } = require('./helpers.js')
const { Client } = require('..')

const SECRET = 'node-redis-secret-5813'
// A socket path nothing listens on.
const SOCKET = path.join(os.tmpdir(), `roomchat-no-redis-${process.pid}.sock`)
const URLS = {
  'user-info without a user': `redis://:${SECRET}@127.0.0.1:1/0`,
  'user-info with a user': `redis://someone:${SECRET}@127.0.0.1:1/0`,
  'unix socket, ?pass=': `redis+unix://${SOCKET}?pass=${SECRET}`,
  'unix socket, ?password=': `redis+unix://${SOCKET}?password=${SECRET}`,
}

const rateLimit = (redisUrl, onRedisError) => ({
  requests: 100,
  windowMs: 60000,
  redisUrl,
  onRedisError,
  redisKeyPrefix: `secrets-${onRedisError}`,
  redisConnectTimeoutMs: 200,
  redisTimeoutMs: 200,
  redisBreakerCooldownMs: 300,
})

/** Fails naming each text (of `texts`, by label) that holds the secret. */
function assertNoSecret(form, texts) {
  const leaks = Object.entries(texts).filter(([, text]) => String(text).includes(SECRET))
  const shown = leaks.map(([label]) => label).join(', ')
  const example = leaks.length > 0 ? String(leaks[0][1]).split('\n').find((line) => line.includes(SECRET)) : ''
  assert.ok(leaks.length === 0, `${form}: the password is shown in ${shown}; e.g. ${example}`)
}

for (const [form, redisUrl] of Object.entries(URLS)) {
  test(`Redis password (${form}) in no output`, async (t) => {
    const emu = await startEmulator(['--seed-users', '2'])
    t.after(() => emu.stop())
    const lines = []
    const logger = { debug: (line) => lines.push(line), warn: (line) => lines.push(line) }
    const texts = {}

    const closed = new Client(emu.options({ maxRetries: 0, logger, rateLimit: rateLimit(redisUrl, 'fail_closed') }))
    texts['util.inspect(client)'] = util.inspect(closed, { showHidden: true, depth: null })
    await assert.rejects(closed.listUsers({ limit: 1 }), (error) => {
      assert.equal(error.code, 'ROOMCHAT_BUDGET_UNAVAILABLE', error.message)
      assert.match(error.message, /Redis/)
      Object.assign(texts, {
        'error.message': error.message,
        'error.detail': error.detail,
        'error.stack': error.stack,
        'String(error)': String(error),
        'JSON.stringify(error)': JSON.stringify(error),
        'util.inspect(error)': util.inspect(error, { showHidden: true, depth: null }),
      })
      return true
    })
    texts['rateLimitState() (fail_closed)'] = JSON.stringify(closed.rateLimitState())

    const fallback = new Client(emu.options({ maxRetries: 0, logger, rateLimit: rateLimit(redisUrl, 'local_fallback') }))
    assert.equal((await fallback.listUsers({ limit: 1 })).data.length, 1)
    const state = fallback.rateLimitState()
    assert.equal(state.backend, 'redis')
    texts['rateLimitState() (local_fallback)'] = JSON.stringify(state)
    assert.ok(lines.some((line) => /redis/i.test(line)), `no log line about Redis: ${JSON.stringify(lines)}`)
    lines.forEach((line, i) => (texts[`logger line ${i + 1}`] = line))
    assertNoSecret(form, texts)
  })
}

test('Redis passwords in no NODE_DEBUG=roomchat output', async (t) => {
  const emu = await startEmulator(['--seed-users', '2'])
  t.after(() => emu.stop())
  // No logger: with NODE_DEBUG=roomchat the package writes core's log lines to stderr.
  const script = `
    const util = require('node:util')
    const { Client } = require(${JSON.stringify(path.resolve(__dirname, '..'))})
    const [options, urls, rateLimits] = JSON.parse(process.argv[1])
    ;(async () => {
      for (const url of urls) {
        for (const onRedisError of ['fail_closed', 'local_fallback']) {
          const client = new Client({ ...options, maxRetries: 0, rateLimit: { ...rateLimits[onRedisError], redisUrl: url } })
          console.log(util.inspect(client))
          try {
            await client.listUsers({ limit: 1 })
            console.log('sent')
          } catch (error) {
            console.log(error.code, error.stack, JSON.stringify(error))
          }
          console.log(JSON.stringify(client.rateLimitState()))
        }
      }
    })().catch((error) => { console.error('unexpected', error); process.exit(1) })`
  const limits = { fail_closed: rateLimit('', 'fail_closed'), local_fallback: rateLimit('', 'local_fallback') }
  const run = spawnSync(process.execPath, ['-e', script, JSON.stringify([emu.options(), Object.values(URLS), limits])], {
    env: { ...process.env, NODE_DEBUG: 'roomchat' },
    encoding: 'utf8',
    timeout: 30000,
  })
  assert.equal(run.status, 0, run.stderr)
  const outLines = run.stdout.split('\n')
  const sent = outLines.filter((line) => line === 'sent').length
  const refused = outLines.filter((line) => line.startsWith('ROOMCHAT_BUDGET_UNAVAILABLE ')).length
  assert.deepEqual([sent, refused], [4, 4], run.stdout)
  assert.match(run.stderr, /ROOMCHAT \d+: .*[Rr]edis/, 'NODE_DEBUG=roomchat printed no line about Redis')
  assertNoSecret('NODE_DEBUG=roomchat', { stdout: run.stdout, stderr: run.stderr })
})

test('a Redis URL the client refuses is named without its password', () => {
  const base = { privateKey: 'sk_test_secrets', baseUrl: 'http://127.0.0.1:1' }
  for (const redisUrl of [`redis://:${SECRET}@127.0.0.1:notaport/0`, `redis://someone:${SECRET}@[::1/0`, `rediss+unix://${SOCKET}?pass=${SECRET}`]) {
    let error
    try {
      new Client({ ...base, rateLimit: { requests: 10, windowMs: 1000, redisUrl } })
    } catch (e) {
      error = e
    }
    assert.ok(error, `accepted: a URL of the same form as ${redisUrl.replace(SECRET, '***')}`)
    assert.equal(error.code, 'ROOMCHAT_CONFIGURATION', error.message)
    assertNoSecret(redisUrl.replace(SECRET, '***'), { message: error.message, stack: error.stack, json: JSON.stringify(error) })
  }
})

// Issue 37, item 8: a password holding `?`, `#` or `/` written as is, in each form of URL
// (one server, cluster, sentinel), and a `pass=` after a second `?`: in no configuration
// error, nor in util.inspect of a client built with it.
test('a Redis password holding ?, # or / is in no configuration error, in any form of URL', () => {
  for (const special of ['?', '#', '/']) {
    const password = `S3cr${special}t9${SECRET}`
    for (const redisUrl of [
      `redis://:${password}@127.0.0.1:notaport/0`,
      `redis+cluster://:${password}@h:1/2`,
      `redis+sentinel://:${password}@s1`,
      `rediss+cluster://h:1/x?=y?pass=${SECRET}&z=/2`,
    ]) {
      let caught
      try {
        new Client({ privateKey: 'sk_test_redis_special', baseUrl: 'http://127.0.0.1:9', rateLimit: rateLimit(redisUrl, 'fail_closed') })
      } catch (error) {
        caught = error
      }
      assert.ok(caught, `${redisUrl.replace(SECRET, '<secret>')}: built`)
      assert.equal(caught.code, 'ROOMCHAT_CONFIGURATION', caught.message)
      assertNoSecret(`config error (${special})`, {
        'error.message': caught.message,
        'error.stack': caught.stack,
        'util.inspect(error)': util.inspect(caught, { showHidden: true, depth: null }),
      })
    }
    const built = new Client({
      privateKey: 'sk_test_redis_special',
      baseUrl: 'http://127.0.0.1:9',
      rateLimit: rateLimit(`redis+cluster://u:${password}@127.0.0.1:1,127.0.0.1:2`, 'fail_closed'),
    })
    assertNoSecret(`client (${special})`, { 'util.inspect(client)': util.inspect(built, { showHidden: true, depth: null }) })
  }
})
