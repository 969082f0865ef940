'use strict'
// The operations whose Node surfaces are generated from api/operations.toml
// (operations.js, operations.d.ts, src/records.rs): eject all users and update
// bot end to end against the emulator — their records (nested, unknown fields
// under `extra`), the declared limits refused with nothing sent, the exact path
// casing, the service's errors, and the per-call options every method takes
// (withResponse, an AbortSignal, settings, views).
const test = require('node:test')
const assert = require('node:assert/strict')
const { startEmulator, msSince } = require('./helpers.js')
const { Client, RoomchatError, RoomchatValidationError, AbortError, inFlightCalls } = require('..')

const ROOM = 'bbNiVFoXm'
const EJECT = `/api/v1/chatRoom/${ROOM}/eject-all`

async function rejects(promise) {
  try {
    await promise
  } catch (error) {
    return error
  }
  assert.fail('expected a rejection')
}

test('ejectAllUsers signs a room out: the path as printed, the typed answer, an unknown room’s 404', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  await emu.admin('POST', '/rooms', { roomId: ROOM, name: 'General' })
  const client = new Client(emu.options())

  const answer = await client.ejectAllUsers(ROOM)
  assert.deepEqual(answer, { success: true, extra: {} })
  const journal = await emu.journal()
  // No `/consumer` prefix and `chatRoom` in camel case, as the reference page prints it.
  assert.deepEqual(
    journal.map((e) => [e.method, e.path]),
    [['POST', EJECT]],
  )

  const unknown = await rejects(client.ejectAllUsers('nope'))
  assert.ok(unknown instanceof RoomchatError)
  assert.deepEqual([unknown.kind, unknown.code], ['not_found', 'ROOMCHAT_NOT_FOUND'])
  assert.equal(unknown.status, 404)
  assert.equal(unknown.detail, 'invalid chatroom id')
  assert.equal(unknown.path, '/api/v1/chatRoom/nope/eject-all?auth=REDACTED')
  assert.equal((await emu.journal()).length, 2)
})

test('updateBot changes the fields given and answers the typed bot', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const bot = await emu.addBot({ name: 'helper', webhookURL: 'https://hooks.example/b', trigger: 'mention', messageVisibility: 'public' })
  const client = new Client(emu.options())

  const answer = await client.updateBot(bot._id, {
    description: 'answers questions',
    messageHistoryLimit: 20,
    enabled: false,
    webhookURL: 'https://hooks.example/b2',
    metadata: undefined, // left out, as JSON leaves it
  })
  assert.equal(answer.success, true)
  assert.deepEqual(answer.extra, {})
  const updated = answer.bot
  assert.equal(updated.id, bot._id)
  assert.equal('_id' in updated, false, 'the wire name `_id` is `id`')
  assert.equal(updated.name, 'helper')
  assert.equal(updated.description, 'answers questions')
  assert.equal(updated.messageHistoryLimit, 20)
  assert.equal(updated.enabled, false)
  assert.equal(updated.webhookURL, 'https://hooks.example/b2')
  assert.equal(updated.isAllowedInAllChatRooms, false)
  assert.equal(updated.customer, 'emulated-customer')
  assert.equal(typeof updated.created, 'string')
  assert.deepEqual(updated.extra, {})

  const [sent] = await emu.journal()
  assert.equal(sent.method, 'PUT')
  assert.equal(sent.path, `/consumer/api/v2/bot/${bot._id}`)
  assert.deepEqual(JSON.parse(sent.body), {
    description: 'answers questions',
    messageHistoryLimit: 20,
    enabled: false,
    webhookURL: 'https://hooks.example/b2',
  })
  // Nothing to change: an empty body, the bot as it is.
  assert.equal((await client.updateBot(bot._id)).bot.description, 'answers questions')
  assert.equal((await emu.journal())[1].body, '{}')
})

