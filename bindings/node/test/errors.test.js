'use strict'
// Errors: the fault matrix (every fault the emulator offers x every endpoint),
// the key in no error output for every kind, bad arguments.
const test = require('node:test')
const assert = require('node:assert/strict')
const util = require('node:util')
const net = require('node:net')
const { startEmulator, overNet } = require('./helpers.js')
// The fault matrix's timeout per attempt, and its delay fault: across the test
// network (~25 ms round trips, a handshake per connection, 1% of chunks 200 ms
// late) 250 ms is too short for an answer that comes.
const ATTEMPT_TIMEOUT_MS = overNet ? 1000 : 250
const DELAY_MS = overNet ? 2000 : 700
const { Client, RoomchatError, AbortError, errorCodes } = require('..')

const USERS = '/consumer/api/v2/users'
const CREATE = '/consumer/api/v1/user'
const DEACTIVATE = '/consumer/api/v2/user/deactivate'
const ROOMS = '/consumer/api/v1/chatrooms'
const VALIDATE = '/consumer/api/v1/validate'
const REACTIVATE = '/consumer/api/v2/user/reactivate'
const VALIDATE_TOKEN = '/consumer/api/v1/user/accessToken/validate'
const INVALIDATE_TOKEN = '/consumer/api/v1/user/accesstoken/invalidate'
// POSTs that change something: never sent twice after a fault that may have let them
// take effect. Validating a token is a POST too, but only reads: retried as a GET.
const SENT_ONCE = new Set(['createUser', 'reactivateUser', 'invalidateAccessToken'])

/** The faults the emulator offers, and the code each must give (`ok`: the call succeeds). */
const FAULTS = [
  ['respond 500 with eventId', { kind: 'respond', status: 500, body: '{"message":"boom","eventId":"ev-42"}' }, 'ROOMCHAT_SERVER_ERROR'],
  ['respond 502 html', { kind: 'respond', status: 502, body: '<html>bad gateway</html>', content_type: 'text/html' }, 'ROOMCHAT_SERVER_ERROR'],
  ['respond 429', { kind: 'respond', status: 429, body: '{"message":"Too many requests"}', headers: { 'Retry-After': '0' } }, 'ROOMCHAT_RATE_LIMITED'],
  ['respond 401', { kind: 'respond', status: 401, body: '{"message":"invalid auth token"}' }, 'ROOMCHAT_INVALID_AUTH'],
  ['respond 401 missing', { kind: 'respond', status: 401, body: '{"message":"Please pass the auth token"}' }, 'ROOMCHAT_MISSING_AUTH'],
  ['respond 400', { kind: 'respond', status: 400, body: '{"error":true,"message":"bad parameter"}' }, 'ROOMCHAT_INVALID_REQUEST'],
  [
    'respond 400 plan',
    { kind: 'respond', status: 400, body: '{"message":"This endpoint is not available on your current plan. Please upgrade your plan to use it."}' },
    'ROOMCHAT_PLAN_UPGRADE_REQUIRED',
  ],
  ['respond 404', { kind: 'respond', status: 404, body: '{"error":true,"message":"not found"}' }, 'ROOMCHAT_NOT_FOUND'],
  // The service's 404 for an unknown room: an empty JSON object.
  ['respond 404 {}', { kind: 'respond', status: 404, body: '{}' }, 'ROOMCHAT_NOT_FOUND'],
  ['delay', { kind: 'delay', ms: DELAY_MS }, 'ROOMCHAT_TIMEOUT'],
  ['close', { kind: 'close' }, 'ROOMCHAT_CONNECTION'],
  ['truncate', { kind: 'truncate' }, 'ROOMCHAT_DECODE'],
  ['not_json', { kind: 'not_json' }, 'ROOMCHAT_DECODE'],
  ['wrong_content_type', { kind: 'wrong_content_type' }, 'ok'],
  ['large_body', { kind: 'large_body', bytes: 100000 }, 'ROOMCHAT_RESPONSE_TOO_LARGE'],
]

