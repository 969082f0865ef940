'use strict'
// Call ids wrap around after 2^32 - 1 calls; a call still pending keeps its id
// (a later call must not take it over, or it would settle with the other's outcome).
const test = require('node:test')
const assert = require('node:assert/strict')
const roomchat = require('..')
const { startEmulator } = require('./helpers.js')

const { Client, inFlightCalls } = roomchat
const USERS = '/consumer/api/v2/users'
// Internal to the package (see index.js): not part of its API.
const setNextCallId = roomchat[Symbol.for('roomchat.internal.setNextCallId')]

/** `promise`, or a rejection naming `what` after `ms`. */
function within(what, promise, ms) {
  let timer
  const late = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

test('after the call ids wrap around, calls still pending keep theirs', async (t) => {
  const emu = await startEmulator(['--seed-users', '6'])
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  await client.listUsers({ limit: 1 })
  // Held by the service, so that they are still pending when the ids wrap: ids 1 and 2.
  await emu.fault({ method: 'GET', path: USERS, times: 2, action: { kind: 'delay', ms: 500 } })
  setNextCallId(1)
  const slow = [client.listUsers({ limit: 1, skip: 0 }), client.listUsers({ limit: 1, skip: 1 })]
  // The last ids before the wrap, then the ids after it: 1 and 2 are taken.
  setNextCallId(0xfffffffe)
  const fast = [2, 3, 4, 5].map((skip) => client.listUsers({ limit: 1, skip }))
  const pages = await within('the calls', Promise.all([...slow, ...fast]), 5000)
  assert.deepEqual(
    pages.map((page) => page.data[0].username),
    [1, 2, 3, 4, 5, 6].map((n) => `seed-user-${n}`),
    'each call settled with its own outcome',
  )
  assert.equal(inFlightCalls(), 0)
  // Later calls go on from there.
  assert.equal((await client.listUsers({ limit: 1, skip: 5 })).data[0].username, 'seed-user-6')
})