test('updateBot keeps the fields its records do not name under extra, nested too', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  const body = {
    success: true,
    requestId: 'r-1',
    bot: { _id: 'b1', name: 'helper', enabled: true, __v: 3, avatar: { url: 'https://img.example/a.png' } },
  }
  await emu.fault({ method: 'PUT', path: '/consumer/api/v2/bot/b1', times: 1, action: { kind: 'respond', status: 200, body: JSON.stringify(body) } })
  const answer = await client.updateBot('b1', { enabled: true })
  assert.deepEqual(answer, {
    success: true,
    bot: { id: 'b1', name: 'helper', enabled: true, extra: { __v: 3, avatar: { url: 'https://img.example/a.png' } } },
    extra: { requestId: 'r-1' },
  })
})

test('updateBot refuses what its declaration refuses, and nothing is sent', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  const refused = [
    [{ name: 'x'.repeat(101) }, /name/],
    [{ description: 'd'.repeat(1001) }, /description/],
    [{ trigger: 'always' }, /trigger/],
    [{ messageVisibility: 'everyone' }, /messageVisibility/],
    [{ messageHistoryLimit: 101 }, /messageHistoryLimit/],
    [{ messageHistoryLimit: -1 }, /messageHistoryLimit/],
    [{ enabled: 'yes' }, /enabled/],
    [{ metadata: 'm'.repeat(10_001) }, /metadata/],
    [{ force: true }, /unknown parameter "force"/],
    [{ botId: 'other' }, /botId is an argument of its own/],
    ['name', /params must be an object/],
  ]
  for (const [params, message] of refused) {
    const error = await rejects(client.updateBot('b1', params))
    assert.ok(error instanceof RoomchatValidationError, `${JSON.stringify(params).slice(0, 40)}: ${error}`)
    assert.equal(error.code, 'ROOMCHAT_VALIDATION')
    assert.match(error.message, message)
  }
  for (const botId of [undefined, '', 42]) {
    assert.ok((await rejects(client.updateBot(botId, { enabled: true }))) instanceof RoomchatValidationError, String(botId))
  }
  assert.ok((await rejects(client.ejectAllUsers(''))) instanceof RoomchatValidationError)
  assert.deepEqual(await emu.journal(), [])
})

test('updateBot answers the service’s errors: the trigger/visibility rule, a taken name, an unknown bot', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const bot = await emu.addBot({ name: 'helper', webhookURL: 'https://hooks.example/b' })
  await emu.addBot({ name: 'other', webhookURL: 'https://hooks.example/o' })
  const client = new Client(emu.options())

  const rule = await rejects(client.updateBot(bot._id, { trigger: 'message', messageVisibility: 'private' }))
  assert.equal(rule.code, 'ROOMCHAT_INVALID_REQUEST')
  assert.equal(rule.status, 400)
  assert.match(rule.detail, /^Error: Bots cannot be configured to trigger on every message/)
  const taken = await rejects(client.updateBot(bot._id, { name: 'other' }))
  assert.equal(taken.code, 'ROOMCHAT_INVALID_REQUEST')
  const unknown = await rejects(client.updateBot('000000000000000000000000', { enabled: true }))
  assert.ok(unknown instanceof RoomchatError)
  assert.equal(unknown.status, 401)
  assert.match(unknown.detail, /bot not found/)
})