test('fault matrix: every fault x every endpoint rejects with the right code, and no POST is sent twice', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  // Default retry policy (2 retries; fast backoff): retried GETs and DELETEs meet the fault again.
  const client = new Client(emu.options({ timeoutMs: ATTEMPT_TIMEOUT_MS, baseBackoffMs: 5, maxResponseBytes: 20000 }))
  await emu.admin('POST', '/rooms', { roomId: 'room1', name: 'General' })
  const { conversationId } = await emu.admin('POST', '/conversations', {
    roomId: 'room1',
    messages: [{ messages: 'hi', user: { username: 'jon' } }],
  })
  const MESSAGES = `/consumer/api/v2/room/room1/conversation/${conversationId}/messages`
  let n = 0
  const endpoints = [
    ['listUsers', 'GET', USERS, () => client.listUsers({ limit: 10 })],
    ['createUser', 'POST', CREATE, () => client.createUser({ username: `u${++n}` })],
    [
      'deactivateUser',
      'DELETE',
      DEACTIVATE,
      async () => {
        await emu.admin('DELETE', '/faults')
        const { userId } = await new Client(emu.options()).createUser({ username: `d${++n}` })
        await emu.fault(pendingFault)
        return client.deactivateUser({ userId })
      },
    ],
    ['conversationMessages', 'GET', MESSAGES, () => client.conversationMessages({ roomId: 'room1', conversationId })],
    ['listChatRooms', 'GET', ROOMS, () => client.listChatRooms()],
    [
      'rawRequest',
      'GET',
      VALIDATE,
      async () => {
        await emu.admin('DELETE', '/faults')
        const { accessToken } = await new Client(emu.options()).createUser({ username: `r${++n}` })
        await emu.fault(pendingFault)
        return client.rawRequest({ method: 'GET', path: VALIDATE, query: { accessToken }, auth: 'public' })
      },
    ],
    [
      'reactivateUser',
      'POST',
      REACTIVATE,
      async () => {
        await emu.admin('DELETE', '/faults')
        const helper = new Client(emu.options())
        const { userId } = await helper.createUser({ username: `a${++n}` })
        await helper.deactivateUser({ userId })
        await emu.fault(pendingFault)
        return client.reactivateUser({ userId })
      },
    ],
    [
      'validateAccessToken',
      'POST',
      VALIDATE_TOKEN,
      async () => {
        await emu.admin('DELETE', '/faults')
        const { accessToken } = await new Client(emu.options()).createUser({ username: `v${++n}` })
        await emu.fault(pendingFault)
        return client.validateAccessToken(accessToken)
      },
    ],
    [
      'invalidateAccessToken',
      'POST',
      INVALIDATE_TOKEN,
      async () => {
        await emu.admin('DELETE', '/faults')
        const { accessToken } = await new Client(emu.options()).createUser({ username: `i${++n}` })
        await emu.fault(pendingFault)
        return client.invalidateAccessToken(accessToken)
      },
    ],
  ]
  let pendingFault
  let cases = 0
  for (const [faultName, action, expected] of FAULTS) {
    for (const [name, method, path, call] of endpoints) {
      await emu.admin('DELETE', '/faults')
      await emu.admin('DELETE', '/journal')
      pendingFault = { method, path, times: 10, action }
      await emu.fault(pendingFault)
      const label = `${name} with ${faultName}`
      let outcome
      try {
        await call()
        outcome = 'ok'
      } catch (error) {
        assert.ok(error instanceof RoomchatError, `${label}: ${error}`)
        outcome = error.code
        assert.equal(error.method, method, label)
        assert.ok(error.path.startsWith(path), `${label}: ${error.path}`)
        if (faultName === 'respond 500 with eventId') assert.equal(error.eventId, 'ev-42', label)
        if (faultName.startsWith('respond')) assert.equal(error.status, action.status, label)
      }
      assert.equal(outcome, expected, label)
      const arrivals = await emu.arrivals(method, path)
      if (SENT_ONCE.has(name)) {
        // Only a 429 (not processed by the service) may be sent again.
        assert.equal(arrivals, faultName === 'respond 429' ? 3 : 1, `${label}: ${arrivals} POSTs arrived`)
        const created = (await emu.journal()).filter((e) => e.method === 'POST' && e.path === CREATE && e.status === 200)
        assert.ok(created.length <= 1, label)
      } else {
        assert.ok(arrivals >= 1, label)
      }
      cases += 1
    }
  }
  assert.equal(cases, FAULTS.length * endpoints.length)
  await emu.admin('DELETE', '/faults')
})

