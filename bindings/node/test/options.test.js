'use strict'
// Per-call options ({ signal, timeoutMs, maxRetries, ... } last, and
// client.withOptions), the answer beside the result ({ withResponse: true }),
// and ROOMCHAT_LOG, against the emulator's journal and connection counts.
const test = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const https = require('node:https')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { startEmulator, msSince } = require('./helpers.js')
const { Client, RoomchatError, RoomchatValidationError, AbortError } = require('..')

const USERS = '/consumer/api/v2/users'
const unavailable = (times = 1) => ({ method: 'GET', path: USERS, times, action: { kind: 'respond', status: 503, body: '' } })
const slow = (ms) => ({ method: 'GET', path: USERS, times: 1, action: { kind: 'delay', ms } })

async function lastRequestId(emu) {
  const journal = await emu.journal()
  return `req_${journal[journal.length - 1].seq}`
}

/**
 * An admin request on a connection of its own (`agent: false`: no keep-alive),
 * so that the emulator's connection count is exact: a reset zeroes it, and the
 * request that reads it adds one.
 */
function adminOnce(emu, method, route) {
  const url = new URL(`${emu.info.admin_url}${route}`)
  const transport = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const req = transport.request(url, { method, agent: false, ...(emu.ca ? { ca: emu.ca } : {}) }, (response) => {
      let text = ''
      response.on('data', (chunk) => (text += chunk))
      response.on('end', () => resolve(text ? JSON.parse(text) : null))
      response.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

async function rejects(promise) {
  try {
    await promise
  } catch (error) {
    return error
  }
  assert.fail('the call did not fail')
}

// ---- views and per-call settings -------------------------------------------------------

test('a view counts in the parent budget and shares its connection', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  const view = client.withOptions({ timeoutMs: 5000, maxRetries: 0 })
  assert.ok(view instanceof Client && view !== client)
  await adminOnce(emu, 'DELETE', '/connections')
  await client.listUsers()
  await view.listUsers()
  await view.listChatRooms()
  await client.listUsers(undefined, { timeoutMs: 4000 }) // per-call settings: the same pool too
  assert.equal(client.rateLimitState().used, 4, 'the parent sees its view calls')
  assert.equal(view.rateLimitState().used, 4)
  // One connection for all of them, plus the one the admin request below comes on.
  assert.equal((await adminOnce(emu, 'GET', '/connections')).accepted, 2)
  assert.equal(view.baseUrl, client.baseUrl)
})

test('maxRetries 0 makes one attempt on a 503 while the parent retries', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options({ baseBackoffMs: 5 }))
  await emu.fault(unavailable(3))
  const error = await rejects(client.listUsers(undefined, { maxRetries: 0 }))
  assert.ok(error instanceof RoomchatError)
  assert.equal(error.code, 'ROOMCHAT_SERVER_ERROR')
  assert.equal(await emu.arrivals('GET', USERS), 1, 'one attempt, no retry')
  await client.listUsers() // the parent 2 retries: 503, 503, then the answer
  assert.equal(await emu.arrivals('GET', USERS), 4)

  const once = client.withOptions({ maxRetries: 0 })
  await emu.fault(unavailable(1))
  assert.equal((await rejects(once.listUsers())).status, 503)
  assert.equal(await emu.arrivals('GET', USERS), 5)
  // A view's iterators carry its settings.
  await emu.fault(unavailable(1))
  assert.equal((await rejects(once.users().next())).status, 503)
  assert.equal(await emu.arrivals('GET', USERS), 6)
  await emu.fault(unavailable(1))
  assert.equal((await rejects(client.userPages(undefined, { maxRetries: 0 }).next())).status, 503)
  assert.equal(await emu.arrivals('GET', USERS), 7)
})