test('the generated methods take every call’s options: withResponse, settings, views, a retry by the declared class', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  await emu.admin('POST', '/rooms', { roomId: ROOM, name: 'General' })
  const bot = await emu.addBot({ name: 'helper', webhookURL: 'https://hooks.example/b' })
  const client = new Client(emu.options())

  const { data, response } = await client.updateBot(bot._id, { enabled: false }, { withResponse: true })
  assert.equal(data.bot.enabled, false)
  assert.deepEqual(data.extra, {})
  assert.equal(response.status, 200)
  assert.equal(response.attempts, 1)
  const journal = await emu.journal()
  assert.equal(response.requestId, `req_${journal[journal.length - 1].seq}`)
  const ejected = await client.ejectAllUsers(ROOM, { withResponse: true, timeoutMs: 5000 })
  assert.deepEqual(ejected.data, { success: true, extra: {} })
  assert.equal(ejected.response.status, 200)
  assert.deepEqual(await client.ejectAllUsers(ROOM, { withResponse: false }), { success: true, extra: {} })

  // eject all users is a POST declared repeatable: sent again after a 503, as a GET is…
  await emu.fault({ method: 'POST', path: EJECT, times: 1, action: { kind: 'respond', status: 503, body: '{}' } })
  const retried = await client.ejectAllUsers(ROOM, { withResponse: true })
  assert.equal(retried.response.attempts, 2)
  // …unless the call (or a view) says otherwise.
  for (const call of [() => client.ejectAllUsers(ROOM, { maxRetries: 0 }), () => client.withOptions({ maxRetries: 0 }).ejectAllUsers(ROOM)]) {
    await emu.fault({ method: 'POST', path: EJECT, times: 1, action: { kind: 'respond', status: 503, body: '{}' } })
    const before = await emu.arrivals('POST', EJECT)
    assert.equal((await rejects(call())).code, 'ROOMCHAT_SERVER_ERROR')
    assert.equal(await emu.arrivals('POST', EJECT), before + 1)
  }

  await emu.fault({ method: 'PUT', path: `/consumer/api/v2/bot/${bot._id}`, times: 1, action: { kind: 'delay', ms: 1500 } })
  const slow = await rejects(client.updateBot(bot._id, { enabled: true }, { timeoutMs: 300, maxRetries: 0 }))
  assert.equal(slow.code, 'ROOMCHAT_TIMEOUT')

  const unknownOption = await rejects(client.updateBot(bot._id, {}, { retries: 1 }))
  assert.ok(unknownOption instanceof RoomchatValidationError)
  assert.match(unknownOption.message, /updateBot: unknown option "retries"/)
  assert.equal((await rejects(client.ejectAllUsers(ROOM, { timeoutMs: 0 }))).code, 'ROOMCHAT_CONFIGURATION')
})

test('an AbortSignal rejects a generated call at once and gives up its request', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  await emu.admin('POST', '/rooms', { roomId: ROOM, name: 'General' })
  const client = new Client(emu.options())

  await emu.fault({ method: 'POST', path: EJECT, times: 1, action: { kind: 'delay', ms: 3000 } })
  const controller = new AbortController()
  const call = client.ejectAllUsers(ROOM, { signal: controller.signal, withResponse: true })
  while ((await emu.arrivals('POST', EJECT)) === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  const started = process.hrtime.bigint()
  controller.abort(new Error('the user left'))
  const error = await rejects(call)
  assert.ok(error instanceof AbortError)
  assert.equal(error.code, 'ABORT_ERR')
  assert.equal(error.cause.message, 'the user left')
  assert.ok(msSince(started) < 500, `rejected at once: ${msSince(started)} ms`)
  // Core lets the request go within 50 ms: the call is no longer in flight.
  const deadline = Date.now() + 2000
  while (inFlightCalls() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.equal(inFlightCalls(), 0)

  // An already aborted signal: rejected, nothing sent.
  const before = (await emu.journal()).length
  assert.ok((await rejects(client.updateBot('b1', { enabled: true }, { signal: AbortSignal.abort() }))) instanceof AbortError)
  assert.equal((await emu.journal()).length, before)
  // A signal that never aborts lets the call finish.
  assert.equal((await client.ejectAllUsers(ROOM, { signal: new AbortController().signal })).success, true)
})

test('the generated methods are the class’s own, and the wire layer shapes their records alike', () => {
  for (const name of ['ejectAllUsers', 'updateBot']) {
    const descriptor = Object.getOwnPropertyDescriptor(Client.prototype, name)
    assert.equal(typeof descriptor.value, 'function', name)
    assert.equal(descriptor.enumerable, false, name)
    assert.equal(descriptor.value.name, name)
  }
  const { wire } = require('..')
  const request = wire.buildRequest('update_bot', { botId: 'b1', webhookURL: 'https://hooks.example/b' })
  assert.deepEqual([request.method, request.path, request.body], ['PUT', '/consumer/api/v2/bot/b1', { webhookURL: 'https://hooks.example/b' }])
  const decoded = wire.decodeResponse('update_bot', 200, [], '{"success":true,"bot":{"_id":"b1","x":1}}')
  assert.deepEqual(decoded, { success: true, bot: { id: 'b1', extra: { x: 1 } }, extra: {} })
})