/** Every text a program might print or log of an error. */
function outputs(error) {
  return [
    String(error),
    error.message,
    error.stack,
    util.inspect(error),
    util.inspect(error, { showHidden: true, depth: null }),
    JSON.stringify(error),
    JSON.stringify(Object.getOwnPropertyNames(error).map((k) => error[k])),
  ]
}

test('the key appears in no error message, stack, inspect output or debug line, for every error kind', async (t) => {
  const emu = await startEmulator(['--public-key', 'pk_test_node_public'])
  t.after(() => emu.stop())
  const key = emu.privateKey
  const lines = []
  const logger = { debug: (line) => lines.push(line), warn: (line) => lines.push(line) }
  const client = new Client(emu.options({ maxRetries: 1, baseBackoffMs: 1, logger }))
  const seen = new Map()
  const check = (kind, error) => {
    assert.ok(error instanceof RoomchatError || error instanceof AbortError, `${kind}: ${error}`)
    for (const text of outputs(error)) {
      assert.ok(!text.includes(key), `${kind}: ${text}`)
      assert.ok(!text.includes(encodeURIComponent(key)), `${kind}: ${text}`)
    }
    if (error instanceof RoomchatError) assert.equal(error.code, errorCodes[kind], `${kind}: ${error.code}`)
    seen.set(kind, error)
  }
  const expectKind = async (kind, promise) => {
    try {
      await promise
    } catch (error) {
      check(kind, error)
      return
    }
    assert.fail(`${kind}: the call succeeded`)
  }
  const respond = (status, body, headers = {}) => ({ kind: 'respond', status, body, headers })
  const fault = async (method, path, times, action) => {
    await emu.admin('DELETE', '/faults')
    await emu.fault({ method, path, times, action })
  }
  const once = (method, path, action) => fault(method, path, 1, action)

  await once('GET', USERS, respond(401, '{"message":"Please pass the auth token"}'))
  await expectKind('missing_auth', client.listUsers())
  const wrongKey = `${key}x`
  const wrong = new Client({ ...emu.options(), privateKey: wrongKey, logger })
  try {
    await wrong.listUsers()
    assert.fail('a wrong key was accepted')
  } catch (error) {
    check('invalid_auth', error)
    for (const text of outputs(error)) assert.ok(!text.includes(wrongKey), text)
  }
  // The service echoing the key back in its error text: redacted too.
  await once('GET', USERS, respond(400, JSON.stringify({ error: true, message: `bad auth=${key} and ${encodeURIComponent(key)}` })))
  await expectKind('invalid_request', client.listUsers())
  await expectKind('user_not_found', client.deactivateUser({ userId: '000000000000000000000000' }))
  await expectKind('not_found', client.ejectAllUsers('no-such-room'))
  await emu.admin('POST', '/gate', { method: 'GET', path: ROOMS })
  await expectKind('plan_upgrade_required', client.listChatRooms())
  await emu.admin('DELETE', '/gate')
  await fault('GET', USERS, 2, respond(429, '', { 'Retry-After': '0' }))
  await expectKind('rate_limited', client.listUsers())
  await fault('GET', USERS, 2, respond(500, JSON.stringify({ message: `boom ${key}`, eventId: 'ev1' })))
  await expectKind('server_error', client.listUsers())
  await expectKind('unexpected_status', client.rawRequest({ method: 'DELETE', path: ROOMS }))
  await fault('GET', USERS, 1, { kind: 'delay', ms: 600 })
  await expectKind('timeout', new Client(emu.options({ timeoutMs: 150, maxRetries: 0, logger })).listUsers())
  const closed = net.createServer()
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = closed.address().port
  await new Promise((resolve) => closed.close(resolve))
  await expectKind('connection', new Client({ privateKey: key, baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0, logger }).listUsers())
  // Budget unavailable: the shared budget's Redis is not there, and the client fails closed.
  const redisPassword = 'node-redis-password-31'
  const noRedis = {
    requests: 600,
    windowMs: 60000,
    redisUrl: `redis://:${redisPassword}@127.0.0.1:${port}/0`,
    onRedisError: 'fail_closed',
    redisConnectTimeoutMs: 200,
    redisTimeoutMs: 200,
  }
  try {
    await new Client(emu.options({ maxRetries: 0, logger, rateLimit: noRedis })).listUsers()
    assert.fail('budget_unavailable: the call succeeded')
  } catch (error) {
    check('budget_unavailable', error)
    for (const text of outputs(error)) assert.ok(!text.includes(redisPassword), text)
  }
  await fault('GET', USERS, 2, { kind: 'not_json' })
  await expectKind('decode', client.listUsers())
  await fault('GET', USERS, 1, { kind: 'large_body', bytes: 50000 })
  await expectKind('response_too_large', new Client(emu.options({ maxResponseBytes: 1000, maxRetries: 0, logger })).listUsers())
  await expectKind('validation', client.listUsers({ limit: key }))
  await expectKind('validation', client.createUser({ username: key, isModerator: key }))
  try {
    new Client({ ...emu.options(), privateKey: `${key}\n` })
    assert.fail('a key with a newline was accepted')
  } catch (error) {
    check('configuration', error)
  }
  // Cancelled: an aborted call rejects with AbortError (core's `cancelled` stays inside).
  const controller = new AbortController()
  await once('GET', USERS, { kind: 'delay', ms: 300 })
  const aborted = client.listUsers(undefined, { signal: controller.signal })
  setTimeout(() => controller.abort(), 20)
  await expectKind('cancelled', aborted)
  assert.ok(seen.get('cancelled') instanceof AbortError)

  // TLS: https:// to the emulator's plain-HTTP port breaks the handshake; over HTTPS
  // (ROOMCHAT_TEST_TLS=1), a client not given its CA rejects the certificate.
  const untrusting = emu.options({ baseUrl: emu.baseUrl.replace('http://', 'https://'), maxRetries: 0, logger, ca: undefined })
  await expectKind('tls', new Client(untrusting).listUsers())

  const kinds = Object.keys(errorCodes)
  assert.deepEqual([...seen.keys()].sort(), [...kinds].sort(), 'every error kind was produced')
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.ok(lines.length > 10, `${lines.length} debug lines`)
  assert.ok(lines.some((line) => line.includes('auth=REDACTED')))
  for (const line of lines) assert.ok(!line.includes(key) && !line.includes(encodeURIComponent(key)), line)
})

