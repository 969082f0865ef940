'use strict'
// Reactivate user, validate and invalidate access token, against the emulator:
// the lifecycle, the typed record, errors, no second POST after a 5xx, the public key.
const test = require('node:test')
const assert = require('node:assert/strict')
const util = require('node:util')
const http = require('node:http')
const https = require('node:https')
const { startEmulator } = require('./helpers.js')
const { Client, RoomchatError, RoomchatValidationError } = require('..')

const REACTIVATE = '/consumer/api/v2/user/reactivate'
const VALIDATE = '/consumer/api/v1/user/accessToken/validate'
const INVALIDATE = '/consumer/api/v1/user/accesstoken/invalidate'

/** The status a browser gets for the sign-in page of `room` with `token`. */
function signInStatus(emu, room, token) {
  const url = new URL(`${emu.chatUrl}/${room}?accessToken=${encodeURIComponent(token)}`)
  const transport = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    transport
      .get(url, emu.ca === undefined ? {} : { ca: emu.ca }, (response) => {
        response.resume()
        resolve(response.statusCode)
      })
      .on('error', reject)
  })
}

async function posts(emu, path) {
  return (await emu.journal()).filter((e) => e.method === 'POST' && e.path === path)
}

test('tokens and reactivation', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options({ baseBackoffMs: 5 }))
  await emu.admin('POST', '/rooms', { roomId: 'r1', name: 'One' })

  await t.test('the lifecycle: create, validate, deactivate, reactivate, invalidate, validate fails', async () => {
    const before = Date.now() - 2000
    const bob = await client.createUser({
      username: 'bob',
      isModerator: true,
      chatRoom: 'r1',
      uniqueUserIdentifier: 'crm-7',
      externalUserId: 'ext-7',
    })
    const user = await client.validateAccessToken(bob.accessToken)
    assert.equal(user.id, bob.userId)
    assert.deepEqual([user.username, user.isModerator, user.chatRoom, user.externalUserId], ['bob', true, 'r1', 'ext-7'])
    assert.ok(user.iat instanceof Date)
    assert.ok(user.iat.getTime() >= before && user.iat.getTime() <= Date.now(), String(user.iat))
    assert.equal(typeof user.created, 'string')
    assert.equal(user.updated, user.created)
    assert.equal(user.extra.createdUsingApi, true)
    assert.equal(user.extra.__v, 0)
    const sent = (await posts(emu, VALIDATE)).at(-1)
    assert.equal(sent.query, 'publicKey=REDACTED')
    assert.deepEqual(JSON.parse(sent.body), { accessToken: bob.accessToken })
    assert.equal(await signInStatus(emu, 'r1', bob.accessToken), 200)

    await client.deactivateUser({ userId: bob.userId })
    await assert.rejects(client.validateAccessToken(bob.accessToken), (error) => {
      assert.ok(error instanceof RoomchatError)
      assert.deepEqual([error.code, error.status, error.detail], ['ROOMCHAT_INVALID_REQUEST', 400, 'invalid accessToken'])
      assert.equal(error.path, `${VALIDATE}?publicKey=REDACTED`)
      return true
    })
    assert.equal(await signInStatus(emu, 'r1', bob.accessToken), 401)

    const back = await client.reactivateUser({ uniqueUserIdentifier: 'crm-7' })
    assert.deepEqual(back, { success: true, message: 'user reactivated', extra: {} })
    assert.deepEqual(JSON.parse((await posts(emu, REACTIVATE)).at(-1).body), { uniqueUserIdentifier: 'crm-7' })
    assert.equal((await client.validateAccessToken(bob.accessToken)).id, bob.userId)
    assert.equal(await signInStatus(emu, 'r1', bob.accessToken), 200)
    await client.deactivateUser({ userId: bob.userId })
    await client.reactivateUser({ userId: bob.userId })
    assert.deepEqual(JSON.parse((await posts(emu, REACTIVATE)).at(-1).body), { userId: bob.userId })

    const done = await client.invalidateAccessToken(bob.accessToken)
    assert.deepEqual(done, { success: true, extra: {} })
    assert.match((await posts(emu, INVALIDATE)).at(-1).query, /^auth=REDACTED/)
    await assert.rejects(client.validateAccessToken(bob.accessToken), { code: 'ROOMCHAT_INVALID_REQUEST', detail: 'invalid accessToken' })
    await assert.rejects(client.invalidateAccessToken(bob.accessToken), { code: 'ROOMCHAT_INVALID_REQUEST' })
    assert.equal(await signInStatus(emu, 'r1', bob.accessToken), 401)
  })

  await t.test('reactivating an unknown or active user rejects with ROOMCHAT_USER_NOT_FOUND', async () => {
    const jon = await client.createUser({ username: 'jon' })
    for (const params of [{ userId: '0'.repeat(24) }, { uniqueUserIdentifier: 'crm-404' }, { userId: jon.userId }]) {
      await assert.rejects(client.reactivateUser(params), (error) => {
        assert.deepEqual([error.code, error.status, error.method, error.path], [
          'ROOMCHAT_USER_NOT_FOUND',
          400,
          'POST',
          `${REACTIVATE}?auth=REDACTED`,
        ])
        return true
      })
    }
  })

  await t.test('bad arguments are RoomchatValidationErrors and nothing is sent', async () => {
    await emu.admin('DELETE', '/journal')
    for (const params of [{}, { userId: 'a', uniqueUserIdentifier: 'b' }, { userId: '' }, { userId: 7 }, { id: 'x' }, undefined]) {
      await assert.rejects(client.reactivateUser(params), RoomchatValidationError, JSON.stringify(params))
    }
    for (const token of ['', 7, undefined, null, { accessToken: 't' }]) {
      await assert.rejects(client.validateAccessToken(token), RoomchatValidationError, String(token))
      await assert.rejects(client.invalidateAccessToken(token), RoomchatValidationError, String(token))
    }
    assert.deepEqual(await emu.journal(), [])
  })

  await t.test('validateAccessToken needs the public key', async () => {
    const { accessToken } = await client.createUser({ username: 'keyless' })
    await emu.admin('DELETE', '/journal')
    const keyless = new Client(emu.options({ publicKey: undefined }))
    await assert.rejects(keyless.validateAccessToken(accessToken), (error) => {
      assert.equal(error.code, 'ROOMCHAT_CONFIGURATION')
      assert.match(error.detail, /public key/)
      return true
    })
    assert.deepEqual(await emu.journal(), [])
    const wrong = new Client(emu.options({ publicKey: 'pk_wrong_but_plausible' }))
    await assert.rejects(wrong.validateAccessToken(accessToken), (error) => {
      assert.equal(error.code, 'ROOMCHAT_INVALID_AUTH')
      assert.ok(!util.inspect(error).includes('pk_wrong'))
      return true
    })
  })

  await t.test('reactivate and invalidate are sent once after a 5xx or a lost answer; validate is retried', async () => {
    for (const [path, action] of [
      [REACTIVATE, { kind: 'respond', status: 503, body: '{"message":"busy","eventId":"ev-node"}' }],
      [REACTIVATE, { kind: 'close' }],
      [INVALIDATE, { kind: 'respond', status: 500, body: '{"message":"busy","eventId":"ev-node"}' }],
      [INVALIDATE, { kind: 'close' }],
    ]) {
      const jon = await client.createUser({ username: 'once' })
      await client.deactivateUser({ userId: jon.userId })
      await emu.admin('DELETE', '/journal')
      await emu.fault({ method: 'POST', path, times: 5, action })
      const call = path === REACTIVATE ? client.reactivateUser({ userId: jon.userId }) : client.invalidateAccessToken(jon.accessToken)
      await assert.rejects(call, (error) => {
        assert.equal(error.code, action.kind === 'close' ? 'ROOMCHAT_CONNECTION' : 'ROOMCHAT_SERVER_ERROR')
        if (action.kind !== 'close') assert.equal(error.eventId, 'ev-node')
        return true
      })
      assert.equal(await emu.arrivals('POST', path), 1, `${path} ${action.kind}`)
      await emu.admin('DELETE', '/faults')
    }
    const { accessToken } = await client.createUser({ username: 'read' })
    await emu.admin('DELETE', '/journal')
    await emu.fault({ method: 'POST', path: VALIDATE, times: 1, action: { kind: 'respond', status: 503, body: '{}' } })
    assert.equal((await client.validateAccessToken(accessToken)).username, 'read')
    assert.deepEqual((await posts(emu, VALIDATE)).map((e) => e.status), [503, 200])
  })

  await t.test('no key in any output of these calls', async () => {
    const { accessToken, userId } = await client.createUser({ username: 'quiet' })
    await client.invalidateAccessToken(accessToken)
    const errors = []
    for (const call of [
      () => client.validateAccessToken(accessToken),
      () => client.invalidateAccessToken(accessToken),
      () => client.reactivateUser({ userId }),
    ]) {
      await call().then(
        () => assert.fail('expected a rejection'),
        (error) => errors.push(error),
      )
    }
    for (const error of errors) {
      for (const text of [String(error), util.inspect(error), JSON.stringify(error), error.stack, error.path]) {
        assert.ok(!text.includes(emu.privateKey), text)
        assert.ok(!text.includes(emu.publicKey), text)
      }
    }
  })
})
