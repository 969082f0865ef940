'use strict'
// The shared conformance vectors (tests/conformance/) through the package's `wire` layer.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { root } = require('./helpers.js')
const { wire, RoomchatError } = require('..')

const vectors = (name) => JSON.parse(fs.readFileSync(path.join(root, 'tests', 'conformance', name), 'utf8'))

/** The package's result shape written back with the service's field names (the vectors' form). */
function clean(object) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined))
}
const userToWire = ({ id, extra, ...rest }) => clean({ _id: id, ...rest, ...extra })
const authorToWire = ({ id, extra, ...rest }) => clean({ _id: id, ...rest, ...extra })
const messageToWire = ({ id, text, user, extra, ...rest }) =>
  clean({ _id: id, ...rest, messages: text, user: user && authorToWire(user), ...extra })
const botToWire = ({ id, extra, ...rest }) => clean({ _id: id, ...rest, ...extra })
/**
 * A declared record (operations.d.ts) back in the service's names: its `extra`
 * spread, `id` as `_id` (the records' one renamed field; an action button's `id`
 * is `id` on the wire too), nested records and lists of them likewise.
 */
function recordToWire(value, key = undefined) {
  if (Array.isArray(value)) return value.map((item) => recordToWire(item, key))
  if (value === null || typeof value !== 'object' || !('extra' in value)) return value
  const { extra, ...fields } = value
  const out = {}
  for (const [name, field] of Object.entries(fields)) {
    if (field === undefined) continue
    const wireName = name === 'id' && key !== 'actionButtons' ? '_id' : name
    out[wireName] = recordToWire(field, name)
  }
  return { ...out, ...extra }
}
const TO_WIRE = {
  list_users: ({ data, extra, ...rest }) => ({ ...rest, data: data.map(userToWire), ...extra }),
  conversation_messages: (messages) => messages.map(messageToWire),
  create_user: ({ extra, ...rest }) => clean({ ...rest, ...extra }),
  deactivate_user: ({ extra, ...rest }) => clean({ ...rest, ...extra }),
  raw: ({ status, body }) => ({ status, body }),
  reactivate_user: ({ extra, ...rest }) => clean({ ...rest, ...extra }),
  validate_access_token: ({ id, iat, extra, ...rest }) =>
    clean({ _id: id, ...rest, iat: iat === undefined ? undefined : iat.getTime() / 1000, ...extra }),
  invalidate_access_token: ({ extra, ...rest }) => clean({ ...rest, ...extra }),
  eject_all_users: ({ extra, ...rest }) => clean({ ...rest, ...extra }),
  update_bot: ({ bot, extra, ...rest }) => clean({ ...rest, bot: bot && botToWire(bot), ...extra }),
}

test('requests.json: request in, exact wire request out', () => {
  const cases = vectors('requests.json')
  assert.ok(cases.length >= 20)
  for (const c of cases) {
    if (c.expect_error !== undefined) {
      assert.throws(
        () => wire.buildRequest(c.operation, c.params),
        (e) => e instanceof RoomchatError && e.kind === c.expect_error,
        c.name,
      )
      continue
    }
    const request = wire.buildRequest(c.operation, c.params, { baseUrl: 'https://api.example.com', key: 'REDACTED' })
    assert.equal(request.method, c.expect.method, c.name)
    assert.equal(request.path, c.expect.path, c.name)
    assert.deepEqual(request.query, c.expect.query, c.name)
    assert.deepEqual(request.body, c.expect.body, c.name)
    if (c.expect.url !== undefined) assert.equal(request.url, c.expect.url, c.name)
  }
})

