'use strict'
// Params are plain JSON: what JSON.stringify would silently change (a Map sent
// as {}, a Date as text, a function dropped, a class instance as its fields)
// is refused with a validation error naming the param, and nothing is sent,
// as Python refuses what is not JSON-compatible.
const test = require('node:test')
const assert = require('node:assert/strict')
const { startEmulator } = require('./helpers.js')
const { Client, RoomchatError, wire } = require('..')

class Point {
  constructor() {
    this.x = 1
  }
}

test('params that are not plain JSON are refused naming the param, nothing sent', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  const cases = [
    ['a Map', () => client.createUser({ username: 'x', meta: new Map([['a', 1]]) }), /createUser: meta must be plain JSON .*not a Map/],
    ['a Date inside', () => client.createUser({ username: 'x', meta: { at: new Date(0) } }), /createUser: meta\.at must be plain JSON .*not a Date/],
    ['a function', () => client.createChatRoom({ name: 'r', extra: { onJoin: () => 1 } }), /createChatRoom: extra\.onJoin must be plain JSON .*not a function/],
    ['a Set in a list', () => client.createUser({ username: 'x', meta: { tags: ['a', new Set()] } }), /meta\.tags\[1\] must be plain JSON .*not a Set/],
    ['a class instance', () => client.createChatRoom({ name: 'r', customization: new Point() }), /customization must be plain JSON .*not a Point/],
    ['a Buffer', () => client.createUser({ username: 'x', meta: Buffer.from('ab') }), /meta must be plain JSON .*not a Buffer/],
    ['a boxed string', () => client.createUser({ username: new String('x') }), /username must be plain JSON .*not a String/],
    ['a symbol', () => client.createUser({ username: 'x', meta: { s: Symbol('s') } }), /meta\.s must be plain JSON .*not a symbol/],
    ['undefined in a list', () => client.createUser({ username: 'x', meta: [1, undefined] }), /meta\[1\] must be plain JSON .*not undefined/],
    ['a toJSON method', () => client.createUser({ username: 'x', meta: { toJSON: () => 'x' } }), /meta must be plain JSON .*toJSON/],
    ['the params a Map', () => client.listUsers(new Map([['limit', 5]])), /listUsers: params must be plain JSON .*not a Map/],
    ['inside a method\'s params', () => client.sendRoomMessage('r', 'hi', { user: { joined: new Date(0) } }), /sendRoomMessage: user\.joined must be plain JSON .*not a Date/],
    ['a method argument', () => client.sendRoomMessage('r', new String('hi'), { systemMessage: true }), /sendRoomMessage: message must be plain JSON .*not a String/],
    ['an iterator', () => client.iterRoomMessages('r', { skip: new Number(5) }).next(), /iterRoomMessages: skip must be plain JSON .*not a Number/],
    ['the raw request', () => client.rawRequest({ method: 'POST', path: '/consumer/api/v1/user', body: { at: new Date(0) } }), /rawRequest: body\.at must be plain JSON .*not a Date/],
  ]
  await emu.admin('DELETE', '/journal')
  for (const [label, call, message] of cases) {
    await assert.rejects(call(), (error) => {
      assert.ok(error instanceof RoomchatError, `${label}: ${error}`)
      assert.ok(error instanceof TypeError, label)
      assert.equal(error.code, 'ROOMCHAT_VALIDATION', `${label}: ${error.message}`)
      assert.match(error.message, message, label)
      return true
    }, label)
  }
  assert.throws(() => wire.buildRequest('create_user', { username: 'x', meta: new Map() }), {
    code: 'ROOMCHAT_VALIDATION',
    message: /wire\.buildRequest: meta must be plain JSON .*not a Map/,
  })
  assert.deepEqual(await emu.journal(), [], 'nothing was sent')
  // Plain JSON still goes: objects without a prototype, a field left undefined (not given).
  const meta = Object.assign(Object.create(null), { plan: 'pro', seats: [1, 2], nested: { on: true, none: null } })
  const user = await client.createUser({ username: 'plain', meta, email: undefined })
  assert.ok(user.userId)
  const [sent] = await emu.journal()
  assert.deepEqual(JSON.parse(sent.body).meta, { plan: 'pro', seats: [1, 2], nested: { on: true, none: null } })
})