test('a per-call or view timeout holds against a slow answer; the parent keeps its own', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options({ timeoutMs: 10000 }))
  for (const call of [
    () => client.listUsers(undefined, { timeoutMs: 300, maxRetries: 0 }),
    () => client.withOptions({ timeoutMs: 300, maxRetries: 0 }).listUsers(),
  ]) {
    await emu.fault(slow(1500))
    const started = process.hrtime.bigint()
    const error = await rejects(call())
    const took = msSince(started)
    assert.equal(error.code, 'ROOMCHAT_TIMEOUT')
    assert.ok(took >= 280 && took < 1200, `the 300 ms timeout, not the parent 10 s: ${took} ms`)
  }
  await emu.fault(slow(600))
  await client.listUsers() // within the parent timeout
})

test('settings and signal together: aborting still rejects at once', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  await emu.fault(slow(1500))
  const controller = new AbortController()
  const call = client.listUsers(undefined, { signal: controller.signal, maxRetries: 0, withResponse: true })
  setTimeout(() => controller.abort(), 100)
  assert.ok((await rejects(call)) instanceof AbortError)
})

test('bad settings are typed errors and nothing is sent', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  const configuration = [{ timeoutMs: 0 }, { connectTimeoutMs: 0 }, { timeoutMs: 1e13 }, { maxRetryWaitMs: 1e13 }]
  for (const settings of configuration) {
    assert.equal((await rejects(client.listUsers(undefined, settings))).code, 'ROOMCHAT_CONFIGURATION', JSON.stringify(settings))
    assert.throws(() => client.withOptions(settings), (e) => e instanceof RoomchatError && e.code === 'ROOMCHAT_CONFIGURATION')
  }
  const invalid = [{ timeoutMs: -1 }, { timeoutMs: 'soon' }, { maxRetries: 101 }, { maxRetries: 1.5 }, { timeoutMs: Infinity }]
  for (const settings of invalid) {
    const error = await rejects(client.listUsers(undefined, settings))
    assert.ok(error instanceof RoomchatValidationError, `${JSON.stringify(settings)}: ${error}`)
    assert.throws(() => client.withOptions(settings), RoomchatValidationError)
  }
  assert.ok((await rejects(client.listUsers(undefined, { retries: 1 }))) instanceof RoomchatValidationError)
  assert.ok((await rejects(client.listUsers(undefined, { withResponse: 'yes' }))) instanceof RoomchatValidationError)
  assert.throws(() => client.withOptions({ signal: AbortSignal.timeout(10) }), RoomchatValidationError)
  assert.throws(() => client.withOptions({ withResponse: true }), RoomchatValidationError)
  assert.throws(() => client.withOptions(null), RoomchatValidationError)
  await assert.rejects(client.users(undefined, { withResponse: true }).next(), RoomchatValidationError)
  assert.equal((await emu.journal()).length, 0, 'nothing was sent')
})

// ---- withResponse --------------------------------------------------------------------------

test('withResponse gives the answer beside the result', async (t) => {
  const emu = await startEmulator(['--seed-users', '2'])
  t.after(() => emu.stop())
  const client = new Client(emu.options({ baseBackoffMs: 5 }))
  const { data, response } = await client.listUsers({ limit: 10 }, { withResponse: true })
  assert.equal(data.total, 2)
  assert.equal(response.status, 200)
  assert.equal(response.attempts, 1)
  assert.equal(response.requestId, await lastRequestId(emu))
  assert.match(response.headers.date, / GMT$/)
  assert.match(response.headers['content-type'], /^application\/json/)
  assert.ok(Object.keys(response.headers).every((name) => name === name.toLowerCase()))

  await emu.fault(unavailable(1))
  const retried = await client.listUsers(undefined, { withResponse: true })
  assert.equal(retried.response.attempts, 2)
  assert.equal(retried.response.requestId, await lastRequestId(emu))
  // withResponse: false is the plain result
  assert.equal((await client.listUsers(undefined, { withResponse: false })).total, 2)
})