test('responses.json: wire response in, exact result or error out', () => {
  const cases = vectors('responses.json')
  assert.ok(cases.length >= 20)
  for (const c of cases) {
    let result
    let error
    try {
      result = wire.decodeResponse(c.operation, c.status, c.headers, c.body)
    } catch (e) {
      error = e
    }
    if (c.expect.ok !== undefined) {
      assert.equal(error, undefined, `${c.name}: ${error}`)
      assert.deepEqual((TO_WIRE[c.operation] ?? recordToWire)(result), c.expect.ok, c.name)
      continue
    }
    const want = c.expect.error
    assert.ok(error instanceof RoomchatError, `${c.name}: ${error}`)
    assert.equal(error.kind, want.kind, c.name)
    assert.equal(error.code, `ROOMCHAT_${want.kind.toUpperCase()}`, c.name)
    assert.equal(error.status, want.status, c.name)
    assert.equal(error.eventId, want.event_id, c.name)
    assert.equal(error.retryAfterMs, want.retry_after_ms, c.name)
    if (want.message !== undefined) assert.equal(error.detail, want.message, c.name)
    const service = want.service ?? {}
    assert.deepEqual(
      [error.serviceMessage, error.serviceError, error.serviceErrorMessage],
      [service.message, service.error, service.errorMessage],
      `${c.name}: the service's texts`,
    )
  }
})

test('list_users: every user field, absent ones, and every kind of text JSON escapes', () => {
  const odd = 'q " b \\ / nl \n cr \r tab \t nul \u0000 bell \u0007 us \u001f del \u007f é ß 李 🦀 \u2028'
  const body = JSON.stringify({
    total: 12,
    limit: 50,
    skip: 0,
    data: [
      {
        _id: odd,
        userId: odd,
        username: odd,
        profilePic: odd,
        email: odd,
        uniqueUserIdentifier: odd,
        isModerator: true,
        chatRoom: odd,
        created: odd,
        meta: { [odd]: [odd, 1, null, false] },
      },
      { username: '', profilePic: '', isModerator: false },
      {},
      // One character to escape (or not) per user, each alone in its text.
      ...['"', '\\', '\n', '\u0000', '\u001f', ' ', '\u007f', 'é', '\u2028'].map((c) => ({ _id: c, username: `a${c}`, chatRoom: `${c}z` })),
    ],
    cursor: odd,
  })
  const page = wire.decodeResponse('list_users', 200, [], body)
  assert.deepEqual(TO_WIRE.list_users(page), JSON.parse(body))
  assert.equal(page.data[0].username, odd)
  assert.equal(page.data[0].chatRoom, odd)
  assert.deepEqual(page.data[0].extra, { created: odd, meta: { [odd]: [odd, 1, null, false] } })
  assert.deepEqual(Object.keys(page.data[2]), ['extra'], 'absent fields are left out')
  assert.deepEqual(page.extra, { cursor: odd })
})

test('list_users: fields beyond the known ones are read as JSON.parse reads them, and rejected where the model rejects them', () => {
  // Written by hand: escapes JSON.stringify would not make, whitespace, a name sent twice.
  const body = String.raw`{"total": 1, "limit": 50, "skip": 0, "data": [{"_id": "u1", "profile\u0050ic": "p",
    "n\u00e9": [1.5e2, -0, 123456789012345678901234567890, "\ud83e\udd80\t"], "x": 1, "x": {"y" : [ ]}}],
    "cursor": "c1", "cursor": "c2"}`
  const page = wire.decodeResponse('list_users', 200, [], body)
  const expected = JSON.parse(body)
  assert.equal(page.data[0].profilePic, 'p', 'an escaped name of a known field is still that field')
  assert.deepEqual(page.data[0].extra, { né: expected.data[0]['né'], x: { y: [] } })
  assert.deepEqual(page.extra, { cursor: 'c2' })
  for (const bad of [String.raw`{"x": "\udc00"}`, String.raw`{"x": {"\ud800": 1}}`, '{"x": [1e400]}']) {
    const text = `{"total": 1, "limit": 50, "skip": 0, "data": [${bad}]}`
    assert.throws(() => wire.decodeResponse('list_users', 200, [], text), { code: 'ROOMCHAT_DECODE' }, bad)
  }
})