test("the service's detail is in the error's detail and message, and each text a property", async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options({ maxRetries: 0 }))
  const detail = '"actionButtons[0].type" must be one of [link, action]'
  const body = JSON.stringify({ message: 'invalid request', error: detail, success: false })
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 400, body } })
  await assert.rejects(client.listUsers({ limit: 5 }), (error) => {
    assert.ok(error instanceof RoomchatError)
    assert.equal(error.code, 'ROOMCHAT_INVALID_REQUEST')
    assert.equal(error.detail, `invalid request: ${detail}`)
    assert.ok(error.message.includes(`invalid request: ${detail} (GET `), error.message)
    assert.deepEqual(
      [error.serviceMessage, error.serviceError, error.serviceErrorMessage],
      ['invalid request', detail, undefined],
    )
    return true
  })
})

test('bad arguments reject with a typed error, never a crash', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  const lone = 'ab\uD800cd'
  const bad = [
    ['listUsers limit string', () => client.listUsers({ limit: '50' })],
    ['listUsers limit 0', () => client.listUsers({ limit: 0 })],
    ['listUsers limit 201', () => client.listUsers({ limit: 201 })],
    ['listUsers limit -1', () => client.listUsers({ limit: -1 })],
    ['listUsers limit 1.5', () => client.listUsers({ limit: 1.5 })],
    ['listUsers limit NaN', () => client.listUsers({ limit: NaN })],
    ['listUsers limit Infinity', () => client.listUsers({ limit: Infinity })],
    ['listUsers limit BigInt', () => client.listUsers({ limit: 5n })],
    ['listUsers skip 2^64', () => client.listUsers({ skip: 2 ** 64 })],
    ['listUsers skip -0.5', () => client.listUsers({ skip: -0.5 })],
    ['listUsers unknown option', () => client.listUsers({ limt: 5 })],
    ['listUsers params a number', () => client.listUsers(5)],
    ['listUsers params a string', () => client.listUsers('limit=5')],
    ['listUsers params an array', () => client.listUsers([1])],
    ['listUsers circular', () => { const p = {}; p.p = p; return client.listUsers(p) }],
    ['listUsers bad options', () => client.listUsers({}, 5)],
    ['listUsers bad signal', () => client.listUsers({}, { signal: 'stop' })],
    ['createUser missing username', () => client.createUser({})],
    ['createUser no params', () => client.createUser()],
    ['createUser username number', () => client.createUser({ username: 5 })],
    ['createUser empty username', () => client.createUser({ username: '   ' })],
    ['createUser lone surrogate', () => client.createUser({ username: lone })],
    ['createUser lone surrogate in meta', () => client.createUser({ username: 'x', meta: { a: [lone] } })],
    ['createUser lone low surrogate', () => client.createUser({ username: '\uDC00' })],
    ['createUser isModerator string', () => client.createUser({ username: 'x', isModerator: 'yes' })],
    ['createUser chatRoom without moderator', () => client.createUser({ username: 'x', chatRoom: 'r' })],
    ['createUser extra overriding username', () => client.createUser({ username: 'x', extra: { username: 'y' } })],
    ['createUser extra not an object', () => client.createUser({ username: 'x', extra: [1] })],
    ['createUser email twice', () => client.createUser({ username: 'x', email: 'a@b', extra: { email: 'c@d' } })],
    ['deactivateUser id number', () => client.deactivateUser({ userId: 5 })],
    ['deactivateUser empty id', () => client.deactivateUser({ userId: '' })],
    ['deactivateUser lone surrogate', () => client.deactivateUser({ uniqueUserIdentifier: lone })],
    ['conversationMessages missing conversation', () => client.conversationMessages({ roomId: 'r' })],
    ['conversationMessages bad pathForm', () => client.conversationMessages({ roomId: 'r', conversationId: 'c', pathForm: 'x' })],
    ['conversationMessages empty room', () => client.conversationMessages({ roomId: '', conversationId: 'c' })],
    ['rawRequest no method', () => client.rawRequest({ path: USERS })],
    ['rawRequest bad path', () => client.rawRequest({ method: 'GET', path: 'http://elsewhere/' })],
    ['rawRequest bad auth', () => client.rawRequest({ method: 'GET', path: USERS, auth: 'secret' })],
    ['rawRequest bad query', () => client.rawRequest({ method: 'GET', path: USERS, query: [[1, 2]] })],
    ['rawRequest public without key', () => new Client({ privateKey: emu.privateKey, baseUrl: emu.baseUrl }).rawRequest({ method: 'GET', path: VALIDATE, auth: 'public' })],
    ['listChatRooms with params', () => client.listChatRooms({ limit: 5 })],
  ]
  await emu.admin('DELETE', '/journal')
  for (const [label, call] of bad) {
    let promise
    assert.doesNotThrow(() => {
      promise = call()
    }, label)
    await assert.rejects(promise, (error) => {
      assert.ok(error instanceof RoomchatError, `${label}: ${error}`)
      assert.ok(['ROOMCHAT_VALIDATION', 'ROOMCHAT_CONFIGURATION'].includes(error.code), `${label}: ${error.code} ${error.message}`)
      return true
    }, label)
  }
  assert.equal((await emu.journal()).length, 0, 'nothing was sent')
  assert.throws(() => client.signInUrl(lone, 't'), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => client.signInUrl(5, 't'), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client({ privateKey: lone, baseUrl: emu.baseUrl }), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client({ privateKey: 5, baseUrl: emu.baseUrl }), { code: 'ROOMCHAT_VALIDATION' })
  // and the process is still fine
  assert.equal((await client.listUsers()).total, 0)
})