test('every call can give its answer, through views too', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  await emu.admin('POST', '/rooms', { roomId: 'bbNiVFoXm', name: 'General' })
  const { conversationId } = await emu.admin('POST', '/conversations', {
    roomId: 'bbNiVFoXm',
    messages: [{ messages: 'hi', user: { username: 'jon' } }],
  })
  const client = new Client(emu.options())
  const withResponse = { withResponse: true }
  const check = async ({ data, response }) => {
    assert.equal(response.status, 200)
    assert.equal(response.requestId, await lastRequestId(emu))
    return data
  }
  const created = await check(await client.createUser({ username: 'jon', uniqueUserIdentifier: 'crm-node-1' }, withResponse))
  assert.equal(created.username, 'jon')
  assert.match(require('node:util').inspect(created), /hidden/, 'a created user still hides its token')
  assert.equal((await check(await client.conversationMessages({ roomId: 'bbNiVFoXm', conversationId }, withResponse)))[0].text, 'hi')
  assert.ok(Array.isArray(await check(await client.listChatRooms(withResponse))))
  assert.equal((await check(await client.rawRequest({ method: 'GET', path: '/consumer/api/v1/chatrooms' }, withResponse))).status, 200)
  await check(await client.deactivateUser({ uniqueUserIdentifier: 'crm-node-1' }, withResponse))
  assert.equal((await check(await client.reactivateUser({ uniqueUserIdentifier: 'crm-node-1' }, withResponse))).success, true)
  const token = await check(await client.validateAccessToken(created.accessToken, withResponse))
  assert.equal(token.username, 'jon')
  assert.ok(token.iat instanceof Date, 'a validated token user keeps its iat as a Date')
  assert.equal((await check(await client.invalidateAccessToken(created.accessToken, withResponse))).success, true)
  const view = client.withOptions({ maxRetries: 0 })
  await check(await view.listUsers(undefined, withResponse))
  // A failure rejects as the plain call does.
  const error = await rejects(client.deactivateUser({ userId: '0'.repeat(24) }, withResponse))
  assert.equal(error.code, 'ROOMCHAT_USER_NOT_FOUND')
})

test('the rate-limit headers, when the service sends them', async (t) => {
  const emu = await startEmulator(['--rate-limit-headers', '--rate-limit', '50/60s'])
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  const { response } = await client.listChatRooms({ withResponse: true })
  assert.equal(response.headers['x-ratelimit-limit'], '50')
  assert.equal(response.headers['x-ratelimit-remaining'], '49')
})

// ---- ROOMCHAT_LOG -----------------------------------------------------------------------------

function run(script, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, NODE_DEBUG: '', ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

test('ROOMCHAT_LOG prints to stderr at its level, never the key; an explicit logger wins', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const script = `
    const { Client } = require(${JSON.stringify(path.resolve(__dirname, '..'))})
    const options = { ...${JSON.stringify(emu.options())}, baseBackoffMs: 5 }
    ;(async () => {
      await new Client(options).listUsers({ limit: 5 })        // 503, retry, 200
      await new Client({ ...options, logger: { debug() {}, warn() {} } }).listChatRooms()
      console.log('ok')
    })()
  `
  const logged = async (level) => {
    await emu.fault(unavailable(1))
    const out = await run(script, { ROOMCHAT_LOG: level, ...emu.env })
    assert.equal(out.code, 0, out.stderr)
    assert.equal(out.stdout.trim(), 'ok')
    return out.stderr
  }
  const debug = await logged('debug')
  const lines = debug.trim().split('\n')
  assert.equal(lines.length, 3, debug)
  assert.ok(lines[0].startsWith(`[roomchat] DEBUG: GET ${USERS}?auth=REDACTED&limit=5 -> 503 (attempt 1, `), debug)
  assert.ok(lines[1].startsWith(`[roomchat] WARNING: retrying GET ${USERS}?auth=REDACTED&limit=5 in `), debug)
  assert.ok(lines[2].startsWith(`[roomchat] DEBUG: GET ${USERS}?auth=REDACTED&limit=5 -> 200 (attempt 2, `), debug)
  assert.ok(!debug.includes(emu.privateKey))
  for (const level of ['warn', 'INFO']) {
    const warned = (await logged(level)).trim().split('\n')
    assert.equal(warned.length, 1, warned.join('\n'))
    assert.ok(warned[0].startsWith('[roomchat] WARNING: retrying GET'), warned[0])
  }
  for (const level of ['', 'verbose']) assert.equal(await logged(level), '')
})