test('wire accepts headers and bodies in the forms Node users have', () => {
  const body = '{"total": 1, "limit": 50, "skip": 0, "data": [{"_id": "u1", "username": "jon"}]}'
  const forms = [
    [[['content-type', 'application/json']], body],
    [{ 'content-type': 'application/json' }, Buffer.from(body)],
    [new Headers({ 'content-type': 'application/json' }), new TextEncoder().encode(body)],
    [undefined, new TextEncoder().encode(body).buffer],
  ]
  for (const [headers, b] of forms) {
    const page = wire.decodeResponse('list_users', 200, headers, b)
    assert.equal(page.data[0].username, 'jon')
    assert.equal(page.data[0].id, 'u1')
  }
  const created = wire.decodeResponse('create_user', 200, [], '{"accessToken": "t0k3n", "username": "a", "userId": "1", "isModerator": false}')
  assert.ok(!require('node:util').inspect(created).includes('t0k3n'))
  const request = wire.buildRequest('list_users', { limit: 5 }, { baseUrl: 'https://api.example.com' })
  assert.equal(request.url, 'https://api.example.com/consumer/api/v2/users?limit=5')
  const rateLimited = () => wire.decodeResponse('list_users', 429, { 'Retry-After': '7' }, '')
  assert.throws(rateLimited, { code: 'ROOMCHAT_RATE_LIMITED', retryAfterMs: 7000 })
  assert.throws(() => wire.buildRequest('nope', {}), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => wire.buildRequest('list_users', { limit: 'x' }), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => wire.decodeResponse('list_users', 99, [], ''), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => wire.decodeResponse('list_users', 200, 5, ''), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => wire.decodeResponse('list_users', 200, [], 5), { code: 'ROOMCHAT_VALIDATION' })
})

test("the older operations' results: fields in their published order, absent ones left out, extra last", () => {
  // Each body sends its fields in the reverse order: the result's order is the package's own.
  const decode = (operation, body) => wire.decodeResponse(operation, 200, [], JSON.stringify(body))
  const user = { note: 1, chatRoom: 'r', isModerator: true, uniqueUserIdentifier: 'x', email: 'e', profilePic: 'p', username: 'n', userId: 'u', _id: 'u' }
  const page = decode('list_users', { cursor: 'c', data: [user, {}], skip: 0, limit: 2, total: 2 })
  assert.deepEqual(Object.keys(page), ['total', 'limit', 'skip', 'data', 'extra'])
  const userKeys = ['id', 'userId', 'username', 'profilePic', 'email', 'uniqueUserIdentifier', 'isModerator', 'chatRoom', 'extra']
  assert.deepEqual(Object.keys(page.data[0]), userKeys)
  assert.deepEqual(Object.keys(page.data[1]), ['extra'])
  const author = { x: 1, uniqueUserIdentifier: 'x', email: 'e', username: 'n', _id: 'a' }
  const [message, bare] = decode('conversation_messages', [{ y: 2, user: author, created: 't', messages: 'hi', conversation: 'c', _id: 'm' }, {}])
  assert.deepEqual(Object.keys(message), ['id', 'conversation', 'text', 'created', 'user', 'extra'])
  assert.deepEqual(Object.keys(message.user), ['id', 'username', 'email', 'uniqueUserIdentifier', 'extra'])
  assert.deepEqual(Object.keys(bare), ['extra'])
  const created = decode('create_user', { z: 3, chatRoom: 'r', isModerator: true, userId: 'u', username: 'n', accessToken: 't' })
  assert.deepEqual(Object.keys(created), ['accessToken', 'username', 'userId', 'isModerator', 'chatRoom', 'extra'])
  assert.deepEqual({ ...decode('create_user', { userId: 'u', accessToken: 't' }) }, { accessToken: 't', username: '', userId: 'u', isModerator: false, extra: {} })
  for (const operation of ['deactivate_user', 'reactivate_user', 'invalidate_access_token']) {
    assert.deepEqual(Object.keys(decode(operation, { w: 0, message: 'm', success: true })), ['success', 'message', 'extra'], operation)
  }
  assert.deepEqual(Object.keys(decode('deactivate_user', { message: null, success: true })), ['success', 'extra'], 'a null message is left out')
  const tokenUser = decode('validate_access_token', { __v: 0, iat: 1700000000.123, updated: 'u', created: 'c', externalUserId: 7, isModerator: false, chatRoom: 'r', username: 'n', _id: 'u' })
  assert.deepEqual(Object.keys(tokenUser), ['id', 'username', 'chatRoom', 'isModerator', 'externalUserId', 'created', 'updated', 'iat', 'extra'])
  assert.equal(tokenUser.iat.getTime(), 1700000000123)
  assert.equal(tokenUser.externalUserId, '7')
})
